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
                                       stop; box a hut, temple, tower (:mod:`solo_rules`)
==============  =====================  ==========================================

The solo variant (``rules[R_SOLO]``, SOLO.md) is a mode of these kernels: ``legal_actions``,
``apply_action``, ``apply_chance`` and ``returns`` hand a solo game to :mod:`solo_rules`.
The kernels both rule sets use (settlements, :func:`place_tile_cells`, :func:`_eruption_ok`,
:func:`build_actions` / :func:`place_build`) stand once, in :mod:`island_kernels`, below this
module and :mod:`solo_rules`; this module re-exports them. The solo founding
(:func:`solo_rules.found_cells`, SOLO.md 3.3) is :mod:`solo_rules`'s own, around them, so a
game that is not solo never compiles it.

Kernel arguments follow one order: ``cells, players, deck, meta, rules, nbr, cell_of, hexqr``
where ``nbr`` is ``int32[H, 6]``, ``cell_of`` ``int32[2R+1, 2R+1]`` and ``hexqr`` ``int32[H, 2]``.

Compile time (docs/benchmarks.md, "Compile time"). Numba compiles every kernel into a module of
its own with all its callees linked in, then optimizes and machine-codes that whole module, so a
kernel deep in a chain of calls is compiled again inside each kernel above it. Three rules keep a
first run short:

- a kernel with one caller in the rules (``apply_tile``, ``apply_build``, ``_no_build``,
  ``place_build``, ...) and the thin dispatchers (``build_actions``,
  ``standard_legal_actions``) are ``inline="always"``: Numba puts their code into the caller
  instead of compiling them on their own (only where another kernel calls them: called from
  Python they are compiled as usual). Kernels with several callers are not inlined: each copy
  would be typed and lowered again, which costs more than it saves;
- the truncation check (:func:`_check_truncated`, which lists placements) runs once at the
  end of the kernels that apply an action, not where a tile step opens deep in their calls
  (``_advance``, ``_end_turn``), so the placement enumerator is not linked into each of those;
- every kernel is called with one set of argument types (``np.int64(...)``,
  ``np.bool_(...)`` where a caller passes an ``int32`` from an array or a literal
  ``True``/``False``), so it is compiled once, not once per type.
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games import compiling
from taluva_ai.games.compiling import njit
from taluva_ai.games.game_kernels import random_legal, winner_returns
from taluva_ai.games.taluva import solo_rules as _solo
from taluva_ai.games.taluva import state as S
from taluva_ai.games.taluva.island_kernels import (  # noqa: F401 (re-exported)
    ACTIVE,
    ELIMINATED,
    END_EARLY_VICTORY,
    END_LAST_STANDING,
    END_TILES_OUT,
    END_TRUNCATED,
    FINISHED,
    HUT,
    JUNGLE,
    LAKE,
    MAX_SETTLEMENTS,
    NUM_TILES,
    S_BUILD,
    S_CHANCE,
    S_TERMINAL,
    S_TILE,
    TEMPLE,
    TOWER,
    VOLCANO,
    _all_settlements,
    _eruption_ok,
    _finish,
    _has_hut_under,
    _scan_cells,
    build_actions,
    build_actions_labeled,
    draw_copy,
    expansion_cells,
    mover_adjacency,
    place_build,
    place_tile_cells,
    settlements,
    takes_building,
    tile_actions,
    tile_context,
)
from taluva_ai.games.taluva.rules import (
    R_DECK_SIZE,
    R_EARLY_VICTORY_KINDS,
    R_NEW_HUT_ISOLATED,
    R_NO_LAKE_BUILDING,
    R_PLAYERS,
    R_RANKED,
    R_SOLO,
    R_TIEBREAK_TOWERS_FIRST,
    R_TILE_PREVIEW,
)
from taluva_ai.games.taluva.solo_rules import found_cells  # noqa: F401 (re-exported)

compiling.install()  # a first compile says so (taluva_ai.games.compiling)

# Plain ints so that Numba folds them as constants.


def action_bases(num_cells: int) -> tuple[int, int, int, int, int, int]:
    """``(hut, temple, tower, expand, build_start, total)`` id offsets for ``num_cells`` hexes."""
    h = num_cells
    return 6 * h, 7 * h, 8 * h, 9 * h, 6 * h, 14 * h


