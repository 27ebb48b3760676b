"""The compiled env step shared by the scalar, vector and PettingZoo envs (no gymnasium here).

One env step of one game: apply the agent's engine action, then let the built-in opponents
move and resolve chance nodes (the next tile of the game's seeded deck) until a seat that the
caller drives is to move or the game is over; then write the observation planes and the view
mask (:func:`taluva_ai.games.taluva.encoding.encode_into`). :func:`batch_env_step` runs it over
a batch of games, in parallel over games (:func:`taluva_ai.envs.threads.over_games`: the kernel
releases the GIL and runs on slices of the batch on several threads).

Seat kinds (``seat_kind int8[4]``): :data:`EXTERNAL` (the caller chooses the action),
:data:`RANDOM` (uniform legal action), :data:`GREEDY` (best one-ply heuristic value,
:mod:`taluva_ai.games.taluva.heuristic`, ties uniform). The built-in opponents draw from a
per-game SplitMix64 generator (``rng uint64[1]``), so a seed fixes their moves, whatever the
thread schedule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from taluva_ai.envs.threads import over_games
from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva.encoding import (
    encode_into,
    engine_to_view,
    solo_view_to_engine,
    view_center,
    view_to_engine,
)
from taluva_ai.games.taluva.heuristic import fast_action_values
from taluva_ai.games.taluva.rules import R_SOLO
from taluva_ai.games.taluva.state import M_DRAWN, M_END, M_PLAYER, M_STEP

EXTERNAL = 0
RANDOM = 1
GREEDY = 2
#: Built-in opponents by name.
BUILTIN_OPPONENTS: dict[str, int] = {"random": RANDOM, "greedy": GREEDY}


@njit(cache=True)
def splitmix64(state):
    """Advance ``state uint64[1]`` and return a uniform ``uint64`` (SplitMix64)."""
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def rand_below(state, n):
    """Uniform integer in ``0 .. n-1`` (``n >= 1``) from the SplitMix64 ``state``."""
    return np.int64(splitmix64(state) % np.uint64(n))


@njit(cache=True)
def keep_best(ids, vals, n):
    """Move the ids of ``ids[:n]`` (``int64``) whose value ``vals[j]`` (``float64``) is the
    highest to the front, in order, and return how many there are, ``k >= 1`` for ``n >= 1``
    (the greedy opponents' ties, drawn from next). ``ids`` is overwritten in place."""
    best = vals[0]
    for j in range(1, n):
        if vals[j] > best:
            best = vals[j]
    k = 0
    for j in range(n):
        if vals[j] == best:
            ids[k] = ids[j]
            k += 1
    return k


@njit(cache=True)
def opponent_action(cells, players, meta, rules, nbr, cell_of, hexqr, origin, kind, rng, ids,
                    vals):
    """The engine action a built-in opponent of ``kind`` takes in this decision node."""
    if kind == GREEDY:
        n = fast_action_values(cells, players, meta, rules, nbr, cell_of, hexqr, origin, ids,
                               vals)
        return ids[rand_below(rng, keep_best(ids, vals, n))]
    n = K.legal_actions(cells, players, meta, rules, nbr, cell_of, origin, ids)
    return ids[rand_below(rng, n)]


@njit(cache=True)
def advance(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, seat_kind, rng, ids,
            vals):
    """Resolve chance nodes (the deck's next tile) and built-in opponents' moves until an
    external seat is to move or the game is over."""
    while meta[M_STEP] != K.S_TERMINAL:
        if meta[M_STEP] == K.S_CHANCE:
            K.apply_chance(cells, players, deck, meta, rules, nbr, cell_of, origin,
                           deck[meta[M_DRAWN]])
            continue
        kind = seat_kind[meta[M_PLAYER]]
        if kind == EXTERNAL:
            return
        a = opponent_action(cells, players, meta, rules, nbr, cell_of, hexqr, origin, kind, rng,
                            ids, vals)
        K.apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, a)


@njit(cache=True)
def env_step(cells, players, deck, meta, rng, rules, nbr, cell_of, hexqr, origin, seat_kind,
             perspective, vr, valid, view_action, center, obs, mask, ret):
    """One env step of one game.

    Args:
        view_action: the caller's view id (its legality already checked), or -1 for none (a
            reset: only advance to the first external decision).
        perspective: seat whose view the planes take, or -1 for the player to move (self-play).
        center: ``int64[2]`` in: the view centre the action refers to; out: the new centre.
        obs, mask: outputs (see :func:`encode_into`); ret: ``float64[n]`` output, the returns
            (zeros until the end).

    Returns:
        Number of legal actions outside the view in the new observation.
    """
    ids = np.empty(8 * cells.shape[0], dtype=np.int64)
    vals = np.empty(8 * cells.shape[0], dtype=np.float64)
    if view_action >= 0:
        if rules[R_SOLO] != 0:  # the bonus and box ids follow the view's 14 S^2
            a = solo_view_to_engine(view_action, cell_of, center[0], center[1], vr)
        else:
            a = view_to_engine(view_action, cell_of, center[0], center[1], vr)
        K.apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, a)
    advance(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, seat_kind, rng, ids,
            vals)
    K.returns(players, meta, rules, ret)
    p = perspective if perspective >= 0 else meta[M_PLAYER]
    qc, rc = view_center(cells, meta, cell_of)
    center[0] = qc
    center[1] = rc
    label = np.empty(cells.shape[0], dtype=np.int32)
    return encode_into(cells, players, meta, rules, nbr, cell_of, hexqr, origin, p, vr, qc, rc,
                       valid, obs, mask, ids, label)


