"""The games behind the protocol of :mod:`taluva_ai.protocol`, one package each.

``make_game(name, **options)`` makes a registered game; ``known_games()`` lists the names (the
registry lives in :mod:`taluva_ai.protocol`, re-exported here). Built-in games: ``"taluva"``
(:mod:`taluva_ai.games.taluva`) and ``"thurn_und_taxis"``
(:mod:`taluva_ai.games.thurn_und_taxis`), registered as entry points and imported on first
use. A game of your own plugs in with ``register_game(name, factory)``
(docs/adding-a-game.md).
"""

from __future__ import annotations

from taluva_ai.games.taluva.game import TaluvaGame
from taluva_ai.protocol import known_games, make_game, register_game

__all__ = ["TaluvaGame", "known_games", "make_game", "register_game"]
