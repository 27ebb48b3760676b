"""Pictures of a position with matplotlib (imported lazily: ``pip install taluva-ai[envs]``).

One drawing serves the env's ``rgb_array`` render and ``taluva replay --svg/--png``: every hex on
the table is a pointy-top hexagon coloured by its top terrain (volcano red, jungle dark green,
clearing light green, sand yellow, rock grey, lake blue) with its level written small in a
corner; buildings are drawn in their owner's colour (seat 0 white, 1 black, 2 orange, 3
purple): a hut hex as small circles (one per hut), a temple as a square, a tower as a triangle.
The title is the position's summary line (step, player, tile in hand, supplies).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from taluva_ai.games.taluva.state import C_BUILDING, C_LEVEL, C_OWNER, C_TERRAIN

if TYPE_CHECKING:
    from taluva_ai.protocol import GameState

TERRAIN_COLOURS = {
    1: "#c0392b",  # volcano
    2: "#1e6b30",  # jungle
    3: "#8bc34a",  # clearing
    4: "#f4d03f",  # sand
    5: "#95a5a6",  # rock
    6: "#3498db",  # lake
}
PLAYER_COLOURS = ("#ffffff", "#111111", "#ff8c00", "#8e44ad")
SQRT3 = math.sqrt(3.0)


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


def draw_state(state: Any, ax: Any = None, title: str | None = None) -> Any:
    """Draw a Taluva state on a matplotlib ``Axes`` (a new figure when None); return the figure.

    Args:
        state: a :class:`~taluva_ai.games.taluva.TaluvaState`.
        ax: where to draw.
        title: the title (default: ``state.summary()``).
    """
    plt = _matplotlib()
    from matplotlib.patches import Circle, Polygon, RegularPolygon

    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 6), dpi=80)
    else:
        fig = ax.figure
    board = state.game.board
    cells = state.cells
    occ = np.flatnonzero(cells[:, C_LEVEL] > 0)
    xs: list[float] = [0.0]
    ys: list[float] = [0.0]
    for c in occ:
        q, r = board.hex(int(c))
        x, y = hex_center(q, r)
        xs.append(x)
        ys.append(y)
        lv = int(cells[c, C_LEVEL])
        terr = int(cells[c, C_TERRAIN])
        shade = max(0.35, 1.0 - 0.18 * (lv - 1))
        ax.add_patch(RegularPolygon((x, y), numVertices=6, radius=0.98, orientation=0.0,
                                    facecolor=TERRAIN_COLOURS.get(terr, "#ffffff"),
                                    edgecolor="#333333", linewidth=0.3 + 0.5 * lv, alpha=shade))
        ax.text(x + 0.45, y - 0.55, str(lv), fontsize=5, ha="center", va="center")
        b = int(cells[c, C_BUILDING])
        if b:
            col = PLAYER_COLOURS[int(cells[c, C_OWNER]) % 4]
            if b == 1:
                for k in range(lv):
                    ang = 2 * math.pi * k / max(lv, 1)
                    off = 0.0 if lv == 1 else 0.3
                    ax.add_patch(Circle((x + off * math.cos(ang), y + off * math.sin(ang)), 0.2,
                                        facecolor=col, edgecolor="#000000", linewidth=0.5))
            elif b == 2:
                ax.add_patch(Polygon([(x - 0.35, y - 0.35), (x + 0.35, y - 0.35),
                                      (x + 0.35, y + 0.35), (x - 0.35, y + 0.35)],
                                     facecolor=col, edgecolor="#000000", linewidth=0.8))
            else:
                ax.add_patch(Polygon([(x - 0.4, y - 0.35), (x + 0.4, y - 0.35), (x, y + 0.45)],
                                     facecolor=col, edgecolor="#000000", linewidth=0.8))
    pad = 2.0
    xmin, xmax, ymin, ymax = min(xs) - pad, max(xs) + pad, min(ys) - pad, max(ys) + pad
    span = max(xmax - xmin, ymax - ymin)
    cx, cy = (xmin + xmax) / 2, (ymin + ymax) / 2
    ax.set_xlim(cx - span / 2, cx + span / 2)
    ax.set_ylim(cy - span / 2, cy + span / 2)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title if title is not None else state.summary(), fontsize=6)
    return fig


def render_rgb(state: Any, size: int = 480) -> np.ndarray:
    """``uint8[size, size, 3]``: the drawing of ``state`` as an RGB picture."""
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
        fig.savefig(path, bbox_inches="tight")
    finally:
        plt.close(fig)
    return Path(path)


def save_pictures(record_path: str | Path, out_dir: str | Path, fmt: str = "svg",
                  decisions_only: bool = False) -> list[Path]:
    """Replay a game record (:func:`taluva_ai.records.replay_record`, which checks it) and write
    one picture per position: ``out_dir/0000.<fmt>`` for the initial position, then one after
    each action (chance draws included unless ``decisions_only``), named by the number of
    actions applied; the title is the summary line and the last action.

    Args:
        fmt: ``"svg"`` or ``"png"``.

    Returns:
        The files written, in order.

    Raises:
        ValueError: an unknown format.
        taluva_ai.errors.RecordError: a malformed record.
    """
    from taluva_ai.records import replay_record

    if fmt not in ("svg", "png"):
        raise ValueError(f"picture format must be 'svg' or 'png', got {fmt!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def on_state(state: GameState, event: Any) -> None:
        if event is None:
            title = f"{state.summary()}"  # type: ignore[attr-defined]
            name = "0000"
        else:
            if decisions_only and event.player < 0:
                return
            title = f"{state.summary()}\nlast: {event.notation}"  # type: ignore[attr-defined]
            name = f"{event.ply + 1:04d}"
        written.append(save_picture(state, out / f"{name}.{fmt}", title=title))

    replay_record(record_path, on_state)
    return written