# ---------------------------------------------------------------------------------------------
# Scanning helpers
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Tile placement
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def _sea_ok(cells, nbr, adj, v, o):
    """Sea-level placement (v, o): three empty hexes on the board, one next to the island
    (``adj``: :func:`island_kernels.tile_context`)."""
    a = nbr[v, (o + 4) % 6]
    b = nbr[v, (o + 5) % 6]
    if a < 0 or b < 0:
        return False
    if cells[a, S.C_LEVEL] != 0 or cells[b, S.C_LEVEL] != 0:
        return False
    return adj[v] != 0 or adj[a] != 0 or adj[b] != 0


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
    if meta[S.M_PLACED] == 0:
        return origin * 6 + np.random.randint(6)
    scan, nscan, adj, sites, k = tile_context(cells, meta, nbr, cell_of, False)
    label = np.empty(0, dtype=np.int32)  # the settlements, once a tile may cover a hut
    size = np.empty(0, dtype=np.int32)
    for _ in range(64 * 6 * max(k, 1)):
        j = np.random.randint(6 * k)
        v = sites[j // 6]
        o = j % 6
        if cells[v, S.C_LEVEL] == 0:
            if _sea_ok(cells, nbr, adj, v, o):
                return v * 6 + o
        else:
            if label.shape[0] == 0 and _has_hut_under(cells, nbr, v):
                label, size = _all_settlements(cells, nbr, scan, nscan)
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
        if tower_ok and cells[c, S.C_LEVEL] >= 3:
            out[1] += 1


# ---------------------------------------------------------------------------------------------
# Apply
# ---------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _next_active(players, n_players, p):
    for i in range(1, n_players + 1):
        q = (p + i) % n_players
        if players[q, S.P_STATUS] == ACTIVE:
            return q
    return -1


@njit(cache=True, inline="always")
def _count_active(players, n_players):
    k = 0
    for q in range(n_players):
        if players[q, S.P_STATUS] == ACTIVE:
            k += 1
    return k


@njit(cache=True, inline="always")
def _end_key(players, q, rules):
    temples = S.START_TEMPLES - players[q, S.P_TEMPLES]
    towers = S.START_TOWERS - players[q, S.P_TOWERS]
    huts = S.START_HUTS - players[q, S.P_HUTS]
    if rules[R_TIEBREAK_TOWERS_FIRST] != 0:
        return towers * 10000 + temples * 1000 + huts
    return temples * 10000 + towers * 1000 + huts


@njit(cache=True, inline="always")
def _set_single_winner(players, n_players, w):
    for q in range(n_players):
        players[q, S.P_PLACE] = 0 if q == w else 1


@njit(cache=True)
def _end_tiles_out(players, meta, rules):
    """Tiles run out: rank the active seats by temples, towers, huts built (RULES.md)."""
    n_players = rules[R_PLAYERS]
    ranked = rules[R_RANKED] != 0
    if not ranked:
        best = -1
        for q in range(n_players):
            if players[q, S.P_STATUS] == ACTIVE:
                best = max(best, _end_key(players, q, rules))
        for q in range(n_players):
            win = players[q, S.P_STATUS] == ACTIVE and _end_key(players, q, rules) == best
            players[q, S.P_PLACE] = 0 if win else 1
    else:
        base = meta[S.M_NEXT_BEST]
        for q in range(n_players):
            if players[q, S.P_STATUS] == ACTIVE:
                kq = _end_key(players, q, rules)
                better = 0
                for q2 in range(n_players):
                    if players[q2, S.P_STATUS] == ACTIVE and _end_key(players, q2, rules) > kq:
                        better += 1
                players[q, S.P_PLACE] = base + better
    _finish(meta, np.int64(END_TILES_OUT))


@njit(cache=True)
def _advance(players, meta, rules, p):
    """Hand the turn to the next active seat after ``p`` (or end: tiles out). A tile step it
    opens is checked by :func:`_check_truncated` in the kernel that applied the action."""
    n_players = rules[R_PLAYERS]
    q = _next_active(players, n_players, p)
    if rules[R_TILE_PREVIEW] != 0:
        if players[q, S.P_HAND] >= 0:
            meta[S.M_PLAYER] = q
            meta[S.M_TILE] = players[q, S.P_HAND]
            meta[S.M_STEP] = S_TILE
        else:
            _end_tiles_out(players, meta, rules)
    else:
        if meta[S.M_DRAWN] < rules[R_DECK_SIZE]:
            meta[S.M_PLAYER] = q
            meta[S.M_DRAW_FOR] = q
            meta[S.M_STEP] = S_CHANCE
        else:
            _end_tiles_out(players, meta, rules)


@njit(cache=True)
def _check_truncated(cells, meta, nbr, cell_of, origin):
    """At a tile step, end the game as truncated when the board bound leaves no legal
    placement. Called once at the end of the kernels that apply an action (a tile step is
    opened deep in their calls; a check there would link the placement enumerator into every
    kernel on the way: docs/benchmarks.md, "Compile time")."""
    if meta[S.M_STEP] != S_TILE:
        return
    radius = (cell_of.shape[0] - 1) // 2
    far = 0
    for q in (meta[S.M_QMIN] - 3, meta[S.M_QMAX] + 3):
        for r in (meta[S.M_RMIN] - 3, meta[S.M_RMAX] + 3):
            far = max(far, (abs(q) + abs(r) + abs(q + r)) // 2)
    if far <= radius:
        return  # a sea-level placement next to the island fits on the board
    buf = np.empty(1, dtype=np.int64)
    if tile_actions(cells, meta, nbr, cell_of, origin, buf, np.bool_(True)) == 0:
        _finish(meta, np.int64(END_TRUNCATED))


@njit(cache=True)
def _end_turn(players, meta, rules, p):
    """After ``p``'s turn (build or elimination): the preview draw, then the next seat."""
    if (
        rules[R_TILE_PREVIEW] != 0
        and players[p, S.P_STATUS] == ACTIVE
        and meta[S.M_DRAWN] < rules[R_DECK_SIZE]
    ):
        meta[S.M_STEP] = S_CHANCE
        meta[S.M_DRAW_FOR] = p
        meta[S.M_TILE] = -1
    else:
        _advance(players, meta, rules, p)


@njit(cache=True)
def _leave_table(players, meta, rules, p, status):
    """Seat ``p`` leaves play (eliminated or, in ranked play, finished). Returns True when the
    game is over as a result."""
    n_players = rules[R_PLAYERS]
    ranked = rules[R_RANKED] != 0
    players[p, S.P_STATUS] = status
    players[p, S.P_HAND] = -1
    if status == ELIMINATED:
        players[p, S.P_ELIM_ORDER] = meta[S.M_NELIM]
        meta[S.M_NELIM] += 1
        if ranked:
            players[p, S.P_PLACE] = meta[S.M_NEXT_WORST]
            meta[S.M_NEXT_WORST] -= 1
    else:
        players[p, S.P_PLACE] = meta[S.M_NEXT_BEST]
        meta[S.M_NEXT_BEST] += 1
    if _count_active(players, n_players) == 1:
        last = _next_active(players, n_players, p)
        if ranked:
            players[last, S.P_PLACE] = meta[S.M_NEXT_BEST]
            meta[S.M_NEXT_BEST] += 1
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
    :mod:`solo_rules`, any other to :func:`standard_apply_chance`.

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
    if not draw_copy(deck, meta, tile, NUM_TILES):
        return -1
    if rules[R_TILE_PREVIEW] != 0:
        w = meta[S.M_DRAW_FOR]
        players[w, S.P_HAND] = tile
        if meta[S.M_SETUP] != 0:
            if w + 1 < rules[R_PLAYERS]:
                meta[S.M_DRAW_FOR] = w + 1
            else:
                meta[S.M_SETUP] = 0
                meta[S.M_PLAYER] = 0
                meta[S.M_TILE] = players[0, S.P_HAND]
                meta[S.M_STEP] = S_TILE
        else:
            _advance(players, meta, rules, w)
    else:
        meta[S.M_TILE] = tile
        meta[S.M_STEP] = S_TILE
    _check_truncated(cells, meta, nbr, cell_of, origin)
    return 0


@njit(cache=True, inline="always")
def _hut_ok(cells, players, rules, nbr, p, c):
    """Found a settlement on ``c`` (RULES.md Step 2.1), checked from the hex's neighbours."""
    if players[p, S.P_HUTS] < 1 or cells[c, S.C_LEVEL] != 1 or not takes_building(
            cells, c, rules[R_NO_LAKE_BUILDING] != 0):
        return False
    if rules[R_NEW_HUT_ISOLATED] != 0:
        for d in range(6):
            m = nbr[c, d]
            if m >= 0 and cells[m, S.C_BUILDING] != 0 and cells[m, S.C_OWNER] == p:
                return False
    return True


@njit(cache=True, inline="always")
def _no_build(cells, players, meta, rules, nbr, cell_of, action):
    """True when the player to move has no legal build (elimination). A hut on one of the two
    hexes just placed is tried first; only if neither takes one is the full list consulted."""
    p = meta[S.M_PLAYER]
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
    p = meta[S.M_PLAYER]
    place_tile_cells(cells, players, meta, rules, nbr, hexqr, action, meta[S.M_TILE])
    placed = meta[S.M_PLACED]
    meta[S.M_PLACED] = placed + 1
    meta[S.M_PLY] += 1
    if rules[R_TILE_PREVIEW] != 0:
        players[p, S.P_HAND] = -1
    meta[S.M_STEP] = S_BUILD
    if _no_build(cells, players, meta, rules, nbr, cell_of, action):
        meta[S.M_TILE] = -1
        if not _leave_table(players, meta, rules, p, np.int64(ELIMINATED)):
            _end_turn(players, meta, rules, p)


@njit(cache=True, inline="always")
def apply_build(cells, players, deck, meta, rules, nbr, cell_of, origin, action):
    """Build by action id ``action`` (assumed legal), then check early victory and the end."""
    p = meta[S.M_PLAYER]
    place_build(cells, players, meta, rules, nbr, cell_of, action)
    meta[S.M_PLY] += 1
    kinds = 0
    if players[p, S.P_HUTS] == 0:
        kinds += 1
    if players[p, S.P_TEMPLES] == 0:
        kinds += 1
    if players[p, S.P_TOWERS] == 0:
        kinds += 1
    if kinds >= rules[R_EARLY_VICTORY_KINDS]:
        if rules[R_RANKED] == 0:
            _set_single_winner(players, rules[R_PLAYERS], np.int64(p))
            _finish(meta, np.int64(END_EARLY_VICTORY))
            return
        if _leave_table(players, meta, rules, p, np.int64(FINISHED)):
            return
    _end_turn(players, meta, rules, p)


@njit(cache=True)
def apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, action):
    """Apply one action (a tile type at a chance node, else a tile or build id; assumed legal).
    A solo game goes to :mod:`solo_rules`, any other to :func:`standard_apply_action`."""
    if rules[R_SOLO] != 0:
        _solo.solo_apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, action)
        return
    standard_apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, action)


