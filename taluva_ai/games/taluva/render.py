"""Text pictures of a position (the SVG / PNG pictures belong to the env issue)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from taluva_ai.games.taluva.state import C_BUILDING, C_LEVEL, C_OWNER, C_TERRAIN
from taluva_ai.games.taluva.tiles import TERRAIN_LETTER, Building, Terrain

if TYPE_CHECKING:
    from taluva_ai.games.taluva.game import TaluvaState

_BUILDING_CHAR = {Building.HUT: "h", Building.TEMPLE: "T", Building.TOWER: "W"}


def render_text(state: TaluvaState) -> str:
    """The island as rows of hexes, offset by half a hex per row (pointy-top).

    Each hex is 4 characters: terrain letter, level, and a building (``h`` hut(s), ``T``
    temple, ``W`` tower) followed by its owner seat, or ``..`` when empty. Rows are labelled by
    ``r`` and the first column by ``q``.
    """
    board = state.game.board
    cells = state.cells
    occ = np.flatnonzero(cells[:, C_LEVEL] > 0)
    lines = [state.summary()]
    if occ.size == 0:
        lines.append("(empty table)")
        return "\n".join(lines)
    qs, rs = board.q[occ], board.r[occ]
    rmin, rmax = int(rs.min()), int(rs.max())
    # screen column of hex (q, r) in half-hex units: 2q + r
    xs = 2 * qs + rs
    xmin = int(xs.min())
    for r in range(rmin, rmax + 1):
        row = occ[rs == r]
        if row.size == 0:
            lines.append(f"r={r:+3d}")
            continue
        parts: dict[int, str] = {}
        for c in row:
            q = int(board.q[c])
            x = 2 * q + r - xmin
            t = Terrain(int(cells[c, C_TERRAIN]))
            b = int(cells[c, C_BUILDING])
            bs = ".." if b == 0 else f"{_BUILDING_CHAR[Building(b)]}{int(cells[c, C_OWNER])}"
            parts[x] = f"{TERRAIN_LETTER[t]}{int(cells[c, C_LEVEL])}{bs}"
        width = (max(parts) + 2) * 3
        buf = [" "] * width
        for x, s in parts.items():
            for i, ch in enumerate(s):
                buf[x * 3 + i] = ch
        first_q = int(board.q[row].min())
        lines.append(f"r={r:+3d} q0={first_q:+3d} " + "".join(buf).rstrip())
    return "\n".join(lines)
