"""``TnTRules``: every option of THURN-UND-TAXIS.md §8 in one frozen dataclass."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

# Indices into the int32 rules vector the kernels receive.
R_PLAYERS = 0
R_EXCLUDE_BAIERN = 1
R_ROUTE_TILE_FALLBACK = 2
R_MAX_ROUNDS = 3
R_SIZE = 4

ALL_PROVINCES_RULES = ("all", "exclude_baiern")


class TnTRuleError(ValueError):
    """An invalid rule option (the message names it)."""


@dataclass(frozen=True)
class TnTRules:
    """The options of one Thurn und Taxis game (THURN-UND-TAXIS.md §8).

    Attributes:
        num_players: 2, 3 or 4 seats (seat 0 starts; play goes in seat order).
        all_provinces_rule: ``"all"`` (a house in each of the 9 provinces, the rulebook) or
            ``"exclude_baiern"`` (the 8 provinces other than Baiern, the German printing).
        route_tile_fallback: a route whose length stack is empty takes the top tile of the next
            shorter non-empty stack (7→6→5; the rulebook); ``False``: it gets nothing.
        max_rounds: engine limit, not a rule: after this many rounds without an end trigger
            the game stops and is scored without a game_end tile (``end_reason`` truncated).

    Raises:
        TnTRuleError: on construction, an option of the wrong type or out of range.
    """

    num_players: int = 2
    all_provinces_rule: str = "all"
    route_tile_fallback: bool = True
    max_rounds: int = 200

    def __post_init__(self) -> None:
        for name in ("num_players", "max_rounds"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
                raise TnTRuleError(f"{name} must be an integer, got {v!r}")
            object.__setattr__(self, name, int(v))
        if self.num_players not in (2, 3, 4):
            raise TnTRuleError(f"num_players must be 2, 3 or 4, got {self.num_players!r}")
        if not 1 <= self.max_rounds <= 10_000:
            raise TnTRuleError(f"max_rounds must be an integer in 1..10000, got "
                               f"{self.max_rounds!r}")
        if self.all_provinces_rule not in ALL_PROVINCES_RULES:
            raise TnTRuleError(f"all_provinces_rule must be 'all' or 'exclude_baiern', got "
                               f"{self.all_provinces_rule!r}")
        if not isinstance(self.route_tile_fallback, (bool, np.bool_)):
            raise TnTRuleError("route_tile_fallback must be True or False, got "
                               f"{self.route_tile_fallback!r}")
        object.__setattr__(self, "route_tile_fallback", bool(self.route_tile_fallback))

    def to_dict(self) -> dict[str, Any]:
        """The options as a JSON-ready dict (``make_game("thurn_und_taxis", **d)``)."""
        return dataclasses.asdict(self)

    def as_array(self) -> np.ndarray:
        """``int32[R_SIZE]``, the form the compiled kernels take."""
        v = np.zeros(R_SIZE, dtype=np.int32)
        v[R_PLAYERS] = self.num_players
        v[R_EXCLUDE_BAIERN] = self.all_provinces_rule == "exclude_baiern"
        v[R_ROUTE_TILE_FALLBACK] = self.route_tile_fallback
        v[R_MAX_ROUNDS] = self.max_rounds
        return v
