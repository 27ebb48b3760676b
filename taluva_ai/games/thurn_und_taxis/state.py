"""The Thurn und Taxis state as five fixed-shape arrays, and their field indices.

- ``cards``: ``int8[15, 22]``, how many copies of each city card lie where. Rows:
  ``L_SUPPLY`` (face-down supply; its order is hidden from everyone and never stored: a card
  leaves it through a chance node, uniformly among the copies left), ``L_DISPLAY``,
  ``L_DISCARD``, ``L_HAND + p`` (hand of seat ``p``), ``L_ROUTE + p`` (0/1: the city is in
  seat ``p``'s route) and ``L_KNOWN + p`` (the part of seat ``p``'s hand the other seats
  know: cards taken face up from the display and not yet played or discarded; not a location).
  Rows ``L_SUPPLY`` to ``L_ROUTE + 3`` hold all 66 cards: each column sums to 3.
- ``route``: ``int8[4, 22]``, the cities of each seat's route from its left end to its right
  end (``players[p, P_ROUTE_LEN]`` of them; the rest is -1).
- ``houses``: ``int8[4, 22]``, 1 where the seat has a house.
- ``players``: ``int16[4, P_SIZE]``, per seat: houses left, highest carriage (0 = none), route
  length, final place, tile points, and per bonus stack the tiles taken and their points.
- ``meta``: ``int32[M_SIZE]``: the step, the seat to move, the official used this turn, the
  pending chance, the close in progress, round and turn counters, the end trigger, the ply,
  and per stack the tiles taken from it.

Seats beyond ``num_players`` keep zero rows. Every array has a leading batch axis in the
batched kernels.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from taluva_ai.games.thurn_und_taxis.board import DISPLAY_SIZE, HOUSES, NUM_CITIES, NUM_STACKS

MAX_PLAYERS = 4

# cards rows
L_SUPPLY = 0
L_DISPLAY = 1
L_DISCARD = 2
L_HAND = 3
L_ROUTE = 7
L_KNOWN = 11
L_ROWS = 15

# players fields
P_HOUSES_LEFT = 0
P_CARRIAGE = 1
P_ROUTE_LEN = 2
P_PLACE = 3
P_TILE_POINTS = 4
P_STACK_COUNT = 5  # + stack id
P_STACK_POINTS = 15  # + stack id
P_SIZE = 25

# meta fields
M_STEP = 0
M_PLAYER = 1
M_OFFICIAL = 2
M_FORCED = 3  # the postmaster is forced this turn (empty hand at its start)
M_CHANCE_TO = 4  # pending chance: 0 = to the mover's hand, 1 = to the display
M_CHANCE_LEFT = 5  # cards still to deal in the pending chance
M_RESUME = 6  # what follows the pending chance (RS_*)
M_MODE = 7  # close in progress: 0 per_province, 1 one_province
M_MODE_PROVINCE = 8  # its province (one_province)
M_TODO = 9  # houses still to place / cards still to discard
M_LAST = 10  # last pick (canonical order of picks: province, city or card id), -1 none
M_ROUND = 11  # rounds completed
M_TURN = 12  # turns completed
M_END_BY = 13  # seat that triggered the end, -1 none
M_END = 14  # EndReason
M_PLY = 15  # actions applied, chance outcomes included
M_RESHUFFLES = 16
M_PLAYS = 17  # cards played this turn
M_DRAWS = 18  # cards drawn this turn (decisions to draw)
M_STACK_TAKEN = 19  # + stack id: tiles taken from the stack
M_SIZE = M_STACK_TAKEN + NUM_STACKS

# chance targets
TO_HAND = 0
TO_DISPLAY = 1

# what follows a chance
RS_START = 0  # the initial display: seat 0's first turn
RS_DRAW1 = 1  # after the first draw
RS_DRAW2 = 2  # after the postmaster's draw: the play
RS_ADMIN = 3  # after the administrator's refill: the first draw


class Step(IntEnum):
    """What the state waits for."""

    CHANCE = 0  # a card leaves the supply (to a hand or the display)
    DRAW = 1  # the first draw (or the administrator)
    DRAW2 = 2  # the postmaster's second draw (or, unless forced, the play)
    PLAY = 3  # play a card: start, extend or abandon the route
    AFTER_PLAY = 4  # the postal carrier's card, a close, or pass
    HOUSE = 5  # pick the city of the next house of a close
    CARRIAGE = 6  # use the cartwright for the next carriage, or pass
    DISCARD = 7  # discard a surplus hand card after a close
    TERMINAL = 8


class EndReason(IntEnum):
    """Why the game ended (``NONE`` while it goes on)."""

    NONE = 0
    CARRIAGE_7 = 1  # a player took a 7 carriage; the round was finished
    LAST_HOUSE = 2  # a player placed their last house; the round was finished
    TRUNCATED = 3  # max_rounds reached without a trigger (engine limit)


S_CHANCE, S_DRAW, S_DRAW2, S_PLAY, S_AFTER_PLAY, S_HOUSE, S_CARRIAGE, S_DISCARD, S_TERMINAL = (
    int(s) for s in Step
)
END_NONE, END_CARRIAGE_7, END_LAST_HOUSE, END_TRUNCATED = (int(e) for e in EndReason)


def new_arrays(num_players: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(cards, route, houses, players, meta)`` of a game before the display is dealt: all 66
    cards in the supply, a chance node dealing the 6 display cards, then seat 0's turn."""
    cards = np.zeros((L_ROWS, NUM_CITIES), dtype=np.int8)
    cards[L_SUPPLY] = 3
    route = np.full((MAX_PLAYERS, NUM_CITIES), -1, dtype=np.int8)
    houses = np.zeros((MAX_PLAYERS, NUM_CITIES), dtype=np.int8)
    players = np.zeros((MAX_PLAYERS, P_SIZE), dtype=np.int16)
    players[:num_players, P_HOUSES_LEFT] = HOUSES
    players[:, P_PLACE] = -1
    meta = np.zeros(M_SIZE, dtype=np.int32)
    meta[M_STEP] = S_CHANCE
    meta[M_CHANCE_TO] = TO_DISPLAY
    meta[M_CHANCE_LEFT] = DISPLAY_SIZE
    meta[M_RESUME] = RS_START
    meta[M_LAST] = -1
    meta[M_END_BY] = -1
    return cards, route, houses, players, meta
