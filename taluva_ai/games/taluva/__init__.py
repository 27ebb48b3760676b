"""Taluva: the rules engine (RULES.md), its actions, notation and positions."""

from taluva_ai.games.taluva.actions import Action, ActionKind
from taluva_ai.games.taluva.game import TaluvaGame, TaluvaState
from taluva_ai.games.taluva.rules import RuleError, RuleSet
from taluva_ai.games.taluva.state import EndReason, Status, Step
from taluva_ai.games.taluva.tiles import Building, Terrain

__all__ = [
    "Action",
    "ActionKind",
    "Building",
    "EndReason",
    "RuleError",
    "RuleSet",
    "Status",
    "Step",
    "TaluvaGame",
    "TaluvaState",
    "Terrain",
]
