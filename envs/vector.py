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

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv

from taluva_ai.envs.core import (
    batch_env_step,
    batch_env_step_serial,
    sample_masked,
    seat_kinds,
)
from taluva_ai.errors import ActionOutOfRangeError
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
#: Below this many games a step runs on one thread (the thread pool costs more than it gives).
PARALLEL_MIN_GAMES = 8
#: Upper bound of every plane value (levels, huts on a hex and settlement sizes stay below it).
OBS_HIGH = 48.0
STEP_TERMINAL = 3


class EnvStateError(RuntimeError):
    """An env used out of order (stepped before ``reset`` or after its game ended)."""


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


#: The keys ``reset(options=...)`` of the vector envs takes.
RESET_OPTIONS = ("reset_mask",)


def check_reset_options(options: Any) -> None:
    """Refuse ``options`` of a vector env's ``reset`` that is not a dict of known keys (a
    misspelt ``reset_mask`` would otherwise reset every game).

    Raises:
        ValueError: naming the unknown key (or the wrong type).
    """
    if options is None:
        return
    if not isinstance(options, dict):
        raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
    unknown = [k for k in options if k not in RESET_OPTIONS]
    if unknown:
        raise ValueError(f"reset options: unknown key {unknown[0]!r}; known: "
                         f"{', '.join(RESET_OPTIONS)}")


def reset_plan(seed: Any, options: dict[str, Any] | None, num_envs: int, started: bool
               ) -> tuple[list[int | None], np.ndarray]:
    """What a vector env's ``reset(seed=..., options=...)`` asks for: one seed per game (an
    int ``s`` gives game ``i`` the seed ``s + i``; a list gives one per game, None entries for
    no new seed; None: no new seed) and the games to reset (``bool[num_envs]``:
    ``options["reset_mask"]``, else all). Everything is checked before any game is touched.

    Raises:
        ValueError: an unknown key in ``options``, a malformed ``reset_mask``, a seed that is
            not a non-negative integer (naming its index), a seed list of the wrong length.
        EnvStateError: a first reset (``started`` False) that does not reset every game.
    """
    check_reset_options(options)

    def one_seed(s: Any, where: str) -> int | None:
        if s is None and where != "seed":
            return None
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(f"{where} must be a non-negative integer, got {s!r}")
        return int(s)

    if seed is None:
        seeds: list[int | None] = [None] * num_envs
    elif isinstance(seed, (list, tuple, np.ndarray)):
        seeds = list(seed)
        if len(seeds) != num_envs:
            raise ValueError(f"seed list must have {num_envs} entries, got {len(seeds)}")
        seeds = [one_seed(s, f"seed[{i}]") for i, s in enumerate(seeds)]
    else:  # every seed is checked before any game is touched
        first = one_seed(seed, "seed")
        assert first is not None
        seeds = [first + i for i in range(num_envs)]
    reset_mask = np.ones(num_envs, dtype=bool)
    if options and "reset_mask" in options:
        rm = np.asarray(options["reset_mask"])
        if rm.shape != (num_envs,) or rm.dtype != np.bool_:
            raise ValueError(f"reset_mask must be bool[{num_envs}], got {rm.dtype}"
                             f"{list(rm.shape)}")
        reset_mask = rm
        if not started and not rm.all():
            raise EnvStateError("the first reset must reset every game")
    return seeds, reset_mask


