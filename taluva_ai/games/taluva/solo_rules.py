"""Numba kernels of the solo variant (SOLO.md; docs/solo.md): a mode of :mod:`kernels`.

A solo game is a Taluva game (the same four arrays, the same tile placement, eruption and
build kernels) with ``rules[R_SOLO] = 1``. :mod:`kernels` hands ``legal_actions``,
``apply_action``, ``apply_chance`` and ``returns`` of such a game to this module, which adds
what the solo rules add: the terrain tests of placement (SOLO.md 2), the classes of contact
and what they trigger (3.1), bonus tiles (3.2), the box, the end conditions (4) and the score
(5). The solo fields of ``meta`` are listed in :mod:`state` (``M_PILE`` ...).

The deck (``int8[48]``): the starting island's tiles first (``meta[M_ISLAND]`` of them, drawn
at set-up), then the tiles nobody has seen, ``deck[meta[M_DRAWN] : 48 - meta[M_BOTTOM]]``: the
face-down tiles of the draw pile and of the bonus stack together (they are exchangeable, so a
draw from either is a uniform draw from that pool); with ``unplaceable="bottom"`` the known
tiles put under the draw pile follow, in the order they will be drawn.

A turn, as steps (``meta[M_STEP]``):

1. CHANCE: the regular tile is drawn from the draw pile (no chance node when only known tiles
   are left under it). A tile with no legal placement is set aside (or put under the pile) and
   play goes to phase 2.
2. TILE: place it (tile ids as in :mod:`kernels`). A level-1 tile takes its class (3.1);
   class 1 puts a piece into the box (BOX step, when the player has a choice of kinds).
3. BONUS (when a bonus tile is earned and a source offers one): ``bonus:pile`` (a chance node
   follows), ``bonus:faceup``, or ``stop``. At most three tiles a turn.
4. Phase 2: the face-up tile is replaced if it was used (a chance node), then BUILD; a game
   with no legal build ends (4.1), as does one whose supply is empty (4.2) or whose draw pile
   is empty at the end of the turn (4.3).

Action ids beyond the ``14 H`` of :mod:`kernels`: ``14 H + k`` for ``k`` in
:data:`A_BONUS_PILE` ... :data:`A_BOX_TOWER`.
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva import island_kernels as IK
from taluva_ai.games.taluva import state as S
from taluva_ai.games.taluva.island_kernels import (
    HUT,
    JUNGLE,
    NUM_TILES,
    S_BUILD,
    S_CHANCE,
    S_TILE,
    VOLCANO,
)
from taluva_ai.games.taluva.rules import (
    FOUND_FLOOD,
    FOUND_PLAIN,
    R_BONUS_ANY_SOURCE,
    R_BONUS_NO_ERUPTION,
    R_BOX_HUT,
    R_CONTACTS_HEXES,
    R_FOUND,
    R_LEVEL3_CHAIN,
    R_NEW_HUT_ISOLATED,
    R_SINGLE_TERRAIN_BONUS,
    R_UNPLACEABLE_BOTTOM,
    R_UPPER_BONUS,
    R_VOLCANO_IN_T,
)
from taluva_ai.games.taluva.solo_score import NUM_SCORE_LINES, WIN_SCORE, score

S_BONUS = 4
S_BOX = 5
END_NO_BUILD = 5
END_SUPPLY_OUT = 6
END_PILE_OUT = 7

#: Solo action ids are ``14 H + k`` for these ``k``.
A_BONUS_PILE, A_BONUS_FACE_UP, A_STOP, A_BOX_HUT, A_BOX_TEMPLE, A_BOX_TOWER = range(6)
NUM_SOLO_ACTIONS = 6



# ---------------------------------------------------------------------------------------------
# Contacts and classes (SOLO.md 0 and 3.1)
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def contacts(cells, rules, nbr, v, a, b):
    """Contacts of the level-1 tile just placed on ``v`` (volcano), ``a``, ``b`` with the rest
    of the island (SOLO.md 0): ``(M, U, T, VV)``, matching and non-matching contacts, the
    terrains of the matching ones as a bit mask (bit = terrain id, volcano 1), and the V-V
    contacts left out of ``M`` and ``T`` under ``volcano_in_T=False``.

    ``contacts="edges"`` counts edges (an island hex next to two new hexes gives two);
    ``contacts="hexes"`` counts distinct island hexes, one matching when it matches the new
    hex (or one of the new hexes) it touches.
    """
    vin = rules[R_VOLCANO_IN_T] != 0
    m = 0
    u = 0
    tmask = 0
    vv = 0
    if rules[R_CONTACTS_HEXES] == 0:
        for i in range(3):
            x = v if i == 0 else (a if i == 1 else b)
            tx = cells[x, S.C_TERRAIN]
            for d in range(6):
                y = nbr[x, d]
                if y < 0 or y == v or y == a or y == b or cells[y, S.C_LEVEL] == 0:
                    continue
                if cells[y, S.C_TERRAIN] == tx:
                    if tx == VOLCANO and not vin:
                        vv += 1
                    else:
                        m += 1
                        tmask |= 1 << tx
                else:
                    u += 1
        return m, u, tmask, vv
    seen = np.empty(18, dtype=np.int64)
    ns = 0
    for i in range(3):
        x = v if i == 0 else (a if i == 1 else b)
        for d in range(6):
            y = nbr[x, d]
            if y < 0 or y == v or y == a or y == b or cells[y, S.C_LEVEL] == 0:
                continue
            dup = False
            for j in range(ns):
                if seen[j] == y:
                    dup = True
                    break
            if dup:
                continue
            seen[ns] = y
            ns += 1
            ty = cells[y, S.C_TERRAIN]
            hit = False
            for i2 in range(3):
                x2 = v if i2 == 0 else (a if i2 == 1 else b)
                if cells[x2, S.C_TERRAIN] == ty:
                    for d2 in range(6):
                        if nbr[x2, d2] == y:
                            hit = True
            if not hit:
                u += 1
            elif ty == VOLCANO and not vin:
                vv += 1
            else:
                m += 1
                tmask |= 1 << ty
    return m, u, tmask, vv


@njit(cache=True)
def contact_class(rules, m, u, tmask):
    """Class 1..4 of a level-1 placement with ``M`` matching and ``U`` non-matching contacts
    and matching terrains ``T`` (bit mask) (SOLO.md 3.1; ``M == 0`` is a placement that matched
    only V-V under ``volcano_in_T=False``: class 1)."""
    if m == 0:
        return 1
    nt = 0
    for t in range(1, 7):
        if (tmask >> t) & 1:
            nt += 1
    if nt >= 3:
        return 4
    if nt == 2:
        return 3 if m >= 3 else 2
    if tmask == (1 << VOLCANO) or m == 1:
        return 1
    if m == 2:
        return 2 if u == 0 else 1
    return 3 if rules[R_SINGLE_TERRAIN_BONUS] != 0 else 2


# ---------------------------------------------------------------------------------------------
# Tile placement (SOLO.md 2 and 3.2)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def tile_actions(cells, meta, rules, nbr, cell_of, tile, source, out, first_only):
    """Legal placements of tile type ``tile`` taken from ``source`` (SOURCE_REGULAR for the
    turn's regular tile, else a bonus tile), ascending ids (SOLO.md 2, 3.2).

    Level 1: the sea-level rules of RULES.md and at least one matching contact (``M >= 1``,
    V-V contacts included). Higher: RULES.md's eruption rules and, for the regular tile and a
    bonus tile at level 3 or more, both terrain hexes on their own terrain ("exact"); a bonus
    tile at level 2 needs one of them (with ``bonus_no_eruption`` its volcano may also cover a
    level-1 terrain hex when both terrain hexes match).

    Args:
        out: ``int64[>= 6H]`` receives the ids.
        first_only: stop at the first legal placement.

    Returns:
        Number of ids written.
    """
    return IK.solo_tile_actions(cells, meta, nbr, cell_of, np.int64(0), out, first_only, rules,
                                tile, source)


# ---------------------------------------------------------------------------------------------
# Legal actions
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def build_actions(cells, players, meta, rules, nbr, cell_of, out, first_only, cost_out):
    """Legal builds of phase 2 (SOLO.md 3.3): :func:`kernels.build_actions` with the solo
    founding: of the foundings it lists (as plain ones), those whose hexes
    (:func:`found_cells`) the supply pays for, one per outcome (:func:`_solo_foundings`); with
    ``new_hut_isolated=False`` an expansion that fills the same hexes as a legal founding is
    dropped (one id per outcome; the founding stays). Same arguments and return value;
    ``first_only``: whether there is a legal build (``out[0]`` one of them)."""
    if rules[R_FOUND] == FOUND_PLAIN:
        return IK.build_actions(cells, players, meta, rules, nbr, cell_of, out, first_only,
                                cost_out)
    ncell = cells.shape[0]
    ids = np.empty(8 * ncell, dtype=np.int64) if first_only else out  # out may hold one id
    cost = np.empty(8 * ncell, dtype=np.int64)
    n = IK.build_actions(cells, players, meta, rules, nbr, cell_of, ids, np.bool_(False), cost)
    nh = 0  # the foundings come first (ascending ids)
    while nh < n and ids[nh] < 7 * ncell:
        nh += 1
    kept = _solo_foundings(cells, rules, nbr, players[meta[S.M_PLAYER], S.P_HUTS], ids,
                           np.int64(nh), cost)
    for j in range(nh, n):
        ids[kept + j - nh] = ids[j]
        cost[kept + j - nh] = cost[j]
    n = kept + n - nh
    if first_only:
        if n > 0:
            out[0] = ids[0]
        return min(n, 1)
    if rules[R_NEW_HUT_ISOLATED] == 0:
        n = _drop_founding_twins(cells, meta, rules, nbr, cell_of, out, cost, n)
    if cost_out.shape[0] > 0:
        for j in range(n):
            cost_out[j] = cost[j]
    return n


@njit(cache=True)
def _drop_founding_twins(cells, meta, rules, nbr, cell_of, out, cost, n):
    """Drop from ``out[:n]`` (and ``cost``) each expansion that fills the same hexes as a
    founding listed there; returns the new count."""
    ncell = cells.shape[0]
    fill = np.empty(ncell, dtype=np.int32)
    tgt = np.empty(ncell, dtype=np.int32)
    seen = np.zeros(ncell, dtype=np.bool_)
    k = 0
    for j in range(n):
        a = out[j]
        keep = True
        if a >= 9 * ncell:
            e = a - 9 * ncell
            terr = JUNGLE + e % 5
            nt = IK.expansion_cells(cells, meta, nbr, cell_of, meta[1], e // 5, terr, tgt)
            for j2 in range(n):
                h = out[j2] - 6 * ncell
                if 0 <= h < ncell and cells[h, S.C_TERRAIN] == terr:
                    nf = found_cells(cells, rules, nbr, np.int64(h), fill, seen)
                    if _same_cells(fill, nf, tgt, nt):
                        keep = False
                        break
        if keep:
            out[k] = a
            cost[k] = cost[j]
            k += 1
    return k


@njit(cache=True)
def place_build(cells, players, meta, rules, nbr, cell_of, action):
    """:func:`island_kernels.place_build` with the solo founding (SOLO.md 3.3): a founding
    puts a hut on every hex of :func:`found_cells`, each taking as many huts as its level."""
    ncell = cells.shape[0]
    if 6 * ncell <= action < 7 * ncell and rules[R_FOUND] != FOUND_PLAIN:
        p = meta[S.M_PLAYER]
        fill = np.empty(ncell, dtype=np.int32)
        seen = np.zeros(ncell if rules[R_FOUND] == FOUND_FLOOD else 0, dtype=np.bool_)
        nf = found_cells(cells, rules, nbr, np.int64(action - 6 * ncell), fill, seen)
        for j in range(nf):
            x = fill[j]
            cells[x, S.C_BUILDING] = HUT
            cells[x, S.C_OWNER] = p
            players[p, S.P_HUTS] -= cells[x, S.C_LEVEL]
        return
    IK.place_build(cells, players, meta, rules, nbr, cell_of, action)


@njit(cache=True)
def found_cells(cells, rules, nbr, c, out, seen):
    """Hexes that founding a settlement on ``c`` fills: ``c`` alone with the solo option
    ``found_plain`` (as in RULES.md Step 2.1); otherwise ``c`` and every empty hex of its terrain
    directly adjacent to it (SOLO.md 3.3), or with ``found_flood`` the whole connected area of
    empty hexes of that terrain (SOLO.md 6.11). Each filled hex takes as many huts as its level.

    Args:
        out: ``int32[>= H]`` receives the cells, ``c`` first.
        seen: ``bool[H]`` scratch, all False (left so); may be empty unless ``found_flood``.

    Returns:
        Number of cells written.
    """
    out[0] = c
    if rules[R_FOUND] == FOUND_PLAIN:
        return 1
    terr = cells[c, S.C_TERRAIN]
    n = 1
    if rules[R_FOUND] != FOUND_FLOOD:
        for d in range(6):
            m = nbr[c, d]
            if m >= 0 and cells[m, S.C_LEVEL] > 0 and cells[m, S.C_BUILDING] == 0 \
                    and cells[m, S.C_TERRAIN] == terr:
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
            if m >= 0 and not seen[m] and cells[m, S.C_LEVEL] > 0 and cells[m, S.C_BUILDING] == 0 \
                    and cells[m, S.C_TERRAIN] == terr:
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
            cost += cells[fill[i], S.C_LEVEL]
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


@njit(cache=True)
def solo_legal_actions(cells, players, meta, rules, nbr, cell_of, out):
    """Legal action ids of the step (tile, build, bonus or box), ascending; 0 elsewhere.

    Args:
        out: ``int64[>= 8H]``.
    """
    step = meta[S.M_STEP]
    if step == S_TILE:
        return tile_actions(cells, meta, rules, nbr, cell_of, np.int64(meta[S.M_TILE]),
                            np.int64(meta[S.M_SOURCE]), out, np.bool_(False))
    if step == S_BUILD:
        return build_actions(cells, players, meta, rules, nbr, cell_of, out, np.bool_(False),
                             np.empty(0, dtype=np.int64))
    base = 14 * cells.shape[0]
    n = 0
    if step == S_BONUS:
        if meta[S.M_BONUS_SRC] & S.SRC_BIT_PILE:
            out[n] = base + A_BONUS_PILE
            n += 1
        if meta[S.M_BONUS_SRC] & S.SRC_BIT_FACE_UP:
            out[n] = base + A_BONUS_FACE_UP
            n += 1
        out[n] = base + A_STOP
        n += 1
    elif step == S_BOX:
        for k in range(3):
            if players[0, S.P_HUTS + k] > 0:
                out[n] = base + A_BOX_HUT + k
                n += 1
    return n


# ---------------------------------------------------------------------------------------------
# The turn
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def stack_face_down(meta):
    """Face-down tiles of the bonus stack."""
    return meta[S.M_STACK] - (1 if meta[S.M_FACE_UP] >= 0 else 0)


@njit(cache=True)
def _finish(cells, players, meta, rules, nbr, cell_of, reason):
    """End the game (SOLO.md 4): store the score; place 0 for a win (40+), 1 for a loss."""
    IK._finish(meta, reason)
    lines = np.zeros(NUM_SCORE_LINES, dtype=np.int64)
    s = score(cells, players, meta, rules, nbr, cell_of, lines)
    meta[S.M_SCORE] = s
    players[0, S.P_PLACE] = 0 if s >= WIN_SCORE else 1


@njit(cache=True)
def _enter_build(cells, players, meta, rules, nbr, cell_of):
    """Phase 2's build step, or the end when no build is legal (SOLO.md 4.1)."""
    buf = np.empty(1, dtype=np.int64)
    if build_actions(cells, players, meta, rules, nbr, cell_of, buf, np.bool_(True),
                     np.empty(0, dtype=np.int64)) == 0:
        _finish(cells, players, meta, rules, nbr, cell_of, np.int64(END_NO_BUILD))
    else:
        meta[S.M_STEP] = S_BUILD


@njit(cache=True)
def _phase2(cells, players, meta, rules, nbr, cell_of):
    """Phase 2 (SOLO.md 3.3): turn up a new face-up tile if it was used (a chance node), then
    build."""
    meta[S.M_BONUS_SRC] = 0
    if meta[S.M_FACE_USED] != 0 and stack_face_down(meta) > 0:
        meta[S.M_STEP] = S_CHANCE
        meta[S.M_PENDING] = S.PENDING_REVEAL
    else:
        _enter_build(cells, players, meta, rules, nbr, cell_of)


@njit(cache=True)
def _set_aside(deck, meta, rules):
    """The tile in hand has no legal placement: set it aside (it counts as remaining), or with
    ``unplaceable="bottom"`` put it under the draw pile (it moves to the deck's end)."""
    if rules[R_UNPLACEABLE_BOTTOM] != 0:
        d = meta[S.M_DRAWN]
        t = deck[d - 1]
        for i in range(d - 1, NUM_TILES - 1):
            deck[i] = deck[i + 1]
        deck[NUM_TILES - 1] = t
        meta[S.M_DRAWN] = d - 1
        meta[S.M_BOTTOM] += 1
        meta[S.M_PILE] += 1
    else:
        meta[S.M_ASIDE] += 1
    meta[S.M_TILE] = -1


@njit(cache=True)
def _tile_in_hand(cells, players, deck, meta, rules, nbr, cell_of, tile):
    """The drawn tile is in hand: the tile step, or set aside and phase 2 when it has no legal
    placement (SOLO.md 3.1, 3.2)."""
    meta[S.M_TILE] = tile
    meta[S.M_TURN_TILES] += 1
    buf = np.empty(1, dtype=np.int64)
    if tile_actions(cells, meta, rules, nbr, cell_of, np.int64(tile), np.int64(meta[S.M_SOURCE]),
                    buf, np.bool_(True)) > 0:
        meta[S.M_STEP] = S_TILE
    else:
        _set_aside(deck, meta, rules)
        _phase2(cells, players, meta, rules, nbr, cell_of)


@njit(cache=True)
def _draw_pile(cells, players, deck, meta, rules, nbr, cell_of, source):
    """Take the top of the draw pile: a chance node, unless only known tiles (put under it) are
    left, when the first of them is taken at once."""
    meta[S.M_SOURCE] = source
    meta[S.M_TILE] = -1
    if meta[S.M_PILE] - meta[S.M_BOTTOM] > 0:
        meta[S.M_STEP] = S_CHANCE
        meta[S.M_PENDING] = S.PENDING_PILE
        return
    j = NUM_TILES - meta[S.M_BOTTOM]
    t = deck[j]
    d = meta[S.M_DRAWN]
    for i in range(j, d, -1):
        deck[i] = deck[i - 1]
    deck[d] = t
    meta[S.M_DRAWN] = d + 1
    meta[S.M_BOTTOM] -= 1
    meta[S.M_PILE] -= 1
    _tile_in_hand(cells, players, deck, meta, rules, nbr, cell_of, t)


@njit(cache=True)
def _start_turn(cells, players, deck, meta, rules, nbr, cell_of):
    """A new turn: draw the regular tile (SOLO.md 3.1), or end when the draw pile is empty."""
    meta[S.M_TURN_TILES] = 0
    meta[S.M_FACE_USED] = 0
    meta[S.M_BONUS_SRC] = 0
    meta[S.M_LAST_CLASS] = 0
    if meta[S.M_PILE] == 0:
        _finish(cells, players, meta, rules, nbr, cell_of, np.int64(END_PILE_OUT))
        return
    _draw_pile(cells, players, deck, meta, rules, nbr, cell_of, S.SOURCE_REGULAR)


@njit(cache=True)
def solo_apply_chance(cells, players, deck, meta, rules, nbr, cell_of, tile):
    """Resolve a chance node with tile type ``tile`` drawn from the unseen tiles: the draw
    pile's top, or the bonus stack's new face-up tile. The first unseen copy of ``tile`` is
    swapped to the draw position (so ``deck[meta[M_DRAWN]]`` replays a seeded deck).

    Returns:
        0, or -1 when no unseen copy of ``tile`` is left (nothing is changed).
    """
    if not IK.draw_copy(deck, meta, tile, NUM_TILES - meta[S.M_BOTTOM]):
        return -1
    pending = meta[S.M_PENDING]
    if pending == S.PENDING_PILE:
        meta[S.M_PILE] -= 1
        _tile_in_hand(cells, players, deck, meta, rules, nbr, cell_of, tile)
    else:
        meta[S.M_FACE_UP] = tile
        if pending == S.PENDING_REVEAL_SETUP:
            _start_turn(cells, players, deck, meta, rules, nbr, cell_of)
        else:
            _enter_build(cells, players, meta, rules, nbr, cell_of)
    return 0


@njit(cache=True)
def _box(players, meta, kind):
    """Class 1: one piece (0 hut, 1 temple, 2 tower) from the supply into the box."""
    players[0, S.P_HUTS + kind] -= 1
    meta[S.M_BOXED_HUTS + kind] += 1


@njit(cache=True)
def _after_box(cells, players, meta, rules, nbr, cell_of):
    if players[0, S.P_HUTS] + players[0, S.P_TEMPLES] + players[0, S.P_TOWERS] == 0:
        _finish(cells, players, meta, rules, nbr, cell_of, np.int64(END_SUPPLY_OUT))  # SOLO.md 4.2
    else:
        _phase2(cells, players, meta, rules, nbr, cell_of)


@njit(cache=True)
def _class1_box(cells, players, meta, rules, nbr, cell_of):
    """Class 1 of a regular tile: a piece into the box (the player's choice, the BOX step,
    when two kinds or more are left; a hut with ``box_piece="hut"``; nothing from an empty
    supply), then phase 2."""
    if rules[R_BOX_HUT] != 0:
        if players[0, S.P_HUTS] > 0:
            _box(players, meta, np.int64(0))
        _after_box(cells, players, meta, rules, nbr, cell_of)
        return
    kinds = 0
    last = -1
    for k in range(3):
        if players[0, S.P_HUTS + k] > 0:
            kinds += 1
            last = k
    if kinds >= 2:
        meta[S.M_STEP] = S_BOX
        return
    if kinds == 1:
        _box(players, meta, np.int64(last))
    _after_box(cells, players, meta, rules, nbr, cell_of)


@njit(cache=True)
def _offer_bonus(cells, players, meta, rules, nbr, cell_of, sources):
    """A bonus tile is earned from ``sources`` (bits): the BONUS step with the sources that
    can give one (the draw pile if not empty; the face-up tile if it has a legal placement),
    or phase 2 when none can."""
    src = 0
    if (sources & S.SRC_BIT_PILE) != 0 and meta[S.M_PILE] > 0:
        src |= S.SRC_BIT_PILE
    if (sources & S.SRC_BIT_FACE_UP) != 0 and meta[S.M_FACE_UP] >= 0 and meta[S.M_FACE_USED] == 0:
        buf = np.empty(1, dtype=np.int64)
        if tile_actions(cells, meta, rules, nbr, cell_of, np.int64(meta[S.M_FACE_UP]),
                        np.int64(S.SOURCE_FACE_UP), buf, np.bool_(True)) > 0:
            src |= S.SRC_BIT_FACE_UP
    if src == 0:
        _phase2(cells, players, meta, rules, nbr, cell_of)
    else:
        meta[S.M_BONUS_SRC] = src
        meta[S.M_STEP] = S_BONUS


@njit(cache=True)
def _apply_tile(cells, players, deck, meta, rules, nbr, cell_of, hexqr, action):
    """Place the tile in hand (assumed legal) and resolve what the placement triggers
    (SOLO.md 3.1, 3.2)."""
    v = action // 6
    o = action % 6
    a = nbr[v, (o + 4) % 6]
    b = nbr[v, (o + 5) % 6]
    tile = meta[S.M_TILE]
    src = meta[S.M_SOURCE]
    lv = cells[v, S.C_LEVEL] + 1
    on_volcano = cells[v, S.C_TERRAIN] == VOLCANO
    exact = (cells[a, S.C_TERRAIN] == JUNGLE + tile // 5
             and cells[b, S.C_TERRAIN] == JUNGLE + tile % 5)
    IK.place_tile_cells(cells, players, meta, rules, nbr, hexqr, action, tile)
    meta[S.M_PLACED] += 1
    meta[S.M_PLY] += 1
    both = S.SRC_BIT_PILE | S.SRC_BIT_FACE_UP
    pile = both if rules[R_BONUS_ANY_SOURCE] != 0 else S.SRC_BIT_PILE
    chain = 0
    meta[S.M_LAST_CLASS] = 0
    if lv == 1:
        m, u, tmask, _ = contacts(cells, rules, nbr, v, a, b)
        cls = contact_class(rules, m, u, tmask)
        meta[S.M_LAST_CLASS] = cls
        if cls >= 3:
            chain = both
        elif cls == 1 and src == S.SOURCE_REGULAR:
            _class1_box(cells, players, meta, rules, nbr, cell_of)
            return
    elif src == S.SOURCE_REGULAR:
        if rules[R_UPPER_BONUS] != 0:
            chain = pile
    elif lv == 2:
        if rules[R_BONUS_NO_ERUPTION] != 0:
            if exact and not on_volcano:
                chain = pile
        elif exact:
            chain = pile
    elif rules[R_LEVEL3_CHAIN] != 0:
        chain = both
    if meta[S.M_TURN_TILES] >= 3:
        chain = 0  # a trigger on the third tile does nothing
    if chain != 0:
        _offer_bonus(cells, players, meta, rules, nbr, cell_of, chain)
    else:
        _phase2(cells, players, meta, rules, nbr, cell_of)


@njit(cache=True)
def solo_apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, action):
    """Apply one action of a solo game (a tile type at a chance node; assumed legal)."""
    step = meta[S.M_STEP]
    base = 14 * cells.shape[0]
    if step == S_CHANCE:
        solo_apply_chance(cells, players, deck, meta, rules, nbr, cell_of, action)
    elif step == S_TILE:
        _apply_tile(cells, players, deck, meta, rules, nbr, cell_of, hexqr, action)
    elif step == S_BUILD:
        place_build(cells, players, meta, rules, nbr, cell_of, action)
        meta[S.M_PLY] += 1
        if players[0, S.P_HUTS] + players[0, S.P_TEMPLES] + players[0, S.P_TOWERS] == 0:
            _finish(cells, players, meta, rules, nbr, cell_of, np.int64(END_SUPPLY_OUT))
        elif meta[S.M_PILE] == 0:
            _finish(cells, players, meta, rules, nbr, cell_of, np.int64(END_PILE_OUT))
        else:
            _start_turn(cells, players, deck, meta, rules, nbr, cell_of)
    elif step == S_BONUS:
        meta[S.M_PLY] += 1
        k = action - base
        if k == A_STOP:
            _phase2(cells, players, meta, rules, nbr, cell_of)
        elif k == A_BONUS_PILE:
            _draw_pile(cells, players, deck, meta, rules, nbr, cell_of, S.SOURCE_PILE)
        else:
            meta[S.M_TILE] = meta[S.M_FACE_UP]
            meta[S.M_FACE_UP] = -1
            meta[S.M_STACK] -= 1
            meta[S.M_FACE_USED] = 1
            meta[S.M_SOURCE] = S.SOURCE_FACE_UP
            meta[S.M_TURN_TILES] += 1
            meta[S.M_BONUS_SRC] = 0
            meta[S.M_STEP] = S_TILE
    elif step == S_BOX:
        meta[S.M_PLY] += 1
        _box(players, meta, action - base - A_BOX_HUT)
        _after_box(cells, players, meta, rules, nbr, cell_of)


@njit(cache=True)
def check_invariants(players, deck, meta):
    """0 when the solo counters agree (the unseen pool holds the draw pile's and the bonus
    stack's face-down tiles; no count is negative), else a code naming the first that fails
    (for tests)."""
    pool = NUM_TILES - meta[S.M_DRAWN] - meta[S.M_BOTTOM]
    if pool != (meta[S.M_PILE] - meta[S.M_BOTTOM]) + stack_face_down(meta):
        return 1
    for f in (S.M_PILE, S.M_STACK, S.M_ASIDE, S.M_BOTTOM, S.M_BOXED_HUTS, S.M_BOXED_TEMPLES,
              S.M_BOXED_TOWERS):
        if meta[f] < 0:
            return 2
    if meta[S.M_TURN_TILES] > 3:
        return 3
    if players[0, S.P_HUTS] < 0 or players[0, S.P_TEMPLES] < 0 or players[0, S.P_TOWERS] < 0:
        return 4
    return 0
