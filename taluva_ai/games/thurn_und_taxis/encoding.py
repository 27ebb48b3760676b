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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from taluva_ai.games.thurn_und_taxis.board import NUM_CITIES, NUM_STACKS, STACK_SIZE

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
