"""A Thurn und Taxis position as SVG text, without matplotlib: its picture on the browser board
(``taluva serve``, docs/web.md) and in ``taluva replay RECORD --svg DIR``.

The same map as the matplotlib picture (:mod:`.draw`, whose city places and colours it uses):
the 22 cities at their places, each a disc in its province's colour with its name, the 45 roads
as thin grey lines, each seat's route as a thick line in the seat's colour through its cities in
route order (offset a little per seat so routes along one road stay apart) with a ring in the
seat's colour round each of its cities, each house as a small square in the seat's colour beside
its city. Cities in the display have a black ring; the cities the last action changed (a card
taken, a route extended, houses placed) are ringed in magenta. Beside the map: the title (ply,
round, step, seat to move), one row per seat (colour, name, score, houses left, carriage, bonus
tile points, route length, the hand), the display and the supply, the last action, a legend.

Elements carry classes for scripts and tests: ``city`` (``data-city``, ``data-province``,
``data-display``), ``road``, ``route`` (``data-seat``, ``data-cities``), ``house``
(``data-seat``, ``data-city``), ``last`` (``data-city``), ``seat-row``, ``display``, ``legend``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

import numpy as np

from taluva_ai.games.thurn_und_taxis.board import (
    CITIES,
    CITY_ID,
    CITY_PROVINCE,
    PROVINCES,
    ROADS,
)
from taluva_ai.games.thurn_und_taxis.draw import (
    PROVINCE_COLOURS,
    SEAT_COLOURS,
    cards_text,
    city_xy,
)
from taluva_ai.games.thurn_und_taxis.state import (
    L_DISCARD,
    L_DISPLAY,
    L_HAND,
    L_ROUTE,
    L_SUPPLY,
    MAX_PLAYERS,
    P_CARRIAGE,
    P_HOUSES_LEFT,
    P_ROUTE_LEN,
    P_TILE_POINTS,
)
from taluva_ai.svgtext import xml_text

#: Pixels per picture unit (a degree of latitude).
SCALE = 150.0
#: The ring colour of the cities the last action changed (as Taluva's :mod:`..taluva.svg`).
LAST_COLOUR = "#e6007e"
#: The width of the panel beside the map, pixels.
PANEL_WIDTH = 430.0
_CITY_R = 0.11 * SCALE


def _f(x: float) -> str:
    return f"{x:.1f}"


def city_pixel(city: int) -> tuple[float, float]:
    """The centre of city id ``city`` in :func:`state_svg`'s picture (pixels, y down)."""
    x, y = city_xy(city)
    return SCALE * x, -SCALE * y


def changed_cities(before: Any, after: Any) -> np.ndarray:
    """``int64[k]``: the cities whose public cards (the display, the discard pile, the routes)
    or houses changed between two states of one game: what an action visibly did (a card
    taken from the display or dealt to it, a route extended, houses placed). Hands and the
    supply are left out, so the marks never tell which hidden card was drawn. Empty when
    ``before`` is None."""
    if before is None:
        return np.zeros(0, dtype=np.int64)
    public = [L_DISPLAY, L_DISCARD, *range(L_ROUTE, L_ROUTE + MAX_PLAYERS)]
    cards = (np.asarray(before.cards)[public] != np.asarray(after.cards)[public]).any(axis=0)
    houses = (np.asarray(before.houses) != np.asarray(after.houses)).any(axis=0)
    return np.flatnonzero(cards | houses).astype(np.int64)