@njit(cache=True, nogil=True)
def batch_env_step_serial(cells_b, players_b, deck_b, meta_b, rng_b, rules, nbr, cell_of, hexqr,
                          origin, seat_kind, perspective, vr, valid, act_b, center_b, obs_b,
                          mask_b, ret_b, outside_b):
    """:func:`env_step` for every game of the batch (``act_b[i] = -1``: no action), on one
    thread (it releases the GIL: :func:`batch_env_step` runs it on slices of the batch)."""
    for i in range(cells_b.shape[0]):
        outside_b[i] = env_step(cells_b[i], players_b[i], deck_b[i], meta_b[i], rng_b[i], rules,
                                nbr, cell_of, hexqr, origin, seat_kind, perspective, vr, valid,
                                act_b[i], center_b[i], obs_b[i], mask_b[i], ret_b[i])


#: The arguments of :func:`batch_env_step_serial` with the game axis first.
STEP_PER_GAME = (0, 1, 2, 3, 4, 14, 15, 16, 17, 18, 19)


def batch_env_step(*args: Any) -> None:
    """:func:`batch_env_step_serial` (same arguments) in parallel over games, on
    :func:`~taluva_ai.envs.threads.num_threads` threads."""
    over_games(batch_env_step_serial, args, STEP_PER_GAME)


@njit(cache=True, nogil=True)
def _heuristic_values(cells_b, players_b, meta_b, rules, nbr, cell_of, hexqr, origin, vr,
                      center_b, out_b):
    for i in range(cells_b.shape[0]):
        ncell = cells_b.shape[1]
        ids = np.empty(8 * ncell, dtype=np.int64)
        vals = np.empty(8 * ncell, dtype=np.float64)
        out_b[i, :] = -np.inf
        n = fast_action_values(cells_b[i], players_b[i], meta_b[i], rules, nbr, cell_of, hexqr,
                               origin, ids, vals)
        for j in range(n):
            v = engine_to_view(ids[j], ncell, hexqr, center_b[i, 0], center_b[i, 1], vr)
            if v >= 0:
                out_b[i, v] = vals[j]


def batch_heuristic_values(cells_b: np.ndarray, players_b: np.ndarray, meta_b: np.ndarray,
                           rules: np.ndarray, nbr: np.ndarray, cell_of: np.ndarray,
                           hexqr: np.ndarray, origin: int, vr: int, center_b: np.ndarray,
                           out_b: np.ndarray) -> None:
    """The greedy player's one-ply value (:mod:`taluva_ai.games.taluva.heuristic`) of every
    legal view id of every game, in parallel over games (a compiled kernel on slices of the
    batch, :func:`~taluva_ai.envs.threads.over_games`).

    ``out_b float32[B, A]`` is overwritten: ``-inf`` where an id is not legal (or its hex lies
    outside the view, or the game is at its end), the heuristic value otherwise."""
    over_games(_heuristic_values, (cells_b, players_b, meta_b, rules, nbr, cell_of, hexqr,
                                   origin, vr, center_b, out_b), (0, 1, 2, 9, 10))


@njit(cache=True)
def sample_masked(mask_b, rng):
    """``int64[B]``: a uniformly random legal id per row of ``mask_b int8[B, A]`` (-1 for a row
    with none), from the SplitMix64 ``rng uint64[1]``. For benchmarks and random baselines."""
    out = np.full(mask_b.shape[0], -1, dtype=np.int64)
    for i in range(mask_b.shape[0]):
        n = 0
        for j in range(mask_b.shape[1]):
            n += mask_b[i, j]
        if n == 0:
            continue
        k = rand_below(rng, n)
        for j in range(mask_b.shape[1]):
            if mask_b[i, j]:
                if k == 0:
                    out[i] = j
                    break
                k -= 1
    return out


def seat_kinds(num_players: int, agent_seat: int | None, opponents: list[str] | None) -> np.ndarray:
    """``int8[4]`` seat kinds: ``agent_seat`` external, the other seats the named built-in
    opponents in seat order after it; all external when ``opponents`` is None (self-play).

    Raises:
        ValueError: a wrong number of opponents or an unknown built-in opponent name.
    """
    kinds = np.zeros(4, dtype=np.int8)
    if opponents is None:
        return kinds
    if len(opponents) != num_players - 1:
        raise ValueError(f"{num_players} seats need {num_players - 1} opponents, "
                         f"got {len(opponents)}")
    assert agent_seat is not None
    for j, name in enumerate(opponents):
        if name not in BUILTIN_OPPONENTS:
            raise ValueError(f"unknown opponent {name!r}; built-in: "
                             f"{', '.join(sorted(BUILTIN_OPPONENTS))}")
        kinds[(agent_seat + 1 + j) % num_players] = BUILTIN_OPPONENTS[name]
    return kinds


#: ``meta`` fields the envs read.
__all__ = [
    "BUILTIN_OPPONENTS",
    "EXTERNAL",
    "GREEDY",
    "M_END",
    "RANDOM",
    "advance",
    "batch_env_step",
    "batch_env_step_serial",
    "env_step",
    "opponent_action",
    "sample_masked",
    "seat_kinds",
    "splitmix64",
]
