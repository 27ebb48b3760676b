"""Numba-compiled rules kernels: legal masks, apply, settlements, elimination, the end.

Every function here works on the arrays of :mod:`state` for one game; the ``batch_*``
functions loop the same kernels over a leading batch axis. This module is the only
implementation of the rules in the project: the object API, envs, agents and the arena all
call it.

Action ids (``H`` = number of board hexes, ``c`` a cell index, see :mod:`hexgrid`):

==============  =====================  ==========================================
range           meaning                decoding
==============  =====================  ==========================================
[0, 6H)         tile placement         volcano cell ``id // 6``, orientation ``id % 6``
[6H, 7H)        found a settlement     hut on cell ``id - 6H``
[7H, 8H)        build a temple         on cell ``id - 7H``
[8H, 9H)        build a tower          on cell ``id - 8H``
[9H, 14H)       expand a settlement    settlement whose smallest cell is ``(id - 9H) // 5``,
                                       terrain ``JUNGLE + (id - 9H) % 5``
[14H, 14H+6)    solo only              bonus tile from the draw pile, the face-up tile,
                                       stop; box a hut, temple, tower (:mod:`solo_kernels`)
==============  =====================  ==========================================

The solo variant (``rules[R_SOLO]``, SOLO.md) is a mode of these kernels: ``legal_actions``,
``apply_action``, ``apply_chance`` and ``returns`` hand a solo game to :mod:`solo_kernels`,
which places tiles with :func:`place_tile_cells`, checks eruptions with :func:`_eruption_ok`
and builds with :func:`build_actions` / :func:`place_build` (whose founding follows the solo
rule, :func:`found_cells`).

Kernel arguments follow one order: ``cells, players, deck, meta, rules, nbr, cell_of, hexqr``
where ``nbr`` is ``int32[H, 6]``, ``cell_of`` ``int32[2R+1, 2R+1]`` and ``hexqr`` ``int32[H, 2]``.

Compile time (docs/benchmarks.md, "Compile time"). Numba compiles every kernel into a module of
its own with all its callees linked in, then optimizes and machine-codes that whole module, so a
kernel deep in a chain of calls is compiled again inside each kernel above it. Two rules keep a
first run short:

- a kernel with one caller in the rules (``apply_tile``, ``apply_build``, ``_no_build``,
  ``place_build``, ...) and the thin dispatchers (``build_actions``,
  ``standard_legal_actions``) are ``inline="always"``: Numba puts their code into the caller
  instead of compiling them on their own (only where another kernel calls them: called from
  Python they are compiled as usual). Kernels with several callers are not inlined: each copy
  would be typed and lowered again, which costs more than it saves;
- every kernel is called with one set of argument types (``np.int64(...)``,
  ``np.bool_(...)`` where a caller passes an ``int32`` from an array or a literal
  ``True``/``False``), so it is compiled once, not once per type.
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games import compiling
from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva.rules import (
    FOUND_FLOOD,
    FOUND_PLAIN,
    R_DECK_SIZE,
    R_DESTROYED_HUTS_RETURN,
    R_EARLY_VICTORY_KINDS,
    R_FOUND,
    R_NEW_HUT_ISOLATED,
    R_NO_LAKE_BUILDING,
    R_PLAYERS,
    R_RANKED,
    R_SOLO,
    R_TIEBREAK_TOWERS_FIRST,
    R_TILE_PREVIEW,
)
from taluva_ai.games.taluva.state import (
    C_BUILDING,
    C_LEVEL,
    C_OWNER,
    C_TERRAIN,
    C_TILE,
    M_DRAW_FOR,
    M_DRAWN,
    M_END,
    M_NELIM,
    M_NEXT_BEST,
    M_NEXT_WORST,
    M_PLACED,
    M_PLAYER,
    M_PLY,
    M_QMAX,
    M_QMIN,
    M_RMAX,
    M_RMIN,
    M_SCORE,
    M_SETUP,
    M_STEP,
    M_TILE,
    P_DESTROYED,
    P_ELIM_ORDER,
    P_HAND,
    P_HUTS,
    P_PLACE,
    P_STATUS,
    P_TEMPLES,
    P_TOWERS,
    START_HUTS,
    START_TEMPLES,
    START_TOWERS,
)

compiling.install()  # a first compile says so (taluva_ai.games.compiling)

# Plain ints so that Numba folds them as constants.
VOLCANO = 1
JUNGLE = 2
LAKE = 6
HUT = 1
TEMPLE = 2
TOWER = 3
S_CHANCE = 0
S_TILE = 1
S_BUILD = 2
S_TERMINAL = 3
ACTIVE = 0
ELIMINATED = 1
FINISHED = 2
END_EARLY_VICTORY = 1
END_LAST_STANDING = 2
END_TILES_OUT = 3
END_TRUNCATED = 4
NUM_TILES = 48
MAX_SETTLEMENTS = 128


def action_bases(num_cells: int) -> tuple[int, int, int, int, int, int]:
    """``(hut, temple, tower, expand, build_start, total)`` id offsets for ``num_cells`` hexes."""
    h = num_cells
    return 6 * h, 7 * h, 8 * h, 9 * h, 6 * h, 14 * h


# ---------------------------------------------------------------------------------------------
# Scanning helpers
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _scan_cells(meta, cell_of, margin, out):
    """Write the cells of the island's bounding box grown by ``margin`` (ascending index)."""
    radius = (cell_of.shape[0] - 1) // 2
    r0 = max(meta[M_RMIN] - margin, -radius)
    r1 = min(meta[M_RMAX] + margin, radius)
    q0 = max(meta[M_QMIN] - margin, -radius)
    q1 = min(meta[M_QMAX] + margin, radius)
    n = 0
    for r in range(r0, r1 + 1):
        for q in range(q0, q1 + 1):
            c = cell_of[q + radius, r + radius]
            if c >= 0:
                out[n] = c
                n += 1
    return n