def state_svg(state: Any, players: Sequence[str] | None = None, last: str | None = None,
              changed: Sequence[int] | np.ndarray = (), title: str | None = None,
              player: int | None = None) -> str:
    """The position as a standalone SVG document (module docstring).

    Args:
        state: a :class:`~taluva_ai.games.thurn_und_taxis.ThurnUndTaxisState`.
        players: a name per seat for the panel (default ``seat 0``, ``seat 1``, ...).
        last: the last action's notation, written in the panel.
        changed: city ids to ring as the last action (:func:`changed_cities`).
        title: the first line of the panel (default: ply, round, step, seat to move).
        player: the seat whose hand is shown, the other seats' hands given as a card count;
            -1 shows no hand (a spectator's view); None shows every hand (the full state).

    Returns:
        The SVG text, ``<svg ...>...</svg>`` with an XML declaration.

    Raises:
        ValueError: ``player`` is not a seat of the game.
    """
    n = int(state.num_players)
    if player is not None and (isinstance(player, bool) or not isinstance(
            player, (int, np.integer)) or not -1 <= player < n):
        raise ValueError(f"player must be a seat 0..{n - 1}, -1 or None, got {player!r}")
    names = list(players) if players is not None else [f"seat {p}" for p in range(n)]
    pts = [city_pixel(c) for c in range(len(CITIES))]
    pad = 0.45 * SCALE
    x0 = min(x for x, _ in pts) - pad
    x1 = max(x for x, _ in pts) + pad
    y0 = min(y for _, y in pts) - pad
    y1 = max(y for _, y in pts) + pad
    map_w, map_h = x1 - x0, y1 - y0
    panel, bottom = _panel(state, names, last, title, player, x0 + map_w + 10, y0 + 10)
    height = max(map_h, bottom - y0 + 12)
    width = map_w + PANEL_WIDTH
    body = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" class="tnt-board" '
        f'viewBox="{_f(x0)} {_f(y0)} {_f(width)} {_f(height)}" width="{_f(width)}" '
        f'height="{_f(height)}" font-family="sans-serif">',
        f'<rect x="{_f(x0)}" y="{_f(y0)}" width="{_f(width)}" height="{_f(height)}" '
        'fill="#f7f4ec"/>',
    ]
    for a, b in ROADS:
        (ax, ay), (bx, by) = city_pixel(CITY_ID[a]), city_pixel(CITY_ID[b])
        body.append(f'<line class="road" x1="{_f(ax)}" y1="{_f(ay)}" x2="{_f(bx)}" '
                    f'y2="{_f(by)}" stroke="#9e9e9e" stroke-width="1.2"/>')
    for p in range(n):  # routes in route order, offset per seat
        length = int(state.players[p, P_ROUTE_LEN])
        if length == 0:
            continue
        off = p - (n - 1) / 2
        route = [int(c) for c in state.route[p, :length]]
        line = " ".join(f"{_f(x + 6.75 * off)},{_f(y - 4.5 * off)}"
                        for x, y in (city_pixel(c) for c in route))
        body.append(f'<g class="route" data-seat="{p}" '
                    f'data-cities="{" ".join(CITIES[c] for c in route)}">'
                    f'<polyline points="{line}" fill="none" stroke="{SEAT_COLOURS[p]}" '
                    'stroke-width="4.5" stroke-opacity="0.85" stroke-linecap="round" '
                    'stroke-linejoin="round"/>'
                    + "".join(f'<circle cx="{_f(city_pixel(c)[0])}" cy="{_f(city_pixel(c)[1])}" '
                              f'r="{_f(_CITY_R + 5 + 5 * p)}" fill="none" '
                              f'stroke="{SEAT_COLOURS[p]}" stroke-width="2.2"/>' for c in route)
                    + "</g>")
    display = state.cards[L_DISPLAY]
    for c, (x, y) in enumerate(pts):
        prov = int(CITY_PROVINCE[c])
        shown = bool(display[c])
        body.append(f'<g class="city" data-city="{CITIES[c]}" data-province="{PROVINCES[prov]}" '
                    f'data-display="{int(shown)}"><circle cx="{_f(x)}" cy="{_f(y)}" '
                    f'r="{_f(_CITY_R)}" fill="{PROVINCE_COLOURS[prov]}" '
                    f'stroke="{"#000" if shown else "#555"}" '
                    f'stroke-width="{3 if shown else 1}"><title>{CITIES[c]} '
                    f'({PROVINCES[prov]})</title></circle><text x="{_f(x)}" '
                    f'y="{_f(y + _CITY_R + 16)}" font-size="12" text-anchor="middle">'
                    f'{CITIES[c]}</text></g>')
        for p in range(n):
            if state.houses[p, c]:
                hx = x + (1 if p in (0, 3) else -1) * 0.75 * 1.41 * _CITY_R
                hy = y + (-1 if p < 2 else 1) * 0.75 * 1.41 * _CITY_R
                body.append(f'<rect class="house" data-seat="{p}" data-city="{CITIES[c]}" '
                            f'x="{_f(hx - 6)}" y="{_f(hy - 6)}" width="12" height="12" '
                            f'fill="{SEAT_COLOURS[p]}" stroke="#000"/>')
    for c in changed:
        x, y = pts[int(c)]
        body.append(f'<circle class="last" data-city="{CITIES[int(c)]}" cx="{_f(x)}" '
                    f'cy="{_f(y)}" r="{_f(_CITY_R + 3)}" fill="none" stroke="{LAST_COLOUR}" '
                    'stroke-width="3.5"/>')
    body += panel
    body.append("</svg>")
    return "\n".join(body) + "\n"


#: Characters per line of the panel's small text before it wraps.
WRAP = 62


def _cards_line(row: np.ndarray) -> str:
    return cards_text(row, limit=len(CITIES))


def _count(k: int) -> str:
    return f"{k} card" if k == 1 else f"{k} cards"


