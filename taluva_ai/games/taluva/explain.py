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
    if a < 6 * h:
        return _explain_tile(state, a)
    return _explain_build(state, a)


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
