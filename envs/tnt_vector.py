"""``ThurnUndTaxisVectorEnv``: N Thurn und Taxis games stepped together by one compiled call
(the ``vector_entry_point`` of ``taluva_ai/ThurnUndTaxis-v0``).

Each game is the scalar :class:`~taluva_ai.envs.game_env.ThurnUndTaxisEnv` with the same
arguments, step for step: the rules are the compiled kernels of
:mod:`taluva_ai.games.thurn_und_taxis.kernels`, the observation their compiled encoder
(:func:`~taluva_ai.games.thurn_und_taxis.encoding.encode_arrays`), and the random draws are
those of the scalar env, made in compiled code (:mod:`taluva_ai.envs.pcg64`): chance nodes draw
as ``ThurnUndTaxisState.draw`` (``default_rng([game_seed, ply])``), the built-in opponents as
the ``random`` and ``greedy`` agents with the seeds the scalar env gives them. So
``reset(seed=s)`` makes game ``i`` equal ``ThurnUndTaxisEnv.reset(seed=s + i)``.

Spaces (``D = 536``, ``A = 327``, as the scalar env; docs/thurn_und_taxis.md):

- ``single_observation_space``: ``Dict({"observation": Box(float32 0..1, (D,)),
  "action_mask": Box(int8 0/1, (A,))})``; ``observation_space`` the same with a leading ``N``.
- ``single_action_space``: ``Discrete(A)`` (the game's action ids); ``action_space``:
  ``MultiDiscrete``.

Seats: with ``opponents=["random", ...]`` (the default: one ``"random"``; built-in names
``"random"`` and ``"greedy"``, one per other seat, in ascending seat order as the scalar env)
the caller plays ``agent_seat`` (an int, or ``"random"``: drawn at each reset) and the opponents
move inside the step. With ``opponents=None`` (self-play; ``num_players`` seats, 2 by default)
the caller moves for every seat and the observation is that of the player to move.

Rewards: 0 until a game ends, then the final return of the agent's seat (self-play: of the seat
that took the last action); ``info["rewards"]`` gives every seat's return (``float64[N, n]``,
zeros until the end). Episode end: ``terminated``; for a game stopped by ``max_rounds``,
``truncated`` instead (it is scored all the same, and the reward is its return).

Illegal actions (a masked id) as the scalar env, per game: ``illegal_action="terminate"``
(default) ends that game with reward ``illegal_penalty`` (default -1), its state unchanged,
``info["illegal_action"]`` True and ``info["rewards"]`` the forfeit's returns; ``"penalty"``
gives that reward and the game goes on; ``"raise"`` raises ``IllegalActionError`` naming the
first such game, and nothing changes. Ids outside the action space raise in every mode
(``ActionOutOfRangeError``), as do action batches of the wrong shape or dtype (``ValueError``).

Autoreset (``metadata["autoreset_mode"]``): ``NEXT_STEP`` by default: the step after a game
ended resets it (the action given for it is ignored; reward 0). ``DISABLED``: a finished game
must be reset with ``reset(options={"reset_mask": bool[N]})``; stepping it raises
``EnvStateError``.

Info keys (arrays over games, with gymnasium's ``_key`` masks): ``current_player`` (-1 once
over), ``agent_seat`` (the seat whose observation it is), ``step_kind``
(:class:`~taluva_ai.games.thurn_und_taxis.state.Step`), ``rewards``, ``illegal_action``.

Version: v0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from taluva_ai.envs.base import check_illegal_mode
from taluva_ai.envs.batched import BatchedEnv, MetaLayout, check_num_envs
from taluva_ai.envs.core import BUILTIN_OPPONENTS, EXTERNAL, GREEDY, keep_best
from taluva_ai.envs.game_env import game_spaces
from taluva_ai.envs.pcg64 import STATE_SIZE, integers, seed_state, state_from_generator
from taluva_ai.envs.threads import over_games
from taluva_ai.errors import IllegalActionError
from taluva_ai.games.compiling import njit
from taluva_ai.games.thurn_und_taxis import kernels as K
from taluva_ai.games.thurn_und_taxis.actions import NUM_ACTIONS, action_to_string
from taluva_ai.games.thurn_und_taxis.board import NUM_CITIES
from taluva_ai.games.thurn_und_taxis.encoding import OBS_SIZE, encode_arrays
from taluva_ai.games.thurn_und_taxis.game import ThurnUndTaxisGame
from taluva_ai.games.thurn_und_taxis.heuristic import action_values
from taluva_ai.games.thurn_und_taxis.state import (
    END_TRUNCATED,
    L_ROWS,
    L_SUPPLY,
    M_END,
    M_PLAYER,
    M_PLY,
    M_SIZE,
    M_STEP,
    MAX_PLAYERS,
    P_SIZE,
    S_CHANCE,
    S_TERMINAL,
    new_arrays,
)

# -- compiled step ------------------------------------------------------------------------------


@njit(cache=True)
def chance_city(cards, seed, ply, st):
    """The city ``ThurnUndTaxisState.draw`` deals at this chance node: a card of the supply
    drawn with ``default_rng([seed, ply]).integers(supply size)`` (``st uint64[6]`` scratch)."""
    total = 0
    for c in range(NUM_CITIES):
        total += cards[L_SUPPLY, c]
    words = np.empty(2, dtype=np.uint64)
    words[0] = seed
    words[1] = np.uint64(ply)
    seed_state(st, words)
    r = integers(st, total)
    for c in range(NUM_CITIES):
        r -= cards[L_SUPPLY, c]
        if r < 0:
            return c
    return -1


@njit(cache=True)
def opponent_action(cards, route, houses, players, meta, rules, kind, st, ids, vals):
    """The action the built-in ``random`` or ``greedy`` agent (``kind``) takes, drawing from its
    generator state ``st`` as the Python agent does (``legal[rng.integers(k)]``; greedy: among
    the ties of the best heuristic value, in id order)."""
    if kind == GREEDY:
        n = action_values(cards, route, houses, players, meta, rules, ids, vals)
        return ids[integers(st, keep_best(ids, vals, n))]
    n = K.legal_actions(cards, route, houses, players, meta, rules, ids)
    return ids[integers(st, n)]


@njit(cache=True)
def env_step(cards, route, houses, players, meta, rules, seed, opp, kind, persp, action, obs,
             mask, ret):
    """One env step of one game: apply ``action`` (-1: none, a reset or a refused action), then
    the chance nodes and the opponents' turns until a seat with ``kind == EXTERNAL`` is to move
    or the game is over; write the returns ``ret``, the observation ``obs`` of seat ``persp``
    (-1: the player to move) and its legal mask ``mask`` (zeros when it is not to move)."""
    ids = np.empty(NUM_ACTIONS, dtype=np.int64)
    vals = np.empty(NUM_ACTIONS, dtype=np.float64)
    st = np.empty(STATE_SIZE, dtype=np.uint64)
    if action >= 0:
        K.apply_action(cards, route, houses, players, meta, rules, action)
    while meta[M_STEP] != S_TERMINAL:
        if meta[M_STEP] == S_CHANCE:
            K.apply_chance(cards, route, houses, players, meta, rules,
                           chance_city(cards, seed, meta[M_PLY], st))
            continue
        p = meta[M_PLAYER]
        if kind[p] == EXTERNAL:
            break
        a = opponent_action(cards, route, houses, players, meta, rules, kind[p], opp[p], ids,
                            vals)
        K.apply_action(cards, route, houses, players, meta, rules, a)
    K.returns(players, meta, rules, ret)
    me = persp if persp >= 0 else meta[M_PLAYER]
    encode_arrays(cards, route, houses, players, meta, rules, me, obs)
    mask[:] = 0
    if meta[M_STEP] != S_TERMINAL and meta[M_PLAYER] == me:
        n = K.legal_actions(cards, route, houses, players, meta, rules, ids)
        for j in range(n):
            mask[ids[j]] = 1


@njit(cache=True, nogil=True)
def batch_env_step_serial(cards_b, route_b, houses_b, players_b, meta_b, rules, seed_b, opp_b,
                          kind_b, persp_b, act_b, obs_b, mask_b, ret_b):
    """:func:`env_step` for every game of the batch, on one thread (it releases the GIL:
    :func:`batch_env_step` runs it on slices of the batch)."""
    for i in range(cards_b.shape[0]):
        env_step(cards_b[i], route_b[i], houses_b[i], players_b[i], meta_b[i], rules, seed_b[i],
                 opp_b[i], kind_b[i], persp_b[i], act_b[i], obs_b[i], mask_b[i], ret_b[i])


#: The arguments of :func:`batch_env_step_serial` with the game axis first (all but ``rules``).
STEP_PER_GAME = (0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13)


def batch_env_step(*args: Any) -> None:
    """:func:`batch_env_step_serial` (same arguments) in parallel over games
    (:func:`~taluva_ai.envs.threads.over_games`)."""
    over_games(batch_env_step_serial, args, STEP_PER_GAME)


# -- the env ------------------------------------------------------------------------------------


class ThurnUndTaxisVectorEnv(BatchedEnv):
    """N Thurn und Taxis games stepped by one compiled call (module docstring is the spec).

    Args:
        num_envs: N >= 1.
        opponents: ``num_players - 1`` built-in opponent names (``"random"``, ``"greedy"``)
            for the other seats in ascending seat order, or None for self-play.
        num_players: 2..4; by default ``len(opponents) + 1`` (2 in self-play).
        agent_seat: the caller's seat (with opponents), or ``"random"`` (drawn at each reset).
        illegal_action: ``"terminate"`` (default), ``"penalty"`` or ``"raise"``.
        illegal_penalty: the reward of an illegal action (default -1).
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` or ``AutoresetMode.DISABLED`` (or their
            string values).
        copy: return fresh arrays each step (True) or the env's own buffers, overwritten by
            the next step (False: faster).
        parallel: step the games on several threads (True, :mod:`taluva_ai.envs.threads`) or
            on one thread (False); by
            default parallel from :data:`~taluva_ai.envs.vector.PARALLEL_MIN_GAMES` games on.
        **options: the game's options (``all_provinces_rule``, ``route_tile_fallback``,
            ``max_rounds``).

    Raises:
        ValueError: a bad argument (named in the message).
    """

    _step_kernels = (batch_env_step, batch_env_step_serial)
    _meta_layout = MetaLayout(step=M_STEP, player=M_PLAYER, end=M_END, terminal=S_TERMINAL,
                              truncated=END_TRUNCATED)
    _score_truncated = True

    def __init__(
        self,
        num_envs: int = 1,
        opponents: list[str] | tuple[str, ...] | None = ("random",),
        num_players: int | None = None,
        agent_seat: int | str = 0,
        illegal_action: str = "terminate",
        illegal_penalty: float = -1.0,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        render_mode: str | None = None,
        parallel: bool | None = None,
        **options: Any,
    ) -> None:
        num_envs = check_num_envs(num_envs)
        if render_mode is not None:
            raise ValueError(f"render_mode: this vector env has none, got {render_mode!r}")
        self.illegal_action = check_illegal_mode(illegal_action)
        if isinstance(illegal_penalty, bool) or not isinstance(
                illegal_penalty, (int, float, np.integer, np.floating)) \
                or not np.isfinite(illegal_penalty):
            raise ValueError(f"illegal_penalty must be a finite number, got {illegal_penalty!r}")
        self.illegal_penalty = float(illegal_penalty)
        if opponents is not None:
            if isinstance(opponents, str) or not isinstance(opponents, (list, tuple)):
                raise ValueError("opponents must be a list of built-in opponent names or None, "
                                 f"got {opponents!r}")
            opponents = list(opponents)
            for o in opponents:
                if not isinstance(o, str) or o not in BUILTIN_OPPONENTS:
                    raise ValueError(f"unknown opponent {o!r}; built-in: "
                                     f"{', '.join(sorted(BUILTIN_OPPONENTS))}")
        n = (len(opponents) + 1 if opponents is not None else 2) if num_players is None \
            else num_players
        if opponents is not None and len(opponents) != n - 1:
            raise ValueError(f"{len(opponents)} opponents for {n} seats: give num_players - 1")
        if "num_players" in options:
            raise ValueError("give num_players as its own argument")
        self.game = ThurnUndTaxisGame(num_players=n, **options)
        if opponents is not None and agent_seat != "random" and (
                not isinstance(agent_seat, (int, np.integer)) or isinstance(agent_seat, bool)
                or not 0 <= agent_seat < n):
            raise ValueError(f"agent_seat must be a seat 0..{n - 1} or 'random', got "
                             f"{agent_seat!r}")
        self._set_autoreset(autoreset_mode)
        self.render_mode = None
        self.opponents = opponents
        self.agent_seat_option = agent_seat
        single_observation_space, single_action_space = game_spaces(self.game)
        self._init_batch(num_envs, copy, parallel, single_observation_space,
                         single_action_space, (OBS_SIZE,), n)
        b = self.num_envs
        self._cards = np.zeros((b, L_ROWS, NUM_CITIES), dtype=np.int8)
        self._route = np.zeros((b, MAX_PLAYERS, NUM_CITIES), dtype=np.int8)
        self._houses = np.zeros((b, MAX_PLAYERS, NUM_CITIES), dtype=np.int8)
        self._players = np.zeros((b, MAX_PLAYERS, P_SIZE), dtype=np.int16)
        self._meta = np.zeros((b, M_SIZE), dtype=np.int32)
        self._seed = np.zeros(b, dtype=np.uint64)  # each game's chance seed
        self._opp = np.zeros((b, MAX_PLAYERS, STATE_SIZE), dtype=np.uint64)
        self._kind = np.zeros((b, MAX_PLAYERS), dtype=np.int8)
        self._persp = np.full(b, -1, dtype=np.int64)

    @property
    def num_players(self) -> int:
        return self.game.num_players

    # -- helpers ----------------------------------------------------------------------------

    def _new_game(self, i: int) -> None:
        """Game ``i`` from its generator, with the draws of ``GameEnv.reset`` in its order: the
        agent's seat (``"random"``), each opponent's seed, the game's seed."""
        gen = self._gens[i]
        n = self.num_players
        self._kind[i] = EXTERNAL
        if self.opponents is not None:
            seat = int(gen.integers(n)) if self.agent_seat_option == "random" \
                else int(self.agent_seat_option)
            self._persp[i] = seat
            others = [s for s in range(n) if s != seat]
            for s, name in zip(others, self.opponents, strict=True):
                self._kind[i, s] = BUILTIN_OPPONENTS[name]
                state_from_generator(np.random.default_rng(int(gen.integers(2**31 - 1))),
                                     self._opp[i, s])
        self._seed[i] = np.uint64(int(gen.integers(2**62)))
        (self._cards[i], self._route[i], self._houses[i], self._players[i],
         self._meta[i]) = new_arrays(n)

    def _kernel_args(self, act: np.ndarray
                     ) -> tuple[tuple[np.ndarray, ...], tuple[Any, ...], tuple[np.ndarray, ...]]:
        return ((self._cards, self._route, self._houses, self._players, self._meta),
                (self.game.rules_array,),
                (self._seed, self._opp, self._kind, self._persp, act, self._obs, self._mask,
                 self._ret))

    def _seats(self) -> np.ndarray:
        """``int64[N]``: the seat each observation is of."""
        return np.where(self._persp >= 0, self._persp, self._meta[:, M_PLAYER]).astype(np.int64)

    def _info_fields(self, player: np.ndarray, step: np.ndarray) -> dict[str, np.ndarray]:
        return {"current_player": player, "agent_seat": self._seats(), "step_kind": step,
                "rewards": self._ret.copy(), "illegal_action": self._illegal.copy()}

    def _illegal_error(self, action: int, game: int) -> IllegalActionError:
        return IllegalActionError(action_to_string(action), f"masked out in game {game}: "
                                  "not a legal action (see action_mask)")


__all__ = ["ThurnUndTaxisVectorEnv", "batch_env_step", "chance_city", "env_step"]
