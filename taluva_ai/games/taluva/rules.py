"""``RuleSet``: every rule option of RULES.md in one frozen dataclass."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from taluva_ai.games.taluva.tiles import NUM_TILES

#: Default engine board radius; see docs/engine.md ("Board bound") for how it was measured.
DEFAULT_BOARD_RADIUS = 32

# Indices into the int32 rules vector the kernels receive (:meth:`RuleSet.as_array`): the
# multiplayer options, then the solo variant's (SOLO.md; all 0 in the multiplayer game):
# R_START_TREE is start_shape == "tree", R_CONTACTS_HEXES contacts == "hexes",
# R_UNPLACEABLE_BOTTOM unplaceable == "bottom", R_BOX_HUT box_piece == "hut", R_FOUND one of
# FOUND_DIRECT, FOUND_FLOOD, FOUND_PLAIN, R_PATTERN_DISJOINT pattern_overlap == "disjoint".
(R_PLAYERS, R_NEW_HUT_ISOLATED, R_RANKED, R_NO_LAKE_BUILDING, R_TIEBREAK_TOWERS_FIRST,
 R_DESTROYED_HUTS_RETURN, R_EARLY_VICTORY_KINDS, R_TILE_PREVIEW, R_DECK_SIZE, R_BOARD_RADIUS,
 R_SOLO, R_START_TREE, R_CONTACTS_HEXES, R_VOLCANO_IN_T, R_SINGLE_TERRAIN_BONUS, R_UPPER_BONUS,
 R_BONUS_NO_ERUPTION, R_LEVEL3_CHAIN, R_BONUS_ANY_SOURCE, R_UNPLACEABLE_BOTTOM, R_BOX_HUT,
 R_FOUND, R_BONUS_LITERAL, R_PATTERN_DISJOINT, R_HIGH_NO_VOLCANO, R_TERRAIN_BEST_ONLY,
 R_SIZE) = range(27)

# R_FOUND values: the solo founding rule (SOLO.md 3.3 and 6.11)
FOUND_PLAIN = 0  # RULES.md founding: one hut (the multiplayer rule; found_plain)
FOUND_DIRECT = 1  # solo default: the hex and its empty same-terrain direct neighbours
FOUND_FLOOD = 2  # found_flood: the whole connected empty area of that terrain

_SOLO_CHOICES: dict[str, tuple[str, ...]] = {
    "start_layout": ("windmill", "random"),
    "start_shape": ("windmill", "tree"),
    "contacts": ("edges", "hexes"),
    "unplaceable": ("aside", "bottom"),
    "box_piece": ("choice", "hut"),
    "pattern_overlap": ("all", "disjoint"),
}
#: Multiplayer options the solo variant has no use for (they must keep their defaults).
_NOT_SOLO = ("tiles_per_player", "ranked", "tiebreak_towers_first", "early_victory_kinds",
             "tile_preview")


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
        solo: the solo variant (SOLO.md; docs/solo.md): one player, a starting island of 7
            tiles, terrain-matching placement, up to three tiles a turn, a score. Sets
            ``num_players`` to 1. The fields below are its options (SOLO.md section 6, named
            as there); each must keep its default unless ``solo`` is True.
        start_layout: ``"windmill"`` (the fixed island of SOLO.md 1) or ``"random"`` (7 drawn
            tiles laid out by a seeded search).
        start_shape: ``"windmill"`` (a centre, three arms, three outer tiles) or ``"tree"``
            (any tree of joins) for the random island (6.1).
        contacts: ``"edges"`` (a side is an edge, counted per edge) or ``"hexes"`` (distinct
            island hexes) (6.2).
        volcano_in_T: V-V contacts match and V counts in T (6.3).
        single_terrain_bonus: one non-volcano terrain at 3+ contacts is class 3, not 2 (6.4).
        upper_bonus: an exact higher regular tile earns a draw-pile bonus tile (6.5).
        bonus_no_eruption: a level-2 bonus volcano may cover a terrain hex; it then chains
            (only then) when both terrain hexes match (6.6).
        level3_chain: a bonus tile at level 3 or more earns another bonus tile (6.7).
        bonus_any_source: every bonus tile may come from the draw pile or be the face-up tile
            (6.8).
        unplaceable: ``"aside"`` (an unplaceable tile is set aside and counts as remaining) or
            ``"bottom"`` (it goes under the draw pile) (6.9).
        box_piece: ``"choice"`` (class 1 boxes a piece of the player's choice) or ``"hut"``
            (6.10).
        found_flood: founding fills the whole connected empty area of the terrain (6.11).
        found_plain: founding is RULES.md's one hut (6.11); not with ``found_flood``.
        bonus_literal: the bonus line scores draw pile left minus bonus stack left (6.13).
        pattern_overlap: ``"all"`` (every pattern scores) or ``"disjoint"`` (the best set of
            pairwise disjoint patterns) (6.14).
        high_no_volcano: unoccupied high hexes score without volcanoes (6.15).
        terrain_best_only: each settlement scores only its best terrain line (6.17).

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
    solo: bool = False
    start_layout: str = "windmill"
    start_shape: str = "windmill"
    contacts: str = "edges"
    volcano_in_T: bool = True  # SOLO.md's name, capital T included
    single_terrain_bonus: bool = False
    upper_bonus: bool = True
    bonus_no_eruption: bool = False
    level3_chain: bool = True
    bonus_any_source: bool = False
    unplaceable: str = "aside"
    box_piece: str = "choice"
    found_flood: bool = False
    found_plain: bool = False
    bonus_literal: bool = False
    pattern_overlap: str = "all"
    high_no_volcano: bool = False
    terrain_best_only: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.solo, (bool, np.bool_)):
            raise RuleError(f"solo must be True or False, got {self.solo!r}")
        object.__setattr__(self, "solo", bool(self.solo))
        if self.solo and isinstance(self.num_players, (int, np.integer)) \
                and not isinstance(self.num_players, (bool, np.bool_)) \
                and self.num_players in (1, 2):
            object.__setattr__(self, "num_players", 1)  # 2 is the field's default
        for name in ("num_players", "tiles_per_player", "early_victory_kinds", "board_radius"):
            v = getattr(self, name)
            if v is None and name == "tiles_per_player":
                continue
            if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
                raise RuleError(f"{name} must be an integer, got {v!r}")
            object.__setattr__(self, name, int(v))  # numpy integers become plain ints
        if self.solo and self.num_players != 1:
            raise RuleError(f"the solo variant has one player, got num_players="
                            f"{self.num_players!r}")
        if not self.solo and self.num_players not in (2, 3, 4):
            hint = " (one player: solo=True)" if self.num_players == 1 else ""
            raise RuleError(f"num_players must be 2, 3 or 4, got {self.num_players!r}{hint}")
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
        self._check_solo_options()

    def _check_solo_options(self) -> None:
        for name, default in SOLO_DEFAULTS.items():
            v = getattr(self, name)
            if isinstance(default, bool):
                if not isinstance(v, (bool, np.bool_)):
                    raise RuleError(f"{name} must be True or False, got {v!r}")
                object.__setattr__(self, name, bool(v))
            elif v not in _SOLO_CHOICES[name]:
                choices = ", ".join(repr(c) for c in _SOLO_CHOICES[name])
                raise RuleError(f"{name} must be one of {choices}, got {v!r}")
            if not self.solo and getattr(self, name) != default:
                raise RuleError(f"{name} is an option of the solo variant: it needs solo=True")
        if self.found_flood and self.found_plain:
            raise RuleError("found_flood and found_plain exclude each other (SOLO.md 6.11)")
        if self.solo:
            defaults = {f.name: f.default for f in dataclasses.fields(self)}
            for name in _NOT_SOLO:
                if getattr(self, name) != defaults[name]:
                    raise RuleError(f"{name} is not an option of the solo variant "
                                    f"(solo=True); leave it at {defaults[name]!r}")

    @property
    def deck_size(self) -> int:
        """Number of tiles in play: 48, or ``tiles_per_player x num_players``."""
        if self.tiles_per_player is None or self.solo:
            return NUM_TILES
        return self.tiles_per_player * self.num_players

    def to_dict(self) -> dict[str, Any]:
        """The options as a JSON-ready dict (inverse of :meth:`from_dict`). The solo options
        appear only in a solo rule set, so multiplayer dicts are those of the multiplayer
        engine."""
        d = dataclasses.asdict(self)
        if not self.solo:
            for name in ("solo", *SOLO_DEFAULTS):
                del d[name]
        return d

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
        values = [self.num_players, self.new_hut_isolated, self.ranked, self.no_lake_building,
                  self.tiebreak_towers_first, self.destroyed_huts_return,
                  self.early_victory_kinds, self.tile_preview, self.deck_size, self.board_radius]
        if self.solo:  # in the order of the R_* indices, R_SOLO on
            found = (FOUND_FLOOD if self.found_flood else
                     FOUND_PLAIN if self.found_plain else FOUND_DIRECT)
            values += [1, self.start_shape == "tree", self.contacts == "hexes", self.volcano_in_T,
                       self.single_terrain_bonus, self.upper_bonus, self.bonus_no_eruption,
                       self.level3_chain, self.bonus_any_source, self.unplaceable == "bottom",
                       self.box_piece == "hut", found, self.bonus_literal,
                       self.pattern_overlap == "disjoint", self.high_no_volcano,
                       self.terrain_best_only]
        v = np.zeros(R_SIZE, dtype=np.int32)
        v[: len(values)] = values
        return v


#: Solo options (SOLO.md section 6) with their defaults: the RuleSet fields after ``solo``.
_FIELDS = dataclasses.fields(RuleSet)
SOLO_DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in _FIELDS[[f.name for f in _FIELDS].index("solo") + 1:]}
