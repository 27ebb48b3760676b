"""Observation planes and view action ids for networks: :mod:`taluva_ai.games.taluva.encoding`
under its short name (docs/encoding.md)."""

from taluva_ai.games.taluva.encoding import *  # noqa: F403  (the same public names)
from taluva_ai.games.taluva.encoding import __all__ as __all__