def check_action_batch(actions: Any, num_envs: int, num_actions: int,
                       ignored: np.ndarray | None = None) -> np.ndarray:
    """``int64[N]`` from a batch of actions; the slots marked in ``ignored`` (``bool[N]``, the
    games an autoreset restarts) may hold any integer, returned as -1.

    Raises:
        ValueError: wrong shape or a non-integer dtype.
        ActionOutOfRangeError: (an ``IndexError``) an id outside ``0 .. num_actions - 1`` in a
            slot that is not ignored.
    """
    a = np.asarray(actions)
    if a.shape != (num_envs,):
        raise ValueError(f"actions must have shape ({num_envs},), got {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"actions must be integers, got dtype {a.dtype}")
    if ignored is not None and ignored.any():
        a = np.where(ignored, -1, a)
    bad = np.flatnonzero(((a < 0) | (a >= num_actions)) & (ignored is None or ~ignored))
    if bad.size:
        raise ActionOutOfRangeError(
            int(a[bad[0]]), f"view action ids run from 0 to {num_actions - 1}",
            f"action {int(a[bad[0]])} of env {int(bad[0])} is outside the action space "
            f"0..{num_actions - 1}")
    return a.astype(np.int64)


class TaluvaVectorEnv(VectorEnv):
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
        parallel: step the games on Numba's thread pool (True) or on one thread (False); by
            default parallel from :data:`PARALLEL_MIN_GAMES` games on.

    Raises:
        ValueError: a bad argument (named in the message).
    """

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
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
                or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
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
        mode = AutoresetMode(autoreset_mode)
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.DISABLED):
            raise ValueError(f"autoreset_mode must be NEXT_STEP or DISABLED, got {mode}")
        self.metadata = {"autoreset_mode": mode, "render_modes": []}
        self.render_mode = render_mode
        self.num_envs = int(num_envs)
        self.copy = copy
        self.parallel = parallel
        self.game = TaluvaGame(self.rules)
        self.view = make_view(view_radius)
        s = self.view.side
        solo = self.rules.solo
        c = num_planes(n, solo)
        self.num_actions = self.view.num_actions + (NUM_SOLO_ACTIONS if solo else 0)
        self.single_observation_space = spaces.Dict({
            "observation": spaces.Box(0.0, OBS_HIGH, (c, s, s), np.float32),
            "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8),
        })
        self.single_action_space = spaces.Discrete(self.num_actions)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space,
                                                              self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        b, h = self.num_envs, self.game.num_cells
        self._cells = np.zeros((b, h, 5), dtype=np.int8)
        self._players = np.zeros((b, 4, 8), dtype=np.int16)
        self._deck = np.zeros((b, 48), dtype=np.int8)
        self._meta = np.zeros((b, NUM_META), dtype=np.int32)
        self._rng = np.zeros((b, 1), dtype=np.uint64)
        self._center = np.zeros((b, 2), dtype=np.int64)
        self._obs = np.zeros((b, c, s, s), dtype=np.float32)
        self._mask = np.zeros((b, self.num_actions), dtype=np.int8)
        self._ret = np.zeros((b, n), dtype=np.float64)
        self._outside = np.zeros(b, dtype=np.int64)
        self._gens: list[np.random.Generator] = []
        self._done = np.zeros(b, dtype=bool)  # game over, awaiting a reset
        self._started = False
        self._bench_rng = np.array([12345], dtype=np.uint64)

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

    def _run(self, act: np.ndarray) -> None:
        rules, nbr, cell_of, hexqr, origin = self.game.kernel_args()
        kernel = batch_env_step if self._use_parallel(self.num_envs) else batch_env_step_serial
        kernel(self._cells, self._players, self._deck, self._meta, self._rng, rules, nbr,
                       cell_of, hexqr, origin, self._seat_kind, self._perspective,
                       self.view.radius, self.view.valid, act, self._center, self._obs,
                       self._mask, self._ret, self._outside)

    def _use_parallel(self, games: int) -> bool:
        return self.parallel if self.parallel is not None else games >= PARALLEL_MIN_GAMES

    def _observation(self) -> dict[str, np.ndarray]:
        if self.copy:
            return {"observation": self._obs.copy(), "action_mask": self._mask.copy()}
        return {"observation": self._obs, "action_mask": self._mask}

    def _info(self) -> dict[str, Any]:
        step = self._meta[:, M_STEP]
        player = np.where(step == STEP_TERMINAL, -1, self._meta[:, M_PLAYER]).astype(np.int64)
        ones = np.ones(self.num_envs, dtype=bool)
        return {
            "current_player": player, "_current_player": ones,
            "step_kind": step.astype(np.int64), "_step_kind": ones,
            "rewards": self._ret.copy(), "_rewards": ones,
            "outside": self._outside.copy(), "_outside": ones,
        }

    # -- gymnasium API ----------------------------------------------------------------------

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start games: all of them, or with ``options={"reset_mask": bool[N]}`` only those
        marked. ``seed``: an int (game ``i`` gets ``seed + i``) or one seed per game.

        Raises:
            ValueError: an unknown key in ``options`` (only ``reset_mask`` is), a malformed
                ``reset_mask`` or seed list.
        """
        b = self.num_envs
        seeds, reset_mask = reset_plan(seed, options, b, self._started)
        if not self._gens:
            self._gens = [seeding.np_random(s)[0] for s in seeds]
        act = np.full(b, -1, dtype=np.int64)
        idx = np.flatnonzero(reset_mask)
        for i in idx:
            if seeds[i] is not None:
                self._gens[i] = seeding.np_random(seeds[i])[0]
            self._new_game(int(i))
        self._done[idx] = False
        self._started = True
        self._run_subset(act, reset_mask)
        return self._observation(), self._info()

    def _run_subset(self, act: np.ndarray, which: np.ndarray) -> None:
        if which.all():
            self._run(act)
            return
        # keep the untouched games' outputs: run the kernel on the selected games only
        idx = np.flatnonzero(which)
        if idx.size == 0:
            return
        rules, nbr, cell_of, hexqr, origin = self.game.kernel_args()
        cells, players, deck, meta = (self._cells[idx], self._players[idx], self._deck[idx],
                                      self._meta[idx])
        rng, center = self._rng[idx], self._center[idx]
        obs, mask, ret, out = (self._obs[idx], self._mask[idx], self._ret[idx],
                               self._outside[idx])
        kernel = batch_env_step if self._use_parallel(idx.size) else batch_env_step_serial
        kernel(cells, players, deck, meta, rng, rules, nbr, cell_of, hexqr, origin,
                       self._seat_kind, self._perspective, self.view.radius, self.view.valid,
                       act[idx], center, obs, mask, ret, out)
        self._cells[idx], self._players[idx], self._deck[idx], self._meta[idx] = (
            cells, players, deck, meta)
        self._rng[idx], self._center[idx] = rng, center
        self._obs[idx], self._mask[idx], self._ret[idx], self._outside[idx] = obs, mask, ret, out

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply one view id per game (module docstring).

        Raises:
            EnvStateError: called before ``reset``; or (autoreset DISABLED) a game that has
                ended is stepped again.
            ValueError: actions of the wrong shape or dtype.
            ActionOutOfRangeError: (an ``IndexError``) an id outside the action space.
            taluva_ai.errors.IllegalActionError: an action masked out in its game.
        """
        from taluva_ai.errors import IllegalActionError

        if not self._started:
            raise EnvStateError("call reset() before step()")
        b = self.num_envs
        resetting = self._done.copy()
        act = check_action_batch(actions, b, self.num_actions, ignored=resetting)
        if resetting.any() and self.metadata["autoreset_mode"] == AutoresetMode.DISABLED:
            i = int(np.flatnonzero(resetting)[0])
            raise EnvStateError(f"game {i} has ended: reset it with "
                                "reset(options={'reset_mask': ...}) before stepping it")
        live = ~resetting
        legal = self._mask[np.arange(b), np.where(live, act, 0)] != 0
        bad = np.flatnonzero(live & ~legal)
        if bad.size:
            i = int(bad[0])
            raise IllegalActionError(int(act[i]), f"masked out in game {i} (not a legal action "
                                     "of the view; see action_mask)")
        mover = np.where(self._perspective >= 0, self._perspective,
                         self._meta[:, M_PLAYER]).astype(np.int64)
        act = np.where(live, act, -1)
        for j in np.flatnonzero(resetting):
            self._new_game(int(j))
        self._run(act)
        step = self._meta[:, M_STEP]
        over = step == STEP_TERMINAL
        truncated = over & (self._meta[:, M_END] == END_TRUNCATED) & live
        terminated = over & ~truncated & live
        rewards = np.where(terminated, self._ret[np.arange(b), mover], 0.0)
        self._done = terminated | truncated
        return self._observation(), rewards, terminated, truncated, self._info()

    def sample_legal_actions(self) -> np.ndarray:
        """``int64[N]``: a uniformly random legal view id per game (compiled; for benchmarks
        and random baselines); 0 for a game with none (a finished game)."""
        a = sample_masked(self._mask, self._bench_rng)
        return np.where(a < 0, 0, a)

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

    def action_masks(self) -> np.ndarray:
        """``bool[N, A]`` legal masks (the sb3-contrib convention)."""
        return self._mask.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        pass
