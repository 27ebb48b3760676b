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

from taluva_ai.games.choice import argmax_random
from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva import state as S
from taluva_ai.games.taluva.rules import R_EARLY_VICTORY_KINDS

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
    n = K.build_actions_labeled(cells, players, meta, rules, nbr, cell_of, ids, np.bool_(False),
                                costs, label, size, stemples)
    p = meta[S.M_PLAYER]
    huts = players[p, S.P_HUTS]
    temples = players[p, S.P_TEMPLES]
    towers = players[p, S.P_TOWERS]
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
        values[j] = _supply_terms(v, np.int64(h), np.int64(t), np.int64(w), rules)
    return n


@njit(cache=True)
def _supply_terms(v, h, t, w, rules):
    """``v`` plus the terms of the supply left after a build (``h`` huts, ``t`` temples,
    ``w`` towers): ``WIN`` for an early victory, else ``NO_HUTS`` or ``LOW_HUTS_PER``."""
    kinds = (h == 0) + (t == 0) + (w == 0)
    if kinds >= rules[R_EARLY_VICTORY_KINDS]:
        v += WIN
    elif h == 0:
        v += NO_HUTS
    elif h < LOW_HUTS:
        v += LOW_HUTS_PER * (LOW_HUTS - h)
    return v


@njit(cache=True, inline="always")
def _placement_value(cells, players, meta, rules, nbr, cell_of, hexqr, a, saved_cells,
                     saved_players, saved_meta, bids, bcost, bval):
    """Value of tile placement ``a`` (see the module docstring); the state is restored."""
    p = meta[S.M_PLAYER]
    v = a // 6
    o = a % 6
    c0 = v
    c1 = nbr[v, (o + 4) % 6]
    c2 = nbr[v, (o + 5) % 6]
    # element by element, not slices: a slice assignment compiles NumPy's broadcasting and
    # its error message (seconds of a first run's compiling)
    for f in range(cells.shape[1]):
        saved_cells[0, f] = cells[c0, f]
        saved_cells[1, f] = cells[c1, f]
        saved_cells[2, f] = cells[c2, f]
    for q in range(players.shape[0]):
        for f in range(players.shape[1]):
            saved_players[q, f] = players[q, f]
    for f in range(meta.shape[0]):
        saved_meta[f] = meta[f]
    K.place_tile_cells(cells, players, meta, rules, nbr, hexqr, a, meta[S.M_TILE])
    meta[S.M_STEP] = K.S_BUILD
    destroyed = 0.0
    for q in range(players.shape[0]):
        d = (players[q, S.P_DESTROYED] - saved_players[q, S.P_DESTROYED]) + (
            players[q, S.P_HUTS] - saved_players[q, S.P_HUTS]
        )
        destroyed += -d if q == p else d
    nb = _build_values(cells, players, meta, rules, nbr, cell_of, bids, bcost, bval)
    best = NO_BUILD
    for k in range(nb):
        best = max(best, bval[k])
    for f in range(cells.shape[1]):
        cells[c0, f] = saved_cells[0, f]
        cells[c1, f] = saved_cells[1, f]
        cells[c2, f] = saved_cells[2, f]
    for q in range(players.shape[0]):
        for f in range(players.shape[1]):
            players[q, f] = saved_players[q, f]
    for f in range(meta.shape[0]):
        meta[f] = saved_meta[f]
    return best + DESTROY * destroyed


# ---------------------------------------------------------------------------------------------
# Placement values without replaying the build enumeration
# ---------------------------------------------------------------------------------------------
# A placement changes three hexes. Unless it destroys a hut of the mover's, the mover's
# settlements stay as they are, and so does every other hex's part in the mover's builds
# (founding, temple, tower spots and expansion targets depend on the hex and on the mover's
# buildings around it). The best build value after a placement is then the value of the
# builds of the position before it, corrected at the three hexes: PlacementContext holds the
# position's counts once per turn and placement_value_fast applies the correction. It gives
# exactly _placement_value's value (tests/test_heuristic.py compares them on every
# placement of many positions); it returns NaN where _placement_value must be used instead
# (a hut of the mover's destroyed, or the solo variant's foundings).


