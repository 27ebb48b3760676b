"""taluva-ai: an exact, fast Taluva engine and the tools for AI research built on it."""

from pathlib import Path as _Path

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

# In a source checkout, `agents/` and `envs/` sit beside this folder and an install maps them to
# `taluva_ai.agents` and `taluva_ai.envs` (`package-dir` in pyproject.toml). When this package is
# imported from the checkout itself (the repository root on sys.path, as pytest's `pythonpath`
# puts it), the installed mapping does not apply: whatever is installed, editable from another
# folder, not editable, or nothing, the checkout's own `agents/` and `envs/` must be found here.
_ROOT = _Path(__file__).resolve().parent.parent
if (_ROOT / "pyproject.toml").is_file() and (_ROOT / "agents" / "__init__.py").is_file() \
        and str(_ROOT) not in __path__:
    __path__.append(str(_ROOT))

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