@njit(cache=True)
def settlements(cells, nbr, scan, nscan, owner, label, size, temples, towers, canon):
    """Label the settlements (maximal groups of adjacent hexes with buildings of one player).

    Args:
        scan: cells to consider (ascending), ``nscan`` of them; must cover every building.
        owner: label only this seat's buildings, or every seat's when ``owner < 0``.
        label: ``int32[H]`` output, settlement index per cell, ``-1`` where none. Every cell
            in ``scan`` is written; others are left as they are.
        size, temples, towers, canon: ``int32[MAX_SETTLEMENTS]`` outputs: hexes, temples and
            towers of each settlement, and its smallest cell (the settlement's id in actions).

    Returns:
        Number of settlements. They are numbered in order of their smallest cell.
    """
    for i in range(nscan):
        label[scan[i]] = -1
    stack = np.empty(nscan, dtype=np.int32)
    ns = 0
    for i in range(nscan):
        c0 = scan[i]
        if cells[c0, C_BUILDING] == 0 or label[c0] >= 0:
            continue
        own = cells[c0, C_OWNER]
        if owner >= 0 and own != owner:
            continue
        label[c0] = ns
        size[ns] = 0
        temples[ns] = 0
        towers[ns] = 0
        canon[ns] = c0
        top = 0
        stack[top] = c0
        top += 1
        while top > 0:
            top -= 1
            c = stack[top]
            size[ns] += 1
            b = cells[c, C_BUILDING]
            if b == TEMPLE:
                temples[ns] += 1
            elif b == TOWER:
                towers[ns] += 1
            for d in range(6):
                n = nbr[c, d]
                if n >= 0 and cells[n, C_BUILDING] != 0 and cells[n, C_OWNER] == own:
                    if label[n] < 0:
                        label[n] = ns
                        stack[top] = n
                        top += 1
        ns += 1
    return ns


# ---------------------------------------------------------------------------------------------
# Tile placement
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _tile_context(cells, meta, nbr, cell_of):
    """Cells to scan (the island's box grown by 2), and per cell: ``coast`` (empty, next to the
    island) and ``near`` (empty, within 1 of the coast: the only possible volcano hexes of a
    sea-level placement)."""
    ncell = cells.shape[0]
    scan = np.empty(ncell, dtype=np.int32)
    nscan = _scan_cells(meta, cell_of, np.int64(2), scan)
    coast = np.zeros(ncell, dtype=np.bool_)
    near = np.zeros(ncell, dtype=np.bool_)
    for i in range(nscan):
        c = scan[i]
        if cells[c, C_LEVEL] > 0:
            for d in range(6):
                m = nbr[c, d]
                if m >= 0 and cells[m, C_LEVEL] == 0 and not coast[m]:
                    coast[m] = True
                    near[m] = True
                    for d2 in range(6):
                        m2 = nbr[m, d2]
                        if m2 >= 0:
                            near[m2] = True
    return scan, nscan, coast, near


@njit(cache=True)
def _sea_ok(cells, nbr, coast, v, o):
    """Sea-level placement (v, o): three empty hexes on the board, one next to the island."""
    a = nbr[v, (o + 4) % 6]
    b = nbr[v, (o + 5) % 6]
    if a < 0 or b < 0:
        return False
    if cells[a, C_LEVEL] != 0 or cells[b, C_LEVEL] != 0:
        return False
    return coast[v] or coast[a] or coast[b]


@njit(cache=True)
def _eruption_ok(cells, nbr, v, o, label, size):
    """Eruption (v, o) on the volcano at ``v`` (RULES.md Step 1, eruption rules 2-5; rule 1 is
    the caller's). ``label`` / ``size``: settlements of all players, computed by the caller
    when ``label[0] == -2`` (lazily, on the first hut found underneath)."""
    lv = cells[v, C_LEVEL]
    a = nbr[v, (o + 4) % 6]
    b = nbr[v, (o + 5) % 6]
    if a < 0 or b < 0:
        return False
    if cells[a, C_LEVEL] != lv or cells[b, C_LEVEL] != lv:
        return False
    tv = cells[v, C_TILE]
    if cells[a, C_TILE] == tv and cells[b, C_TILE] == tv:
        return False  # exactly on one tile
    ba = cells[a, C_BUILDING]
    bb = cells[b, C_BUILDING]
    if ba == TEMPLE or ba == TOWER or bb == TEMPLE or bb == TOWER:
        return False
    if ba == HUT:
        sa = label[a]
        covered = 2 if (bb == HUT and label[b] == sa) else 1
        if size[sa] <= covered:
            return False  # would cover a whole settlement
    if bb == HUT:
        sb = label[b]
        covered = 2 if (ba == HUT and label[a] == sb) else 1
        if size[sb] <= covered:
            return False
    return True


@njit(cache=True)
def _all_settlements(cells, nbr, scan, nscan):
    ncell = cells.shape[0]
    label = np.full(ncell, -1, dtype=np.int32)
    size = np.empty(MAX_SETTLEMENTS, dtype=np.int32)
    tmp = np.empty(MAX_SETTLEMENTS, dtype=np.int32)
    settlements(cells, nbr, scan, nscan, np.int64(-1), label, size, tmp, tmp, tmp)
    return label, size


@njit(cache=True)
def _has_hut_under(cells, nbr, v):
    for d in range(6):
        m = nbr[v, d]
        if m >= 0 and cells[m, C_BUILDING] == HUT:
            return True
    return False


@njit(cache=True)
def tile_actions(cells, meta, nbr, cell_of, origin, out, first_only):
    """Legal tile placements (RULES.md Step 1) for the tile in hand, ascending ids.

    Sea-level placement: three empty hexes, one of them adjacent to the island. Eruption:
    volcano on a volcano, three hexes at one level, not exactly on one tile, no temple or tower
    underneath, no settlement covered whole. All three hexes within the board bound.

    Args:
        origin: cell of ``(0, 0)``, where the first tile's volcano goes.
        out: ``int64[>= 6H]`` receives the ids.
        first_only: stop at the first legal placement (for "is there any").

    Returns:
        Number of ids written.
    """
    if meta[M_PLACED] == 0:
        for o in range(6):
            out[o] = origin * 6 + o
            if first_only:
                return 1
        return 6
    scan, nscan, coast, near = _tile_context(cells, meta, nbr, cell_of)
    label = np.empty(0, dtype=np.int32)
    size = np.empty(0, dtype=np.int32)
    have_labels = False
    n = 0
    for i in range(nscan):
        v = scan[i]
        lv = cells[v, C_LEVEL]
        if lv == 0:
            if not near[v]:
                continue
            for o in range(6):
                # _sea_ok written out: the call is not inlined by LLVM and costs 40% of the
                # mask (tests/test_kernels.py checks that the two agree)
                a = nbr[v, (o + 4) % 6]
                b = nbr[v, (o + 5) % 6]
                if a < 0 or b < 0:
                    continue
                if cells[a, C_LEVEL] != 0 or cells[b, C_LEVEL] != 0:
                    continue
                if coast[v] or coast[a] or coast[b]:
                    out[n] = v * 6 + o
                    n += 1
                    if first_only:
                        return n
        elif cells[v, C_TERRAIN] == VOLCANO:
            if not have_labels and _has_hut_under(cells, nbr, v):
                label, size = _all_settlements(cells, nbr, scan, nscan)
                have_labels = True
            for o in range(6):
                if _eruption_ok(cells, nbr, v, o, label, size):
                    out[n] = v * 6 + o
                    n += 1
                    if first_only:
                        return n
    return n