@njit(cache=True)
def _cell_builds(level, terrain, building, adj, temple_ok, tower_ok, supply, isolated, no_lake):
    """The builds hex ``c`` offers the mover (as kernels.build_actions_labeled lists them):
    ``(founding, temple, tower, terrain index of an expansion target or -1)``. ``supply``:
    the mover's huts, temples and towers."""
    if level == 0 or building != 0 or terrain == K.VOLCANO or (no_lake and terrain == K.LAKE):
        return False, False, False, -1
    hut = supply[0] >= 1 and level == 1 and (adj == 0 or not isolated)
    temple = supply[1] >= 1 and temple_ok
    tower = supply[2] >= 1 and level >= 3 and tower_ok
    return hut, temple, tower, (terrain - K.JUNGLE if adj != 0 else -1)


@njit(cache=True)
def new_placement_context(ncell):
    """``(label, sett, count, cost, diff, scan, counts, delta, hexk)`` scratch for
    :func:`placement_context` and :func:`placement_value_fast`:
    ``label int32[H]``; ``sett int32[4, MAX_SETTLEMENTS]`` (size, temples, towers, canonical
    hex per settlement); ``count int32[S, 5]`` and ``cost int64[S, 5]`` (expansion targets and
    their levels per settlement and terrain); ``diff int32[S, S, 5]`` (targets of a terrain in
    exactly one of two settlements); ``scan int32[H]``; ``counts int64[5]`` (settlements,
    foundings, temple spots, tower spots); ``delta int64[2, S, 5]`` (a placement's change of
    ``count`` and ``cost``); ``hexk int64[3, 3]`` (per placed hex: its adjacency mask and its
    expansion terrain before and after)."""
    m = K.MAX_SETTLEMENTS
    return (np.empty(ncell, dtype=np.int32), np.empty((4, m), dtype=np.int32),
            np.empty((m, 5), dtype=np.int32), np.empty((m, 5), dtype=np.int64),
            np.empty((64, 64, 5), dtype=np.int32), np.empty(ncell, dtype=np.int32),
            np.zeros(4, dtype=np.int64), np.empty((2, 64, 5), dtype=np.int64),
            np.empty((3, 3), dtype=np.int64))


@njit(cache=True)
def placement_context(cells, players, meta, rules, nbr, cell_of, ctx):
    """Count the mover's builds in this position (before the tile is placed) into ``ctx``
    (from :func:`new_placement_context`); returns False when the fast path does not apply
    (the solo variant, or more than 64 settlements)."""
    label, sett, count, cost, diff, scan, counts, _, _ = ctx
    if rules[K.R_SOLO] != 0:
        return False
    p = meta[S.M_PLAYER]
    nscan = K._scan_cells(meta, cell_of, np.int64(0), scan)
    nsett = K.settlements(cells, nbr, scan, nscan, np.int64(p), label, sett[0], sett[1], sett[2],
                          sett[3])
    if nsett > 64:
        return False
    supply = players[p, S.P_HUTS:S.P_TOWERS + 1]
    isolated = rules[K.R_NEW_HUT_ISOLATED] != 0
    no_lake = rules[K.R_NO_LAKE_BUILDING] != 0
    count[:nsett, :] = 0
    cost[:nsett, :] = 0
    diff[:nsett, :nsett, :] = 0
    nh = 0
    nt = 0
    nw = 0
    for i in range(nscan):
        c = scan[i]
        lv = cells[c, S.C_LEVEL]
        if lv == 0 or cells[c, S.C_BUILDING] != 0:
            continue
        adj, temple_ok, tower_ok = K.mover_adjacency(cells, nbr, p, c, label, sett[0], sett[1],
                                                   sett[2])
        hut, temple, tower, k = _cell_builds(lv, cells[c, S.C_TERRAIN], np.int8(0), adj,
                                             np.bool_(temple_ok), np.bool_(tower_ok), supply,
                                             isolated, no_lake)
        nh += hut
        nt += temple
        nw += tower
        if k >= 0:
            for s in range(nsett):
                if (adj >> s) & 1:
                    count[s, k] += 1
                    cost[s, k] += lv
                    for s2 in range(s):
                        if not (adj >> s2) & 1:
                            diff[s2, s, k] += 1
                else:
                    for s2 in range(s):
                        if (adj >> s2) & 1:
                            diff[s2, s, k] += 1
    counts[0] = nsett
    counts[1] = nh
    counts[2] = nt
    counts[3] = nw
    return True


