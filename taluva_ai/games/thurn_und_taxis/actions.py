"""Action ids and their text notation (docs/thurn_und_taxis.md, Notation).

One ``Discrete(327)`` action space; each id has one meaning whatever the step, so
``parse_action(action_to_string(a)) == a`` holds without a position:

=====================  ==========  ==========================================================
notation               ids         meaning (THURN-UND-TAXIS.md)
=====================  ==========  ==========================================================
``take:<city>``        0..21       first draw: take a display card (§3.1)
``take:supply``        22          first draw: the top supply card
``administrator``      23          official: replace the display before the first draw
``postmaster:<city>``  24..45      official: second draw, a display card
``postmaster:supply``  46          official: second draw, the top supply card
``start:<city>``       47..68      play: start a route (no route)
``abandon:<city>``     69..90      play: discard the route unscored, start a new one
``extend:<c>@<end>``   91..180     play: put city ``c`` next to the route end holding ``end``
``carrier:<c>@<end>``  181..270    official postal_carrier: a second card extending the route
``pass``               271         end the turn without closing; decline the cartwright
``close:per_province`` 272         close, one house per province of the route (§4)
``close:<province>``   273..281    close, one_province mode in that province
``house:<city>``       282..303    the city of the next house of a close (when there is a
                                   choice)
``cartwright``         304         official: take the next carriage with a route up to 2 short
``discard:<city>``     305..326    discard a surplus hand card after a close
``deal:<city>``        (chance)    a card leaves the supply (chance outcome = city id)
=====================  ==========  ==========================================================

Cities and provinces are the ASCII ids of
:mod:`board` (ü→ue, ö→oe); notation is read case-insensitively with surrounding blanks
ignored, and written in lower case.
"""

from __future__ import annotations

from collections.abc import Sequence

from taluva_ai.errors import NotationError
from taluva_ai.games.thurn_und_taxis.board import (
    CITIES,
    CITY_ID,
    EDGE_END,
    EDGE_ID,
    EDGE_NEW,
    NUM_CITIES,
    NUM_EDGES,
    NUM_PROVINCES,
    PROVINCE_ID,
    PROVINCES,
)

A_TAKE = 0
A_TAKE_SUPPLY = A_TAKE + NUM_CITIES  # 22
A_ADMINISTRATOR = A_TAKE_SUPPLY + 1  # 23
A_POSTMASTER = A_ADMINISTRATOR + 1  # 24
A_POSTMASTER_SUPPLY = A_POSTMASTER + NUM_CITIES  # 46
A_START = A_POSTMASTER_SUPPLY + 1  # 47
A_ABANDON = A_START + NUM_CITIES  # 69
A_EXTEND = A_ABANDON + NUM_CITIES  # 91
A_CARRIER = A_EXTEND + NUM_EDGES  # 181
A_PASS = A_CARRIER + NUM_EDGES  # 271
A_CLOSE_PER = A_PASS + 1  # 272
A_CLOSE_ONE = A_CLOSE_PER + 1  # 273
A_HOUSE = A_CLOSE_ONE + NUM_PROVINCES  # 282
A_CARTWRIGHT = A_HOUSE + NUM_CITIES  # 304
A_DISCARD = A_CARTWRIGHT + 1  # 305
NUM_ACTIONS = A_DISCARD + NUM_CITIES  # 327

#: Notation word of each kind of action (the word before the first ``:``).
KINDS = ("take", "administrator", "postmaster", "start", "abandon", "extend", "carrier",
         "pass", "close", "house", "cartwright", "discard")
#: Notation word of chance outcomes.
CHANCE_KIND = "deal"


def _notation() -> tuple[str, ...]:
    """The notation of every action id, in id order: each span of ids of the module's table is
    a word alone or a word and one name per id."""
    edges = [f"{CITIES[EDGE_NEW[k]]}@{CITIES[EDGE_END[k]]}" for k in range(NUM_EDGES)]
    spans: list[tuple[str, Sequence[str] | None]] = [
        ("take", CITIES), ("take:supply", None), ("administrator", None),
        ("postmaster", CITIES), ("postmaster:supply", None), ("start", CITIES),
        ("abandon", CITIES), ("extend", edges), ("carrier", edges), ("pass", None),
        ("close:per_province", None), ("close", PROVINCES), ("house", CITIES),
        ("cartwright", None), ("discard", CITIES)]
    return tuple(w for word, names in spans
                 for w in ([word] if names is None else [f"{word}:{x}" for x in names]))