@njit(cache=True)
def sample_tile_action(cells, meta, nbr, cell_of, origin, cand):
    """A uniformly random legal tile placement (numba's ``np.random`` stream), without listing
    them all: candidates (near hexes and volcanoes x 6 orientations) are drawn until one passes
    the same checks as :func:`tile_actions` (rejection sampling is uniform over the legal set).

    Args:
        cand: ``int64[>= 6H]`` scratch.

    Returns:
        An action id, or -1 when there is no legal placement.
    """
    if meta[M_PLACED] == 0:
        return origin * 6 + np.random.randint(6)
    scan, nscan, coast, near = _tile_context(cells, meta, nbr, cell_of)
    k = 0
    for i in range(nscan):
        v = scan[i]
        lv = cells[v, C_LEVEL]
        if (lv == 0 and near[v]) or (lv > 0 and cells[v, C_TERRAIN] == VOLCANO):
            cand[k] = v  # a possible volcano hex: sea-level candidate or an eruption
            k += 1
    label = np.empty(0, dtype=np.int32)
    size = np.empty(0, dtype=np.int32)
    have_labels = False
    for _ in range(64 * 6 * max(k, 1)):
        j = np.random.randint(6 * k)
        v = cand[j // 6]
        o = j % 6
        if cells[v, C_LEVEL] == 0:
            if _sea_ok(cells, nbr, coast, v, o):
                return v * 6 + o
        else:
            if not have_labels and _has_hut_under(cells, nbr, v):
                label, size = _all_settlements(cells, nbr, scan, nscan)
                have_labels = True
            if _eruption_ok(cells, nbr, v, o, label, size):
                return v * 6 + o
    # Practically unreachable when a placement exists (the chance of missing is below e^-64);
    # fall back to the full list so the result is exact in every case.
    n = tile_actions(cells, meta, nbr, cell_of, origin, cand, np.bool_(False))
    if n == 0:
        return -1
    return cand[np.random.randint(n)]


# ---------------------------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def build_actions(cells, players, meta, rules, nbr, cell_of, out, first_only, cost_out):
    """Legal builds (RULES.md Step 2) of the player to move, ascending ids.

    Found a settlement (hut on an empty level-1 hex, isolated from own settlements under
    ``new_hut_isolated``), expand a settlement (one settlement x one terrain, every directly
    adjacent empty hex of that terrain, cost = sum of levels <= huts left), temple (next to an own
    settlement of >= 3 hexes with no temple), tower (level >= 3, next to an own settlement with no
    tower). Never on a volcano or an occupied hex; not on lake under ``no_lake_building``.

    One id per distinct outcome: of several settlements whose expansion into one terrain fills
    exactly the same hexes, only the one with the smallest cell is listed; with
    ``new_hut_isolated=False`` an expansion that fills one level-1 hex equals founding a hut
    there and is listed as the hut.

    Args:
        out: ``int64[>= 8H]`` receives the ids.
        first_only: stop at the first legal build.
        cost_out: ``int64`` array; when it has ``>= 8H`` entries, receives the huts each build
            takes from the supply (temple and tower 0); pass an empty array to skip.

    Returns:
        Number of ids written to ``out``.
    """
    ncell = cells.shape[0]
    label = np.empty(ncell, dtype=np.int32)
    size = np.empty(MAX_SETTLEMENTS, dtype=np.int32)
    stemples = np.empty(MAX_SETTLEMENTS, dtype=np.int32)
    return build_actions_labeled(cells, players, meta, rules, nbr, cell_of, out, first_only,
                                 cost_out, label, size, stemples)


@njit(cache=True, inline="always")
def takes_building(cells, c, no_lake):
    """Whether hex ``c`` takes a building of any kind (RULES.md Step 2): on the island, free,
    not a volcano, and not a lake under ``no_lake_building``."""
    if cells[c, C_LEVEL] == 0 or cells[c, C_BUILDING] != 0:
        return False
    terr = cells[c, C_TERRAIN]
    return not (terr == VOLCANO or (no_lake and terr == LAKE))


@njit(cache=True)
def build_sites(cells, meta, rules, nbr, cell_of, p, out):
    """The hexes where seat ``p`` could build a temple and a tower now, whatever its supply
    and whoever is to move: ``out[0]`` the temple sites (a free hex next to one of its
    settlements of >= 3 hexes with no temple), ``out[1]`` the tower sites (a free hex of level
    >= 3 next to one of its settlements with no tower), by the conditions of
    :func:`build_actions` (RULES.md Step 2.3-2.4). When a seat has built all its huts, these
    are what keeps it from elimination (RULES.md "Elimination").

    Args:
        out: ``int64[>= 2]``, overwritten.
    """
    ncell = cells.shape[0]
    scan = np.empty(ncell, dtype=np.int32)
    nscan = _scan_cells(meta, cell_of, np.int64(0), scan)
    label = np.empty(ncell, dtype=np.int32)
    size = np.empty(MAX_SETTLEMENTS, dtype=np.int32)
    stemples = np.empty(MAX_SETTLEMENTS, dtype=np.int32)
    stowers = np.empty(MAX_SETTLEMENTS, dtype=np.int32)
    canon = np.empty(MAX_SETTLEMENTS, dtype=np.int32)
    settlements(cells, nbr, scan, nscan, np.int64(p), label, size, stemples, stowers, canon)
    no_lake = rules[R_NO_LAKE_BUILDING] != 0
    out[0] = 0
    out[1] = 0
    for i in range(nscan):
        c = scan[i]
        if not takes_building(cells, c, no_lake):
            continue
        _, temple_ok, tower_ok = mover_adjacency(cells, nbr, p, c, label, size, stemples,
                                                 stowers)
        if temple_ok:
            out[0] += 1
        if tower_ok and cells[c, C_LEVEL] >= 3:
            out[1] += 1


@njit(cache=True, inline="always")
def mover_adjacency(cells, nbr, p, c, label, size, stemples, stowers):
    """Settlements of seat ``p`` next to hex ``c`` (a bit mask of their labels, as
    :func:`settlements` numbered them), and whether one of them takes a temple (>= 3 hexes, no
    temple) and one a tower (no tower). Inlined into its callers (the legal builds, the
    heuristic's placement values)."""
    adj = np.int64(0)
    temple_ok = False
    tower_ok = False
    for d in range(6):
        m = nbr[c, d]
        # m may lie outside the scanned box, where label is not written: a building of the
        # mover's is inside it, and labelled
        if m >= 0 and cells[m, C_BUILDING] != 0 and cells[m, C_OWNER] == p:
            s = label[m]
            adj |= np.int64(1) << s
            if size[s] >= 3 and stemples[s] == 0:
                temple_ok = True
            if stowers[s] == 0:
                tower_ok = True
    return adj, temple_ok, tower_ok


@njit(cache=True)
def build_actions_labeled(cells, players, meta, rules, nbr, cell_of, out, first_only, cost_out,
                          label, size, stemples):
    """:func:`build_actions`, leaving the mover's settlements as :func:`settlements` labels
    them: ``label`` (``int32[H]`` scratch; on return, the settlement of each of the mover's
    buildings, other entries undefined), ``size`` and ``stemples``
    (``int32[MAX_SETTLEMENTS]``: hexes and temples per settlement). The heuristic values
    builds from them without labelling twice."""
    ncell = cells.shape[0]
    hut_base = 6 * ncell
    temple_base = 7 * ncell
    tower_base = 8 * ncell
    expand_base = 9 * ncell
    p = meta[M_PLAYER]
    huts = players[p, P_HUTS]
    ntemples = players[p, P_TEMPLES]
    ntowers = players[p, P_TOWERS]
    isolated = rules[R_NEW_HUT_ISOLATED] != 0
    no_lake = rules[R_NO_LAKE_BUILDING] != 0
    # solo founding (SOLO.md 3.3): the hex and its same-terrain neighbours, all or nothing
    solo_found = rules[R_SOLO] != 0 and rules[R_FOUND] != FOUND_PLAIN

    scan = np.empty(ncell, dtype=np.int32)
    nscan = _scan_cells(meta, cell_of, np.int64(0), scan)
    stowers = np.empty(MAX_SETTLEMENTS, dtype=np.int32)
    canon = np.empty(MAX_SETTLEMENTS, dtype=np.int32)
    nsett = settlements(cells, nbr, scan, nscan, np.int64(p), label, size, stemples, stowers,
                        canon)

    hut_ids = np.empty(nscan, dtype=np.int64)
    temple_ids = np.empty(nscan, dtype=np.int64)
    tower_ids = np.empty(nscan, dtype=np.int64)
    nh = 0
    nt = 0
    nw = 0
    count = np.zeros((nsett, 5), dtype=np.int32)
    cost = np.zeros((nsett, 5), dtype=np.int64)
    tgt_mask = np.empty(nscan, dtype=np.int64)
    tgt_k = np.empty(nscan, dtype=np.int32)
    ntgt = 0
    for i in range(nscan):
        c = scan[i]
        if not takes_building(cells, c, no_lake):
            continue
        lv = cells[c, C_LEVEL]
        terr = cells[c, C_TERRAIN]
        adj, temple_ok, tower_ok = mover_adjacency(cells, nbr, p, c, label, size, stemples,
                                                   stowers)
        if huts >= 1 and lv == 1 and (adj == 0 or not isolated):
            hut_ids[nh] = hut_base + c
            nh += 1
        if ntemples >= 1 and temple_ok:
            temple_ids[nt] = temple_base + c
            nt += 1
        if ntowers >= 1 and lv >= 3 and tower_ok:
            tower_ids[nw] = tower_base + c
            nw += 1
        if adj != 0:
            k = terr - JUNGLE
            tgt_mask[ntgt] = adj
            tgt_k[ntgt] = k
            ntgt += 1
            for s in range(nsett):
                if (adj >> s) & 1:
                    count[s, k] += 1
                    cost[s, k] += lv
        if first_only:
            if solo_found:  # a founding's cost is known only below
                if nt + nw > 0:
                    out[0] = temple_base + c if nt > 0 else tower_base + c
                    return 1
            elif nh + nt + nw > 0:
                out[0] = hut_base + c if nh > 0 else (temple_base + c if nt > 0 else
                                                      tower_base + c)
                return 1
    hut_cost = np.empty(nh, dtype=np.int64) if solo_found else hut_ids  # no allocation then
    if solo_found:
        nh = _solo_foundings(cells, rules, nbr, huts, hut_ids, np.int64(nh), hut_cost)
        if first_only and nh > 0:
            out[0] = hut_ids[0]
            return 1
    want_cost = cost_out.shape[0] > 0
    n = 0
    for j in range(nh):
        out[n] = hut_ids[j]
        if want_cost:
            cost_out[n] = hut_cost[j] if solo_found else 1
        n += 1
    for j in range(nt):
        out[n] = temple_ids[j]
        if want_cost:
            cost_out[n] = 0
        n += 1
    for j in range(nw):
        out[n] = tower_ids[j]
        if want_cost:
            cost_out[n] = 0
        n += 1
    for s in range(nsett):
        for k in range(5):
            if count[s, k] == 0 or cost[s, k] > huts:
                continue
            if not isolated and not solo_found and count[s, k] == 1 and cost[s, k] == 1:
                continue  # the same outcome as founding a hut on that hex
            dup = False
            for s2 in range(s):
                if count[s2, k] != count[s, k]:
                    continue
                same = True
                for j in range(ntgt):
                    if tgt_k[j] == k and ((tgt_mask[j] >> s) & 1) != ((tgt_mask[j] >> s2) & 1):
                        same = False
                        break
                if same:
                    dup = True
                    break
            if dup:
                continue
            out[n] = expand_base + canon[s] * 5 + k
            if want_cost:
                cost_out[n] = cost[s, k]
            n += 1
            if first_only:
                return n
    return n


@njit(cache=True)
def found_cells(cells, rules, nbr, c, out, seen):
    """Hexes that founding a settlement on ``c`` fills: ``c`` alone (RULES.md Step 2.1, and the
    solo option ``found_plain``); in the solo variant ``c`` and every empty hex of its terrain
    directly adjacent to it (SOLO.md 3.3), or with ``found_flood`` the whole connected area of
    empty hexes of that terrain (SOLO.md 6.11). Each filled hex takes as many huts as its level.

    Args:
        out: ``int32[>= H]`` receives the cells, ``c`` first.
        seen: ``bool[H]`` scratch, all False (left so); may be empty unless ``found_flood``.

    Returns:
        Number of cells written.
    """
    out[0] = c
    if rules[R_SOLO] == 0 or rules[R_FOUND] == FOUND_PLAIN:
        return 1
    terr = cells[c, C_TERRAIN]
    n = 1
    if rules[R_FOUND] != FOUND_FLOOD:
        for d in range(6):
            m = nbr[c, d]
            if m >= 0 and cells[m, C_LEVEL] > 0 and cells[m, C_BUILDING] == 0 \
                    and cells[m, C_TERRAIN] == terr:
                out[n] = m
                n += 1
        return n
    seen[c] = True
    i = 0
    while i < n:
        x = out[i]
        i += 1
        for d in range(6):
            m = nbr[x, d]
            if m >= 0 and not seen[m] and cells[m, C_LEVEL] > 0 and cells[m, C_BUILDING] == 0 \
                    and cells[m, C_TERRAIN] == terr:
                seen[m] = True
                out[n] = m
                n += 1
    for j in range(n):
        seen[out[j]] = False
    return n


@njit(cache=True)
def _same_cells(a, na, b, nb):
    """Whether ``a[:na]`` and ``b[:nb]`` (each without repeats) hold the same cells."""
    if na != nb:
        return False
    for i in range(na):
        found = False
        for j in range(nb):
            if a[i] == b[j]:
                found = True
                break
        if not found:
            return False
    return True


@njit(cache=True)
def _solo_foundings(cells, rules, nbr, huts, hut_ids, nh, hut_cost):
    """Keep the solo foundings (SOLO.md 3.3) among the candidate hexes ``hut_ids[:nh]``
    (ascending ids of level-1 hexes allowed by ``new_hut_isolated``): those whose group costs
    at most ``huts`` (the sum of the filled hexes' levels), and of several foundings that fill
    the same hexes only the one on the smallest cell. Writes the costs; returns the new count."""
    ncell = cells.shape[0]
    hut_base = 6 * ncell
    flood = rules[R_FOUND] == FOUND_FLOOD
    cand = np.zeros(ncell, dtype=np.bool_)
    for j in range(nh):
        cand[hut_ids[j] - hut_base] = True
    seen = np.zeros(ncell if flood else 0, dtype=np.bool_)
    fill = np.empty(ncell if flood else 7, dtype=np.int32)
    fill2 = np.empty(7, dtype=np.int32)
    k = 0
    for j in range(nh):
        c = hut_ids[j] - hut_base
        n = found_cells(cells, rules, nbr, np.int64(c), fill, seen)
        cost = 0
        for i in range(n):
            cost += cells[fill[i], C_LEVEL]
        if cost > huts:
            continue
        dup = False
        for i in range(1, n):
            x = fill[i]
            if x < c and cand[x]:
                if flood:  # the same connected area: the same outcome
                    dup = True
                    break
                n2 = found_cells(cells, rules, nbr, np.int64(x), fill2, seen)
                if _same_cells(fill, n, fill2, n2):
                    dup = True
                    break
        if dup:
            continue
        hut_ids[k] = hut_ids[j]
        hut_cost[k] = cost
        k += 1
    return k


# ---------------------------------------------------------------------------------------------
# Apply
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _next_active(players, n_players, p):
    for i in range(1, n_players + 1):
        q = (p + i) % n_players
        if players[q, P_STATUS] == ACTIVE:
            return q
    return -1


@njit(cache=True, inline="always")
def _count_active(players, n_players):
    k = 0
    for q in range(n_players):
        if players[q, P_STATUS] == ACTIVE:
            k += 1
    return k


@njit(cache=True)
def _end_key(players, q, rules):
    temples = START_TEMPLES - players[q, P_TEMPLES]
    towers = START_TOWERS - players[q, P_TOWERS]
    huts = START_HUTS - players[q, P_HUTS]
    if rules[R_TIEBREAK_TOWERS_FIRST] != 0:
        return towers * 10000 + temples * 1000 + huts
    return temples * 10000 + towers * 1000 + huts


@njit(cache=True)
def _finish(meta, reason):
    meta[M_STEP] = S_TERMINAL
    meta[M_END] = reason
    meta[M_TILE] = -1


@njit(cache=True)
def _set_single_winner(players, n_players, w):
    for q in range(n_players):
        players[q, P_PLACE] = 0 if q == w else 1


@njit(cache=True)
def _end_tiles_out(players, meta, rules):
    """Tiles run out: rank the active seats by temples, towers, huts built (RULES.md)."""
    n_players = rules[R_PLAYERS]
    ranked = rules[R_RANKED] != 0
    if not ranked:
        best = -1
        for q in range(n_players):
            if players[q, P_STATUS] == ACTIVE:
                best = max(best, _end_key(players, q, rules))
        for q in range(n_players):
            win = players[q, P_STATUS] == ACTIVE and _end_key(players, q, rules) == best
            players[q, P_PLACE] = 0 if win else 1
    else:
        base = meta[M_NEXT_BEST]
        for q in range(n_players):
            if players[q, P_STATUS] == ACTIVE:
                kq = _end_key(players, q, rules)
                better = 0
                for q2 in range(n_players):
                    if players[q2, P_STATUS] == ACTIVE and _end_key(players, q2, rules) > kq:
                        better += 1
                players[q, P_PLACE] = base + better
    _finish(meta, np.int64(END_TILES_OUT))


@njit(cache=True)
def _advance(cells, players, deck, meta, rules, nbr, cell_of, origin, p):
    """Hand the turn to the next active seat after ``p`` (or end: tiles out)."""
    n_players = rules[R_PLAYERS]
    q = _next_active(players, n_players, p)
    if rules[R_TILE_PREVIEW] != 0:
        if players[q, P_HAND] >= 0:
            meta[M_PLAYER] = q
            meta[M_TILE] = players[q, P_HAND]
            meta[M_STEP] = S_TILE
            _check_truncated(cells, meta, nbr, cell_of, origin)
        else:
            _end_tiles_out(players, meta, rules)
    else:
        if meta[M_DRAWN] < rules[R_DECK_SIZE]:
            meta[M_PLAYER] = q
            meta[M_DRAW_FOR] = q
            meta[M_STEP] = S_CHANCE
        else:
            _end_tiles_out(players, meta, rules)


@njit(cache=True)
def _check_truncated(cells, meta, nbr, cell_of, origin):
    """End the game as truncated when the board bound leaves no legal placement."""
    radius = (cell_of.shape[0] - 1) // 2
    far = 0
    for q in (meta[M_QMIN] - 3, meta[M_QMAX] + 3):
        for r in (meta[M_RMIN] - 3, meta[M_RMAX] + 3):
            far = max(far, (abs(q) + abs(r) + abs(q + r)) // 2)
    if far <= radius:
        return  # a sea-level placement next to the island fits on the board
    buf = np.empty(1, dtype=np.int64)
    if tile_actions(cells, meta, nbr, cell_of, origin, buf, np.bool_(True)) == 0:
        _finish(meta, np.int64(END_TRUNCATED))


@njit(cache=True)
def _end_turn(cells, players, deck, meta, rules, nbr, cell_of, origin, p):
    """After ``p``'s turn (build or elimination): the preview draw, then the next seat."""
    if (
        rules[R_TILE_PREVIEW] != 0
        and players[p, P_STATUS] == ACTIVE
        and meta[M_DRAWN] < rules[R_DECK_SIZE]
    ):
        meta[M_STEP] = S_CHANCE
        meta[M_DRAW_FOR] = p
        meta[M_TILE] = -1
    else:
        _advance(cells, players, deck, meta, rules, nbr, cell_of, origin, p)


@njit(cache=True)
def _leave_table(players, meta, rules, p, status):
    """Seat ``p`` leaves play (eliminated or, in ranked play, finished). Returns True when the
    game is over as a result."""
    n_players = rules[R_PLAYERS]
    ranked = rules[R_RANKED] != 0
    players[p, P_STATUS] = status
    players[p, P_HAND] = -1
    if status == ELIMINATED:
        players[p, P_ELIM_ORDER] = meta[M_NELIM]
        meta[M_NELIM] += 1
        if ranked:
            players[p, P_PLACE] = meta[M_NEXT_WORST]
            meta[M_NEXT_WORST] -= 1
    else:
        players[p, P_PLACE] = meta[M_NEXT_BEST]
        meta[M_NEXT_BEST] += 1
    if _count_active(players, n_players) == 1:
        last = _next_active(players, n_players, p)
        if ranked:
            players[last, P_PLACE] = meta[M_NEXT_BEST]
            meta[M_NEXT_BEST] += 1
        else:
            _set_single_winner(players, n_players, np.int64(last))
        _finish(meta, END_LAST_STANDING if status == ELIMINATED else END_EARLY_VICTORY)
        return True
    return False


@njit(cache=True)
def apply_chance(cells, players, deck, meta, rules, nbr, cell_of, origin, tile):
    """Draw tile type ``tile`` (a chance outcome) from the undrawn part of the deck.

    The first undrawn copy of that type is swapped to the draw position, so a seeded deck
    order is replayed by always drawing ``deck[meta[M_DRAWN]]``. A solo game goes to
    :mod:`solo_kernels`, any other to :func:`standard_apply_chance`.

    Returns:
        0, or -1 when no undrawn copy of ``tile`` is left (nothing is changed).
    """
    if rules[R_SOLO] != 0:
        return _solo.solo_apply_chance(cells, players, deck, meta, rules, nbr, cell_of, tile)
    return standard_apply_chance(cells, players, deck, meta, rules, nbr, cell_of, origin, tile)


@njit(cache=True)
def standard_apply_chance(cells, players, deck, meta, rules, nbr, cell_of, origin, tile):
    """:func:`apply_chance` of a game that is not solo. The ``standard_*`` kernels never reach
    the solo variant's code, so a program that plays only such games (the object API does,
    :class:`~taluva_ai.games.taluva.game.TaluvaGame`) never compiles it: about half of the
    first run's compiling."""
    d = meta[M_DRAWN]
    j = -1
    for i in range(d, NUM_TILES):
        if deck[i] == tile:
            j = i
            break
    if j < 0:
        return -1
    deck[j] = deck[d]
    deck[d] = tile
    meta[M_DRAWN] = d + 1
    meta[M_PLY] += 1
    if rules[R_TILE_PREVIEW] != 0:
        w = meta[M_DRAW_FOR]
        players[w, P_HAND] = tile
        if meta[M_SETUP] != 0:
            if w + 1 < rules[R_PLAYERS]:
                meta[M_DRAW_FOR] = w + 1
            else:
                meta[M_SETUP] = 0
                meta[M_PLAYER] = 0
                meta[M_TILE] = players[0, P_HAND]
                meta[M_STEP] = S_TILE
        else:
            _advance(cells, players, deck, meta, rules, nbr, cell_of, origin, w)
    else:
        meta[M_TILE] = tile
        meta[M_STEP] = S_TILE
        _check_truncated(cells, meta, nbr, cell_of, origin)
    return 0


@njit(cache=True)
def place_tile_cells(cells, players, meta, rules, nbr, hexqr, action, tile):
    """Put tile type ``tile`` on the board by tile action id ``action`` (assumed legal): the
    three hexes, huts destroyed underneath (or returned, ``destroyed_huts_return``), the island's
    bounding box. Turn bookkeeping is left to :func:`apply_tile`."""
    v = action // 6
    o = action % 6
    a = nbr[v, (o + 4) % 6]
    b = nbr[v, (o + 5) % 6]
    lv = cells[v, C_LEVEL] + 1
    placed = meta[M_PLACED]
    for i in range(3):
        if i == 0:
            c = v
            terr = VOLCANO
        elif i == 1:
            c = a
            terr = JUNGLE + tile // 5
        else:
            c = b
            terr = JUNGLE + tile % 5
        if cells[c, C_BUILDING] == HUT:
            own = cells[c, C_OWNER]
            nh = cells[c, C_LEVEL]
            if rules[R_DESTROYED_HUTS_RETURN] != 0:
                players[own, P_HUTS] += nh
            else:
                players[own, P_DESTROYED] += nh
        cells[c, C_LEVEL] = lv
        cells[c, C_TERRAIN] = terr
        cells[c, C_TILE] = placed
        cells[c, C_BUILDING] = 0
        cells[c, C_OWNER] = -1
        q = hexqr[c, 0]
        r = hexqr[c, 1]
        if placed == 0 and i == 0:
            meta[M_QMIN] = q
            meta[M_QMAX] = q
            meta[M_RMIN] = r
            meta[M_RMAX] = r
        else:
            meta[M_QMIN] = min(meta[M_QMIN], q)
            meta[M_QMAX] = max(meta[M_QMAX], q)
            meta[M_RMIN] = min(meta[M_RMIN], r)
            meta[M_RMAX] = max(meta[M_RMAX], r)


@njit(cache=True)
def _hut_ok(cells, players, rules, nbr, p, c):
    """Found a settlement on ``c`` (RULES.md Step 2.1), checked from the hex's neighbours."""
    if players[p, P_HUTS] < 1 or cells[c, C_LEVEL] != 1 or not takes_building(
            cells, c, rules[R_NO_LAKE_BUILDING] != 0):
        return False
    if rules[R_NEW_HUT_ISOLATED] != 0:
        for d in range(6):
            m = nbr[c, d]
            if m >= 0 and cells[m, C_BUILDING] != 0 and cells[m, C_OWNER] == p:
                return False
    return True


@njit(cache=True, inline="always")
def _no_build(cells, players, meta, rules, nbr, cell_of, action):
    """True when the player to move has no legal build (elimination). A hut on one of the two
    hexes just placed is tried first; only if neither takes one is the full list consulted."""
    p = meta[M_PLAYER]
    v = action // 6
    o = action % 6
    if _hut_ok(cells, players, rules, nbr, p, nbr[v, (o + 4) % 6]):
        return False
    if _hut_ok(cells, players, rules, nbr, p, nbr[v, (o + 5) % 6]):
        return False
    buf = np.empty(1, dtype=np.int64)
    nb = build_actions(cells, players, meta, rules, nbr, cell_of, buf, np.bool_(True),
                       np.empty(0, dtype=np.int64))
    return nb == 0


@njit(cache=True, inline="always")
def apply_tile(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, action):
    """Place the tile in hand by action id ``action`` (assumed legal): eruptions destroy the huts
    underneath; then a player with no legal build is eliminated (RULES.md End of the game)."""
    p = meta[M_PLAYER]
    place_tile_cells(cells, players, meta, rules, nbr, hexqr, action, meta[M_TILE])
    placed = meta[M_PLACED]
    meta[M_PLACED] = placed + 1
    meta[M_PLY] += 1
    if rules[R_TILE_PREVIEW] != 0:
        players[p, P_HAND] = -1
    meta[M_STEP] = S_BUILD
    if _no_build(cells, players, meta, rules, nbr, cell_of, action):
        meta[M_TILE] = -1
        if not _leave_table(players, meta, rules, p, np.int64(ELIMINATED)):
            _end_turn(cells, players, deck, meta, rules, nbr, cell_of, origin, p)


@njit(cache=True, inline="always")
def expansion_cells(cells, meta, nbr, cell_of, player, canon_cell, terrain, out):
    """Hexes an expansion fills: every empty hex of ``terrain`` directly adjacent to the
    settlement of ``player`` that contains ``canon_cell`` (RULES.md Step 2.2).

    Returns:
        Number of cells written to ``out``, or -1 if ``canon_cell`` holds no building of
        ``player``.
    """
    ncell = cells.shape[0]
    if cells[canon_cell, C_BUILDING] == 0 or cells[canon_cell, C_OWNER] != player:
        return -1
    scan = np.empty(ncell, dtype=np.int32)
    nscan = _scan_cells(meta, cell_of, np.int64(0), scan)
    label = np.full(ncell, -1, dtype=np.int32)
    tmp = np.empty(MAX_SETTLEMENTS, dtype=np.int32)
    settlements(cells, nbr, scan, nscan, np.int64(player), label, tmp, tmp, tmp, tmp)
    s = label[canon_cell]
    n = 0
    for i in range(nscan):
        c = scan[i]
        if cells[c, C_LEVEL] == 0 or cells[c, C_BUILDING] != 0 or cells[c, C_TERRAIN] != terrain:
            continue
        for d in range(6):
            m = nbr[c, d]
            if m >= 0 and label[m] == s:
                out[n] = c
                n += 1
                break
    return n


@njit(cache=True, inline="always")
def place_build(cells, players, meta, rules, nbr, cell_of, action):
    """Put the pieces of build ``action`` (assumed legal) of the player to move on the board
    and take them from the supply (a founding fills :func:`found_cells`); nothing else."""
    ncell = cells.shape[0]
    p = meta[M_PLAYER]
    if action < 7 * ncell:
        c = action - 6 * ncell
        if rules[R_SOLO] != 0 and rules[R_FOUND] != FOUND_PLAIN:
            fill = np.empty(ncell, dtype=np.int32)
            seen = np.zeros(ncell if rules[R_FOUND] == FOUND_FLOOD else 0, dtype=np.bool_)
            nf = found_cells(cells, rules, nbr, np.int64(c), fill, seen)
            for j in range(nf):
                x = fill[j]
                cells[x, C_BUILDING] = HUT
                cells[x, C_OWNER] = p
                players[p, P_HUTS] -= cells[x, C_LEVEL]
        else:
            cells[c, C_BUILDING] = HUT
            cells[c, C_OWNER] = p
            players[p, P_HUTS] -= 1
    elif action < 8 * ncell:
        c = action - 7 * ncell
        cells[c, C_BUILDING] = TEMPLE
        cells[c, C_OWNER] = p
        players[p, P_TEMPLES] -= 1
    elif action < 9 * ncell:
        c = action - 8 * ncell
        cells[c, C_BUILDING] = TOWER
        cells[c, C_OWNER] = p
        players[p, P_TOWERS] -= 1
    else:
        e = action - 9 * ncell
        targets = np.empty(ncell, dtype=np.int32)
        nt = expansion_cells(cells, meta, nbr, cell_of, p, e // 5, JUNGLE + e % 5, targets)
        for j in range(nt):
            c = targets[j]
            cells[c, C_BUILDING] = HUT
            cells[c, C_OWNER] = p
            players[p, P_HUTS] -= cells[c, C_LEVEL]


@njit(cache=True, inline="always")
def apply_build(cells, players, deck, meta, rules, nbr, cell_of, origin, action):
    """Build by action id ``action`` (assumed legal), then check early victory and the end."""
    p = meta[M_PLAYER]
    place_build(cells, players, meta, rules, nbr, cell_of, action)
    meta[M_PLY] += 1
    kinds = 0
    if players[p, P_HUTS] == 0:
        kinds += 1
    if players[p, P_TEMPLES] == 0:
        kinds += 1
    if players[p, P_TOWERS] == 0:
        kinds += 1
    if kinds >= rules[R_EARLY_VICTORY_KINDS]:
        if rules[R_RANKED] == 0:
            _set_single_winner(players, rules[R_PLAYERS], np.int64(p))
            _finish(meta, np.int64(END_EARLY_VICTORY))
            return
        if _leave_table(players, meta, rules, p, np.int64(FINISHED)):
            return
    _end_turn(cells, players, deck, meta, rules, nbr, cell_of, origin, p)


@njit(cache=True)
def apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, action):
    """Apply one action (a tile type at a chance node, else a tile or build id; assumed legal).
    A solo game goes to :mod:`solo_kernels`, any other to :func:`standard_apply_action`."""
    if rules[R_SOLO] != 0:
        _solo.solo_apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, action)
        return
    standard_apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, action)