@njit(cache=True)
def placement_value_fast(cells, players, meta, rules, nbr, a, ctx):
    """:func:`_placement_value` of tile placement ``a`` from the counts of
    :func:`placement_context` (same position), without changing the state; NaN when a hut of
    the mover's would be destroyed (use :func:`_placement_value` then)."""
    label, sett, count, cost, diff, _, counts, delta, hexk = ctx
    p = meta[S.M_PLAYER]
    tile = meta[S.M_TILE]
    v = a // 6
    o = a % 6
    hexes = (np.int64(v), np.int64(nbr[v, (o + 4) % 6]), np.int64(nbr[v, (o + 5) % 6]))
    destroyed = 0.0
    for c in hexes:
        if cells[c, S.C_BUILDING] == K.HUT:
            if cells[c, S.C_OWNER] == p:
                return np.nan
            destroyed += cells[c, S.C_LEVEL]
    nsett = counts[0]
    nh = counts[1]
    nt = counts[2]
    nw = counts[3]
    supply = players[p, S.P_HUTS:S.P_TOWERS + 1]
    isolated = rules[K.R_NEW_HUT_ISOLATED] != 0
    no_lake = rules[K.R_NO_LAKE_BUILDING] != 0
    new_level = cells[v, S.C_LEVEL] + 1
    # per hex: its adjacency (unchanged) and its expansion terrain before (-1: none) and after
    adjs = hexk[0]
    old_k = hexk[1]
    new_k = hexk[2]
    dcount = delta[0]
    dcost = delta[1]
    dcount[:nsett, :] = 0
    dcost[:nsett, :] = 0
    for i in range(3):
        c = hexes[i]
        adj, temple_ok, tower_ok = K.mover_adjacency(cells, nbr, p, c, label, sett[0], sett[1],
                                                   sett[2])
        adjs[i] = adj
        hut, temple, tower, k = _cell_builds(cells[c, S.C_LEVEL], cells[c, S.C_TERRAIN],
                                             cells[c, S.C_BUILDING], adj, np.bool_(temple_ok),
                                             np.bool_(tower_ok), supply, isolated, no_lake)
        nh -= hut
        nt -= temple
        nw -= tower
        old_k[i] = k
        if k >= 0:
            for s in range(nsett):
                if (adj >> s) & 1:
                    dcount[s, k] -= 1
                    dcost[s, k] -= cells[c, S.C_LEVEL]
        if i == 0:
            terrain = K.VOLCANO
        elif i == 1:
            terrain = K.JUNGLE + tile // 5
        else:
            terrain = K.JUNGLE + tile % 5
        hut, temple, tower, k = _cell_builds(np.int8(new_level), np.int8(terrain), np.int8(0), adj,
                                             np.bool_(temple_ok), np.bool_(tower_ok), supply,
                                             isolated, no_lake)
        nh += hut
        nt += temple
        nw += tower
        new_k[i] = k
        if k >= 0:
            for s in range(nsett):
                if (adj >> s) & 1:
                    dcount[s, k] += 1
                    dcost[s, k] += new_level
    huts = np.int64(supply[0])  # int64, as _supply_terms is compiled for (one signature)
    temples = np.int64(supply[1])
    towers = np.int64(supply[2])
    best = NO_BUILD
    if nh > 0:
        best = max(best, _supply_terms(HUT, huts - 1, temples, towers, rules))
    if nt > 0:
        best = max(best, _supply_terms(TEMPLE, huts, temples - 1, towers, rules))
    if nw > 0:
        best = max(best, _supply_terms(TOWER, huts, temples, towers - 1, rules))
    size = sett[0]
    stemples = sett[1]
    for s in range(nsett):
        for k in range(5):
            n = count[s, k] + dcount[s, k]
            hc = cost[s, k] + dcost[s, k]
            if n == 0 or hc > huts:
                continue
            if not isolated and n == 1 and hc == 1:
                continue  # listed as a founding
            dup = False
            for s2 in range(s):
                d = diff[s2, s, k]
                for i in range(3):
                    if ((adjs[i] >> s) & 1) != ((adjs[i] >> s2) & 1):
                        d += (new_k[i] == k) - (old_k[i] == k)
                if d == 0:
                    dup = True  # the same hexes as an earlier settlement's expansion
                    break
            if dup:
                continue
            val = HUT - HUT_COST * (hc - 1)
            if stemples[s] == 0 and size[s] < 3 and size[s] + hc >= 3:
                val += TEMPLE_SPOT
            best = max(best, _supply_terms(val, huts - hc, temples, towers, rules))
    return best + DESTROY * destroyed


