"""Position strings: the whole Thurn und Taxis state as one line of text, and back
(docs/thurn_und_taxis.md, Position strings).

``format_position(state)`` writes ``key=value`` fields joined by ``;``, in a fixed order;
``parse_position(game, text)`` reads them back into a state of ``game`` (same options), so
``parse_position(game, s.to_position_string()).to_position_string() == s.to_position_string()``.
The string holds hidden information (every hand, the supply's make-up): it is the full state,
for tests, bug reports and tools, not an observation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from taluva_ai.errors import PositionError
from taluva_ai.games.thurn_und_taxis.board import (
    ADJACENT,
    CITIES,
    CITY_ID,
    COPIES,
    HOUSES,
    NUM_CITIES,
    NUM_STACKS,
    OFFICIALS,
    PROVINCE_ID,
    PROVINCES,
    STACK_SIZE,
    STACK_VALUES,
)
from taluva_ai.games.thurn_und_taxis.state import (
    L_DISCARD,
    L_DISPLAY,
    L_HAND,
    L_KNOWN,
    L_ROUTE,
    L_SUPPLY,
    M_CHANCE_LEFT,
    M_CHANCE_TO,
    M_DRAWS,
    M_END,
    M_END_BY,
    M_FORCED,
    M_LAST,
    M_MODE,
    M_MODE_PROVINCE,
    M_OFFICIAL,
    M_PLAYER,
    M_PLAYS,
    M_PLY,
    M_RESHUFFLES,
    M_RESUME,
    M_ROUND,
    M_STACK_TAKEN,
    M_STEP,
    M_TODO,
    M_TURN,
    P_CARRIAGE,
    P_HOUSES_LEFT,
    P_PLACE,
    P_ROUTE_LEN,
    P_STACK_COUNT,
    P_STACK_POINTS,
    P_TILE_POINTS,
    EndReason,
    Step,
    new_arrays,
)

if TYPE_CHECKING:
    from taluva_ai.games.thurn_und_taxis.game import ThurnUndTaxisGame, ThurnUndTaxisState

FORMAT_VERSION = 1
FIELDS = ("tnt", "players", "seed", "ply", "step", "player", "official", "forced", "chance",
          "close", "round", "turn", "end", "reshuffles", "draws", "plays", "stacks", "supply",
          "display", "discard", "hands", "known", "routes", "houses", "seats", "tiles")
_TARGETS = ("hand", "display")
_RESUMES = ("start", "draw1", "draw2", "administrator")
_MODES = ("per_province", "one_province")


def _digits(row: np.ndarray) -> str:
    return "".join(str(int(x)) for x in row)


def format_position(state: ThurnUndTaxisState) -> str:
    """One line holding every field of ``state`` (see :data:`FIELDS`)."""
    n = state.num_players
    c, m, pl = state.cards, state.meta, state.players
    prov = int(m[M_MODE_PROVINCE])
    fields = {
        "tnt": str(FORMAT_VERSION),
        "players": str(n),
        "seed": str(state.seed),
        "ply": str(int(m[M_PLY])),
        "step": Step(int(m[M_STEP])).name.lower(),
        "player": str(int(m[M_PLAYER])),
        "official": OFFICIALS[int(m[M_OFFICIAL])],
        "forced": str(int(m[M_FORCED])),
        "chance": f"{_TARGETS[int(m[M_CHANCE_TO])]}.{int(m[M_CHANCE_LEFT])}."
                  f"{_RESUMES[int(m[M_RESUME])]}",
        "close": f"{_MODES[int(m[M_MODE])]}.{PROVINCES[prov] if prov >= 0 else '-'}."
                 f"{int(m[M_TODO])}.{int(m[M_LAST])}",
        "round": str(int(m[M_ROUND])),
        "turn": str(int(m[M_TURN])),
        "end": f"{EndReason(int(m[M_END])).name.lower()}.{int(m[M_END_BY])}",
        "reshuffles": str(int(m[M_RESHUFFLES])),
        "draws": str(int(m[M_DRAWS])),
        "plays": str(int(m[M_PLAYS])),
        "stacks": ".".join(str(int(x)) for x in m[M_STACK_TAKEN:M_STACK_TAKEN + NUM_STACKS]),
        "supply": _digits(c[L_SUPPLY]),
        "display": _digits(c[L_DISPLAY]),
        "discard": _digits(c[L_DISCARD]),
        "hands": "/".join(_digits(c[L_HAND + p]) for p in range(n)),
        "known": "/".join(_digits(c[L_KNOWN + p]) for p in range(n)),
        "routes": "/".join("-".join(state.route_of(p)) for p in range(n)),
        "houses": "/".join(_digits(state.houses[p]) for p in range(n)),
        "seats": "/".join(f"{int(pl[p, P_HOUSES_LEFT])}.{int(pl[p, P_CARRIAGE])}."
                          f"{int(pl[p, P_PLACE])}" for p in range(n)),
        "tiles": "/".join(
            ".".join(f"{int(pl[p, P_STACK_COUNT + s])}:{int(pl[p, P_STACK_POINTS + s])}"
                     for s in range(NUM_STACKS)) for p in range(n)),
    }
    return ";".join(f"{k}={fields[k]}" for k in FIELDS)


def _int(field: str, text: str, lo: int, hi: int) -> int:
    try:
        v = int(text)
    except ValueError:
        raise PositionError(field, f"expected an integer, got {text!r}") from None
    if not lo <= v <= hi:
        raise PositionError(field, f"{v} is outside {lo}..{hi}")
    return v


def _name(field: str, text: str, names: tuple[str, ...]) -> int:
    if text not in names:
        raise PositionError(field, f"expected one of {', '.join(names)}, got {text!r}")
    return names.index(text)


def _parts(field: str, text: str, sep: str, count: int) -> list[str]:
    parts = text.split(sep)
    if len(parts) != count:
        raise PositionError(field, f"expected {count} parts separated by {sep!r}, got "
                            f"{len(parts)}")
    return parts


def _row(field: str, text: str, hi: int) -> np.ndarray:
    if len(text) != NUM_CITIES or not text.isdigit():
        raise PositionError(field, f"expected {NUM_CITIES} digits (one per city), got {text!r}")
    row = np.array([int(ch) for ch in text], dtype=np.int8)
    if (row > hi).any():
        raise PositionError(field, f"a city count above {hi}")
    return row


def parse_position(game: ThurnUndTaxisGame, text: str) -> ThurnUndTaxisState:
    """Read a position string into a state of ``game`` (no history).

    Raises:
        PositionError: a missing, extra, misplaced or malformed field, or a state that breaks
            the game's invariants (card counts, routes, houses, tiles); the error names the
            field.
    """
    from taluva_ai.games.thurn_und_taxis.game import ThurnUndTaxisState

    if not isinstance(text, str):
        raise PositionError("tnt", f"a position string is a str, got {type(text).__name__}")
    items = text.strip().split(";")
    keys = [it.partition("=")[0] for it in items]
    for i, k in enumerate(FIELDS):
        if i >= len(items) or keys[i] != k:
            raise PositionError(k, f"expected field {i + 1} to be {k!r}, got "
                                f"{keys[i] if i < len(items) else 'nothing'!r}")
        if "=" not in items[i]:
            raise PositionError(k, "expected key=value")
    if len(items) > len(FIELDS):
        raise PositionError(keys[len(FIELDS)], "unknown extra field")
    f = {k: it.partition("=")[2] for k, it in zip(keys, items, strict=True)}
    if f["tnt"] != str(FORMAT_VERSION):
        raise PositionError("tnt", f"expected format version {FORMAT_VERSION}, got {f['tnt']!r}")
    n = _int("players", f["players"], 2, 4)
    if n != game.num_players:
        raise PositionError("players", f"{n} players, but the game has {game.num_players}")
    cards, route, houses, players, meta = new_arrays(n)
    cards[:] = 0
    seed = _int("seed", f["seed"], 0, 2**64)
    meta[M_PLY] = _int("ply", f["ply"], 0, 2**31 - 1)
    meta[M_STEP] = _name("step", f["step"], tuple(s.name.lower() for s in Step))
    meta[M_PLAYER] = _int("player", f["player"], 0, n - 1)
    meta[M_OFFICIAL] = _name("official", f["official"], OFFICIALS)
    meta[M_FORCED] = _int("forced", f["forced"], 0, 1)
    to, left, resume = _parts("chance", f["chance"], ".", 3)
    meta[M_CHANCE_TO] = _name("chance", to, _TARGETS)
    meta[M_CHANCE_LEFT] = _int("chance", left, 0, 6)
    meta[M_RESUME] = _name("chance", resume, _RESUMES)
    mode, prov, todo, last = _parts("close", f["close"], ".", 4)
    meta[M_MODE] = _name("close", mode, _MODES)
    meta[M_MODE_PROVINCE] = -1 if prov == "-" else _name("close", prov, tuple(PROVINCE_ID))
    meta[M_TODO] = _int("close", todo, 0, 66)
    meta[M_LAST] = _int("close", last, -1, NUM_CITIES - 1)
    meta[M_ROUND] = _int("round", f["round"], 0, game.rules.max_rounds)
    meta[M_TURN] = _int("turn", f["turn"], 0, 2**31 - 1)
    reason, by = _parts("end", f["end"], ".", 2)
    meta[M_END] = _name("end", reason, tuple(e.name.lower() for e in EndReason))
    meta[M_END_BY] = _int("end", by, -1, n - 1)
    meta[M_RESHUFFLES] = _int("reshuffles", f["reshuffles"], 0, 2**31 - 1)
    meta[M_DRAWS] = _int("draws", f["draws"], 0, 2)
    meta[M_PLAYS] = _int("plays", f["plays"], 0, 2)
    taken = _parts("stacks", f["stacks"], ".", NUM_STACKS)
    for s in range(NUM_STACKS):
        meta[M_STACK_TAKEN + s] = _int("stacks", taken[s], 0, int(STACK_SIZE[s]))
    cards[L_SUPPLY] = _row("supply", f["supply"], COPIES)
    cards[L_DISPLAY] = _row("display", f["display"], COPIES)
    cards[L_DISCARD] = _row("discard", f["discard"], COPIES)
    for name, base in (("hands", L_HAND), ("known", L_KNOWN)):
        for p, part in enumerate(_parts(name, f[name], "/", n)):
            cards[base + p] = _row(name, part, COPIES)
    for p, part in enumerate(_parts("routes", f["routes"], "/", n)):
        cities = part.split("-") if part else []
        for i, name in enumerate(cities):
            if name not in CITY_ID:
                raise PositionError("routes", f"{name!r} is not a city")
            c = CITY_ID[name]
            if cards[L_ROUTE + p, c]:
                raise PositionError("routes", f"seat {p}'s route holds {name} twice")
            if i and not ADJACENT[route[p, i - 1], c]:
                raise PositionError("routes", f"seat {p}'s route joins {CITIES[route[p, i - 1]]} "
                                    f"and {name}, which no road joins")
            route[p, i] = c
            cards[L_ROUTE + p, c] = 1
        players[p, P_ROUTE_LEN] = len(cities)
    for p, part in enumerate(_parts("houses", f["houses"], "/", n)):
        houses[p] = _row("houses", part, 1)
    for p, part in enumerate(_parts("seats", f["seats"], "/", n)):
        hl, car, place = _parts("seats", part, ".", 3)
        players[p, P_HOUSES_LEFT] = _int("seats", hl, 0, HOUSES)
        players[p, P_CARRIAGE] = _int("seats", car, 0, 7)
        players[p, P_PLACE] = _int("seats", place, -1, n - 1)
        if players[p, P_CARRIAGE] in (1, 2):
            raise PositionError("seats", f"seat {p}: carriages run from 3 to 7 (0: none)")
        if HOUSES - int(houses[p].sum()) != players[p, P_HOUSES_LEFT]:
            raise PositionError("seats", f"seat {p}: {int(players[p, P_HOUSES_LEFT])} houses "
                                f"left, but {int(houses[p].sum())} placed of {HOUSES}")
    held = np.zeros(NUM_STACKS, dtype=np.int64)
    for p, part in enumerate(_parts("tiles", f["tiles"], "/", n)):
        for s, item in enumerate(_parts("tiles", part, ".", NUM_STACKS)):
            k, pts = _parts("tiles", item, ":", 2)
            players[p, P_STACK_COUNT + s] = _int("tiles", k, 0, int(STACK_SIZE[s]))
            players[p, P_STACK_POINTS + s] = _int("tiles", pts, 0, int(STACK_VALUES[s].sum()))
            held[s] += int(players[p, P_STACK_COUNT + s])
        players[p, P_TILE_POINTS] = int(players[p, P_STACK_POINTS:P_STACK_POINTS + NUM_STACKS]
                                        .sum())
    taken_arr = meta[M_STACK_TAKEN:M_STACK_TAKEN + NUM_STACKS]
    if (held != taken_arr).any():
        s = int(np.flatnonzero(held != taken_arr)[0])
        raise PositionError("tiles", f"seats hold {int(held[s])} tiles of stack {s}, but "
                            f"{int(taken_arr[s])} were taken from it (field stacks)")
    located = cards[L_SUPPLY:L_ROUTE + n].astype(np.int64).sum(axis=0)
    if (located != COPIES).any():
        c = int(np.flatnonzero(located != COPIES)[0])
        raise PositionError("supply", f"{int(located[c])} copies of {CITIES[c]} are located "
                            f"(supply, display, discard, hands, routes); the game has {COPIES}")
    if (cards[L_KNOWN:L_KNOWN + n] > cards[L_HAND:L_HAND + n]).any():
        raise PositionError("known", "a seat's known cards exceed its hand")
    return ThurnUndTaxisState(game, cards, route, houses, players, meta, seed=seed)
