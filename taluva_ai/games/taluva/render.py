"""Text pictures of a position (the PNG / SVG pictures: :mod:`.draw`).

:func:`render_text` draws the island as rows of pointy-top hexes, each row shifted half a hex
from the one above (as on the table), every hex with its coordinates under it, and a legend;
with ``color=True`` the terrains are coloured (ANSI escape sequences) and buildings take their
owner's colour. :func:`use_color` says whether a terminal stream should get colour (a TTY,
``NO_COLOR`` unset, ``TERM`` not ``dumb``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TextIO

import numpy as np

from taluva_ai.games.taluva.state import C_BUILDING, C_LEVEL, C_OWNER, C_TERRAIN
from taluva_ai.games.taluva.tiles import TERRAIN_LETTER, Building, Terrain

if TYPE_CHECKING:
    from taluva_ai.games.taluva.game import TaluvaState

_BUILDING_CHAR = {Building.HUT: "h", Building.TEMPLE: "T", Building.TOWER: "W"}

#: Characters per hex in a row; rows are shifted by half of it.
HEX_WIDTH = 6

_RESET = "\x1b[0m"
_DIM = "\x1b[2m"
#: ANSI background (terrain) of each terrain, 256-colour codes near the pictures' colours.
_TERRAIN_BG = {
    Terrain.VOLCANO: "\x1b[48;5;160m\x1b[97m",
    Terrain.JUNGLE: "\x1b[48;5;22m\x1b[97m",
    Terrain.CLEARING: "\x1b[48;5;113m\x1b[30m",
    Terrain.SAND: "\x1b[48;5;221m\x1b[30m",
    Terrain.ROCK: "\x1b[48;5;247m\x1b[30m",
    Terrain.LAKE: "\x1b[48;5;33m\x1b[97m",
}
#: A building is written on its owner's colour (seat 0 white, 1 black, 2 orange, 3 purple,
#: as in the pictures).
_SEAT_COLOR = ("\x1b[1;30;107m", "\x1b[1;97;40m", "\x1b[1;30;48;5;208m", "\x1b[1;97;48;5;92m")

_TERRAIN_NAME = {t: t.name.lower() for t in TERRAIN_LETTER}


def use_color(stream: TextIO, no_color: bool = False) -> bool:
    """Whether to write colour to ``stream``: not ``no_color`` (``--no-color``), the
    environment variable ``NO_COLOR`` unset or empty (no-color.org), ``TERM`` not ``dumb``,
    and ``stream`` a terminal."""
    if no_color or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{_RESET}" if color else text


def legend_text(color: bool = False, players: int = 4) -> str:
    """The legend of :func:`render_text` (4 lines) for a table of ``players`` seats (1: the
    solo variant, whose buildings are all seat 0's)."""
    terrains = "  ".join(
        f"{_paint(TERRAIN_LETTER[t], _TERRAIN_BG[t], color)} {_TERRAIN_NAME[t]}"
        for t in TERRAIN_LETTER)
    seats = " ".join(_paint(f"h{s}", _SEAT_COLOR[s], color) for s in range(players))
    whose = f"seats 0..{players - 1}" if players > 1 else "yours, the solo player's"
    example = "J2h1" if players > 1 else "J2h0"
    owner = "huts of seat 1" if players > 1 else "your huts"
    return "\n".join([
        f"legend: {terrains}",
        f"        {example}: jungle, level 2 (two tiles stacked), {owner} (a hut hex holds as "
        "many huts as its level)",
        f"        h hut(s), T temple, W tower, then the owner's seat: {seats} ({whose})",
        "        r=row (southwards), q= under each hex; actions name hexes q,r: hut@-1,0, "
        "tile@0,0:SE",
    ])


def render_text(state: TaluvaState, color: bool = False, legend: bool = True) -> str:
    """The position as text: the summary line, then the island as rows of pointy-top hexes,
    each row ``r`` shifted half a hex from the one above (row ``r + 1`` lies south-west and
    south-east of row ``r``), and under every hex its axial ``q``; then the legend.

    Each hex reads ``J2h1``: the top terrain's letter (``V`` volcano, ``J`` jungle, ``C``
    clearing, ``S`` sand, ``R`` rock, ``L`` lake), the level, and a building (``h`` hut(s),
    ``T`` temple, ``W`` tower) with its owner's seat. A hex takes :data:`HEX_WIDTH` characters.

    Args:
        state: a Taluva state.
        color: colour the terrains and the owners (ANSI escape sequences; see
            :func:`use_color`).
        legend: end with the legend (:func:`legend_text`).

    Returns:
        Lines separated by ``\\n``, no trailing newline.
    """
    board = state.game.board
    cells = state.cells
    occ = np.flatnonzero(cells[:, C_LEVEL] > 0)
    lines = [state.summary()]
    if occ.size == 0:
        lines.append("(empty table: no tile placed yet)")
    else:
        qs, rs = board.q[occ], board.r[occ]
        # screen column of hex (q, r) in half-hex units: 2q + r
        xs = 2 * qs + rs
        xmin = int(xs.min())
        half = HEX_WIDTH // 2
        label = 6  # "r=+12 "
        for r in range(int(rs.min()), int(rs.max()) + 1):
            row = sorted((int(board.q[c]), int(c)) for c in occ[rs == r])
            top = [f"r={r:+d}".ljust(label)]
            under = [" " * label]
            pos = 0
            for q, c in row:
                x = (2 * q + r - xmin) * half
                top.append(" " * (x - pos))
                under.append(" " * (x - pos))
                top.append(_hex_text(cells, c, color))
                under.append(_paint(f"q={q:+d}".center(HEX_WIDTH), _DIM, color))
                pos = x + HEX_WIDTH
            lines.append("".join(top).rstrip())
            lines.append("".join(under).rstrip())
    if legend:
        lines.append(legend_text(color, int(state.num_players)))
    return "\n".join(lines)


def _hex_text(cells: np.ndarray, c: int, color: bool) -> str:
    """`` J2h1 `` (:data:`HEX_WIDTH` characters) for hex ``c``, coloured when asked."""
    t = Terrain(int(cells[c, C_TERRAIN]))
    b = int(cells[c, C_BUILDING])
    ground = f" {TERRAIN_LETTER[t]}{int(cells[c, C_LEVEL])}"
    if b == 0:
        return _paint(ground + "   ", _TERRAIN_BG[t], color)
    seat = int(cells[c, C_OWNER])
    mark = f"{_BUILDING_CHAR[Building(b)]}{seat}"
    if not color:
        return f"{ground}{mark} "
    return (_paint(ground, _TERRAIN_BG[t], True) + _paint(mark, _SEAT_COLOR[seat % 4], True)
            + _paint(" ", _TERRAIN_BG[t], True))