@njit(cache=True)
def standard_apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin,
                          action):
    """:func:`apply_action` of a game that is not solo (see :func:`standard_apply_chance`)."""
    step = meta[M_STEP]
    if step == S_CHANCE:
        standard_apply_chance(cells, players, deck, meta, rules, nbr, cell_of, origin, action)
    elif step == S_TILE:
        apply_tile(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, action)
    elif step == S_BUILD:
        apply_build(cells, players, deck, meta, rules, nbr, cell_of, origin, action)


@njit(cache=True)
def legal_actions(cells, players, meta, rules, nbr, cell_of, origin, out):
    """Legal action ids of the player to move (tile or build step, and the solo variant's bonus
    and box steps), ascending; 0 elsewhere."""
    if rules[R_SOLO] != 0:
        return _solo.solo_legal_actions(cells, players, meta, rules, nbr, cell_of, out)
    return standard_legal_actions(cells, players, meta, rules, nbr, cell_of, origin, out)


@njit(cache=True, inline="always")
def standard_legal_actions(cells, players, meta, rules, nbr, cell_of, origin, out):
    """:func:`legal_actions` of a game that is not solo (see :func:`standard_apply_chance`)."""
    step = meta[M_STEP]
    if step == S_TILE:
        return tile_actions(cells, meta, nbr, cell_of, origin, out, np.bool_(False))
    if step == S_BUILD:
        return build_actions(cells, players, meta, rules, nbr, cell_of, out, np.bool_(False),
                             np.empty(0, dtype=np.int64))
    return 0


