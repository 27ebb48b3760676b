"""One-ply heuristic values of Taluva actions (the ``greedy`` player; MCTS greedy rollouts).

Build step: the value of a build is the sum of the terms below. Tile step: the value of a
placement is the best build value it leaves the player (``NO_BUILD`` when it leaves none, so
the player avoids elimination), plus ``DESTROY`` per opponent hut destroyed and minus
``DESTROY`` per own hut destroyed by an eruption.

==============================================  =====================================
term                                            value
==============================================  =====================================
the build is an early victory                   ``WIN`` (10000)
temple                                          ``TEMPLE`` (100)
tower                                           ``TOWER`` (80)
expansion                                       ``HUT`` - ``HUT_COST`` (4) per hut beyond one
expansion that grows a temple-less settlement
to 3 hexes or more (a temple spot next turn)    ``TEMPLE_SPOT`` (30)
found a settlement                              ``HUT`` (3)
no hut left while temples or towers remain      ``NO_HUTS`` (-300): elimination risk
fewer than ``LOW_HUTS`` (6) huts left           ``LOW_HUTS_PER`` (-20) per hut short
==============================================  =====================================
"""

from __future__ import annotations

import numpy as np
from numba import njit

from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva.rules import R_EARLY_VICTORY_KINDS
from taluva_ai.games.taluva.state import (
    M_DRAWN,
    M_PLAYER,
    M_STEP,
    M_TILE,
    P_DESTROYED,
    P_HUTS,
    P_TEMPLES,
    P_TOWERS,
)

WIN = 10000.0
TEMPLE = 100.0
TOWER = 80.0
HUT_COST = 4.0
TEMPLE_SPOT = 30.0
HUT = 3.0
NO_HUTS = -300.0
LOW_HUTS = 6
LOW_HUTS_PER = -20.0
NO_BUILD = -1000.0
DESTROY = 15.0