@njit(cache=True)
def standard_apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin,
                          action):
    """:func:`apply_action` of a game that is not solo (see :func:`standard_apply_chance`)."""
    step = meta[S.M_STEP]
    if step == S_CHANCE:
        standard_apply_chance(cells, players, deck, meta, rules, nbr, cell_of, origin, action)
        return
    if step == S_TILE:
        apply_tile(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, action)
    elif step == S_BUILD:
        apply_build(cells, players, deck, meta, rules, nbr, cell_of, origin, action)
    _check_truncated(cells, meta, nbr, cell_of, origin)


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
    step = meta[S.M_STEP]
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
        out[0] = meta[S.M_SCORE] if meta[S.M_STEP] == S_TERMINAL else 0.0
        return
    for q in range(n):
        out[q] = 0.0
    if meta[S.M_STEP] != S_TERMINAL or meta[S.M_END] == END_TRUNCATED:
        return
    if rules[R_RANKED] == 0:
        winner_returns(players, S.P_PLACE, n, out)
    else:
        for q in range(n):
            s = players[q, S.P_PLACE]
            g = 0
            for q2 in range(n):
                if players[q2, S.P_PLACE] == s:
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
        if meta_b[i, S.M_STEP] != S_TERMINAL:
            apply_action(
                cells_b[i], players_b[i], deck_b[i], meta_b[i], rules, nbr, cell_of, hexqr,
                origin, act_b[i],
            )


