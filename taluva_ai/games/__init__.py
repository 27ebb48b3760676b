"""The game registry: every game behind the protocol of :mod:`taluva_ai.protocol`.

``make_game(name, **options)`` makes a registered game; ``known_games()`` lists the names.
Built-in games: ``"taluva"`` (:mod:`taluva_ai.games.taluva`) and ``"thurn_und_taxis"``
(:mod:`taluva_ai.games.thurn_und_taxis`, imported on first use). A game of your own plugs in
with ``register_game(name, factory)`` (docs/adding-a-game.md).
"""

from __future__ import annotations

from typing import Any

from taluva_ai.games.taluva.game import TaluvaGame
from taluva_ai.protocol import Game, known_games, make_game, register_game


def _thurn_und_taxis(**options: Any) -> Game:
    from taluva_ai.games.thurn_und_taxis.game import ThurnUndTaxisGame

    return ThurnUndTaxisGame(**options)


register_game("taluva", TaluvaGame)
register_game("thurn_und_taxis", _thurn_und_taxis)

__all__ = ["TaluvaGame", "known_games", "make_game", "register_game"]
