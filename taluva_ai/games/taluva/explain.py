"""Which rule an illegal tile or build action breaks (for :class:`IllegalActionError`).

Runs only when an action has already been found illegal by the kernels; it re-reads the
position to name the first condition of RULES.md that fails, so its checks are diagnostics,
not a second implementation of legality.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from taluva_ai.games.taluva.state import (
    C_BUILDING,
    C_LEVEL,
    C_OWNER,
    C_TERRAIN,
    C_TILE,
    M_PLACED,
    M_PLAYER,
    M_TILE,
    P_HUTS,
    P_TEMPLES,
    P_TOWERS,
)
from taluva_ai.games.taluva.tiles import Building, Terrain

if TYPE_CHECKING:
    from taluva_ai.games.taluva.game import TaluvaState


def explain(state: TaluvaState, a: int) -> str:
    """Name the rule that action id ``a`` breaks in ``state`` (assumed illegal)."""
    h = state.game.num_cells
    if state.game.rules.solo:
        if a >= 14 * h:
            return _explain_solo_choice(state, a - 14 * h)
        if a < 6 * h:
            return _explain_solo_tile(state, a)
        if a < 7 * h:
            why = _explain_solo_found(state, a - 6 * h)
            if why:
                return why
    if a < 6 * h:
        return _explain_tile(state, a)
    return _explain_build(state, a)


def _explain_solo_choice(state: TaluvaState, k: int) -> str:
    from taluva_ai.games.taluva import solo_kernels as SK

    c = state.solo_counts()
    if k == SK.A_BONUS_PILE:
        if c["draw_pile"] == 0:
            return "bonus tile: the draw pile is empty"
        return "bonus tile: not earned here"
    if k == SK.A_BONUS_FACE_UP:
        if c["face_up"] is None:
            return "bonus tile: no face-up tile (it is replaced in phase 2 only, SOLO.md 3.2)"
        if c["bonus_offer"]:
            return ("bonus tile: this trigger gives a tile from the draw pile only, or the "
                    "face-up tile has no legal placement (SOLO.md 3.2, 6.8)")
        return "bonus tile: not earned here"
    if k == SK.A_STOP:
        return "bonus tile: no bonus tile is on offer"
    piece = ("huts", "temples", "towers")[k - SK.A_BOX_HUT]
    if state.supply(0)[piece] == 0:
        return f"box: no {piece[:-1]} left in the supply"
    return "box: only after a class-1 regular tile (SOLO.md 3.1)"


def _explain_solo_tile(state: TaluvaState, a: int) -> str:
    from taluva_ai.games.taluva.tiles import tile_terrains

    board = state.game.board
    rules = state.game.rules
    cells = state.cells
    v, o = divmod(a, 6)
    ca = int(board.neighbours[v, (o + 4) % 6])
    cb = int(board.neighbours[v, (o + 5) % 6])
    if ca < 0 or cb < 0:
        return f"board bound: every hex must lie within board_radius={board.radius} of (0,0)"
    lv, la, lb = (int(cells[c, C_LEVEL]) for c in (v, ca, cb))
    regular = state.solo_counts()["source"] == "regular"
    if lv == 0:
        if la or lb:
            return "sea-level placement: all three hexes must be on empty table"
        return ("SOLO.md 2: a level-1 tile needs a matching contact (a hex next to an island "
                "hex of its terrain)")
    ta, tb = tile_terrains(int(state.meta[M_TILE]))
    ma, mb = int(cells[ca, C_TERRAIN]) == ta, int(cells[cb, C_TERRAIN]) == tb
    if cells[v, C_TERRAIN] != Terrain.VOLCANO and not (
            rules.bonus_no_eruption and not regular and lv == 1):
        return "eruption rule 1: the new volcano must lie on a volcano"
    if lv == la == lb:
        if regular and not (ma and mb):
            return ("SOLO.md 2: a regular tile placed higher must be exact (each terrain hex "
                    "on its own terrain)")
        if not regular and lv >= 2 and not (ma and mb):
            return "SOLO.md 3.2: a bonus tile at level 3 or more must be exact"
        if not regular and not (ma or mb):
            return "SOLO.md 3.2: a level-2 bonus tile needs a terrain hex on its own terrain"
    return _explain_tile(state, a)


def _explain_solo_found(state: TaluvaState, c: int) -> str | None:
    from taluva_ai.games.taluva import kernels as K

    rules, nbr, _, _, _ = state.game.kernel_args()
    if state.game.rules.found_plain:
        return None
    cells = state.cells
    if cells[c, C_LEVEL] != 1 or cells[c, C_BUILDING] != 0 \
            or cells[c, C_TERRAIN] == Terrain.VOLCANO:
        return None
    import numpy as np

    fill = np.empty(state.game.num_cells, dtype=np.int32)
    seen = np.zeros(state.game.num_cells, dtype=np.bool_)
    n = int(K.found_cells(cells, rules, nbr, c, fill, seen))
    cost = int(cells[fill[:n], C_LEVEL].sum())
    huts = state.supply(0)["huts"]
    if cost > huts:
        return (f"solo founding (SOLO.md 3.3): the hex and the {n - 1} empty hexes of its "
                f"terrain it fills take {cost} huts, the supply has {huts} (all or nothing)")
    return None


def _explain_tile(state: TaluvaState, a: int) -> str:
    board = state.game.board
    cells = state.cells
    v, o = divmod(a, 6)
    if state.meta[M_PLACED] == 0:
        return "the first tile's volcano goes on the origin (0,0)"
    ca = int(board.neighbours[v, (o + 4) % 6])
    cb = int(board.neighbours[v, (o + 5) % 6])
    if ca < 0 or cb < 0:
        return f"board bound: every hex must lie within board_radius={board.radius} of (0,0)"
    lv, la, lb = (int(cells[c, C_LEVEL]) for c in (v, ca, cb))
    if lv == 0:
        if la or lb:
            return "sea-level placement: all three hexes must be on empty table"
        return "sea-level placement: one of the three hexes must touch the island"
    if cells[v, C_TERRAIN] != Terrain.VOLCANO:
        return "eruption rule 1: the new volcano must lie on a volcano"
    if not lv == la == lb:
        return "eruption rule 2: the three hexes underneath must be at one level"
    if cells[v, C_TILE] == cells[ca, C_TILE] == cells[cb, C_TILE]:
        return "eruption rule 3: the new tile must not lie exactly on one tile"
    for c in (ca, cb):
        if cells[c, C_BUILDING] in (Building.TEMPLE, Building.TOWER):
            return "eruption rule 4: no temple or tower may lie underneath"
    return "eruption rule 5: it would cover a whole settlement"


def _touches_own_building(state: TaluvaState, cell: int, player: int) -> bool:
    """Whether ``cell`` shares an edge with a building of ``player`` (i.e. a settlement)."""
    for m in state.game.board.neighbours[cell]:
        if m >= 0 and state.cells[m, C_BUILDING] != 0 and state.cells[m, C_OWNER] == player:
            return True
    return False


def _explain_build(state: TaluvaState, a: int) -> str:
    h = state.game.num_cells
    rules = state.game.rules
    p = int(state.meta[M_PLAYER])
    cells = state.cells
    if a >= 9 * h:
        e = a - 9 * h
        c, k = divmod(e, 5)
        if cells[c, C_BUILDING] == 0 or cells[c, C_OWNER] != p:
            return "expansion: the named hex holds no settlement of the player to move"
        canon = state._settlement_canon(c)
        if canon != c:
            return "expansion: a settlement is named by its smallest hex (see docs/notation.md)"
        terrain = Terrain(Terrain.JUNGLE + k)
        if rules.no_lake_building and terrain == Terrain.LAKE:
            return "no_lake_building: no building of any kind on lake hexes"
        return (
            "expansion: no empty hex of that terrain touches the settlement, the player is short "
            "of huts for all of them (no partial expansion), or the same outcome has another id"
        )
    kind, c = divmod(a, h)
    kind -= 6
    lv = int(cells[c, C_LEVEL])
    if lv == 0:
        return "build: the hex is empty table (only the top of a tile is a build site)"
    if cells[c, C_TERRAIN] == Terrain.VOLCANO:
        return "build: no building is ever placed on a volcano hex"
    if cells[c, C_BUILDING] != 0:
        return "build: the hex already holds a building"
    if rules.no_lake_building and cells[c, C_TERRAIN] == Terrain.LAKE:
        return "no_lake_building: no building of any kind on lake hexes"
    supply = state.players[p]
    if kind == 0:
        if supply[P_HUTS] < 1:
            return "found a settlement: no hut left in the supply"
        if lv != 1:
            return "found a settlement: a new hut goes on a level-1 hex"
        return "new_hut_isolated: a new hut may not touch a settlement of the same player"
    if kind == 1:
        if supply[P_TEMPLES] < 1:
            return "temple: no temple left in the supply"
        return "temple: it must touch an own settlement of at least 3 hexes that holds no temple"
    if supply[P_TOWERS] < 1:
        return "tower: no tower left in the supply"
    if lv < 3:
        return "tower: it goes on a hex of level 3 or more"
    if not _touches_own_building(state, c, p):
        return "tower: it must touch an own settlement"
    return "tower: it must touch an own settlement that holds no tower"
