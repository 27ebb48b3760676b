"""The board as SVG text, without matplotlib: the picture of the browser board (``taluva serve``,
docs/web.md) and of ``taluva replay RECORD --svg DIR`` (through :mod:`taluva_ai.pictures`).

The island is drawn from the state's arrays (``cells``: level, terrain, tile, building, owner;
:meth:`~taluva_ai.games.taluva.TaluvaState.supply`, ``status``, ``tile``, ``summary``) with the
geometry and colours of :mod:`.draw` (the matplotlib pictures): every hex on the table a
pointy-top hexagon coloured by its top terrain, its level written in it, a thick line around each
tile (:func:`.draw.tile_edges`), the volcano hex carrying a dark wedge that points the way the
volcano faces (away from the two other hexes of its tile), huts (one disc per hut), temples
(squares) and towers (triangles) in the owner's seat colour. The hexes the last action changed
(the tile placed, the hexes built on) are ringed in magenta. Beside the board: the summary line,
one row per seat (its colour, name, pieces left in supply, status), the tile in hand drawn as a
small tile, the last action in notation, and the legend.

Elements carry classes for scripts and tests: ``hex`` (with ``data-q``, ``data-r``,
``data-level``), ``building`` (``data-kind`` hut/temple/tower, ``data-seat``, ``data-count``),
``last`` (a ring around a changed hex), ``volcano-mark``, ``tile-edge``, ``seat-row``,
``in-hand``, ``legend``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from taluva_ai.games.taluva.draw import (
    _DARK,
    OUTLINE,
    PLAYER_COLOURS,
    TERRAIN_COLOURS,
    TERRAIN_NAMES,
    hex_center,
    tile_edges,
)
from taluva_ai.games.taluva.state import C_BUILDING, C_LEVEL, C_OWNER, C_TERRAIN, C_TILE
from taluva_ai.games.taluva.tiles import Terrain, tile_name, tile_terrains
from taluva_ai.svgtext import xml_text

#: Pixels per picture unit (a hex's circumradius).
SCALE = 30.0
#: The ring colour of the hexes the last action changed.
LAST_COLOUR = "#e6007e"
#: The width of the panel beside the board, pixels.
PANEL_WIDTH = 330.0
_KINDS = {1: "hut", 2: "temple", 3: "tower"}


def _f(x: float) -> str:
    return f"{x:.1f}"


def _points(pts: Sequence[tuple[float, float]]) -> str:
    return " ".join(f"{_f(x)},{_f(y)}" for x, y in pts)


def _hexagon(cx: float, cy: float, radius: float) -> list[tuple[float, float]]:
    """Corners of a pointy-top hexagon around pixel ``(cx, cy)``."""
    return [(cx + radius * math.cos(math.radians(30 + 60 * k)),
             cy + radius * math.sin(math.radians(30 + 60 * k))) for k in range(6)]


def _px(x: float, y: float) -> tuple[float, float]:
    """Pixel coordinates (y down) of picture coordinates (y up, :func:`.draw.hex_center`)."""
    return SCALE * x, -SCALE * y


def hex_pixel(q: int, r: int) -> tuple[float, float]:
    """The centre of hex ``(q, r)`` in the coordinates of :func:`state_svg`'s picture (pixels,
    y down; a hex's circumradius is :data:`SCALE`): where a page draws its own marks (legal
    spots, an analysis's heat map) over the board."""
    return _px(*hex_center(q, r))


def _building(kind: int, lv: int, seat: int, cx: float, cy: float, s: float) -> str:
    col = PLAYER_COLOURS[seat % 4]
    head = (f'<g class="building" data-kind="{_KINDS[kind]}" data-seat="{seat}" '
            f'data-count="{lv if kind == 1 else 1}" fill="{col}" stroke="#000" '
            f'stroke-width="1">')
    parts = [head]
    if kind == 1:
        for k in range(lv):
            ang = 2 * math.pi * k / max(lv, 1) - math.pi / 2
            off = 0.0 if lv == 1 else 0.24 * s
            parts.append(f'<circle cx="{_f(cx + off * math.cos(ang))}" '
                         f'cy="{_f(cy + off * math.sin(ang))}" r="{_f(0.17 * s)}"/>')
    elif kind == 2:
        parts.append(f'<rect x="{_f(cx - 0.3 * s)}" y="{_f(cy - 0.3 * s)}" '
                     f'width="{_f(0.6 * s)}" height="{_f(0.6 * s)}"/>')
    else:
        parts.append(f'<polygon points="{_points([(cx - 0.35 * s, cy + 0.3 * s), (cx + 0.35 * s, cy + 0.3 * s), (cx, cy - 0.38 * s)])}"/>')  # noqa: E501
    parts.append("</g>")
    return "".join(parts)


