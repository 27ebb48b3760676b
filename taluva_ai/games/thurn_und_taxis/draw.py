"""Pictures of a Thurn und Taxis position with matplotlib (imported lazily: ``pip install
'taluva-ai[envs]'``), for the envs' ``rgb_array`` render.

The upper part is the map: the 22 cities at their places on the board (approximately their
geographic positions; Lodz, off the board's edge, east of Pilsen), coloured by province, the 45
roads as thin grey lines, each seat's route as a thick line in the seat's colour through its
cities in route order (seat 0 red, 1 blue, 2 green, 3 orange; offset a little per seat so
routes along the same road stay apart), and each house as a small square in the seat's
colour beside its city. Cities face up in the display have a black ring. Below the map, one
line per seat (score, houses left, carriage, bonus tile points, route length and the hand),
then the display and the supply, and a legend of the province colours. The title says the
ply, the round, the step and the seat to move.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from taluva_ai.games.taluva.draw import _matplotlib
from taluva_ai.games.thurn_und_taxis.board import (
    CITIES,
    CITY_ID,
    CITY_PROVINCE,
    PROVINCES,
    ROADS,
)
from taluva_ai.games.thurn_und_taxis.state import (
    L_DISPLAY,
    L_HAND,
    L_SUPPLY,
    P_CARRIAGE,
    P_HOUSES_LEFT,
    P_ROUTE_LEN,
    P_TILE_POINTS,
)

#: Seat colours (routes, houses, the seat's line below the map).
SEAT_COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#ff7f0e")
#: Province fill colours, in province-id order (matplotlib's Pastel1).
PROVINCE_COLOURS = ("#fbb4ae", "#b3cde3", "#ccebc5", "#decbe4", "#fed9a6", "#ffffcc",
                    "#e5d8bd", "#fddaec", "#f2f2f2")

#: ``(longitude, latitude)`` of each city, in degrees (Lodz placed east of Pilsen, as on the
#: board).
CITY_LONLAT: dict[str, tuple[float, float]] = {
    "augsburg": (10.90, 48.37), "basel": (7.59, 47.56), "budweis": (14.47, 48.97),
    "carlsruhe": (8.40, 49.01), "freiburg": (7.85, 47.99), "ingolstadt": (11.43, 48.77),
    "innsbruck": (11.40, 47.27), "kempten": (10.32, 47.73), "linz": (14.29, 48.31),
    "lodz": (15.30, 49.95), "mannheim": (8.47, 49.49), "muenchen": (11.58, 48.14),
    "nuernberg": (11.08, 49.45), "passau": (13.43, 48.57), "pilsen": (13.38, 49.75),
    "regensburg": (12.10, 49.01), "salzburg": (13.04, 47.80), "sigmaringen": (9.22, 48.09),
    "stuttgart": (9.18, 48.78), "ulm": (9.99, 48.40), "wuerzburg": (9.93, 49.79),
    "zuerich": (8.54, 47.37),
}
_COS_LAT = math.cos(math.radians(48.5))


def city_xy(city: int) -> tuple[float, float]:
    """Picture coordinates of city id ``city`` (longitude scaled by cos 48.5°, latitude)."""
    lon, lat = CITY_LONLAT[CITIES[int(city)]]
    return lon * _COS_LAT, lat


def cards_text(row: np.ndarray, limit: int = 9) -> str:
    """``augsburg, basel x2, ...``: the cards of a row of the cards array."""
    items = [CITIES[c] + (f" x{int(row[c])}" if row[c] > 1 else "") for c in np.flatnonzero(row)]
    if not items:
        return "-"
    if len(items) > limit:
        items = [*items[:limit], f"... ({int(row.sum())} cards)"]
    return ", ".join(items)


def draw_state(state: Any, ax: Any = None, player: int | None = None,
               title: str | None = None) -> Any:
    """Draw a Thurn und Taxis state on a matplotlib ``Axes`` (a new 6 x 6 inch figure when
    None); return the figure.

    Args:
        state: a :class:`~taluva_ai.games.thurn_und_taxis.ThurnUndTaxisState`.
        ax: where to draw.
        player: the seat whose hand is shown; None shows every seat's hand (the full state,
            as ``str(state)``); the other seats' hands are then given as a card count.
        title: the title (default: ply, round, step and the seat to move).

    Raises:
        ValueError: ``player`` is not a seat of the game.
    """
    plt = _matplotlib()
    from matplotlib.patches import Circle, Patch, Rectangle

    n = state.num_players
    if player is not None and (isinstance(player, bool) or not isinstance(
            player, (int, np.integer)) or not 0 <= player < n):
        raise ValueError(f"player must be a seat 0..{n - 1} or None, got {player!r}")
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 6), dpi=80)
    else:
        fig = ax.figure
    cards = state.cards
    xs = [city_xy(c)[0] for c in range(len(CITIES))]
    ys = [city_xy(c)[1] for c in range(len(CITIES))]
    x0, x1 = min(xs) - 0.35, max(xs) + 0.35
    top = max(ys) + 0.3
    width = x1 - x0
    bottom = top - width  # a square picture: the map on top, the text panel below
    ax.set_xlim(x0, x1)
    ax.set_ylim(bottom, top)
    ax.set_aspect("equal")
    ax.axis("off")
    for a, b in ROADS:
        (ax_, ay), (bx, by) = city_xy(CITY_ID[a]), city_xy(CITY_ID[b])
        ax.plot([ax_, bx], [ay, by], color="#9e9e9e", linewidth=0.8, zorder=1)
    for p in range(n):  # routes, in route order, offset per seat
        length = int(state.players[p, P_ROUTE_LEN])
        if length == 0:
            continue
        dx, dy = 0.045 * (p - (n - 1) / 2), 0.03 * (p - (n - 1) / 2)
        pts = [city_xy(int(c)) for c in state.route[p, :length]]
        ax.plot([x + dx for x, _ in pts], [y + dy for _, y in pts], color=SEAT_COLOURS[p],
                linewidth=3.0, alpha=0.85, solid_capstyle="round", zorder=2)
        for x, y in pts:  # a ring in the seat's colour round each city of the route
            ax.add_patch(Circle((x, y), 0.15 + 0.035 * p, facecolor="none",
                                edgecolor=SEAT_COLOURS[p], linewidth=1.6, zorder=3.5))
    display = cards[L_DISPLAY]
    for c in range(len(CITIES)):
        x, y = city_xy(c)
        ax.add_patch(Circle((x, y), 0.11, facecolor=PROVINCE_COLOURS[int(CITY_PROVINCE[c])],
                            edgecolor="#000000" if display[c] else "#555555",
                            linewidth=2.0 if display[c] else 0.6, zorder=3))
        ax.text(x, y - 0.19, CITIES[c], fontsize=6.5, ha="center", va="top", zorder=5)
        for p in range(n):
            if state.houses[p, c]:
                ang = math.pi / 4 + p * math.pi / 2
                hx, hy = x + 0.17 * math.cos(ang), y + 0.17 * math.sin(ang)
                ax.add_patch(Rectangle((hx - 0.045, hy - 0.045), 0.09, 0.09,
                                       facecolor=SEAT_COLOURS[p], edgecolor="#000000",
                                       linewidth=0.5, zorder=4))
    # the text panel
    scores = state.scores()
    y = min(ys) - 0.42
    step = 0.2
    for p in range(n):
        if player is None or p == player:
            hand = cards_text(cards[L_HAND + p])
        else:
            hand = f"{int(cards[L_HAND + p].sum())} cards"
        mover = "> " if state.current_player == p else ""
        pl = state.players[p]
        left = int(pl[P_HOUSES_LEFT])
        line = (f"{mover}seat {p}: {scores[p]} pt, {left} house{'' if left == 1 else 's'} left, "
                f"carriage {int(pl[P_CARRIAGE]) or '-'}, tiles {int(pl[P_TILE_POINTS])} pt, "
                f"route {int(pl[P_ROUTE_LEN])}")
        ax.add_patch(Rectangle((x0 + 0.02, y - 0.05), 0.1, 0.1, facecolor=SEAT_COLOURS[p],
                               edgecolor="#000000", linewidth=0.5))
        ax.text(x0 + 0.18, y, line, fontsize=7, va="center", ha="left")
        ax.text(x0 + 0.18, y - step * 0.8, f"hand: {hand}", fontsize=6.5, va="center",
                ha="left", color="#333333")
        y -= 1.8 * step
    ax.text(x0 + 0.02, y, f"display: {cards_text(display)}   supply: "
            f"{int(cards[L_SUPPLY].sum())} cards", fontsize=7, va="center", ha="left")
    ax.legend(handles=[Patch(facecolor=PROVINCE_COLOURS[i], edgecolor="#555555", label=name)
                       for i, name in enumerate(PROVINCES)],
              loc="lower center", fontsize=6, ncol=5, frameon=False,
              title="provinces (a black ring: in the display; a coloured ring: on a route)",
              title_fontsize=6, handlelength=1.0, borderaxespad=0.2, columnspacing=1.0)
    if title is None:
        step_name = state.step.name.lower()
        who = (f", seat {state.current_player} to move (official {state.official})"
               if state.current_player >= 0 else "")
        title = f"ply {state.ply}, round {state.round}, {step_name}{who}"
    ax.set_title(title, fontsize=8)
    return fig


def render_rgb(state: Any, size: int = 480, player: int | None = None) -> np.ndarray:
    """``uint8[size, size, 3]``: the drawing of ``state`` (:func:`draw_state`) as an RGB
    picture."""
    plt = _matplotlib()
    fig, ax = plt.subplots(figsize=(size / 80, size / 80), dpi=80)
    try:
        fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.95)
        draw_state(state, ax, player=player)
        fig.canvas.draw()
        rgba = np.asarray(fig.canvas.buffer_rgba())
        return np.ascontiguousarray(rgba[:, :, :3])
    finally:
        plt.close(fig)


def save_picture(state: Any, path: str | Path, player: int | None = None,
                 title: str | None = None) -> Path:
    """Write the drawing of ``state`` to ``path`` (format from the suffix: .svg, .png...)."""
    plt = _matplotlib()
    fig = draw_state(state, player=player, title=title)
    try:
        fig.savefig(path, bbox_inches="tight")
    finally:
        plt.close(fig)
    return Path(path)
