"""The browser board's refusals: :class:`WebError`, an HTTP status and one line, raised by the
games in play (:mod:`taluva_ai.web.play`), the agent specs (:mod:`taluva_ai.web.specs`), the
analysis (:mod:`taluva_ai.web.analysis`) and the app's routes (:mod:`taluva_ai.web.app`), which
answer it as ``{"error": "<one line>"}``."""

from __future__ import annotations

#: The longest error message the board sends (characters; a longer one, e.g. echoing a huge
#: spec, is cut and ends with "…").
MAX_MESSAGE = 500


class WebError(Exception):
    """A request the board refuses (the app's routes and the games here): ``status`` (HTTP)
    and ``message``, made one line of at most :data:`MAX_MESSAGE` characters (what the client
    sent is echoed in it, bounded)."""

    def __init__(self, status: int, message: str) -> None:
        message = _one_line(message)
        super().__init__(message)
        self.status = status
        self.message = message


def _one_line(text: object) -> str:
    """``text`` on one line (runs of whitespace made one space), cut to :data:`MAX_MESSAGE`
    characters with a closing "…"."""
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_MESSAGE else line[:MAX_MESSAGE - 1] + "…"