def _volcano_marks(state: Any, occ: np.ndarray) -> list[str]:
    """A dark wedge on each visible volcano hex, pointing away from the centre of the other
    hexes of its tile still on top (the way the volcano faces); none when the volcano's tile
    shows no other hex."""
    board = state.game.board
    cells = state.cells
    out = []
    for c in occ:
        if int(cells[c, C_TERRAIN]) != Terrain.VOLCANO:
            continue
        tile = cells[c, C_TILE]
        x, y = hex_center(*board.hex(int(c)))
        mates = [hex_center(*board.hex(int(o))) for o in occ
                 if o != c and cells[o, C_TILE] == tile]
        if not mates:
            continue
        mx = sum(p[0] for p in mates) / len(mates)
        my = sum(p[1] for p in mates) / len(mates)
        dx, dy = x - mx, y - my
        n = math.hypot(dx, dy) or 1.0
        ux, uy = dx / n, dy / n  # picture units, y up
        tip = _px(x + 0.62 * ux, y + 0.62 * uy)
        left = _px(x + 0.3 * ux - 0.2 * uy, y + 0.3 * uy + 0.2 * ux)
        right = _px(x + 0.3 * ux + 0.2 * uy, y + 0.3 * uy - 0.2 * ux)
        out.append(f'<polygon class="volcano-mark" points="{_points([tip, left, right])}" '
                   'fill="#3b0d0d" opacity="0.8"/>')
    return out


def _mini_tile(tile: int, x0: float, y0: float, s: float) -> list[str]:
    """The tile ``tile`` as three small hexes (volcano on top, ``a`` bottom-left, ``b``
    bottom-right, as :mod:`.tiles` orients it), its top-left corner near pixel ``(x0, y0)``."""
    a, b = tile_terrains(tile)
    w = math.sqrt(3.0) * s
    spots = ((Terrain.VOLCANO, x0 + w, y0 + s), (a, x0 + w / 2, y0 + 2.5 * s),
             (b, x0 + 1.5 * w, y0 + 2.5 * s))
    out = [f'<g class="in-hand" data-tile="{tile_name(tile)}">']
    for terr, cx, cy in spots:
        out.append(f'<polygon points="{_points(_hexagon(cx, cy, s))}" '
                   f'fill="{TERRAIN_COLOURS[int(terr)]}" stroke="{OUTLINE}" stroke-width="1.5"/>')
    out.append("</g>")
    return out


def changed_cells(before: np.ndarray | None, after: np.ndarray) -> np.ndarray:
    """``int64[k]``: the hexes whose row of ``cells`` differs between two positions (the hexes
    an action changed: a tile's three hexes, the hexes built on); empty when ``before`` is
    None."""
    if before is None:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero((np.asarray(before) != np.asarray(after)).any(axis=1))


