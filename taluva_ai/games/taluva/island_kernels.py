"""The island's kernels, shared by the multiplayer game (:mod:`kernels`) and the solo variant
(:mod:`solo_rules`, :mod:`solo_score`): the settlements, tile placement (cells, eruption
checks), the builds (listing them with their costs, founding, expanding, applying them; the
solo variant's founding, which fills more than one hex, is :mod:`solo_rules`'s around them)
and the end of a game.

They sit below both rule sets so that each calls them and neither imports the other's
module: :mod:`kernels` (the entry points ``legal_actions``, ``apply_action``,
``apply_chance``, ``returns``, which hand a solo game to :mod:`solo_rules`) imports this
module and :mod:`solo_rules`; the solo modules import no other rules module. :mod:`kernels`
re-exports every kernel here, so ``kernels.settlements`` and the like keep working.

Arrays, argument order, action ids and the compile-time rules (``inline="always"`` for
single-callers and thin dispatchers, one set of argument types a kernel) are :mod:`kernels`'s.
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games import compiling
from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva.rules import (
    FOUND_PLAIN,
    R_BONUS_NO_ERUPTION,
    R_DESTROYED_HUTS_RETURN,
    R_FOUND,
    R_NEW_HUT_ISOLATED,
    R_NO_LAKE_BUILDING,
    R_SOLO,
)
from taluva_ai.games.taluva.state import (
    C_BUILDING,
    C_LEVEL,
    C_OWNER,
    C_TERRAIN,
    C_TILE,
    M_DRAWN,
    M_END,
    M_PLACED,
    M_PLAYER,
    M_PLY,
    M_QMAX,
    M_QMIN,
    M_RMAX,
    M_RMIN,
    M_STEP,
    M_TILE,
    P_DESTROYED,
    P_HUTS,
    P_TEMPLES,
    P_TOWERS,
    SOURCE_REGULAR,
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


@njit(cache=True)
def tile_context(cells, meta, nbr, cell_of, level1):
    """What the tile placements of both rule sets start from: the cells to scan (the island's
    box grown by 2); per cell ``adj``, for an empty hex the terrains of its island neighbours
    as bits ``1 << terrain`` (non-zero: on the coast, next to the island); and the ``sites``,
    the hexes that may take a tile's volcano, in scan order: the empty hexes within 1 of the
    coast (sea level) and the volcanoes (an eruption), with ``level1`` also the other hexes of
    level 1 (the solo option ``bonus_no_eruption``, SOLO.md 6.6).

    Returns:
        ``(scan, nscan, adj, sites, nsites)``: ``int32[H]`` (its first ``nscan`` entries),
        ``int``, ``int32[H]``, ``int32[H]`` (its first ``nsites`` entries), ``int``.
    """
    ncell = cells.shape[0]
    scan = np.empty(ncell, dtype=np.int32)
    nscan = _scan_cells(meta, cell_of, np.int64(2), scan)
    adj = np.zeros(ncell, dtype=np.int32)
    near = np.zeros(ncell, dtype=np.bool_)
    for i in range(nscan):
        c = scan[i]
        if cells[c, C_LEVEL] > 0:
            bit = 1 << cells[c, C_TERRAIN]
            for d in range(6):
                m = nbr[c, d]
                if m >= 0 and cells[m, C_LEVEL] == 0:
                    if adj[m] == 0:
                        near[m] = True
                        for d2 in range(6):
                            m2 = nbr[m, d2]
                            if m2 >= 0:
                                near[m2] = True
                    adj[m] |= bit
    sites = np.empty(ncell, dtype=np.int32)
    nsites = 0
    for i in range(nscan):
        v = scan[i]
        lv = cells[v, C_LEVEL]
        if near[v] if lv == 0 else (cells[v, C_TERRAIN] == VOLCANO or (level1 and lv == 1)):
            sites[nsites] = v
            nsites += 1
    return scan, nscan, adj, sites, nsites


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
def _cover_ok(cells, v, a, b, label, size):
    """Eruption rules 2-5 of RULES.md for a tile covering the three hexes ``v, a, b`` whatever
    lies under ``v`` (the solo option ``bonus_no_eruption``: the volcano may cover a terrain
    hex)."""
    lv = cells[v, C_LEVEL]
    if cells[a, C_LEVEL] != lv or cells[b, C_LEVEL] != lv:
        return False
    if cells[v, C_TILE] == cells[a, C_TILE] and cells[v, C_TILE] == cells[b, C_TILE]:
        return False
    for i in range(3):
        x = v if i == 0 else (a if i == 1 else b)
        bx = cells[x, C_BUILDING]
        if bx == TEMPLE or bx == TOWER:
            return False
    for i in range(3):
        x = v if i == 0 else (a if i == 1 else b)
        if cells[x, C_BUILDING] == HUT:
            s = label[x]
            covered = 0
            for i2 in range(3):
                x2 = v if i2 == 0 else (a if i2 == 1 else b)
                if cells[x2, C_BUILDING] == HUT and label[x2] == s:
                    covered += 1
            if size[s] <= covered:
                return False
    return True


def _tile_enumerator(solo):
    """The tile-placement enumerator of one rule set, written once for both: ``solo`` is a
    compile-time constant (a closure variable), so Numba prunes the other rule set's branches
    and each rule set gets its own kernel, as fast as one written for it alone. The returned
    kernels are :data:`tile_actions` (multiplayer) and :data:`solo_tile_actions`."""
    SOLO = solo

    @njit(cache=True)
    def tile_actions(cells, meta, nbr, cell_of, origin, out, first_only, *solo_args):
        """Legal tile placements (RULES.md Step 1) for the tile in hand, ascending ids.

        Sea-level placement: three empty hexes, one of them adjacent to the island. Eruption:
        volcano on a volcano, three hexes at one level, not exactly on one tile, no temple or
        tower underneath, no settlement covered whole. All three hexes within the board bound.

        The solo variant's kernel (:data:`solo_tile_actions`, through
        :func:`solo_rules.tile_actions`) takes ``solo_args = (rules, tile, source)``: the tile
        type (``int``, 0-24) and where it came from (``SOURCE_REGULAR`` or a bonus source), and
        adds SOLO.md 2 and 3.2: at sea level at least one matching contact (``M >= 1``, V-V
        contacts included); higher, for the regular tile and a bonus tile at level 3 or more,
        both terrain hexes on their own terrain ("exact"); a bonus tile at level 2 needs one of
        them (with ``bonus_no_eruption`` its volcano may also cover a level-1 terrain hex when
        both terrain hexes match). ``origin`` is not used there (the island is never empty).

        Args:
            origin: cell of ``(0, 0)``, where the first tile's volcano goes.
            out: ``int64[>= 6H]`` receives the ids.
            first_only: stop at the first legal placement (for "is there any").

        Returns:
            Number of ids written.
        """
        if SOLO:
            rules, tile, source = solo_args
            ta = JUNGLE + tile // 5
            tb = JUNGLE + tile % 5
            # a sea-level placement needs a matching contact: an island neighbour of the
            # volcano's hex that is a volcano, of a terrain hex that is its terrain
            bit_v = 1 << VOLCANO
            bit_a = 1 << ta
            bit_b = 1 << tb
            regular = source == SOURCE_REGULAR
            level1 = rules[R_BONUS_NO_ERUPTION] != 0 and not regular
        else:
            if meta[M_PLACED] == 0:
                for o in range(6):
                    out[o] = origin * 6 + o
                    if first_only:
                        return 1
                return 6
            bit_v = bit_a = bit_b = -1  # any island neighbour
            level1 = False
        scan, nscan, adj, sites, nsites = tile_context(cells, meta, nbr, cell_of, level1)
        label = np.empty(0, dtype=np.int32)  # the settlements, once a tile may cover a hut
        size = np.empty(0, dtype=np.int32)
        n = 0
        for i in range(nsites):
            v = sites[i]
            if cells[v, C_LEVEL] == 0:
                for o in range(6):
                    # the test written out: a call is not inlined by LLVM and costs 40% of
                    # the mask (tests/test_kernels.py checks it against kernels._sea_ok)
                    a = nbr[v, (o + 4) % 6]
                    b = nbr[v, (o + 5) % 6]
                    if a < 0 or b < 0:
                        continue
                    if cells[a, C_LEVEL] != 0 or cells[b, C_LEVEL] != 0:
                        continue
                    if (adj[v] & bit_v) != 0 or (adj[a] & bit_a) != 0 or (adj[b] & bit_b) != 0:
                        out[n] = v * 6 + o
                        n += 1
                        if first_only:
                            return n
            elif SOLO:  # a volcano, or a level-1 terrain hex (a site with bonus_no_eruption)
                volcano = cells[v, C_TERRAIN] == VOLCANO
                exact = regular or cells[v, C_LEVEL] >= 2 or not volcano
                for o in range(6):
                    a = nbr[v, (o + 4) % 6]
                    b = nbr[v, (o + 5) % 6]
                    if a < 0 or b < 0:
                        continue
                    ma = cells[a, C_TERRAIN] == ta
                    mb = cells[b, C_TERRAIN] == tb
                    if exact:
                        if not (ma and mb):
                            continue
                    elif not (ma or mb):
                        continue
                    if label.shape[0] == 0 and (cells[v, C_BUILDING] == HUT
                                                or _has_hut_under(cells, nbr, v)):
                        label, size = _all_settlements(cells, nbr, scan, nscan)
                    if _eruption_ok(cells, nbr, v, o, label, size) if volcano else \
                            _cover_ok(cells, v, a, b, label, size):
                        out[n] = v * 6 + o
                        n += 1
                        if first_only:
                            return n
            else:
                if label.shape[0] == 0 and _has_hut_under(cells, nbr, v):
                    label, size = _all_settlements(cells, nbr, scan, nscan)
                for o in range(6):
                    if _eruption_ok(cells, nbr, v, o, label, size):
                        out[n] = v * 6 + o
                        n += 1
                        if first_only:
                            return n
        return n

    return tile_actions


#: Legal tile placements of the multiplayer game: ``tile_actions(cells, meta, nbr, cell_of,
#: origin, out, first_only) -> int`` (:func:`_tile_enumerator`).
tile_actions = _tile_enumerator(False)
#: The solo variant's: the same with ``(rules, tile, source)`` after ``first_only``.
solo_tile_actions = _tile_enumerator(True)


@njit(cache=True)
def draw_copy(deck, meta, tile, end):
    """Draw tile type ``tile`` (a chance outcome): its first copy among the undrawn
    ``deck[meta[M_DRAWN]:end]`` is swapped to the draw position (so that drawing
    ``deck[meta[M_DRAWN]]`` replays a seeded deck); the draw and the ply are counted.

    Returns:
        Whether a copy was left (else nothing is changed).
    """
    d = meta[M_DRAWN]
    for i in range(d, end):
        if deck[i] == tile:
            deck[i] = deck[d]
            deck[d] = tile
            meta[M_DRAWN] = d + 1
            meta[M_PLY] += 1
            return True
    return False


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


@njit(cache=True, inline="always")
def _append_ids(out, cost_out, n, ids, k, cost):
    """Append ``ids[:k]`` to ``out`` from ``out[n]`` on, each with ``cost`` huts in ``cost_out``
    (when it is not empty); the new count."""
    for j in range(k):
        out[n] = ids[j]
        if cost_out.shape[0] > 0:
            cost_out[n] = cost
        n += 1
    return n


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
    # the solo founding (SOLO.md 3.3) fills more than its hex: solo_rules.build_actions keeps
    # the foundings listed here (as plain ones) that the supply pays for; an expansion into one
    # level-1 hex is then not the same outcome as a founding there
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
        if first_only and nh + nt + nw > 0:
            out[0] = hut_base + c if nh > 0 else (temple_base + c if nt > 0 else tower_base + c)
            return 1
    want_cost = cost_out.shape[0] > 0
    n = _append_ids(out, cost_out, 0, hut_ids, nh, 1)
    n = _append_ids(out, cost_out, n, temple_ids, nt, 0)
    n = _append_ids(out, cost_out, n, tower_ids, nw, 0)
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
def _finish(meta, reason):
    meta[M_STEP] = S_TERMINAL
    meta[M_END] = reason
    meta[M_TILE] = -1


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
    and take them from the supply (a founding fills its hex: the solo variant's founding is
    :func:`solo_rules.place_build`); nothing else."""
    ncell = cells.shape[0]
    p = meta[M_PLAYER]
    if action < 7 * ncell:  # a founding fills its hex (the solo one: solo_rules.place_build)
        c = action - 6 * ncell
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
