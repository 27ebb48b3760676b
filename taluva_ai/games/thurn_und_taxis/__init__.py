"""Thurn und Taxis (THURN-UND-TAXIS.md): the rules engine, its notation, positions and the
greedy heuristic, behind the generic game protocol (``make_game("thurn_und_taxis")``)."""

from taluva_ai.games.thurn_und_taxis.game import ThurnUndTaxisGame, ThurnUndTaxisState
from taluva_ai.games.thurn_und_taxis.rules import TnTRuleError, TnTRules
from taluva_ai.games.thurn_und_taxis.state import EndReason, Step

__all__ = ["EndReason", "Step", "ThurnUndTaxisGame", "ThurnUndTaxisState", "TnTRuleError",
           "TnTRules"]