@njit(cache=True)
def returns(players, meta, rules, out):
    """Final value per seat (RULES.md): winner +1, others -1/(n-1), a shared win split so the
    sum is 0; ranked play linear in place from +1 (first) to -1 (last), tied places averaged;
    zeros for a truncated or unfinished game. Solo variant: the final score (SOLO.md 5)."""
    n = rules[R_PLAYERS]
    if rules[R_SOLO] != 0:
        out[0] = meta[M_SCORE] if meta[M_STEP] == S_TERMINAL else 0.0
        return
    for q in range(n):
        out[q] = 0.0
    if meta[M_STEP] != S_TERMINAL or meta[M_END] == END_TRUNCATED:
        return
    if rules[R_RANKED] == 0:
        k = 0
        for q in range(n):
            if players[q, P_PLACE] == 0:
                k += 1
        for q in range(n):
            if players[q, P_PLACE] == 0:
                out[q] = (n - k) / (k * (n - 1.0))
            else:
                out[q] = -1.0 / (n - 1.0)
    else:
        for q in range(n):
            s = players[q, P_PLACE]
            g = 0
            for q2 in range(n):
                if players[q2, P_PLACE] == s:
                    g += 1
            tot = 0.0
            for slot in range(s, s + g):
                tot += 1.0 - 2.0 * slot / (n - 1.0)
            out[q] = tot / g


