"""``TaluvaVectorEnv``: N Taluva games stepped together by the compiled kernels.

Spaces (``C`` planes, ``S = 2 view_radius + 1``, ``A = 14 S^2``; see docs/encoding.md):

- ``single_observation_space``: ``Dict({"observation": Box(float32, (C, S, S)),
  "action_mask": Box(int8 0/1, (A,))})``; ``observation_space`` the same with a leading ``N``.
- ``single_action_space``: ``Discrete(A)`` (view ids); ``action_space``: ``MultiDiscrete``.

Seats: with ``opponents=None`` (self-play, the default) the caller moves for every seat and the
planes take the view of the player to move. With ``opponents=["random", ...]`` (one built-in
name, ``"random"`` or ``"greedy"``, per other seat, in seat order after ``agent_seat``) the
caller plays ``agent_seat`` and the opponents move inside the step.

Rewards: at the step that ends a game, the final return (docs/engine.md, End and returns) of
the seat that took the action (self-play) or of ``agent_seat``; 0 otherwise. ``info["rewards"]``
gives every seat's return (``float64[N, n]``, zeros until the end).

Episode end: ``terminated`` when the game ends with a result; ``truncated`` when the engine's
board bound removed every placement (``END_TRUNCATED``, no result; never seen in measured play).

Autoreset (``metadata["autoreset_mode"]``): ``NEXT_STEP`` by default: the step after a game
ended resets it (the action given for it is ignored; reward 0). ``DISABLED``: a finished game
must be reset with ``reset(options={"reset_mask": bool[N]})``; stepping it raises.

Seeds: ``reset(seed=s)`` seeds game ``i`` with ``s + i`` exactly as ``TaluvaEnv.reset(seed=s +
i)`` (its deck is ``np_random.permutation`` of the tile set), so the games equal N scalar envs.

Info keys (arrays over games, with gymnasium's ``_key`` masks): ``current_player``,
``step_kind`` (1 tile, 2 build, 3 over), ``rewards``, ``outside`` (legal engine actions that the
view hides).

Version: v0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from taluva_ai.envs.batched import (
    PARALLEL_MIN_GAMES,
    RESET_OPTIONS,
    BatchedEnv,
    EnvStateError,
    MetaLayout,
    check_action_batch,
    check_num_envs,
    check_reset_options,
    reset_plan,
)
from taluva_ai.envs.core import batch_env_step, batch_env_step_serial, seat_kinds
from taluva_ai.errors import IllegalActionError
from taluva_ai.games.taluva import RuleSet, TaluvaGame
from taluva_ai.games.taluva.encoding import (
    DEFAULT_VIEW_RADIUS,
    NUM_SOLO_ACTIONS,
    make_view,
    num_planes,
)
from taluva_ai.games.taluva.state import M_END, M_PLAYER, M_STEP, NUM_META, new_arrays
from taluva_ai.games.taluva.tiles import full_tile_set

END_TRUNCATED = 4
#: Upper bound of every plane value (levels, huts on a hex and settlement sizes stay below it).
OBS_HIGH = 48.0
STEP_TERMINAL = 3


def make_rules(num_players: int, rules: RuleSet | dict[str, Any] | None) -> RuleSet:
    """The RuleSet of an env: ``rules`` (a RuleSet or a dict of options) with ``num_players``.

    Raises:
        ValueError: ``num_players`` outside 2..4 (the message names it), ``rules`` whose
            ``num_players`` differs from it (a seat count given twice), or a bad option.
    """
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) \
            or not 2 <= num_players <= 4:
        raise ValueError(f"num_players must be 2, 3 or 4, got {num_players!r}")
    opts = rules.to_dict() if isinstance(rules, RuleSet) else dict(rules or {})
    given = opts.get("num_players", num_players)
    if isinstance(given, bool) or given != num_players:
        raise ValueError(f"rules: num_players={given!r} differs from num_players={num_players}; "
                         "give the number of seats once, as num_players")
    opts["num_players"] = int(num_players)
    return RuleSet.from_dict(opts)


class TaluvaVectorEnv(BatchedEnv):
    """N Taluva games stepped by the compiled kernels, in parallel over games (module docstring
    is the spec).

    Args:
        num_envs: N >= 1.
        num_players: 2..4.
        opponents: None (self-play) or ``num_players - 1`` built-in opponent names.
        agent_seat: the seat the caller plays when ``opponents`` is given.
        view_radius: the view's radius (default 13, docs/encoding.md).
        rules: other rule options (a RuleSet or a dict); a ``num_players`` there must equal
            ``num_players``.
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` or ``AutoresetMode.DISABLED`` (or their
            string values).
        copy: return fresh arrays each step (True) or the env's own buffers, overwritten by
            the next step (False: faster).
        parallel: step the games on several threads (True, :mod:`taluva_ai.envs.threads`) or
            on one thread (False); by
            default parallel from :data:`PARALLEL_MIN_GAMES` games on.

    Raises:
        ValueError: a bad argument (named in the message).
    """

    _step_kernels = (batch_env_step, batch_env_step_serial)
    _meta_layout = MetaLayout(step=M_STEP, player=M_PLAYER, end=M_END, terminal=STEP_TERMINAL,
                              truncated=END_TRUNCATED)

    def __init__(
        self,
        num_envs: int = 1,
        num_players: int = 2,
        opponents: list[str] | None = None,
        agent_seat: int = 0,
        view_radius: int = DEFAULT_VIEW_RADIUS,
        rules: RuleSet | dict[str, Any] | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        render_mode: str | None = None,
        parallel: bool | None = None,
    ) -> None:
        num_envs = check_num_envs(num_envs)
        self.rules = self._make_rules(num_players, rules)
        n = self.rules.num_players
        if opponents is not None:
            opponents = [o if isinstance(o, str) else repr(o) for o in opponents]
            if not 0 <= agent_seat < n:
                raise ValueError(f"agent_seat must lie in 0..{n - 1}, got {agent_seat!r}")
        self._seat_kind = seat_kinds(n, agent_seat, opponents)
        self.opponents = opponents
        self.agent_seat = agent_seat
        self._perspective = agent_seat if opponents is not None else -1
        self._set_autoreset(autoreset_mode)
        self.render_mode = render_mode
        self.game = TaluvaGame(self.rules)
        self.view = make_view(view_radius)
        s = self.view.side
        solo = self.rules.solo
        c = num_planes(n, solo)
        num_actions = self.view.num_actions + (NUM_SOLO_ACTIONS if solo else 0)
        self._init_batch(num_envs, copy, parallel, spaces.Dict({
            "observation": spaces.Box(0.0, OBS_HIGH, (c, s, s), np.float32),
            "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
        }), spaces.Discrete(num_actions), (c, s, s), n)
        b, h = self.num_envs, self.game.num_cells
        self._cells = np.zeros((b, h, 5), dtype=np.int8)
        self._players = np.zeros((b, 4, 8), dtype=np.int16)
        self._deck = np.zeros((b, 48), dtype=np.int8)
        self._meta = np.zeros((b, NUM_META), dtype=np.int32)
        self._rng = np.zeros((b, 1), dtype=np.uint64)
        self._center = np.zeros((b, 2), dtype=np.int64)
        self._outside = np.zeros(b, dtype=np.int64)

    # -- helpers ----------------------------------------------------------------------------

    def _make_rules(self, num_players: int, rules: RuleSet | dict[str, Any] | None) -> RuleSet:
        """The env's rule set (a subclass may override it: the solo env does)."""
        return make_rules(num_players, rules)

    def _new_game(self, i: int) -> None:
        gen = self._gens[i]
        if self.rules.solo:  # the solo set-up (starting island), as TaluvaSoloEnv.reset
            st = self.game.new_initial_state(seed=int(gen.integers(0, 2**63 - 1)))
            cells, players, d, meta = st.cells, st.players, st.deck, st.meta
        else:
            deck = gen.permutation(full_tile_set()).astype(np.int8)
            cells, players, d, meta = new_arrays(self.rules.num_players, deck,
                                                 self.game.num_cells, self.rules.tile_preview)
        self._cells[i] = cells
        self._players[i] = players
        self._deck[i] = d
        self._meta[i] = meta
        if not self.rules.solo:
            self._rng[i, 0] = np.uint64(gen.integers(0, 2**63))

    def _kernel_args(self, act: np.ndarray
                     ) -> tuple[tuple[np.ndarray, ...], tuple[Any, ...], tuple[np.ndarray, ...]]:
        return ((self._cells, self._players, self._deck, self._meta, self._rng),
                (*self.game.kernel_args(), self._seat_kind, self._perspective, self.view.radius,
                 self.view.valid),
                (act, self._center, self._obs, self._mask, self._ret, self._outside))

    def _seats(self) -> np.ndarray:
        return np.where(self._perspective >= 0, self._perspective,
                        self._meta[:, M_PLAYER]).astype(np.int64)

    def _info_fields(self, player: np.ndarray, step: np.ndarray) -> dict[str, np.ndarray]:
        return {"current_player": player, "step_kind": step, "rewards": self._ret.copy(),
                "outside": self._outside.copy()}

    def _illegal_error(self, action: int, game: int) -> IllegalActionError:
        return IllegalActionError(action, f"masked out in game {game} (not a legal action "
                                  "of the view; see action_mask)")

    # -- beyond gymnasium's API (reset and step: BatchedEnv) -------------------------------

    def heuristic_action_values(self) -> np.ndarray:
        """``float32[N, A]``: the greedy player's one-ply heuristic value of every legal view
        id in each game's current decision (the values :mod:`taluva_ai.games.taluva.heuristic`
        documents; ``-inf`` for ids that are masked out). Its argmax ids are the moves the
        ``greedy`` agent chooses among whenever its best move lies in the view (the view hides
        the rare legal actions outside it; then they are the best moves inside the view), so
        it serves as a teacher for imitation or
        kickstarting (Schmitt et al. 2018, arXiv:1803.03835); the observation does not
        contain it. Compiled, parallel over games.

        Raises:
            EnvStateError: called before ``reset``.
            NotImplementedError: the solo variant (its greedy player scores differently).
        """
        from taluva_ai.envs.core import batch_heuristic_values

        if not self._started:
            raise EnvStateError("call reset() before heuristic_action_values()")
        if self.rules.solo:
            raise NotImplementedError("heuristic_action_values() is for the 2-4 player game")
        rules, nbr, cell_of, hexqr, origin = self.game.kernel_args()
        out = np.empty((self.num_envs, self.num_actions), dtype=np.float32)
        batch_heuristic_values(self._cells, self._players, self._meta, rules, nbr, cell_of,
                               hexqr, origin, self.view.radius, self._center, out)
        return out


__all__ = ["END_TRUNCATED", "OBS_HIGH", "PARALLEL_MIN_GAMES", "RESET_OPTIONS", "STEP_TERMINAL",
           "EnvStateError", "TaluvaVectorEnv", "check_action_batch", "check_reset_options",
           "make_rules", "reset_plan"]
