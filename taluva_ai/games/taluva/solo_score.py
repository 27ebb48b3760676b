"""The score of a solo game (SOLO.md 5; docs/solo.md) as Numba kernels: the lines of the
scoring table, the final :func:`score` and the :func:`running_score` a search or the greedy
player reads mid-game. :mod:`solo_rules` stores the score when a game ends.
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva import island_kernels as IK
from taluva_ai.games.taluva import state as S
from taluva_ai.games.taluva.island_kernels import HUT, JUNGLE, VOLCANO
from taluva_ai.games.taluva.rules import (
    R_BONUS_LITERAL,
    R_HIGH_NO_VOLCANO,
    R_PATTERN_DISJOINT,
    R_TERRAIN_BEST_ONLY,
)

#: Lowest score of a won game (SOLO.md 5: below 40 is lost).
WIN_SCORE = 40

#: Lines of the scoring table (SOLO.md 5), in the order of :func:`score`'s ``lines``.
(
    L_TRIANGLE3,
    L_TRIANGLE6,
    L_HIGH_HEXES,
    L_SETTLEMENT_SIZE,
    L_HUT_LEVELS,
    L_TERRAIN_COUNTS,
    L_DISTINCT_TERRAINS,
    L_SETTLEMENT_COUNT,
    L_TILES_LEFT,
    L_BONUS,
    L_ALL_BUILT,
    L_TEMPLE_TOWER_PENALTY,
    L_HUT_PENALTY,
) = range(13)
NUM_SCORE_LINES = 13

# points by terrain id (NONE, V, J, C, S, R, L)
TRIANGLE3_POINTS = np.array([0, 0, 0, 0, 0, 1, 3], dtype=np.int64)
TRIANGLE6_POINTS = np.array([0, 6, 4, 5, 7, 8, 10], dtype=np.int64)
# points by a count, the last entry for it and anything above
HUT_LEVEL_POINTS = np.array([0, 0, 2, 6, 12], dtype=np.int64)  # a hut's level
TERRAIN_COUNT_POINTS = np.array([0, 0, 0, 0, 1, 2, 4], dtype=np.int64)  # a terrain's hexes
DISTINCT_TERRAIN_POINTS = np.array([0, 0, 0, 1, 2, 5], dtype=np.int64)  # a settlement's terrains
SETTLEMENT_COUNT_POINTS = np.array([0, 0, 0, 0, 2, 5, 10, 18], dtype=np.int64)  # settlements



# ---------------------------------------------------------------------------------------------
# Score (SOLO.md 5)
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _pattern_ok(cells, x, t):
    return x >= 0 and cells[x, S.C_LEVEL] > 0 and cells[x, S.C_TERRAIN] == t \
        and cells[x, S.C_BUILDING] == 0


@njit(cache=True)
def _best_disjoint(points, hexes, sizes, npat):
    """Highest total over pairwise disjoint patterns (exact branch and bound over the
    ``npat`` patterns, taken in order of decreasing points). Returns the chosen flags."""
    order = np.argsort(-points[:npat])
    pts = points[order]
    suffix = np.zeros(npat + 1, dtype=np.int64)
    for i in range(npat - 1, -1, -1):
        suffix[i] = suffix[i + 1] + pts[i]
    conf = np.zeros((npat, npat), dtype=np.bool_)
    for i in range(npat):
        for j in range(i + 1, npat):
            pi = order[i]
            pj = order[j]
            hit = False
            for x in range(sizes[pi]):
                for y in range(sizes[pj]):
                    if hexes[pi, x] == hexes[pj, y]:
                        hit = True
            conf[i, j] = hit
            conf[j, i] = hit
    blocked = np.zeros(npat, dtype=np.int64)
    inc = np.zeros(npat, dtype=np.bool_)
    best_inc = np.zeros(npat, dtype=np.bool_)
    st = np.zeros(npat + 1, dtype=np.int8)
    best = -1
    cur = 0
    depth = 0
    while depth >= 0:
        if depth == npat:
            if cur > best:
                best = cur
                best_inc[:] = inc
            depth -= 1
            continue
        s = st[depth]
        if s == 0:
            st[depth] = 1
            if cur + suffix[depth] <= best:
                st[depth] = 2  # nothing here can beat the best: back up
                continue
            if blocked[depth] == 0:
                inc[depth] = True
                cur += pts[depth]
                for k in range(npat):
                    if conf[depth, k]:
                        blocked[k] += 1
                depth += 1
            continue
        if s == 1:
            st[depth] = 2
            if inc[depth]:
                inc[depth] = False
                cur -= pts[depth]
                for k in range(npat):
                    if conf[depth, k]:
                        blocked[k] -= 1
            if cur + suffix[depth + 1] > best:
                depth += 1
            continue
        st[depth] = 0
        depth -= 1
    chosen = np.zeros(npat, dtype=np.bool_)
    for i in range(npat):
        if best_inc[i]:
            chosen[order[i]] = True
    return chosen


@njit(cache=True)
def score(cells, players, meta, rules, nbr, cell_of, lines):
    """The solo score of the position as if the game ended now (SOLO.md 5), by line.

    Args:
        lines: ``int64[NUM_SCORE_LINES]`` receives the points of each line of the scoring
            table (``L_TRIANGLE3`` ... ``L_HUT_PENALTY``).

    Returns:
        The total (the sum of ``lines``).
    """
    ncell = cells.shape[0]
    lines[:] = 0
    scan = np.empty(ncell, dtype=np.int32)
    nscan = IK._scan_cells(meta, cell_of, np.int64(0), scan)
    disjoint = rules[R_PATTERN_DISJOINT] != 0
    cap = 4 * nscan + 1
    ppoints = np.empty(cap if disjoint else 0, dtype=np.int64)
    phexes = np.empty((cap if disjoint else 0, 6), dtype=np.int64)
    psizes = np.empty(cap if disjoint else 0, dtype=np.int64)
    npat = 0
    no_volcano = rules[R_HIGH_NO_VOLCANO] != 0
    for i in range(nscan):
        x = scan[i]
        lv = cells[x, S.C_LEVEL]
        if lv == 0 or cells[x, S.C_BUILDING] != 0:
            continue
        t = cells[x, S.C_TERRAIN]
        if lv >= 3 and not (no_volcano and t == VOLCANO):
            lines[L_HIGH_HEXES] += 3 if lv == 3 else 8
        for i0 in range(2):  # the two triangles with x as their corner of reading order
            xu = nbr[x, i0]
            xw = nbr[x, i0 + 1]
            if not (_pattern_ok(cells, xu, t) and _pattern_ok(cells, xw, t)):
                continue
            x2u = nbr[xu, i0]  # the 6-hex triangle's outer row (xu, xw are on the board)
            xuw = nbr[xu, i0 + 1]
            x2w = nbr[xw, i0 + 1]
            for nhex in (3, 6):
                if nhex == 6 and not (_pattern_ok(cells, x2u, t) and _pattern_ok(cells, xuw, t)
                                      and _pattern_ok(cells, x2w, t)):
                    break
                # > 0 skips only the 3-hex triangles of terrains that score none (an island
                # hex has a terrain, and every terrain's 6-hex triangle scores)
                pts = TRIANGLE3_POINTS[t] if nhex == 3 else TRIANGLE6_POINTS[t]
                if pts <= 0:
                    continue
                if disjoint:
                    ppoints[npat] = pts
                    phexes[npat, 0] = x  # of a 3-hex one only the first three are read
                    phexes[npat, 1] = xu
                    phexes[npat, 2] = xw
                    phexes[npat, 3] = x2u
                    phexes[npat, 4] = xuw
                    phexes[npat, 5] = x2w
                    psizes[npat] = nhex
                    npat += 1
                else:
                    lines[L_TRIANGLE3 if nhex == 3 else L_TRIANGLE6] += pts
    if disjoint and npat > 0:
        chosen = _best_disjoint(ppoints, phexes, psizes, np.int64(npat))
        for k in range(npat):
            if chosen[k]:
                lines[L_TRIANGLE3 if psizes[k] == 3 else L_TRIANGLE6] += ppoints[k]
    # settlements
    label = np.full(ncell, -1, dtype=np.int32)
    size = np.empty(IK.MAX_SETTLEMENTS, dtype=np.int32)
    tmp = np.empty(IK.MAX_SETTLEMENTS, dtype=np.int32)
    ns = IK.settlements(cells, nbr, scan, nscan, np.int64(0), label, size, tmp, tmp, tmp)
    terr_count = np.zeros((max(ns, 1), 7), dtype=np.int64)
    for i in range(nscan):
        x = scan[i]
        s = label[x]
        if s < 0:
            continue
        terr_count[s, cells[x, S.C_TERRAIN]] += 1
        if cells[x, S.C_BUILDING] == HUT:
            lines[L_HUT_LEVELS] += HUT_LEVEL_POINTS[min(cells[x, S.C_LEVEL], 4)]
    best_only = rules[R_TERRAIN_BEST_ONLY] != 0
    for s in range(ns):
        if size[s] >= 6:
            lines[L_SETTLEMENT_SIZE] += 4
        distinct = 0
        tsum = 0
        tbest = 0
        for t in range(JUNGLE, JUNGLE + 5):
            c = terr_count[s, t]
            if c > 0:
                distinct += 1
            pts = TERRAIN_COUNT_POINTS[min(c, 6)]
            tsum += pts
            tbest = max(tbest, pts)
        lines[L_TERRAIN_COUNTS] += tbest if best_only else tsum
        lines[L_DISTINCT_TERRAINS] += DISTINCT_TERRAIN_POINTS[min(distinct, 5)]
    lines[L_SETTLEMENT_COUNT] = SETTLEMENT_COUNT_POINTS[min(ns, 7)]
    # tiles
    left = meta[S.M_PILE] + meta[S.M_STACK] + meta[S.M_ASIDE]
    if left == 0:
        lines[L_TILES_LEFT] = 10
    elif left <= 3:
        lines[L_TILES_LEFT] = 5
    elif left <= 6:
        lines[L_TILES_LEFT] = 2
    elif left <= 10:
        lines[L_TILES_LEFT] = 0
    elif left <= 12:
        lines[L_TILES_LEFT] = -1
    else:
        lines[L_TILES_LEFT] = -(left - 11)
    if rules[R_BONUS_LITERAL] != 0:
        lines[L_BONUS] = meta[S.M_PILE] - meta[S.M_STACK]
    else:
        lines[L_BONUS] = S.SOLO_STACK - meta[S.M_STACK]
    # pieces
    huts = players[0, S.P_HUTS]
    temples = players[0, S.P_TEMPLES]
    towers = players[0, S.P_TOWERS]
    boxed = meta[S.M_BOXED_HUTS] + meta[S.M_BOXED_TEMPLES] + meta[S.M_BOXED_TOWERS]
    if huts + temples + towers == 0 and boxed == 0:
        lines[L_ALL_BUILT] = 5
    lines[L_TEMPLE_TOWER_PENALTY] = -3 * (temples + towers + meta[S.M_BOXED_TEMPLES]
                                          + meta[S.M_BOXED_TOWERS])
    lines[L_HUT_PENALTY] = -(huts + meta[S.M_BOXED_HUTS] + players[0, S.P_DESTROYED])
    total = 0
    for k in range(NUM_SCORE_LINES):
        total += lines[k]
    return total


@njit(cache=True)
def running_score(cells, players, meta, rules, nbr, cell_of):
    """:func:`score` of the position (the running score), total only."""
    lines = np.empty(NUM_SCORE_LINES, dtype=np.int64)
    return score(cells, players, meta, rules, nbr, cell_of, lines)


@njit(cache=True)
def batch_running_score(cells_b, players_b, meta_b, rules, nbr, cell_of, out):
    """:func:`running_score` of every game of a batch into ``out int64[B]``."""
    for i in range(cells_b.shape[0]):
        out[i] = running_score(cells_b[i], players_b[i], meta_b[i], rules, nbr, cell_of)