def _panel(state: Any, names: list[str], last: str | None, title: str | None,
           player: int | None, x0: float, y0: float) -> tuple[list[str], float]:
    """The panel beside the map (title, seats with their whole hands, display and supply,
    last action, legend), long lines wrapped at :data:`WRAP` characters; the SVG lines and
    the panel's bottom edge (pixels)."""
    out = ['<g class="panel" font-size="13">']
    if title is None:
        who = (f", seat {state.current_player} to move (official {state.official})"
               if state.current_player >= 0 else "")
        title = f"ply {state.ply}, round {state.round}, {state.step.name.lower()}{who}"
    y = y0 + 14
    out.append(f'<text x="{_f(x0)}" y="{_f(y)}" font-weight="bold">{xml_text(title)}</text>')
    y += 10
    scores = state.scores()
    cards = state.cards

    def small(lines: list[str], x: float) -> str:
        nonlocal y
        parts = []
        for line in lines:
            y += 14
            parts.append(f'<text x="{_f(x)}" y="{_f(y)}" font-size="11" fill="#333">'
                         f'{xml_text(line)}</text>')
        return "".join(parts)

    for p, name in enumerate(names):
        y += 26
        pl = state.players[p]
        row = cards[L_HAND + p]
        hand = (_cards_line(row) if player is None or p == player
                else _count(int(row.sum())))
        mark = "▶ " if state.current_player == p else ""
        head = (f'<g class="seat-row" data-seat="{p}">'
                f'<rect x="{_f(x0)}" y="{_f(y - 12)}" width="14" height="14" '
                f'fill="{SEAT_COLOURS[p]}" stroke="#000"/>'
                f'<text x="{_f(x0 + 20)}" y="{_f(y)}">{xml_text(mark + name[:40])}: '
                f'{int(scores[p])} pt</text>')
        body = small([f"houses left {int(pl[P_HOUSES_LEFT])} · carriage "
                      f"{int(pl[P_CARRIAGE]) or '-'} · tiles {int(pl[P_TILE_POINTS])} pt · "
                      f"route {int(pl[P_ROUTE_LEN])}",
                      *textwrap.wrap(f"hand: {hand}", WRAP)], x0 + 20)
        out.append(head + body + "</g>")
    y += 16
    lines = textwrap.wrap(f"display: {_cards_line(cards[L_DISPLAY])}", WRAP - 8)
    for i, line in enumerate(lines):
        y += 20 if i == 0 else 16
        out.append(f'<text class="display" x="{_f(x0)}" y="{_f(y)}">{xml_text(line)}</text>')
    y += 20
    out.append(f'<text x="{_f(x0)}" y="{_f(y)}">supply: '
               f'{_count(int(cards[L_SUPPLY].sum()))}</text>')
    y += 20
    out.append(f'<text x="{_f(x0)}" y="{_f(y)}" fill="{LAST_COLOUR}">last: '
               f'{xml_text(last) if last else "-"}</text>')
    legend, y = _legend(x0, y + 24)
    out += legend
    out.append("</g>")
    return out, y


def _legend(x0: float, y0: float) -> tuple[list[str], float]:
    out = ['<g class="legend" font-size="11">']
    rows = [(f'<circle cx="6" cy="6" r="6" fill="{PROVINCE_COLOURS[i]}" stroke="#555"/>', name)
            for i, name in enumerate(PROVINCES)]
    rows += [
        ('<circle cx="6" cy="6" r="5" fill="#fff" stroke="#000" stroke-width="2.5"/>',
         "city in the display"),
        (f'<rect y="4" width="12" height="4" fill="{SEAT_COLOURS[0]}"/>', "a seat's route"),
        (f'<rect x="1" y="1" width="10" height="10" fill="{SEAT_COLOURS[0]}" stroke="#000"/>',
         "a seat's house"),
        (f'<circle cx="6" cy="6" r="5" fill="none" stroke="{LAST_COLOUR}" stroke-width="2.5"/>',
         "last action"),
    ]
    for i, (symbol, label) in enumerate(rows):
        x, y = x0 + (i % 2) * 190, y0 + (i // 2) * 18
        out.append(f'<g transform="translate({_f(x)},{_f(y)})">{symbol}'
                   f'<text x="18" y="11">{xml_text(label)}</text></g>')
    out.append("</g>")
    return out, y0 + 18 * ((len(rows) + 1) // 2)


def position_svg(state: Any, players: Sequence[str] | None = None, last: str | None = None,
                 previous: Any = None, extra: Sequence[Any] = (),
                 player: int | None = None) -> str:
    """The picture of a position reached from ``previous`` (None: no last action marked), in
    the signature every game's ``svg`` module gives :mod:`taluva_ai.pictures`; ``extra`` is
    Taluva's (hexes kept in view) and is not used here."""
    return state_svg(state, players, last, changed_cities(previous, state), player=player)


__all__ = ["changed_cities", "city_pixel", "position_svg", "state_svg"]
