"""Games behind the protocol of :mod:`taluva_ai.protocol`."""

from taluva_ai.games.taluva.game import TaluvaGame
from taluva_ai.protocol import register_game

register_game("taluva", TaluvaGame)

__all__ = ["TaluvaGame"]