@njit(cache=True, inline="always")
def _random_playout(chance, legal, apply, cells, players, deck, meta, rules, nbr, cell_of, hexqr,
                    origin, mask, seed):
    """:func:`random_playout` through the kernels ``chance``, ``legal`` and ``apply`` (the
    dispatching ones or the ``standard_*`` ones)."""
    np.random.seed(seed)
    buf = np.empty(8 * cells.shape[0], dtype=np.int64)
    decisions = 0
    while meta[S.M_STEP] != S_TERMINAL:
        if meta[S.M_STEP] == S_CHANCE:
            chance(cells, players, deck, meta, rules, nbr, cell_of, origin,
                   deck[meta[S.M_DRAWN]])
            continue
        n = legal(cells, players, meta, rules, nbr, cell_of, origin, buf)
        a = random_legal(buf, n, mask)
        apply(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, a)
        decisions += 1
    return decisions


@njit(cache=True)
def random_playout(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, mask, seed):
    """Play a game to the end with uniformly random legal actions, drawing tiles in deck order,
    computing the dense legal mask (``bool[14H]``, clean on entry and on exit) at every decision.
    Any game, the solo variant included (:func:`standard_random_playout` compiles only a game
    that is not solo).

    Returns:
        Number of decisions taken (tile and build steps).
    """
    return _random_playout(apply_chance, legal_actions, apply_action, cells, players, deck, meta,
                           rules, nbr, cell_of, hexqr, origin, mask, seed)


@njit(cache=True)
def standard_random_playout(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, mask,
                            seed):
    """:func:`random_playout` of a game that is not solo (see :func:`standard_apply_chance`)."""
    return _random_playout(standard_apply_chance, standard_legal_actions, standard_apply_action,
                           cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, mask,
                           seed)
