"""Reading the fields of the built-in games' position strings (Taluva's
:mod:`~taluva_ai.games.taluva.position`, Thurn und Taxis's
:mod:`~taluva_ai.games.thurn_und_taxis.position`): one reader a kind of field, one message a
kind of mistake."""

from __future__ import annotations

import re

from taluva_ai.errors import PositionError, echo

_INT = re.compile(r"-?[0-9]+")


def parse_int(field: str, text: str, lo: int, hi: int) -> int:
    """``text`` as an integer in ``lo..hi``: ASCII digits, with a ``-`` only where ``lo`` is
    negative (not Python's ``int()``, which also takes ``+``, ``_``, spaces and other
    scripts' digits).

    Raises:
        PositionError: not such an integer (the message names ``field`` and the range).
    """
    if not _INT.fullmatch(text) or (text.startswith("-") and lo >= 0):
        raise PositionError(field, f"{echo(text)} is not an integer in {lo}..{hi}")
    if len(text) > 40:  # beyond any field's range, and too long for int() to be quick
        raise PositionError(field, f"{echo(text)} is outside {lo}..{hi}")
    v = int(text)
    if not lo <= v <= hi:
        raise PositionError(field, f"{v} is outside {lo}..{hi}")
    return v
