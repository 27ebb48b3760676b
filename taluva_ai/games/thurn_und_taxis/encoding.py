"""The observation tensor of Thurn und Taxis for networks and environments
(docs/thurn_und_taxis.md, Observation tensor).

:func:`encode` turns :meth:`ThurnUndTaxisState.observation` (what one seat knows, §9) into a
flat ``float32[536]`` vector with values in ``[0, 1]``, seats rotated so that the observer comes
first (then the next seats in turn order; missing seats of a 2- or 3-player game are zeros).
Built from the observation dict only, it cannot hold more than the seat knows.

Layout (offsets in :data:`LAYOUT`): own hand, display, discard pile and unseen cards (copies /
3, 22 each); bonus tiles left per stack (/ stack size, 10); the step (one-hot, 9), the official
used this turn (one-hot, 5), forced postmaster, supply size / 66, round / max_rounds, a card
dealt to the hand of the seat to move; the seat that triggered the end and the seat to move
(relative, one-hot 4 each); the close in progress (mode 2, province 9, picks left / 10); then
per seat (4 slots of 100): route cities, route ends, houses, known cards / 3 (22 each), hand
size / 20, unknown cards / 20, houses left / 20, carriage (one-hot none, 3..7), tile points /
30, route length / 22, and 1 for a seat in play.

:func:`encode_arrays` is the same vector computed by a compiled kernel straight from the state
arrays (about 100 times faster than the dict route; the AlphaZero encoder uses it). It reads
only what :meth:`~.game.ThurnUndTaxisState.observation` holds: of the other seats' hands only
their sizes and known cards, of the supply only its size (the tests check both that it equals
:func:`encode` and that it is the same for every resampling of the hidden cards).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from taluva_ai.games.compiling import njit
from taluva_ai.games.thurn_und_taxis import state as S
from taluva_ai.games.thurn_und_taxis.board import NUM_CITIES, NUM_STACKS, STACK_SIZE
from taluva_ai.games.thurn_und_taxis.rules import R_MAX_ROUNDS, R_PLAYERS

MAX_SEATS = 4
SEAT_SIZE = 4 * NUM_CITIES + 12
LAYOUT: dict[str, tuple[int, int]] = {}
_off = 0
for _name, _size in (("hand", 22), ("display", 22), ("discard", 22), ("unseen", 22),
                     ("stacks_left", NUM_STACKS), ("step", 9), ("official", 5), ("forced", 1),
                     ("supply", 1), ("round", 1), ("chance_to_hand", 1), ("end_by", 4),
                     ("to_move", 4), ("close_mode", 2), ("close_province", 9),
                     ("picks_left", 1), ("seats", MAX_SEATS * SEAT_SIZE)):
    LAYOUT[_name] = (_off, _off + _size)
    _off += _size
#: Length of the observation tensor.
OBS_SIZE = _off


def _rel(seat: int, observer: int, n: int) -> int:
    return (seat - observer) % n


def encode(obs: dict[str, Any], num_players: int, max_rounds: int) -> np.ndarray:
    """``float32[OBS_SIZE]`` of an observation dict (see the module docstring).

    Raises:
        KeyError: ``obs`` is not a Thurn und Taxis observation.
    """
    n = num_players
    me = int(obs["player"])
    v = np.zeros(OBS_SIZE, dtype=np.float32)

    def put(name: str, values: Any) -> None:
        a, b = LAYOUT[name]
        v[a:b] = values

    put("hand", obs["hand"] / 3.0)
    put("display", obs["display"] / 3.0)
    put("discard", obs["discard"] / 3.0)
    routes = obs["routes"]
    in_route = np.zeros(NUM_CITIES, dtype=np.int64)
    for q in range(n):
        r = routes[q][routes[q] >= 0]
        in_route[r.astype(np.int64)] += 1
    others_known = obs["known"].astype(np.int64).sum(axis=0) - obs["known"][me]
    unseen = 3 - obs["display"] - obs["discard"] - in_route - obs["hand"] - others_known
    put("unseen", unseen / 3.0)
    put("stacks_left", obs["stacks_left"] / STACK_SIZE)
    put("step", np.eye(9, dtype=np.float32)[int(obs["step"])])
    put("official", np.eye(5, dtype=np.float32)[int(obs["official"])])
    put("forced", float(obs["forced_postmaster"]))
    put("supply", obs["supply_size"] / 66.0)
    put("round", min(1.0, obs["round"] / max_rounds))
    put("chance_to_hand", float(obs["chance_to_hand"]))
    if obs["end_triggered_by"] >= 0:
        a, _ = LAYOUT["end_by"]
        v[a + _rel(int(obs["end_triggered_by"]), me, n)] = 1.0
    if obs["current_player"] >= 0:
        a, _ = LAYOUT["to_move"]
        v[a + _rel(int(obs["current_player"]), me, n)] = 1.0
    if obs["step"] == 5:  # a close in progress: its houses
        a, _ = LAYOUT["close_mode"]
        v[a + int(obs["close_mode"])] = 1.0
        if obs["close_province"] >= 0:
            a, _ = LAYOUT["close_province"]
            v[a + int(obs["close_province"])] = 1.0
    put("picks_left", min(1.0, obs["picks_left"] / 10.0))
    base, _ = LAYOUT["seats"]
    for q in range(n):
        o = base + _rel(q, me, n) * SEAT_SIZE
        r = routes[q][routes[q] >= 0].astype(np.int64)
        v[o + r] = 1.0
        if r.size:
            v[o + NUM_CITIES + r[0]] = 1.0
            v[o + NUM_CITIES + r[-1]] = 1.0
        v[o + 2 * NUM_CITIES: o + 3 * NUM_CITIES] = obs["houses"][q]
        v[o + 3 * NUM_CITIES: o + 4 * NUM_CITIES] = obs["known"][q] / 3.0
        t = o + 4 * NUM_CITIES
        v[t] = min(1.0, obs["hand_sizes"][q] / 20.0)
        v[t + 1] = min(1.0, obs["unknown"][q] / 20.0)
        v[t + 2] = obs["houses_left"][q] / 20.0
        car = int(obs["carriage"][q])
        v[t + 3 + (0 if car == 0 else car - 2)] = 1.0
        v[t + 9] = min(1.0, obs["tile_points"][q].sum() / 30.0)
        v[t + 10] = r.size / NUM_CITIES
        v[t + 11] = 1.0
    return v


_O_HAND, _O_DISPLAY, _O_DISCARD, _O_UNSEEN = (LAYOUT[k][0] for k in ("hand", "display",
                                                                   "discard", "unseen"))
_O_STACKS, _O_STEP, _O_OFFICIAL, _O_FORCED = (LAYOUT[k][0] for k in ("stacks_left", "step",
                                                                   "official", "forced"))
_O_SUPPLY, _O_ROUND, _O_CHANCE, _O_END_BY = (LAYOUT[k][0] for k in ("supply", "round",
                                                                  "chance_to_hand", "end_by"))
_O_TO_MOVE, _O_MODE, _O_PROVINCE, _O_PICKS = (LAYOUT[k][0] for k in ("to_move", "close_mode",
                                                                   "close_province",
                                                                   "picks_left"))
_O_SEATS = LAYOUT["seats"][0]
_STACK_SIZE_F = STACK_SIZE.astype(np.float64)


@njit(cache=True)
def encode_arrays(cards, route, houses, players, meta, rules, player, out):
    """Fill ``out`` (``float32[OBS_SIZE]``) with :func:`encode` of ``player``'s observation,
    from the five state arrays and the ``int32`` rules vector (no dict, no allocation). Reads
    nothing ``player`` cannot see (module docstring); ``player`` must be a seat of the game."""
    n = rules[R_PLAYERS]
    me = player
    for i in range(out.shape[0]):
        out[i] = 0.0
    for c in range(NUM_CITIES):
        hand = cards[S.L_HAND + me, c]
        out[_O_HAND + c] = hand / 3.0
        out[_O_DISPLAY + c] = cards[S.L_DISPLAY, c] / 3.0
        out[_O_DISCARD + c] = cards[S.L_DISCARD, c] / 3.0
        located = cards[S.L_DISPLAY, c] + cards[S.L_DISCARD, c] + hand
        for q in range(n):
            located += cards[S.L_ROUTE + q, c]
            if q != me:
                located += cards[S.L_KNOWN + q, c]
        out[_O_UNSEEN + c] = (3 - located) / 3.0
    for s in range(NUM_STACKS):
        out[_O_STACKS + s] = (STACK_SIZE[s] - meta[S.M_STACK_TAKEN + s]) / _STACK_SIZE_F[s]
    step = meta[S.M_STEP]
    out[_O_STEP + step] = 1.0
    out[_O_OFFICIAL + meta[S.M_OFFICIAL]] = 1.0
    out[_O_FORCED] = 1.0 if meta[S.M_FORCED] != 0 else 0.0
    supply = 0
    for c in range(NUM_CITIES):
        supply += cards[S.L_SUPPLY, c]  # its size only: the observation's supply_size
    out[_O_SUPPLY] = supply / 66.0
    out[_O_ROUND] = min(1.0, meta[S.M_ROUND] / rules[R_MAX_ROUNDS])
    if step == S.S_CHANCE and meta[S.M_CHANCE_TO] == S.TO_HAND:
        out[_O_CHANCE] = 1.0
    if meta[S.M_END_BY] >= 0:
        out[_O_END_BY + (meta[S.M_END_BY] - me) % n] = 1.0
    if step != S.S_CHANCE and step != S.S_TERMINAL:
        out[_O_TO_MOVE + (meta[S.M_PLAYER] - me) % n] = 1.0
    if step == S.S_HOUSE:
        out[_O_MODE + meta[S.M_MODE]] = 1.0
        if meta[S.M_MODE_PROVINCE] >= 0:
            out[_O_PROVINCE + meta[S.M_MODE_PROVINCE]] = 1.0
    out[_O_PICKS] = min(1.0, meta[S.M_TODO] / 10.0)
    for q in range(n):
        o = _O_SEATS + ((q - me) % n) * SEAT_SIZE
        length = players[q, S.P_ROUTE_LEN]
        for i in range(length):
            out[o + route[q, i]] = 1.0
        if length > 0:
            out[o + NUM_CITIES + route[q, 0]] = 1.0
            out[o + NUM_CITIES + route[q, length - 1]] = 1.0
        size = 0
        known = 0
        for c in range(NUM_CITIES):
            out[o + 2 * NUM_CITIES + c] = houses[q, c]
            out[o + 3 * NUM_CITIES + c] = cards[S.L_KNOWN + q, c] / 3.0
            size += cards[S.L_HAND + q, c]  # its size only: the observation's hand_sizes
            known += cards[S.L_KNOWN + q, c]
        t = o + 4 * NUM_CITIES
        out[t] = min(1.0, size / 20.0)
        out[t + 1] = min(1.0, (size - known) / 20.0)
        out[t + 2] = players[q, S.P_HOUSES_LEFT] / 20.0
        car = players[q, S.P_CARRIAGE]
        out[t + 3 + (0 if car == 0 else car - 2)] = 1.0
        points = 0
        for s in range(NUM_STACKS):
            points += players[q, S.P_STACK_POINTS + s]
        out[t + 9] = min(1.0, points / 30.0)
        out[t + 10] = length / NUM_CITIES
        out[t + 11] = 1.0