_NOTATION = _notation()
assert len(_NOTATION) == NUM_ACTIONS


def action_to_string(a: int) -> str:
    """Notation of action id ``a``.

    Raises:
        ValueError: ``a`` outside ``0 .. NUM_ACTIONS - 1``.
    """
    a = int(a)
    if not 0 <= a < NUM_ACTIONS:
        raise ValueError(f"action ids run from 0 to {NUM_ACTIONS - 1}, got {a}")
    return _NOTATION[a]


def chance_to_string(city: int) -> str:
    """Notation of a chance outcome (the city of the card that leaves the supply).

    Raises:
        ValueError: not a city id 0..21.
    """
    c = int(city)
    if not 0 <= c < NUM_CITIES:
        raise ValueError(f"a chance outcome is a city id 0..{NUM_CITIES - 1}, got {c}")
    return f"{CHANCE_KIND}:{CITIES[c]}"


def _city(text: str, arg: str) -> int:
    if arg not in CITY_ID:
        raise NotationError(f"{text!r}: {arg!r} is not a city (cities: {', '.join(CITIES)})")
    return CITY_ID[arg]


def parse(text: str) -> tuple[str, int]:
    """Read notation: ``("action", id)`` for a player's action, ``("chance", city)`` for a
    ``deal:<city>`` chance outcome.

    Raises:
        NotationError: not a string, an unknown kind, an unknown city or province, a missing
            or extra argument, or an ``extend``/``carrier`` between cities with no road.
    """
    if not isinstance(text, str):
        raise NotationError(f"notation is a string, got {text!r}")
    t = text.strip().lower()
    kind, colon, arg = t.partition(":")
    kind, arg = kind.strip(), arg.strip()
    no_arg = ("administrator", "pass", "cartwright")
    if kind in no_arg:
        if colon:
            raise NotationError(f"{text!r}: {kind!r} takes no argument")
        return "action", {"administrator": A_ADMINISTRATOR, "pass": A_PASS,
                          "cartwright": A_CARTWRIGHT}[kind]
    if kind not in KINDS and kind != CHANCE_KIND:
        raise NotationError(f"{text!r}: unknown action kind {kind!r}; expected one of "
                            f"{', '.join(KINDS)} (or {CHANCE_KIND}:<city> for a chance outcome)")
    if not colon or not arg:
        raise NotationError(f"{text!r}: {kind!r} needs an argument, e.g. {_EXAMPLES[kind]!r}")
    if kind == CHANCE_KIND:
        return "chance", _city(text, arg)
    if kind in ("take", "postmaster"):
        base, supply = ((A_TAKE, A_TAKE_SUPPLY) if kind == "take"
                        else (A_POSTMASTER, A_POSTMASTER_SUPPLY))
        return "action", supply if arg == "supply" else base + _city(text, arg)
    if kind in ("start", "abandon", "house", "discard"):
        base = {"start": A_START, "abandon": A_ABANDON, "house": A_HOUSE,
                "discard": A_DISCARD}[kind]
        return "action", base + _city(text, arg)
    if kind == "close":
        if arg == "per_province":
            return "action", A_CLOSE_PER
        if arg not in PROVINCE_ID:
            raise NotationError(f"{text!r}: {arg!r} is neither per_province nor a province "
                                f"({', '.join(PROVINCES)})")
        return "action", A_CLOSE_ONE + PROVINCE_ID[arg]
    # extend / carrier: <city>@<end>
    new, at, end = arg.partition("@")
    if not at:
        raise NotationError(f"{text!r}: expected {kind}:<city>@<end city>, e.g. "
                            f"{_EXAMPLES[kind]!r}")
    n, e = _city(text, new.strip()), _city(text, end.strip())
    k = int(EDGE_ID[e, n])
    if k < 0:
        raise NotationError(f"{text!r}: no road joins {CITIES[e]} and {CITIES[n]}")
    return "action", (A_EXTEND if kind == "extend" else A_CARRIER) + k


_EXAMPLES = {
    "take": "take:muenchen", "postmaster": "postmaster:supply", "start": "start:ulm",
    "abandon": "abandon:ulm", "extend": "extend:wuerzburg@stuttgart",
    "carrier": "carrier:wuerzburg@stuttgart", "close": "close:per_province",
    "house": "house:augsburg", "discard": "discard:lodz", CHANCE_KIND: "deal:linz",
}
assert NUM_PROVINCES == A_HOUSE - A_CLOSE_ONE
