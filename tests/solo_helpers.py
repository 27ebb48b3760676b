"""Helpers of the solo-variant tests: placements written as in SOLO.md, and hand-built solo
positions (written straight into the state arrays, then driven through the public API only).

SOLO.md writes a placement ``V(q,r) a(q,r) b(q,r)``; :func:`tile_at` turns it into the engine's
notation ``tile@q,r:O``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from taluva_ai.games.taluva import Step, TaluvaGame, TaluvaState
from taluva_ai.games.taluva import state as S
from taluva_ai.games.taluva.solo import _placement
from taluva_ai.games.taluva.tiles import NUM_TILES, ORIENTATION_NAMES, parse_tile
from tests.helpers import HexSpec, make_position

#: Where the tile in hand came from, by the names of ``solo_counts()["source"]``.
SOURCES = {"regular": S.SOURCE_REGULAR, "pile": S.SOURCE_PILE, "faceup": S.SOURCE_FACE_UP}


def tile_at(tile: str, v: tuple[int, int], a: tuple[int, int], b: tuple[int, int]) -> str:
    """Notation of the placement of ``tile`` written ``V(v) a(a) b(b)`` as in SOLO.md."""
    _, (q, r), o = _placement(tile, v, a, b)
    return f"tile@{q},{r}:{ORIENTATION_NAMES[o]}"


def solo_game(**options: Any) -> TaluvaGame:
    """A solo game with the given SOLO.md options."""
    return TaluvaGame(solo=True, **options)


def start(game: TaluvaGame, island: list[Any] | None = None, face_up: str = "JC",
          tile: str | None = None) -> TaluvaState:
    """A new solo game of ``game`` (``island``: a custom starting island), the face-up tile
    turned up, and (given ``tile``) the regular tile drawn."""
    s = game.new_initial_state(seed=0, island=island)
    s.apply(parse_tile(face_up))
    if tile is not None:
        s.apply(parse_tile(tile))
    return s


def solo_position(
    game: TaluvaGame,
    hexes: Iterable[HexSpec],
    *,
    step: str = "build",
    tile: str | None = None,
    source: str = "regular",
    pile: int = 31,
    stack: int = 10,
    face_up: str | None = "JC",
    aside: int = 0,
    boxed: tuple[int, int, int] = (0, 0, 0),
    supply: tuple[int, int, int] | None = None,
    destroyed: int = 0,
    turn_tiles: int = 1,
    offer: tuple[str, ...] = ("pile",),
    upcoming: tuple[str, ...] = (),
) -> TaluvaState:
    """A hand-built solo position (building owner 0): ``hexes`` as in
    :func:`tests.helpers.make_position`, ``step`` one of ``chance tile build bonus box``
    (``offer``: the bonus sources on offer at the bonus step), the solo counters as given (no
    tile under the pile), the unseen tiles consistent with them. ``supply`` defaults to the
    starting pieces less those on the board and the boxed ones. A face-up ``source`` marks
    the face-up tile as used this turn. ``upcoming``: the next unseen tiles of the deck (what
    ``draw()`` gives), in order."""
    base_step = "build" if step in ("bonus", "box") else step
    s = make_position(game, hexes, step=base_step, tile=tile)
    m = s.meta
    if step in ("bonus", "box"):
        m[S.M_STEP] = Step.BONUS if step == "bonus" else Step.BOX
        m[S.M_BONUS_SRC] = sum({"pile": 1, "faceup": 2}[o] for o in offer) if step == "bonus" \
            else 0
    if supply is not None:
        s.players[0, [S.P_HUTS, S.P_TEMPLES, S.P_TOWERS]] = supply
    else:
        s.players[0, [S.P_HUTS, S.P_TEMPLES, S.P_TOWERS]] -= np.array(boxed, dtype=np.int16)
        s.players[0, S.P_HUTS] -= destroyed
    s.players[0, S.P_DESTROYED] = destroyed
    m[S.M_PILE] = pile
    m[S.M_STACK] = stack
    m[S.M_FACE_UP] = -1 if face_up is None else parse_tile(face_up)
    m[S.M_ASIDE] = aside
    m[S.M_BOXED_HUTS], m[S.M_BOXED_TEMPLES], m[S.M_BOXED_TOWERS] = boxed
    m[S.M_SOURCE] = SOURCES[source]
    m[S.M_TURN_TILES] = turn_tiles if step != "chance" else 0
    if step != "bonus":
        m[S.M_BONUS_SRC] = 0
    m[S.M_FACE_USED] = int(source == "faceup")
    m[S.M_ISLAND] = 7
    face_down = stack - (0 if face_up is None else 1)
    drawn = NUM_TILES - pile - face_down
    m[S.M_DRAWN] = drawn
    for k, name in enumerate(upcoming):
        t = parse_tile(name)
        p = drawn + k
        later = [j for j in range(p, NUM_TILES) if s.deck[j] == t]
        j = later[0] if later else next(j for j in range(p) if s.deck[j] == t)
        s.deck[p], s.deck[j] = s.deck[j], s.deck[p]
    return s
