"""taluva-ai: an exact, fast Taluva engine and the tools for AI research built on it."""

from taluva_ai.errors import (
    ActionOutOfRangeError,
    IllegalActionError,
    NotationError,
    PositionError,
    RecordError,
    RunConfigError,
    WrongStepError,
)
from taluva_ai.protocol import CHANCE, TERMINAL, known_games, make_game

__version__ = "0.1.0"

__all__ = [
    "CHANCE",
    "TERMINAL",
    "ActionOutOfRangeError",
    "IllegalActionError",
    "NotationError",
    "PositionError",
    "RecordError",
    "RunConfigError",
    "WrongStepError",
    "known_games",
    "make_game",
]