# ---------------------------------------------------------------------------------------------
# Batched forms and whole games
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def batch_legal_mask(cells_b, players_b, meta_b, rules, nbr, cell_of, origin, mask_b):
    """``mask_b[i, a]`` = action ``a`` legal in game ``i`` (``bool[B, 14H]``, overwritten)."""
    buf = np.empty(8 * cells_b.shape[1], dtype=np.int64)
    for i in range(cells_b.shape[0]):
        mask_b[i, :] = False
        n = legal_actions(cells_b[i], players_b[i], meta_b[i], rules, nbr, cell_of, origin, buf)
        for j in range(n):
            mask_b[i, buf[j]] = True


@njit(cache=True)
def batch_apply(cells_b, players_b, deck_b, meta_b, rules, nbr, cell_of, hexqr, origin, act_b):
    """Apply ``act_b[i]`` to game ``i`` for every ``i`` (finished games are left as they are)."""
    for i in range(cells_b.shape[0]):
        if meta_b[i, M_STEP] != S_TERMINAL:
            apply_action(
                cells_b[i], players_b[i], deck_b[i], meta_b[i], rules, nbr, cell_of, hexqr,
                origin, act_b[i],
            )


@njit(cache=True)
def random_playout(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, mask, seed):
    """Play a game to the end with uniformly random legal actions, drawing tiles in deck order,
    computing the dense legal mask (``bool[14H]``, clean on entry and on exit) at every decision.

    Returns:
        Number of decisions taken (tile and build steps).
    """
    np.random.seed(seed)
    buf = np.empty(8 * cells.shape[0], dtype=np.int64)
    decisions = 0
    while meta[M_STEP] != S_TERMINAL:
        if meta[M_STEP] == S_CHANCE:
            apply_chance(cells, players, deck, meta, rules, nbr, cell_of, origin,
                         deck[meta[M_DRAWN]])
            continue
        n = legal_actions(cells, players, meta, rules, nbr, cell_of, origin, buf)
        for j in range(n):
            mask[buf[j]] = True
        a = buf[np.random.randint(n)]
        if not mask[a]:
            raise RuntimeError("legal mask inconsistent with the legal list")
        for j in range(n):
            mask[buf[j]] = False
        apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, a)
        decisions += 1
    return decisions


# The solo variant's kernels call the ones above (imported last: a circular import that Numba
# resolves when it compiles the dispatching kernels).
from taluva_ai.games.taluva import solo_kernels as _solo  # noqa: E402
