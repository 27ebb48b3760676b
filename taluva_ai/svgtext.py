"""Text for SVG pictures: what every game's ``svg`` module and :mod:`taluva_ai.pictures`
share (a game's pictures sit below the tools that gather them, CONTRIBUTING.md)."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape

#: Characters XML 1.0 forbids in a document (the C0 controls but tab, newline and carriage
#: return; U+FFFE, U+FFFF; lone surrogates).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: object) -> str:
    """``str(text)`` fit for an SVG text node: characters XML forbids dropped (a player name
    from a record may hold control characters), ``&``, ``<`` and ``>`` escaped."""
    return escape(_NOT_XML.sub("", str(text)))
