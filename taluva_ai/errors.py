"""Precise errors raised across the project. Each names what is wrong."""

from __future__ import annotations

#: The most characters of a caller's input an error message repeats (:func:`echo`).
ECHO_LIMIT = 80
#: The longest reason a :class:`PositionError` or :class:`RecordError` carries; a longer one
#: (one that repeats a long piece of its input) is cut to this length (:func:`clip`).
REASON_LIMIT = 400


def clip(text: str, limit: int = REASON_LIMIT) -> str:
    """``text``, or its first ``limit`` characters, an ellipsis and its length when it is
    longer: so an error message that repeats its input stays short, however long the input
    (a 1 MB field gives a line, not a 1 MB message)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def echo(value: object, limit: int = ECHO_LIMIT) -> str:
    """``repr(value)`` for an error message, a string cut to its first ``limit`` characters
    (with an ellipsis and its length) when it is longer: ``'aaaa'... (1000000 characters)``."""
    if isinstance(value, (str, bytes)) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value)} characters)"
    return clip(repr(value), limit)


class TaluvaError(Exception):
    """Base class of the project's errors."""


class IllegalActionError(TaluvaError, ValueError):
    """An action that is not legal in the position; the state is left untouched.

    Attributes:
        action: the offending action (id, text or value), as given.
        rule: the rule it breaks, in RULES.md's words.
    """

    def __init__(self, action: object, rule: str, message: str | None = None) -> None:
        super().__init__(message or f"illegal action {action!s}: {rule}")
        self.action = action
        self.rule = rule


class WrongStepError(IllegalActionError):
    """An action of the wrong kind for the step (a build during the tile step, a tile or build
    at a chance node, anything once the game is over)."""


class ActionOutOfRangeError(IllegalActionError, IndexError):
    """An action id outside ``0 .. num_actions - 1`` (or a chance outcome outside 0..24)."""


class NotationError(TaluvaError, ValueError):
    """Malformed action notation."""


class PositionError(TaluvaError, ValueError):
    """Malformed position string; the message names the field (the reason is cut to
    :data:`REASON_LIMIT` characters, the field's name to :data:`ECHO_LIMIT`)."""

    def __init__(self, field: str, reason: str) -> None:
        field, reason = clip(field, ECHO_LIMIT), clip(reason)
        super().__init__(f"position string, field {field!r}: {reason}")
        self.field = field
        self.reason = reason


class RecordError(TaluvaError, ValueError):
    """Malformed or inconsistent game record; the message names the line (1-based) and field
    (the reason is cut to :data:`REASON_LIMIT` characters, the field's name to
    :data:`ECHO_LIMIT`)."""

    def __init__(self, line: int, field: str, reason: str) -> None:
        field, reason = clip(field, ECHO_LIMIT), clip(reason)
        super().__init__(f"record line {line}, field {field!r}: {reason}")
        self.line = line
        self.field = field
        self.reason = reason


class BackendError(TaluvaError):
    """The backend that was asked to run the work cannot: Ray is not installed (the message
    says how to install it), a cluster address is malformed, or no cluster answers there."""


class RunConfigError(TaluvaError, ValueError):
    """A run directory (e.g. a tournament's ``out_dir``) holds a run made with other settings;
    the message names the settings that differ."""


class RunFileError(TaluvaError):
    """Files of a run directory are damaged or missing (their checksums, recorded when they
    were written, do not match, or they cannot be read).

    Attributes:
        problems: one line per file: its path, what is wrong, and what to do (e.g. ``rerun
            iteration 3: taluva train --resume DIR --redo 3``).
    """

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


def printable(text: object) -> str:
    """``str(text)`` with its control characters (C0, DEL, C1: terminal escape sequences
    among them) shown as ``\\x..`` escapes, for text from a file printed to a terminal (a
    record's player names)."""
    return "".join(c if c.isprintable() or c == " " else ascii(c)[1:-1] for c in str(text))