def state_svg(state: Any, players: Sequence[str] | None = None, last: str | None = None,
              changed: Sequence[int] | np.ndarray = (), title: str | None = None,
              extra: Sequence[tuple[int, int]] = ()) -> str:
    """The position as a standalone SVG document (module docstring).

    Args:
        state: a :class:`~taluva_ai.games.taluva.TaluvaState`.
        players: a name per seat for the panel (default ``seat 0``, ``seat 1``, ...).
        last: the last action's notation, written in the panel.
        changed: cell indices to ring as the last move (:func:`changed_cells`).
        title: the first line of the panel (default ``state.summary()``'s step and ply).
        extra: hexes ``(q, r)`` off the island to keep in the picture (the page marks legal
            spots there).

    Returns:
        The SVG text (UTF-8 when written), ``<svg ...>...</svg>`` with an XML declaration.
    """
    board = state.game.board
    cells = state.cells
    n = int(state.num_players)
    names = list(players) if players is not None else [f"seat {p}" for p in range(n)]
    occ = np.flatnonzero(cells[:, C_LEVEL] > 0)
    centres = [_px(*hex_center(*board.hex(int(c)))) for c in occ]
    around = centres + [hex_pixel(q, r) for q, r in extra]
    xs = [x for x, _ in around] or [0.0]
    ys = [y for _, y in around] or [0.0]
    pad = 1.4 * SCALE
    bx0, bx1 = min(xs) - pad, max(xs) + pad
    by0, by1 = min(ys) - pad, max(ys) + pad
    bw = max(bx1 - bx0, 8 * SCALE)
    bh = max(by1 - by0, 8 * SCALE)
    bx0 = (min(xs) + max(xs)) / 2 - bw / 2
    by0 = (min(ys) + max(ys)) / 2 - bh / 2
    panel_h = 150 + 22 * n + 11 * 18
    height = max(bh, panel_h)
    width = bw + PANEL_WIDTH
    by0 -= (height - bh) / 2
    body: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" class="taluva-board" '
        f'viewBox="{_f(bx0)} {_f(by0)} {_f(width)} {_f(height)}" width="{_f(width)}" '
        f'height="{_f(height)}" font-family="sans-serif">',
        f'<rect x="{_f(bx0)}" y="{_f(by0)}" width="{_f(width)}" height="{_f(height)}" '
        'fill="#f7f4ec"/>',
    ]
    for c, (x, y) in zip(occ, centres, strict=True):
        q, r = board.hex(int(c))
        lv = int(cells[c, C_LEVEL])
        terr = int(cells[c, C_TERRAIN])
        body.append(f'<polygon class="hex" data-q="{q}" data-r="{r}" data-level="{lv}" '
                    f'data-terrain="{TERRAIN_NAMES.get(terr, "?")}" '
                    f'points="{_points(_hexagon(x, y, SCALE))}" '
                    f'fill="{TERRAIN_COLOURS.get(terr, "#ffffff")}" stroke="#00000055" '
                    'stroke-width="0.6"><title>'
                    f'{q},{r} {TERRAIN_NAMES.get(terr, "?")} level {lv}</title></polygon>')
    body += _volcano_marks(state, occ)
    for c, (x, y) in zip(occ, centres, strict=True):
        lv = int(cells[c, C_LEVEL])
        ink = "#ffffff" if int(cells[c, C_TERRAIN]) in _DARK else "#000000"
        body.append(f'<text x="{_f(x)}" y="{_f(y + 0.78 * SCALE)}" font-size="{_f(0.36 * SCALE)}" '
                    f'font-weight="bold" text-anchor="middle" fill="{ink}">{lv}</text>')
        b = int(cells[c, C_BUILDING])
        if b:
            body.append(_building(b, lv, int(cells[c, C_OWNER]), x, y, SCALE))
    for (x1, y1), (x2, y2) in tile_edges(state):
        (p1x, p1y), (p2x, p2y) = _px(x1, y1), _px(x2, y2)
        body.append(f'<line class="tile-edge" x1="{_f(p1x)}" y1="{_f(p1y)}" x2="{_f(p2x)}" '
                    f'y2="{_f(p2y)}" stroke="{OUTLINE}" stroke-width="3" '
                    'stroke-linecap="round"/>')
    for cell in changed:
        if cells[int(cell), C_LEVEL] == 0:
            continue
        x, y = _px(*hex_center(*board.hex(int(cell))))
        body.append(f'<polygon class="last" points="{_points(_hexagon(x, y, 0.86 * SCALE))}" '
                    f'fill="none" stroke="{LAST_COLOUR}" stroke-width="3.5"/>')
    if occ.size == 0:
        body.append('<text x="0" y="0" text-anchor="middle" fill="#666" '
                    'font-size="14">empty table</text>')
    body += _panel(state, names, last, title, bx0 + bw + 10, by0 + 10)
    body.append("</svg>")
    return "\n".join(body) + "\n"


