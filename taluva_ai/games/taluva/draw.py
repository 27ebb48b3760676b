"""Pictures of a position with matplotlib (imported lazily: ``pip install taluva-ai[envs]``).

One drawing serves the env's ``rgb_array`` render and ``taluva replay --svg/--png``: every hex on
the table is a pointy-top hexagon coloured by its top terrain (volcano red, jungle dark green,
clearing light green, sand yellow, rock grey, lake blue) with its axial coordinates ``q,r`` at
the top (as actions name hexes: ``hut@q,r``) and its level at the bottom; a thick dark line
outlines each tile (where the hexes of two tiles meet, or the table begins), so the tiles an
eruption may cover can be told apart. Buildings are drawn in their owner's colour (seat 0
white, 1 black, 2 orange, 3 purple): a hut hex as small circles (one per hut), a temple as a
square, a tower as a triangle. A legend under the board names the terrains, the pieces and the
seats; the title is the position's summary line (step, player, tile in hand, supplies).
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from taluva_ai.games.taluva.hexgrid import DIRECTIONS
from taluva_ai.games.taluva.state import C_BUILDING, C_LEVEL, C_OWNER, C_TERRAIN, C_TILE

TERRAIN_COLOURS = {
    1: "#c0392b",  # volcano
    2: "#1e6b30",  # jungle
    3: "#8bc34a",  # clearing
    4: "#f4d03f",  # sand
    5: "#95a5a6",  # rock
    6: "#3498db",  # lake
}
TERRAIN_NAMES = {1: "volcano", 2: "jungle", 3: "clearing", 4: "sand", 5: "rock", 6: "lake"}
#: Terrains whose colour is dark: their labels are written in white.
_DARK = {1, 2}
PLAYER_COLOURS = ("#ffffff", "#111111", "#ff8c00", "#8e44ad")
SQRT3 = math.sqrt(3.0)
#: The colour of the tile outlines.
OUTLINE = "#1a1a1a"


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError("pictures need matplotlib: pip install 'taluva-ai[envs]'") from e
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def hex_center(q: int, r: int) -> tuple[float, float]:
    """Picture coordinates of axial hex ``(q, r)`` (unit circumradius, y up, r southwards)."""
    return SQRT3 * (q + r / 2.0), -1.5 * r


def tile_edges(state: Any) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """The hex sides that outline the tiles on the table, as segments in picture coordinates:
    each side between two hexes of different tiles (``cells[:, C_TILE]``), or between a hex and
    the empty table."""
    board = state.game.board
    cells = state.cells
    edges = []
    for c in np.flatnonzero(cells[:, C_LEVEL] > 0):
        q, r = board.hex(int(c))
        x, y = hex_center(q, r)
        for d, (dq, dr) in enumerate(DIRECTIONS):
            nb = int(board.neighbours[c, d])
            other = nb >= 0 and cells[nb, C_LEVEL] > 0
            if other and (cells[nb, C_TILE] == cells[c, C_TILE] or nb < c):
                continue  # the same tile, or a side drawn from the other hex
            nx, ny = hex_center(q + dq, r + dr)
            mx, my = (x + nx) / 2, (y + ny) / 2
            ux, uy = (ny - y) / SQRT3, -(nx - x) / SQRT3  # unit vector along the side
            edges.append(((mx - 0.5 * ux, my - 0.5 * uy), (mx + 0.5 * ux, my + 0.5 * uy)))
    return edges


def _draw_legend(fig: Any, num_players: int, fontsize: float) -> list[str]:
    """Draw the legend along the bottom of ``fig`` (terrains, pieces, the tile outline, the
    seats), laid out by hand (matplotlib's ``Legend`` costs as much as the board); returns its
    labels in order."""
    from matplotlib.patches import Circle, Polygon, Rectangle

    entries: list[tuple[str, str, str]] = [("patch", TERRAIN_COLOURS[t], TERRAIN_NAMES[t])
                                           for t in TERRAIN_COLOURS]
    entries += [("hut", "#dddddd", "hut (1 per level)"), ("temple", "#dddddd", "temple"),
                ("tower", "#dddddd", "tower"), ("outline", OUTLINE, "tile outline")]
    entries += [("patch", PLAYER_COLOURS[s], f"seat {s}") for s in range(max(1, num_players))]
    cols = 5
    rows = -(-len(entries) // cols)
    width, height = fig.get_figwidth(), fig.get_figheight()
    line = fontsize / 72 * 1.7  # inches per legend row
    col_w = (width - 0.4) / cols
    box = fontsize / 72 * 0.9  # the symbol's size, inches
    tr = fig.dpi_scale_trans
    for i, (kind, colour, label) in enumerate(entries):
        x = 0.2 + (i % cols) * col_w
        y = 0.15 + (rows - 1 - i // cols) * line
        cx, cy = x + box / 2, y + box / 2
        edge = {"edgecolor": "#000000", "linewidth": 0.6, "transform": tr}
        if kind == "patch":
            fig.add_artist(Rectangle((x, y), box, box, facecolor=colour, **edge))
        elif kind == "hut":
            fig.add_artist(Circle((cx, cy), box / 2, facecolor=colour, **edge))
        elif kind == "temple":
            fig.add_artist(Rectangle((x + 0.1 * box, y + 0.1 * box), 0.8 * box, 0.8 * box,
                                     facecolor=colour, **edge))
        elif kind == "tower":
            fig.add_artist(Polygon([(x, y), (x + box, y), (cx, y + box)], facecolor=colour,
                                   **edge))
        else:
            fig.add_artist(Rectangle((x, cy - box / 8), box, box / 4, facecolor=colour,
                                     edgecolor="none", transform=tr))
        fig.text((x + box * 1.4) / width, cy / height, label, fontsize=fontsize, va="center")
    return [label for _, _, label in entries]


def draw_state(state: Any, ax: Any = None, title: str | None = None,
               legend: bool = True) -> Any:
    """Draw a Taluva state on a matplotlib ``Axes`` (a new 8 x 8.6 inch figure when None);
    return the figure.

    Every hex shows its coordinates ``q,r`` and its level; tiles are outlined; with
    ``legend``, a legend of terrains, pieces and seats goes under the board (a figure legend:
    the axes is shrunk to make room).

    Args:
        state: a :class:`~taluva_ai.games.taluva.TaluvaState`.
        ax: where to draw.
        title: the title (default: ``state.summary()``).
        legend: add the legend.
    """
    plt = _matplotlib()
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Circle, Polygon, RegularPolygon

    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 8.6), dpi=100)
    else:
        fig = ax.figure
    if legend:  # room for the legend under the board and the title above it
        fig.subplots_adjust(left=0.01, right=0.99, bottom=0.13, top=0.92)
    board = state.game.board
    cells = state.cells
    occ = np.flatnonzero(cells[:, C_LEVEL] > 0)
    centres = [hex_center(*board.hex(int(c))) for c in occ] or [(0.0, 0.0)]
    xs = [x for x, _ in centres]
    ys = [y for _, y in centres]
    # the island's extent (hexes reach 0.87 across and 1 up and down from their centres),
    # widened to the axes' shape so that a hex is as large as the page allows
    bbox = ax.get_position()
    w_in, h_in = bbox.width * fig.get_figwidth(), bbox.height * fig.get_figheight()
    w = max(max(xs) - min(xs) + 2 * 0.87 + 0.6, 5.0)
    h = max(max(ys) - min(ys) + 2.0 + 0.6, 5.0)
    if h / w > h_in / w_in:
        w = h * w_in / h_in
    else:
        h = w * h_in / w_in
    cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    ax.set_xlim(cx - w / 2, cx + w / 2)
    ax.set_ylim(cy - h / 2, cy + h / 2)
    ax.set_aspect("equal")
    ax.axis("off")
    # font sizes follow the size of a hex on the page (points per picture unit)
    unit_pt = 72.0 * w_in / w
    small = min(12.0, max(4.5, 0.34 * unit_pt))
    for c, (x, y) in zip(occ, centres, strict=False):
        q, r = board.hex(int(c))
        lv = int(cells[c, C_LEVEL])
        terr = int(cells[c, C_TERRAIN])
        ink = "#ffffff" if terr in _DARK else "#000000"
        ax.add_patch(RegularPolygon((x, y), numVertices=6, radius=1.0, orientation=0.0,
                                    facecolor=TERRAIN_COLOURS.get(terr, "#ffffff"),
                                    edgecolor="#00000055", linewidth=0.4))
        ax.text(x, y + 0.56, f"{q},{r}", fontsize=small, ha="center", va="center", color=ink)
        ax.text(x, y - 0.62, f"{lv}", fontsize=small, ha="center", va="center", color=ink,
                fontweight="bold")
        b = int(cells[c, C_BUILDING])
        if b:
            col = PLAYER_COLOURS[int(cells[c, C_OWNER]) % 4]
            if b == 1:
                for k in range(lv):
                    ang = 2 * math.pi * k / max(lv, 1) + math.pi / 2
                    off = 0.0 if lv == 1 else 0.24
                    ax.add_patch(Circle((x + off * math.cos(ang), y + off * math.sin(ang)),
                                        0.17, facecolor=col, edgecolor="#000000",
                                        linewidth=0.6))
            elif b == 2:
                ax.add_patch(Polygon([(x - 0.3, y - 0.3), (x + 0.3, y - 0.3),
                                      (x + 0.3, y + 0.3), (x - 0.3, y + 0.3)],
                                     facecolor=col, edgecolor="#000000", linewidth=0.9))
            else:
                ax.add_patch(Polygon([(x - 0.35, y - 0.3), (x + 0.35, y - 0.3), (x, y + 0.38)],
                                     facecolor=col, edgecolor="#000000", linewidth=0.9))
    edges = tile_edges(state)
    if edges:
        ax.add_collection(LineCollection(edges, colors=OUTLINE,
                                         linewidths=min(3.0, max(1.0, 0.07 * unit_pt)),
                                         capstyle="round"))
    if occ.size == 0:
        ax.text(cx, cy, "empty table", fontsize=10, ha="center", va="center", color="#666666")
    text = title if title is not None else state.summary()
    page = fig.get_figwidth()  # inches: 8 for a saved picture, 6 for a 480-pixel frame
    wrapped = "\n".join(textwrap.fill(line, int(11 * page)) for line in text.splitlines())
    ax.set_title(wrapped, fontsize=min(10.0, 1.25 * page))
    if legend:
        n = int(getattr(state, "num_players", 1))
        _draw_legend(fig, n, min(9.0, 1.15 * page))
    return fig


def render_rgb(state: Any, size: int = 480) -> np.ndarray:
    """``uint8[size, size, 3]``: the drawing of ``state`` (:func:`draw_state`, legend
    included) as an RGB picture."""
    plt = _matplotlib()
    fig, ax = plt.subplots(figsize=(size / 80, size / 80), dpi=80)
    try:
        draw_state(state, ax)
        fig.canvas.draw()
        rgba = np.asarray(fig.canvas.buffer_rgba())
        return np.ascontiguousarray(rgba[:, :, :3])
    finally:
        plt.close(fig)


def save_picture(state: Any, path: str | Path, title: str | None = None) -> Path:
    """Write the drawing of ``state`` to ``path`` (format from the suffix: .svg, .png...)."""
    plt = _matplotlib()
    fig = draw_state(state, title=title)
    try:
        fig.savefig(path)
    finally:
        plt.close(fig)
    return Path(path)
