"""The Taluva state as four fixed-shape arrays (batchable with a leading batch axis).

========  ==============  ==============================================================
array     shape, dtype    content
========  ==============  ==============================================================
cells     int8[H, 5]      per hex (top of stack): level, terrain, tile, building, owner
players   int16[4, 8]     per seat: huts, temples, towers (supply), status, destroyed huts,
                          place, hand (tile_preview), elimination order
deck      int8[48]        tile type ids in draw order; ``meta[M_DRAWN]`` of them drawn
meta      int32[32]       step, player to move, tile in hand, counters, island bounding box,
                          end reason, ranking cursors; fields 16.. the solo variant's
                          (draw pile, bonus stack, face-up tile, the turn's tiles...)
========  ==============  ==============================================================

``H`` is the board's number of hexes (:func:`hexgrid.make_board`). ``cells[c, C_TILE]`` is the
index (0-based, in order of placement) of the tile whose hex is on top at ``c``; it is what the
eruption rule "not exactly on one tile" reads. A hut hex holds as many huts as its level.
Everything in these arrays is derivable from the action history; nothing else is stored.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from taluva_ai.games.taluva.tiles import NUM_TILES

# cells columns
C_LEVEL, C_TERRAIN, C_TILE, C_BUILDING, C_OWNER = range(5)
NUM_CELL_FIELDS = 5
# players columns
P_HUTS, P_TEMPLES, P_TOWERS, P_STATUS, P_DESTROYED, P_PLACE, P_HAND, P_ELIM_ORDER = range(8)
NUM_PLAYER_FIELDS = 8
MAX_PLAYERS = 4
START_HUTS, START_TEMPLES, START_TOWERS = 20, 3, 2
# meta fields
(
    M_STEP,
    M_PLAYER,
    M_TILE,
    M_DRAWN,
    M_PLACED,
    M_QMIN,
    M_QMAX,
    M_RMIN,
    M_RMAX,
    M_END,
    M_NEXT_BEST,
    M_NEXT_WORST,
    M_DRAW_FOR,
    M_SETUP,
    M_NELIM,
    M_PLY,
) = range(16)
# meta fields of the solo variant (SOLO.md; 0 in the multiplayer game)
(
    M_PILE,  # tiles in the draw pile (those put under it by unplaceable="bottom" included)
    M_STACK,  # tiles in the bonus stack (the face-up tile included)
    M_FACE_UP,  # tile type of the face-up tile, -1 while none is turned up
    M_ASIDE,  # tiles set aside (unplaceable)
    M_TURN_TILES,  # tiles taken this turn (regular and bonus)
    M_BONUS_SRC,  # at the bonus step: sources on offer (SRC_BIT_PILE | SRC_BIT_FACE_UP)
    M_FACE_USED,  # the face-up tile was taken this turn
    M_SOURCE,  # where the tile in hand came from: SOURCE_REGULAR, _PILE or _FACE_UP
    M_BOXED_HUTS,  # pieces put into the box by class 1
    M_BOXED_TEMPLES,
    M_BOXED_TOWERS,
    M_BOTTOM,  # known tiles under the draw pile (unplaceable="bottom"), at the deck's end
    M_PENDING,  # what the chance node draws: PENDING_PILE, PENDING_REVEAL_SETUP, _REVEAL
    M_LAST_CLASS,  # class (1-4) of the last level-1 placement, 0 for a higher one
    M_ISLAND,  # tiles of the starting island (deck[:M_ISLAND])
    M_SCORE,  # the final score, set when the game ends
) = range(16, 32)
NUM_META = 32
# M_SOURCE values
SOURCE_REGULAR, SOURCE_PILE, SOURCE_FACE_UP = 0, 1, 2
# M_BONUS_SRC bits
SRC_BIT_PILE, SRC_BIT_FACE_UP = 1, 2
# M_PENDING values
PENDING_PILE, PENDING_REVEAL_SETUP, PENDING_REVEAL = 0, 1, 2
#: Tiles in the solo bonus stack at set-up (SOLO.md 1).
SOLO_STACK = 10

#: ``current_player`` value at a chance node (OpenSpiel's ``kChancePlayerId``).
CHANCE = -1
#: ``current_player`` value once the game is over (OpenSpiel's ``kTerminalPlayerId``).
TERMINAL = -4


class Step(IntEnum):
    """What the state waits for."""

    CHANCE = 0  # a tile is drawn
    TILE = 1  # the player to move places the tile
    BUILD = 2  # the player to move builds
    TERMINAL = 3
    BONUS = 4  # solo: take a bonus tile (draw pile or face-up) or stop
    BOX = 5  # solo: choose the piece that class 1 puts into the box


class Status(IntEnum):
    """Per-seat status."""

    ACTIVE = 0
    ELIMINATED = 1
    FINISHED = 2  # reached an early victory in ranked play and left the table


class EndReason(IntEnum):
    """Why the game ended."""

    NONE = 0
    EARLY_VICTORY = 1
    LAST_STANDING = 2
    TILES_OUT = 3
    TRUNCATED = 4  # the board bound removed every legal placement: no result
    NO_BUILD = 5  # solo: phase 2 had no legal build (SOLO.md 4.1)
    SUPPLY_OUT = 6  # solo: every piece built or boxed (SOLO.md 4.2)
    PILE_OUT = 7  # solo: the draw pile is empty at the end of a turn (SOLO.md 4.3, 4.4)


def new_arrays(
    num_players: int, deck: np.ndarray, num_cells: int, tile_preview: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Fresh ``(cells, players, deck, meta)`` at the first chance node.

    Args:
        num_players: 2..4.
        deck: ``int[48]`` tile type ids in draw order (a permutation of the tile set).
        num_cells: the board's number of hexes.
        tile_preview: deal one tile to each seat first (RULES.md ``tile_preview``).
    """
    cells = np.zeros((num_cells, NUM_CELL_FIELDS), dtype=np.int8)
    cells[:, C_OWNER] = -1
    cells[:, C_TILE] = -1
    players = np.zeros((MAX_PLAYERS, NUM_PLAYER_FIELDS), dtype=np.int16)
    players[:, P_HUTS] = START_HUTS
    players[:, P_TEMPLES] = START_TEMPLES
    players[:, P_TOWERS] = START_TOWERS
    players[:, P_PLACE] = -1
    players[:, P_HAND] = -1
    players[:, P_ELIM_ORDER] = -1
    players[num_players:, P_STATUS] = -1  # absent seats
    players[num_players:, :3] = 0
    meta = np.zeros(NUM_META, dtype=np.int32)
    meta[M_STEP] = Step.CHANCE
    meta[M_PLAYER] = 0
    meta[M_TILE] = -1
    meta[M_QMIN] = meta[M_RMIN] = 0
    meta[M_QMAX] = meta[M_RMAX] = 0
    meta[M_NEXT_BEST] = 0
    meta[M_NEXT_WORST] = num_players - 1
    meta[M_DRAW_FOR] = 0
    meta[M_SETUP] = 1 if tile_preview else 0
    d = np.asarray(deck, dtype=np.int8).copy()
    if d.shape != (NUM_TILES,):
        raise ValueError(f"deck must hold the {NUM_TILES} tiles, got shape {d.shape}")
    return cells, players, d, meta
