"""Action value type, integer ids and the text notation (docs/notation.md).

Notation (``q, r`` axial coordinates, see :mod:`hexgrid`):

=====================  ==========================================================
``tile@q,r:O``         place the tile with its volcano on ``(q, r)``, pointing ``O``
                       (one of ``N NW SW S SE NE``)
``hut@q,r``            found a settlement: one hut on ``(q, r)``
``temple@q,r``         build a temple on ``(q, r)``
``tower@q,r``          build a tower on ``(q, r)``
``expand@q,r:T``       expand the settlement whose smallest hex is ``(q, r)`` into terrain ``T``
                       (one of ``J C S R L``)
``draw:AB``            chance: tile ``(A, B)`` is drawn (records only)
``bonus:S``            solo: take a bonus tile, ``S`` one of ``pile`` (the draw pile),
                       ``faceup`` (the face-up tile), ``stop`` (none: go to phase 2)
``box:P``              solo: put a piece ``P`` (``hut``, ``temple``, ``tower``) into the box
=====================  ==========================================================

``Action.parse(str(a)) == a`` and ``decode(encode(a)) == a`` for every action.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

import numpy as np

from taluva_ai.errors import ActionOutOfRangeError, NotationError
from taluva_ai.games.taluva.hexgrid import Board
from taluva_ai.games.taluva.tiles import (
    BUILD_TERRAINS,
    LETTER_TERRAIN,
    ORIENTATION_NAMES,
    TERRAIN_LETTER,
    Terrain,
    parse_tile,
    tile_name,
)


class ActionKind(Enum):
    """The kinds of action: the tile step, the four builds, and the chance draw."""

    TILE = "tile"
    HUT = "hut"
    TEMPLE = "temple"
    TOWER = "tower"
    EXPAND = "expand"
    DRAW = "draw"
    BONUS = "bonus"  # solo variant
    BOX = "box"  # solo variant


#: Options of the solo actions, in id order (``14 H + k``, docs/solo.md).
SOLO_OPTIONS: tuple[tuple[ActionKind, str], ...] = (
    (ActionKind.BONUS, "pile"),
    (ActionKind.BONUS, "faceup"),
    (ActionKind.BONUS, "stop"),
    (ActionKind.BOX, "hut"),
    (ActionKind.BOX, "temple"),
    (ActionKind.BOX, "tower"),
)


@dataclass(frozen=True)
class Action:
    """One action as a value.

    Attributes:
        kind: what the action does.
        q, r: the hex (volcano hex for ``TILE``; the settlement's smallest hex for ``EXPAND``).
        orientation: ``0..5`` for ``TILE`` (``N NW SW S SE NE``), else 0.
        terrain: expansion terrain for ``EXPAND``, else ``Terrain.NONE``.
        tile: tile type id for ``DRAW``, else -1.
        option: for ``BONUS`` ``"pile"``, ``"faceup"`` or ``"stop"``; for ``BOX`` ``"hut"``,
            ``"temple"`` or ``"tower"``; else ``""``.
    """

    kind: ActionKind
    q: int = 0
    r: int = 0
    orientation: int = 0
    terrain: Terrain = Terrain.NONE
    tile: int = -1
    option: str = ""

    def __post_init__(self) -> None:
        """Reject malformed values (a wrong value must never encode another action).

        Raises:
            NotationError: a field of the wrong type or out of range, named in the message.
        """
        if not isinstance(self.kind, ActionKind):
            raise NotationError(f"Action.kind must be an ActionKind, got {self.kind!r}")
        for name in ("q", "r", "orientation", "tile"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
                raise NotationError(f"Action.{name} must be an integer, got {v!r}")
            object.__setattr__(self, name, int(v))
        k = self.kind
        if k is ActionKind.TILE and not 0 <= self.orientation < 6:
            raise NotationError(f"Action.orientation must be 0..5, got {self.orientation}")
        if k is ActionKind.EXPAND and self.terrain not in BUILD_TERRAINS:
            raise NotationError(f"an expansion's terrain is one of J C S R L, got {self.terrain!r}")
        if k is ActionKind.DRAW and not 0 <= self.tile < 25:
            raise NotationError(f"a drawn tile is a tile type id 0..24, got {self.tile}")
        if not isinstance(self.terrain, Terrain):
            raise NotationError(f"Action.terrain must be a Terrain, got {self.terrain!r}")
        if k in (ActionKind.BONUS, ActionKind.BOX):
            if (k, self.option) not in SOLO_OPTIONS:
                allowed = " ".join(o for kk, o in SOLO_OPTIONS if kk is k)
                raise NotationError(f"a {k.value} action's option is one of {allowed}, got "
                                    f"{self.option!r}")
        elif self.option != "":
            raise NotationError(f"a {k.value} action takes no option, got {self.option!r}")

    def __str__(self) -> str:
        k = self.kind
        if k is ActionKind.DRAW:
            return f"draw:{tile_name(self.tile)}"
        if k in (ActionKind.BONUS, ActionKind.BOX):
            return f"{k.value}:{self.option}"
        at = f"{k.value}@{self.q},{self.r}"
        if k is ActionKind.TILE:
            return f"{at}:{ORIENTATION_NAMES[self.orientation]}"
        if k is ActionKind.EXPAND:
            return f"{at}:{TERRAIN_LETTER[self.terrain]}"
        return at

    @classmethod
    def parse(cls, text: str) -> Action:
        """Parse the notation above.

        Raises:
            NotationError: the text is not a well-formed action (the message says why).
        """
        if not isinstance(text, str):
            raise NotationError(f"action notation must be a string, got {type(text).__name__}")
        s = text.strip()
        shown = repr(text) if len(text) <= 60 else repr(text[:60]) + "..."
        m = _DRAW.fullmatch(s)
        if m:
            try:
                return cls(ActionKind.DRAW, tile=parse_tile(m.group(1)))
            except ValueError as e:
                raise NotationError(f"{shown}: {e}") from None
        m = _SOLO.fullmatch(s)
        if m:
            try:
                return cls(ActionKind(m.group(1)), option=m.group(2))
            except NotationError as e:
                raise NotationError(f"{shown}: {e}") from None
        m = _PLACE.fullmatch(s)
        if not m:
            raise NotationError(
                f"{shown} is not an action; expected e.g. 'tile@0,1:N', 'hut@2,-1', "
                "'temple@0,0', 'tower@1,1', 'expand@0,1:J' or 'draw:JC' (solo: "
                "'bonus:pile', 'bonus:faceup', 'bonus:stop', 'box:hut', 'box:temple', "
                "'box:tower')"
            )
        kind_s, q_s, r_s, suffix = m.groups()
        kind = ActionKind(kind_s)
        q, r = int(q_s), int(r_s)
        if kind is ActionKind.TILE:
            if suffix is None or suffix not in ORIENTATION_NAMES:
                raise NotationError(
                    f"{shown}: a tile placement needs ':O' with O one of "
                    f"{' '.join(ORIENTATION_NAMES)}"
                )
            return cls(kind, q, r, orientation=ORIENTATION_NAMES.index(suffix))
        if kind is ActionKind.EXPAND:
            if suffix is None or suffix not in "JCSRL" or len(suffix) != 1:
                raise NotationError(f"{shown}: an expansion needs ':T' with T one of J C S R L")
            return cls(kind, q, r, terrain=LETTER_TERRAIN[suffix])
        if suffix is not None:
            raise NotationError(f"{shown}: a {kind.value} takes no ':' suffix")
        return cls(kind, q, r)


_PLACE = re.compile(r"(tile|hut|temple|tower|expand)@(-?[0-9]{1,9}),(-?[0-9]{1,9})(?::([A-Z]+))?",
                    re.ASCII)
_DRAW = re.compile(r"draw:([A-Z]+)", re.ASCII)
_SOLO = re.compile(r"(bonus|box):(pile|faceup|stop|hut|temple|tower)", re.ASCII)


def encode(action: Action, board: Board) -> int:
    """Integer id of a tile or build action on ``board`` (see :mod:`kernels` for the ranges).

    Raises:
        NotationError: a ``DRAW`` action (chance outcomes are tile type ids, not action ids) or
            a hex off the board.
    """
    if action.kind is ActionKind.DRAW:
        raise NotationError("a draw is a chance outcome; its id is the tile type id")
    if action.kind in (ActionKind.BONUS, ActionKind.BOX):
        return 14 * board.num_cells + SOLO_OPTIONS.index((action.kind, action.option))
    try:
        c = board.cell(action.q, action.r)
    except ValueError as e:
        raise NotationError(f"{action}: {e}") from None
    h = board.num_cells
    kind = action.kind
    if kind is ActionKind.TILE:
        return c * 6 + action.orientation
    if kind is ActionKind.HUT:
        return 6 * h + c
    if kind is ActionKind.TEMPLE:
        return 7 * h + c
    if kind is ActionKind.TOWER:
        return 8 * h + c
    return 9 * h + c * 5 + BUILD_TERRAINS.index(action.terrain)


def decode(action_id: int, board: Board, solo: bool = False) -> Action:
    """Action value of an integer id on ``board`` (with ``solo``, of the solo variant's game,
    whose ids run 6 further).

    Raises:
        ActionOutOfRangeError: ``action_id`` outside ``0 .. 14H - 1`` (``14H + 5`` solo).
    """
    h = board.num_cells
    if not isinstance(action_id, (int, np.integer)) or isinstance(action_id, (bool, np.bool_)):
        raise ActionOutOfRangeError(action_id, "an action id is an integer")
    a = int(action_id)
    top = 14 * h + (len(SOLO_OPTIONS) if solo else 0)
    if not 0 <= a < top:
        raise ActionOutOfRangeError(action_id, f"action ids run from 0 to {top - 1}")
    if a >= 14 * h:
        kind, option = SOLO_OPTIONS[a - 14 * h]
        return Action(kind, option=option)
    if a < 6 * h:
        q, r = board.hex(a // 6)
        return Action(ActionKind.TILE, q, r, orientation=a % 6)
    if a < 9 * h:
        kind = (ActionKind.HUT, ActionKind.TEMPLE, ActionKind.TOWER)[a // h - 6]
        q, r = board.hex(a % h)
        return Action(kind, q, r)
    e = a - 9 * h
    q, r = board.hex(e // 5)
    return Action(ActionKind.EXPAND, q, r, terrain=BUILD_TERRAINS[e % 5])