@njit(cache=True)
def action_values(cells, players, meta, rules, nbr, cell_of, hexqr, origin, ids, values):
    """Heuristic value of every legal action of the player to move, by the definition (the
    module docstring): each tile placement is played and the builds it leaves are listed
    (:func:`_placement_value`). What the greedy player uses (``state.heuristic_values()``):
    :func:`fast_action_values` gives the same values about eight times faster at a tile step
    but a first run compiles its incremental path too (docs/benchmarks.md, "Compile time").

    Args:
        ids: ``int64[>= 8H]`` receives the legal ids (ascending, as :func:`kernels.legal_actions`).
        values: ``float64[>= 8H]`` receives their values.

    Returns:
        Number of legal actions (0 at a chance node or at the end).
    """
    ncell = cells.shape[0]
    step = meta[S.M_STEP]
    bids = np.empty(8 * ncell, dtype=np.int64)
    bcost = np.empty(8 * ncell, dtype=np.int64)
    bval = np.empty(8 * ncell, dtype=np.float64)
    if step == K.S_BUILD:
        return _build_values(cells, players, meta, rules, nbr, cell_of, ids, bcost, values)
    if step != K.S_TILE:
        return 0
    n = K.tile_actions(cells, meta, nbr, cell_of, origin, ids, np.bool_(False))
    saved_cells = np.empty((3, cells.shape[1]), dtype=cells.dtype)
    saved_players = players.copy()
    saved_meta = meta.copy()
    for j in range(n):
        values[j] = _placement_value(cells, players, meta, rules, nbr, cell_of, hexqr, ids[j],
                                     saved_cells, saved_players, saved_meta, bids, bcost, bval)
    return n


