"""``RuleSet``: every rule option of RULES.md in one frozen dataclass."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from taluva_ai.games.taluva.tiles import NUM_TILES

#: Default engine board radius; see docs/engine.md ("Board bound") for how it was measured.
DEFAULT_BOARD_RADIUS = 32

# Indices into the int32 rules vector the kernels receive.
R_PLAYERS = 0
R_NEW_HUT_ISOLATED = 1
R_RANKED = 2
R_NO_LAKE_BUILDING = 3
R_TIEBREAK_TOWERS_FIRST = 4
R_DESTROYED_HUTS_RETURN = 5
R_EARLY_VICTORY_KINDS = 6
R_TILE_PREVIEW = 7
R_DECK_SIZE = 8
R_BOARD_RADIUS = 9
R_SIZE = 10


class RuleError(ValueError):
    """An invalid combination of rule options."""


@dataclass(frozen=True)
class RuleSet:
    """The rules of one Taluva game (RULES.md); every field is one option of that file.

    Attributes:
        num_players: 2, 3 or 4 seats (colours in seat order; seat 0 starts).
        tiles_per_player: ``None`` plays all 48 tiles; ``k`` keeps ``k x num_players`` tiles
            drawn at random (12 is Board Game Arena's practice). ``k x num_players <= 48``.
        new_hut_isolated: founding a settlement needs a hex not adjacent to any own settlement
            (French rulebook, BGA); ``False`` is the Spanish / TaluvaUJF reading.
        ranked: play on after an early victory or an elimination until every seat has a place.
        no_lake_building: no building of any kind on lake hexes.
        tiebreak_towers_first: final count by towers, then temples, then huts built.
        destroyed_huts_return: huts destroyed by an eruption go back to their owner's supply.
        early_victory_kinds: 2 (default) or 3 kinds of pieces all built for an early victory.
        tile_preview: each player holds their next tile (known to that player only), BGA style.
        board_radius: engine bound (not a rule): placements must lie within this distance of
            the first volcano.

    Raises:
        RuleError: on construction, for an option out of range (the message names it).
    """

    num_players: int = 2
    tiles_per_player: int | None = None
    new_hut_isolated: bool = True
    ranked: bool = False
    no_lake_building: bool = False
    tiebreak_towers_first: bool = False
    destroyed_huts_return: bool = False
    early_victory_kinds: int = 2
    tile_preview: bool = False
    board_radius: int = DEFAULT_BOARD_RADIUS

    def __post_init__(self) -> None:
        for name in ("num_players", "tiles_per_player", "early_victory_kinds", "board_radius"):
            v = getattr(self, name)
            if v is None and name == "tiles_per_player":
                continue
            if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
                raise RuleError(f"{name} must be an integer, got {v!r}")
            object.__setattr__(self, name, int(v))  # numpy integers become plain ints
        if self.num_players not in (2, 3, 4):
            raise RuleError(f"num_players must be 2, 3 or 4, got {self.num_players!r}")
        if self.tiles_per_player is not None:
            k = self.tiles_per_player
            if k < 1:
                raise RuleError(f"tiles_per_player must be a positive integer or None, got {k!r}")
            if k * self.num_players > NUM_TILES:
                raise RuleError(
                    f"tiles_per_player={k} with {self.num_players} players needs "
                    f"{k * self.num_players} tiles, but the game has only {NUM_TILES}"
                )
        if self.early_victory_kinds not in (2, 3):
            raise RuleError(f"early_victory_kinds must be 2 or 3, got {self.early_victory_kinds!r}")
        if not 4 <= self.board_radius <= 100:
            raise RuleError(f"board_radius must be an integer in 4..100, got {self.board_radius!r}")
        for name in (
            "new_hut_isolated",
            "ranked",
            "no_lake_building",
            "tiebreak_towers_first",
            "destroyed_huts_return",
            "tile_preview",
        ):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise RuleError(f"{name} must be True or False, got {getattr(self, name)!r}")
            object.__setattr__(self, name, bool(getattr(self, name)))

    @property
    def deck_size(self) -> int:
        """Number of tiles in play: 48, or ``tiles_per_player x num_players``."""
        if self.tiles_per_player is None:
            return NUM_TILES
        return self.tiles_per_player * self.num_players

    def to_dict(self) -> dict[str, Any]:
        """The options as a JSON-ready dict (inverse of :meth:`from_dict`)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RuleSet:
        """Build from a dict such as a record header's ``rules``.

        Raises:
            RuleError: an unknown option name or an invalid value.
        """
        if not isinstance(d, dict):
            raise RuleError(f"rules must be a mapping of option names, got {type(d).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise RuleError(f"unknown rule option(s): {', '.join(unknown)}")
        return cls(**d)

    def as_array(self) -> np.ndarray:
        """``int32[R_SIZE]`` vector of the options, the form the compiled kernels take."""
        v = np.zeros(R_SIZE, dtype=np.int32)
        v[R_PLAYERS] = self.num_players
        v[R_NEW_HUT_ISOLATED] = self.new_hut_isolated
        v[R_RANKED] = self.ranked
        v[R_NO_LAKE_BUILDING] = self.no_lake_building
        v[R_TIEBREAK_TOWERS_FIRST] = self.tiebreak_towers_first
        v[R_DESTROYED_HUTS_RETURN] = self.destroyed_huts_return
        v[R_EARLY_VICTORY_KINDS] = self.early_victory_kinds
        v[R_TILE_PREVIEW] = self.tile_preview
        v[R_DECK_SIZE] = self.deck_size
        v[R_BOARD_RADIUS] = self.board_radius
        return v