def _panel(state: Any, names: list[str], last: str | None, title: str | None,
           x0: float, y0: float) -> list[str]:
    """The panel beside the board: summary, seats and supplies, tile in hand, last action,
    legend."""
    out = ['<g class="panel" font-size="13">']
    y = y0 + 14
    head = title if title is not None else f"ply {state.ply}, {state.step.name.lower()}"
    out.append(f'<text x="{_f(x0)}" y="{_f(y)}" font-weight="bold">{xml_text(head)}</text>')
    y += 12
    cp = state.current_player
    for p, name in enumerate(names):
        y += 22
        s = state.supply(p)
        status = state.status(p).name.lower()
        mark = "▶ " if p == cp else ""
        tag = "" if status == "active" else f" ({status})"
        out.append(f'<g class="seat-row" data-seat="{p}">'
                   f'<rect x="{_f(x0)}" y="{_f(y - 12)}" width="14" height="14" '
                   f'fill="{PLAYER_COLOURS[p % 4]}" stroke="#000"/>'
                   f'<text x="{_f(x0 + 20)}" y="{_f(y)}">{xml_text(mark + name[:28])}{tag}</text>'
                   f'<text x="{_f(x0 + 20)}" y="{_f(y + 14)}" font-size="11" fill="#333">'
                   f'huts {s["huts"]} · temples {s["temples"]} · towers {s["towers"]}'
                   '</text></g>')
        y += 14
    y += 28
    tile = state.tile
    if tile >= 0:
        out.append(f'<text x="{_f(x0)}" y="{_f(y)}">in hand: {tile_name(tile)}</text>')
        out += _mini_tile(tile, x0 + 90, y - 14, 14.0)
        y += 40
    else:
        out.append(f'<text x="{_f(x0)}" y="{_f(y)}">in hand: -</text>')
    y += 22
    out.append(f'<text x="{_f(x0)}" y="{_f(y)}">tiles left: {state.tiles_left}</text>')
    y += 20
    out.append(f'<text x="{_f(x0)}" y="{_f(y)}" fill="{LAST_COLOUR}">last: '
               f'{xml_text(last) if last else "-"}</text>')
    y += 26
    out += _legend(x0, y)
    out.append("</g>")
    return out


def _legend(x0: float, y0: float) -> list[str]:
    out = ['<g class="legend" font-size="11">']
    rows: list[tuple[str, str]] = [
        (f'<rect width="12" height="12" fill="{TERRAIN_COLOURS[t]}" stroke="#000"/>',
         TERRAIN_NAMES[t]) for t in TERRAIN_COLOURS]
    rows += [
        ('<circle cx="6" cy="6" r="5" fill="#ddd" stroke="#000"/>', "hut (one per level)"),
        ('<rect x="1" y="1" width="10" height="10" fill="#ddd" stroke="#000"/>', "temple"),
        ('<polygon points="0,12 12,12 6,0" fill="#ddd" stroke="#000"/>', "tower"),
        (f'<rect y="4" width="12" height="4" fill="{OUTLINE}"/>', "tile outline"),
        ('<polygon points="6,0 1,10 11,10" fill="#3b0d0d"/>', "volcano's facing"),
        (f'<rect width="12" height="12" fill="none" stroke="{LAST_COLOUR}" stroke-width="2.5"/>',
         "last action"),
        ('<text y="11" font-weight="bold" font-size="11">2</text>', "level (tiles stacked)"),
    ]
    for i, (symbol, label) in enumerate(rows):
        col, row = i % 2, i // 2
        x, y = x0 + col * 150, y0 + row * 18
        out.append(f'<g transform="translate({_f(x)},{_f(y)})">{symbol}'
                   f'<text x="18" y="11">{xml_text(label)}</text></g>')
    out.append("</g>")
    return out


def position_svg(state: Any, players: Sequence[str] | None = None, last: str | None = None,
                 previous: Any = None, extra: Sequence[tuple[int, int]] = (),
                 player: int | None = None) -> str:
    """The picture of a position reached from ``previous`` (None: no last action marked), in
    the signature every game's ``svg`` module gives :mod:`taluva_ai.pictures`: the hexes that
    differ from ``previous`` ringed (:func:`changed_cells`), ``extra`` hexes kept in view.
    ``player`` (whose hidden information to show) is not used: Taluva's picture shows the
    public position."""
    before = None if previous is None else previous.cells
    return state_svg(state, players, last, changed_cells(before, state.cells), extra=extra)


__all__ = ["changed_cells", "hex_pixel", "position_svg", "state_svg"]
