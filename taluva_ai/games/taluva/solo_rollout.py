"""The solo variant's players as Numba kernels (SOLO.md; docs/solo.md): the one-ply values of
the greedy player (:func:`action_values`), the paced policy and the rollouts of a search
(:func:`policy_values`, :func:`rollout`), over the rules of :mod:`solo_rules` and the score
of :mod:`solo_score`.
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games.choice import argmax_random, pick_equal
from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva import state as S
from taluva_ai.games.taluva.island_kernels import (
    JUNGLE,
    NUM_TILES,
    S_BUILD,
    S_CHANCE,
    S_TERMINAL,
    S_TILE,
    VOLCANO,
)
from taluva_ai.games.taluva.solo_rules import (
    A_BONUS_FACE_UP,
    A_BONUS_PILE,
    A_BOX_HUT,
    S_BONUS,
    _apply_tile,
    _box,
    build_actions,
    contact_class,
    contacts,
    place_build,
    solo_apply_action,
    solo_apply_chance,
    solo_legal_actions,
)
from taluva_ai.games.taluva.solo_score import running_score

# ---------------------------------------------------------------------------------------------
# One-ply values (the greedy player) and rollouts
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _placement_value(cells, players, deck, meta, rules, nbr, cell_of, hexqr, a, saved,
                     saved_players, saved_meta):
    """One-ply value of tile placement ``a``: the running score once the placement and what it
    triggers are resolved (a piece boxed; a bonus tile earned counts as taken, from the face-up
    tile when it is on offer, else from the draw pile). The state is restored."""
    v = a // 6
    o = a % 6
    c1 = nbr[v, (o + 4) % 6]
    c2 = nbr[v, (o + 5) % 6]
    saved[0, :] = cells[v, :]
    saved[1, :] = cells[c1, :]
    saved[2, :] = cells[c2, :]
    saved_players[:, :] = players
    saved_meta[:] = meta
    _apply_tile(cells, players, deck, meta, rules, nbr, cell_of, hexqr, a)
    if meta[S.M_STEP] == S_BONUS:
        if meta[S.M_BONUS_SRC] & S.SRC_BIT_FACE_UP:
            meta[S.M_STACK] -= 1
        else:
            meta[S.M_PILE] -= 1
    val = running_score(cells, players, meta, rules, nbr, cell_of)
    cells[v, :] = saved[0, :]
    cells[c1, :] = saved[1, :]
    cells[c2, :] = saved[2, :]
    players[:, :] = saved_players
    meta[:] = saved_meta
    return val


@njit(cache=True)
def action_values(cells, players, deck, meta, rules, nbr, cell_of, hexqr, ids, values):
    """The legal actions and their one-ply values: the running score right after each
    (the greedy player; docs/solo.md).

    Tile placements are valued by :func:`_placement_value` (their trigger included: a bonus
    tile earned counts as taken); builds are applied and taken back; ``bonus:pile`` is valued
    with one tile fewer in the draw pile, ``bonus:faceup`` with one fewer in the bonus stack,
    ``stop`` and the box choices at the running score (a boxed piece scores as one in the
    supply).

    Args:
        ids: ``int64[>= 8H]`` receives the legal ids (ascending); values: ``float64[>= 8H]``.

    Returns:
        Number of legal actions (0 at a chance node or at the end).
    """
    ncell = cells.shape[0]
    n = solo_legal_actions(cells, players, meta, rules, nbr, cell_of, ids)
    step = meta[S.M_STEP]
    if n == 0:
        return 0
    saved_players = players.copy()
    saved_meta = meta.copy()
    if step == S_TILE:
        saved = np.empty((3, cells.shape[1]), dtype=cells.dtype)
        for j in range(n):
            values[j] = _placement_value(cells, players, deck, meta, rules, nbr, cell_of, hexqr,
                                         ids[j], saved, saved_players, saved_meta)
    elif step == S_BUILD:
        saved_cells = cells.copy()
        for j in range(n):
            place_build(cells, players, meta, rules, nbr, cell_of, ids[j])
            values[j] = running_score(cells, players, meta, rules, nbr, cell_of)
            cells[:, :] = saved_cells
            players[:, :] = saved_players
            meta[:] = saved_meta
    else:
        base = 14 * ncell
        for j in range(n):
            k = ids[j] - base
            if k == A_BONUS_PILE:
                meta[S.M_PILE] -= 1
            elif k == A_BONUS_FACE_UP:
                meta[S.M_STACK] -= 1
            elif k >= A_BOX_HUT:
                _box(players, meta, k - A_BOX_HUT)
            values[j] = running_score(cells, players, meta, rules, nbr, cell_of)
            players[:, :] = saved_players
            meta[:] = saved_meta
    return n


#: Tiles a turn takes on average in the paced build rule of greedy rollouts (one regular tile,
#: some bonus tiles).
PACE_TILES_PER_TURN = 2.5
#: Greedy rollouts: value of earning a bonus tile, and of a class-1 regular tile's box.
ROLLOUT_BONUS = 2.0
ROLLOUT_BOX = -2.0


@njit(cache=True)
def _high_points(lv):
    return 8 if lv >= 4 else (3 if lv == 3 else 0)


@njit(cache=True)
def rollout_placement_value(cells, meta, rules, nbr, a):
    """The greedy rollout's quick value of tile placement ``a`` (no score computed): earning a
    bonus tile ``ROLLOUT_BONUS`` (class 3-4, an exact higher regular tile, a chaining bonus
    tile, while the turn has taken fewer than 3 tiles), a class-1 regular tile ``ROLLOUT_BOX``,
    plus the high-hex points the tile adds (SOLO.md 5)."""
    v = a // 6
    o = a % 6
    b1 = nbr[v, (o + 4) % 6]
    b2 = nbr[v, (o + 5) % 6]
    tile = meta[S.M_TILE]
    lv = cells[v, S.C_LEVEL] + 1
    regular = meta[S.M_SOURCE] == S.SOURCE_REGULAR
    last = meta[S.M_TURN_TILES] >= 3
    val = 0.0
    if lv == 1:
        # contacts of the tile as if placed: terrains written into a copy of the 3 cells
        t0 = cells[v, S.C_TERRAIN]
        t1 = cells[b1, S.C_TERRAIN]
        t2 = cells[b2, S.C_TERRAIN]
        l0 = cells[v, S.C_LEVEL]
        l1 = cells[b1, S.C_LEVEL]
        l2 = cells[b2, S.C_LEVEL]
        cells[v, S.C_TERRAIN] = VOLCANO
        cells[b1, S.C_TERRAIN] = JUNGLE + tile // 5
        cells[b2, S.C_TERRAIN] = JUNGLE + tile % 5
        cells[v, S.C_LEVEL] = 1
        cells[b1, S.C_LEVEL] = 1
        cells[b2, S.C_LEVEL] = 1
        m, u, tmask, _ = contacts(cells, rules, nbr, v, b1, b2)
        cells[v, S.C_TERRAIN] = t0
        cells[b1, S.C_TERRAIN] = t1
        cells[b2, S.C_TERRAIN] = t2
        cells[v, S.C_LEVEL] = l0
        cells[b1, S.C_LEVEL] = l1
        cells[b2, S.C_LEVEL] = l2
        cls = contact_class(rules, m, u, tmask)
        if cls >= 3 and not last:
            val += ROLLOUT_BONUS
        elif cls == 1 and regular:
            val += ROLLOUT_BOX
        return val
    exact = cells[b1, S.C_TERRAIN] == JUNGLE + tile // 5 and \
        cells[b2, S.C_TERRAIN] == JUNGLE + tile % 5
    if not last and (regular or lv >= 3 or exact):
        val += ROLLOUT_BONUS
    val += 3 * (_high_points(lv) - _high_points(lv - 1))
    return val


@njit(cache=True)
def paced_build(players, meta, ids, costs, n):
    """The build of greedy rollouts among ``ids[:n]`` (``costs``: huts each takes): a temple or
    tower when one is legal; else spend the huts at the pace of the draw pile: with ``h`` huts
    left and about ``t = ceil(pile / 2.5)`` turns to go, the build taking the most huts up to
    ``max(1, ceil(h / t))``, or the cheapest when all take more. Ties at random."""
    return pick_equal(ids, costs, n, paced_cost(players, meta, costs, n))


@njit(cache=True)
def paced_cost(players, meta, costs, n):
    """The huts :func:`paced_build` spends among builds of ``costs[:n]`` (0: a temple or tower)."""
    huts = players[0, S.P_HUTS]
    turns = max(1, int(np.ceil(meta[S.M_PILE] / PACE_TILES_PER_TURN)))
    cap = max(1, int(np.ceil(huts / turns)))
    best = -1
    cheapest = costs[0]
    for j in range(n):
        if costs[j] == 0:
            return 0
        cheapest = min(cheapest, costs[j])
        if costs[j] <= cap:
            best = max(best, costs[j])
    return best if best >= 0 else cheapest


@njit(cache=True)
def policy_values(cells, players, deck, meta, rules, nbr, cell_of, hexqr, ids, values):
    """The legal actions and the greedy rollout policy's preferences (the priors of MCTS,
    docs/solo.md): tile placements :func:`rollout_placement_value`; builds ``-|huts - p|``
    with ``p`` the huts :func:`paced_build` spends; bonus: the face-up tile 2, the draw pile
    1, stop 0; box: a hut 1, a temple or tower 0.

    Returns:
        Number of legal actions.
    """
    ncell = cells.shape[0]
    step = meta[S.M_STEP]
    if step == S_BUILD:
        costs = np.empty(ids.shape[0], dtype=np.int64)
        n = build_actions(cells, players, meta, rules, nbr, cell_of, ids, np.bool_(False),
                          costs)
        if n > 0:
            p = paced_cost(players, meta, costs, n)
            for j in range(n):
                values[j] = -abs(costs[j] - p)
        return n
    n = solo_legal_actions(cells, players, meta, rules, nbr, cell_of, ids)
    base = 14 * ncell
    for j in range(n):
        a = ids[j]
        if step == S_TILE:
            values[j] = rollout_placement_value(cells, meta, rules, nbr, a)
        elif a - base == A_BONUS_FACE_UP:
            values[j] = 2.0
        elif a - base == A_BONUS_PILE or a - base == A_BOX_HUT:
            values[j] = 1.0
        else:
            values[j] = 0.0
    return n


@njit(cache=True)
def rollout(cells, players, deck, meta, rules, nbr, cell_of, hexqr, greedy, samples, seed):
    """Play to the end from this state (modified in place); return the final score.

    Chance nodes draw uniformly among the unseen tiles (never the hidden deck order).
    ``greedy=False``: uniformly random legal actions. ``greedy=True`` (the solo game's greedy
    rollout policy, cheaper than the greedy player and paced): tile placements by
    :func:`rollout_placement_value` over every legal placement; builds by
    :func:`paced_build`; a bonus tile always taken (the face-up tile first); a hut boxed
    first. Ties are broken at random. ``samples`` is not used (the values are cheap).

    Args:
        seed: reseeds numba's ``np.random`` stream; -1 continues it.
    """
    if seed >= 0:
        np.random.seed(seed)
    ncell = cells.shape[0]
    base = 14 * ncell
    ids = np.empty(8 * ncell, dtype=np.int64)
    vals = np.empty(8 * ncell, dtype=np.float64)
    costs = np.empty(8 * ncell, dtype=np.int64)
    while meta[S.M_STEP] != S_TERMINAL:
        step = meta[S.M_STEP]
        if step == S_CHANCE:
            d = meta[S.M_DRAWN]
            j = d + np.random.randint(NUM_TILES - meta[S.M_BOTTOM] - d)
            solo_apply_chance(cells, players, deck, meta, rules, nbr, cell_of, deck[j])
            continue
        if not greedy:
            n = solo_legal_actions(cells, players, meta, rules, nbr, cell_of, ids)
            a = ids[np.random.randint(n)]
        elif step == S_TILE:
            n = solo_legal_actions(cells, players, meta, rules, nbr, cell_of, ids)
            for j in range(n):
                vals[j] = rollout_placement_value(cells, meta, rules, nbr, ids[j])
            a = argmax_random(ids, vals, n)
        elif step == S_BUILD:
            n = build_actions(cells, players, meta, rules, nbr, cell_of, ids, np.bool_(False),
                          costs)
            a = paced_build(players, meta, ids, costs, n)
        elif step == S_BONUS:
            a = base + (A_BONUS_FACE_UP if meta[S.M_BONUS_SRC] & S.SRC_BIT_FACE_UP else
                        A_BONUS_PILE)
        else:
            n = solo_legal_actions(cells, players, meta, rules, nbr, cell_of, ids)
            a = ids[0]  # box: a hut when one is left (ids ascending: hut, temple, tower)
        solo_apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, a)
    return meta[S.M_SCORE]