@njit(cache=True)
def fast_action_values(cells, players, meta, rules, nbr, cell_of, hexqr, origin, ids, values):
    """:func:`action_values` (same arguments, exactly the same values) with the tile step's
    placements valued incrementally (:func:`placement_value_fast`, falling back to
    :func:`_placement_value` where it returns NaN): about 80 instead of 610 µs for a tile step
    of 270 placements. What the compiled searches' heuristic priors, the environments' built-in
    greedy opponent and ``state.prior_values()`` use."""
    if meta[S.M_STEP] != K.S_TILE:
        return action_values(cells, players, meta, rules, nbr, cell_of, hexqr, origin, ids,
                             values)
    ncell = cells.shape[0]
    bids = np.empty(8 * ncell, dtype=np.int64)
    bcost = np.empty(8 * ncell, dtype=np.int64)
    bval = np.empty(8 * ncell, dtype=np.float64)
    n = K.tile_actions(cells, meta, nbr, cell_of, origin, ids, np.bool_(False))
    saved_cells = np.empty((3, cells.shape[1]), dtype=cells.dtype)
    saved_players = players.copy()
    saved_meta = meta.copy()
    ctx = new_placement_context(ncell)
    fast = placement_context(cells, players, meta, rules, nbr, cell_of, ctx)
    for j in range(n):
        v = placement_value_fast(cells, players, meta, rules, nbr, ids[j], ctx) if fast \
            else np.nan
        if np.isnan(v):
            v = _placement_value(cells, players, meta, rules, nbr, cell_of, hexqr, ids[j],
                                 saved_cells, saved_players, saved_meta, bids, bcost, bval)
        values[j] = v
    return n


@njit(cache=True)
def rollout(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, greedy, samples,
            seed, out):
    """Play the game to the end from this state (modified in place) and write the returns. A
    game of 2-4 players (the solo variant's rollout is :func:`solo_kernels.rollout`).

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
    ctx = new_placement_context(ncell)
    decisions = 0
    while meta[S.M_STEP] != K.S_TERMINAL:
        step = meta[S.M_STEP]
        if step == K.S_CHANCE:
            d = meta[S.M_DRAWN]
            j = d + np.random.randint(deck.shape[0] - d)
            K.standard_apply_chance(cells, players, deck, meta, rules, nbr, cell_of, origin,
                                    deck[j])
            continue
        if not greedy:
            if step == K.S_TILE:
                a = K.sample_tile_action(cells, meta, nbr, cell_of, origin, ids)
            else:
                n = K.build_actions(cells, players, meta, rules, nbr, cell_of, ids,
                                    np.bool_(False), bcost[:0])
                a = ids[np.random.randint(n)]
        elif step == K.S_BUILD:
            n = _build_values(cells, players, meta, rules, nbr, cell_of, ids, bcost, vals)
            a = argmax_random(ids, vals, n)
        else:
            n = K.tile_actions(cells, meta, nbr, cell_of, origin, ids, np.bool_(False))
            k = min(samples, n)
            fast = placement_context(cells, players, meta, rules, nbr, cell_of, ctx)
            for j in range(k):  # partial Fisher-Yates: ids[:k] is a uniform sample
                r = j + np.random.randint(n - j)
                t = ids[j]
                ids[j] = ids[r]
                ids[r] = t
                v = placement_value_fast(cells, players, meta, rules, nbr, ids[j], ctx) \
                    if fast else np.nan
                if np.isnan(v):
                    v = _placement_value(cells, players, meta, rules, nbr, cell_of, hexqr,
                                         ids[j], saved_cells, saved_players, saved_meta,
                                         bids, bcost, bval)
                vals[j] = v
            a = argmax_random(ids, vals, k)
        K.standard_apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, a)
        decisions += 1
    K.returns(players, meta, rules, out)
    return decisions


@njit(cache=True)
def policy_actions(cells, players, meta, rules, nbr, cell_of, hexqr, origin, greedy, ids, vals):
    """The legal actions into ``ids`` (with their heuristic values into ``vals`` when
    ``greedy``), ready for :func:`policy_choice`; returns their number."""
    if greedy:
        return fast_action_values(cells, players, meta, rules, nbr, cell_of, hexqr, origin, ids,
                                  vals)
    return K.legal_actions(cells, players, meta, rules, nbr, cell_of, origin, ids)


@njit(cache=True)
def policy_choice(ids, vals, n, greedy):
    """Greedy (best value, random tie-break) or uniformly random choice among ``ids[:n]``."""
    return argmax_random(ids, vals, n) if greedy else ids[np.random.randint(n)]