@njit(cache=True)
def _build_values(cells, players, meta, rules, nbr, cell_of, ids, costs, values):
    """Write the ids, huts taken and values of the legal builds; return their number."""
    ncell = cells.shape[0]
    label = np.empty(ncell, dtype=np.int32)
    size = np.empty(K.MAX_SETTLEMENTS, dtype=np.int32)
    stemples = np.empty(K.MAX_SETTLEMENTS, dtype=np.int32)
    n = K.build_actions_labeled(cells, players, meta, rules, nbr, cell_of, ids, False, costs,
                                label, size, stemples)
    p = meta[M_PLAYER]
    huts = players[p, P_HUTS]
    temples = players[p, P_TEMPLES]
    towers = players[p, P_TOWERS]
    for j in range(n):
        a = ids[j]
        h, t, w = huts, temples, towers
        if a < 7 * ncell:
            v = HUT
            h -= 1
        elif a < 8 * ncell:
            v = TEMPLE
            t -= 1
        elif a < 9 * ncell:
            v = TOWER
            w -= 1
        else:
            v = HUT - HUT_COST * (costs[j] - 1)
            h -= costs[j]
            s = label[(a - 9 * ncell) // 5]
            if stemples[s] == 0 and size[s] < 3 and size[s] + costs[j] >= 3:
                v += TEMPLE_SPOT
        kinds = (h == 0) + (t == 0) + (w == 0)
        if kinds >= rules[R_EARLY_VICTORY_KINDS]:
            v += WIN
        elif h == 0:
            v += NO_HUTS
        elif h < LOW_HUTS:
            v += LOW_HUTS_PER * (LOW_HUTS - h)
        values[j] = v
    return n


@njit(cache=True)
def _placement_value(cells, players, meta, rules, nbr, cell_of, hexqr, a, saved_cells,
                     saved_players, saved_meta, bids, bcost, bval):
    """Value of tile placement ``a`` (see the module docstring); the state is restored."""
    p = meta[M_PLAYER]
    v = a // 6
    o = a % 6
    c0 = v
    c1 = nbr[v, (o + 4) % 6]
    c2 = nbr[v, (o + 5) % 6]
    saved_cells[0, :] = cells[c0, :]
    saved_cells[1, :] = cells[c1, :]
    saved_cells[2, :] = cells[c2, :]
    saved_players[:, :] = players
    saved_meta[:] = meta
    K.place_tile_cells(cells, players, meta, rules, nbr, hexqr, a, meta[M_TILE])
    meta[M_STEP] = K.S_BUILD
    destroyed = 0.0
    for q in range(players.shape[0]):
        d = (players[q, P_DESTROYED] - saved_players[q, P_DESTROYED]) + (
            players[q, P_HUTS] - saved_players[q, P_HUTS]
        )
        destroyed += -d if q == p else d
    nb = _build_values(cells, players, meta, rules, nbr, cell_of, bids, bcost, bval)
    best = NO_BUILD
    for k in range(nb):
        best = max(best, bval[k])
    cells[c0, :] = saved_cells[0, :]
    cells[c1, :] = saved_cells[1, :]
    cells[c2, :] = saved_cells[2, :]
    players[:, :] = saved_players
    meta[:] = saved_meta
    return best + DESTROY * destroyed


@njit(cache=True)
def action_values(cells, players, meta, rules, nbr, cell_of, hexqr, origin, ids, values):
    """Heuristic value of every legal action of the player to move.

    Args:
        ids: ``int64[>= 8H]`` receives the legal ids (ascending, as :func:`kernels.legal_actions`).
        values: ``float64[>= 8H]`` receives their values.

    Returns:
        Number of legal actions (0 at a chance node or at the end).
    """
    ncell = cells.shape[0]
    step = meta[M_STEP]
    bids = np.empty(8 * ncell, dtype=np.int64)
    bcost = np.empty(8 * ncell, dtype=np.int64)
    bval = np.empty(8 * ncell, dtype=np.float64)
    if step == K.S_BUILD:
        return _build_values(cells, players, meta, rules, nbr, cell_of, ids, bcost, values)
    if step != K.S_TILE:
        return 0
    n = K.tile_actions(cells, meta, nbr, cell_of, origin, ids, False)
    saved_cells = np.empty((3, cells.shape[1]), dtype=cells.dtype)
    saved_players = players.copy()
    saved_meta = meta.copy()
    for j in range(n):
        values[j] = _placement_value(cells, players, meta, rules, nbr, cell_of, hexqr, ids[j],
                                     saved_cells, saved_players, saved_meta, bids, bcost, bval)
    return n


@njit(cache=True)
def rollout(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, greedy, samples,
            seed, out):
    """Play the game to the end from this state (modified in place) and write the returns.

    Chance nodes draw uniformly among the undrawn tiles (not the deck order: a rollout must
    not see the hidden deck). ``greedy=False``: uniformly random legal actions. ``greedy=True``
    (the cheap "greedy rollout" policy of MCTS): builds by the heuristic, tile placements by
    the best heuristic value among ``samples`` placements drawn uniformly without replacement.
    Ties are broken at random.

    Args:
        seed: reseeds numba's ``np.random`` stream; -1 continues the current stream.
        out: ``float64[num_players]`` receives :func:`kernels.returns`.

    Returns:
        Number of decisions played.
    """
    if seed >= 0:  # -1: continue numba's current random stream (a caller seeded it)
        np.random.seed(seed)
    ncell = cells.shape[0]
    ids = np.empty(8 * ncell, dtype=np.int64)
    vals = np.empty(8 * ncell, dtype=np.float64)
    bids = np.empty(8 * ncell, dtype=np.int64)
    bcost = np.empty(8 * ncell, dtype=np.int64)
    bval = np.empty(8 * ncell, dtype=np.float64)
    saved_cells = np.empty((3, cells.shape[1]), dtype=cells.dtype)
    saved_players = players.copy()
    saved_meta = meta.copy()
    decisions = 0
    while meta[M_STEP] != K.S_TERMINAL:
        step = meta[M_STEP]
        if step == K.S_CHANCE:
            d = meta[M_DRAWN]
            j = d + np.random.randint(deck.shape[0] - d)
            K.apply_chance(cells, players, deck, meta, rules, nbr, cell_of, origin, deck[j])
            continue
        if not greedy:
            if step == K.S_TILE:
                a = K.sample_tile_action(cells, meta, nbr, cell_of, origin, ids)
            else:
                n = K.build_actions(cells, players, meta, rules, nbr, cell_of, ids, False,
                                    bcost[:0])
                a = ids[np.random.randint(n)]
        elif step == K.S_BUILD:
            n = _build_values(cells, players, meta, rules, nbr, cell_of, ids, bcost, vals)
            a = argmax_random(ids, vals, n)
        else:
            n = K.tile_actions(cells, meta, nbr, cell_of, origin, ids, False)
            k = min(samples, n)
            for j in range(k):  # partial Fisher-Yates: ids[:k] is a uniform sample
                r = j + np.random.randint(n - j)
                t = ids[j]
                ids[j] = ids[r]
                ids[r] = t
                vals[j] = _placement_value(cells, players, meta, rules, nbr, cell_of, hexqr,
                                           ids[j], saved_cells, saved_players, saved_meta,
                                           bids, bcost, bval)
            a = argmax_random(ids, vals, k)
        K.apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, a)
        decisions += 1
    K.returns(players, meta, rules, out)
    return decisions


@njit(cache=True)
def policy_actions(cells, players, meta, rules, nbr, cell_of, hexqr, origin, greedy, ids, vals):
    """The legal actions into ``ids`` (with their heuristic values into ``vals`` when
    ``greedy``), ready for :func:`policy_choice`; returns their number."""
    if greedy:
        return action_values(cells, players, meta, rules, nbr, cell_of, hexqr, origin, ids, vals)
    return K.legal_actions(cells, players, meta, rules, nbr, cell_of, origin, ids)


@njit(cache=True)
def policy_choice(ids, vals, n, greedy):
    """Greedy (best value, random tie-break) or uniformly random choice among ``ids[:n]``."""
    return argmax_random(ids, vals, n) if greedy else ids[np.random.randint(n)]


@njit(cache=True)
def argmax_random(ids, vals, n):
    """The id of highest value among the first ``n``, ties broken uniformly at random (numba's
    ``np.random`` stream)."""
    best = vals[0]
    for j in range(1, n):
        best = max(best, vals[j])
    k = 0
    for j in range(n):
        if vals[j] == best:
            k += 1
    pick = np.random.randint(k)
    for j in range(n):
        if vals[j] == best:
            if pick == 0:
                return ids[j]
            pick -= 1
    return ids[0]
