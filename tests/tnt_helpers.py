"""Hand-built Thurn und Taxis positions for scenario tests.

:func:`scenario` writes a position into the state arrays (:mod:`taluva_ai.games.thurn_und_taxis.
state`): hands, routes, display, discard pile, houses, carriages, tiles, the step and the
official; every card not placed elsewhere goes to the supply (or, with ``supply=``, the supply
is given and the rest must be placed). Tests then drive the position through the public API
only (``legal_actions``, ``apply``, ``observation`` ...).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from taluva_ai.games.thurn_und_taxis import ThurnUndTaxisGame, ThurnUndTaxisState
from taluva_ai.games.thurn_und_taxis.board import (
    ADJACENT,
    CITY_ID,
    HOUSES,
    NUM_CITIES,
    OFFICIALS,
    STACK_ID,
    STACK_VALUES,
)
from taluva_ai.games.thurn_und_taxis.state import (
    L_DISCARD,
    L_DISPLAY,
    L_HAND,
    L_KNOWN,
    L_ROUTE,
    L_SUPPLY,
    M_END_BY,
    M_FORCED,
    M_OFFICIAL,
    M_PLAYER,
    M_PLAYS,
    M_ROUND,
    M_STACK_TAKEN,
    M_STEP,
    P_CARRIAGE,
    P_HOUSES_LEFT,
    P_ROUTE_LEN,
    P_STACK_COUNT,
    P_STACK_POINTS,
    P_TILE_POINTS,
    Step,
    new_arrays,
)


def counts(cities: Sequence[str]) -> np.ndarray:
    """``int8[22]`` copies per city of a list of city names."""
    row = np.zeros(NUM_CITIES, dtype=np.int8)
    for c in cities:
        row[CITY_ID[c]] += 1
    return row


def scenario(
    num_players: int = 2,
    *,
    player: int = 0,
    step: str = "play",
    hands: Mapping[int, Sequence[str]] | None = None,
    known: Mapping[int, Sequence[str]] | None = None,
    routes: Mapping[int, Sequence[str]] | None = None,
    display: Sequence[str] = (),
    discard: Sequence[str] = (),
    supply: Sequence[str] | None = None,
    houses: Mapping[int, Sequence[str]] | None = None,
    houses_left: Mapping[int, int] | None = None,
    carriage: Mapping[int, int] | None = None,
    official: str = "none",
    forced: bool = False,
    stacks_taken: Mapping[str, int] | None = None,
    round: int = 0,
    end_by: int = -1,
    seed: int = 0,
    **options: Any,
) -> ThurnUndTaxisState:
    """A position with seat ``player`` to move at ``step`` (a :class:`Step` name).

    ``houses_left`` defaults to 20 minus the houses given. ``stacks_taken`` removes tiles from
    the top of stacks (held by nobody, as if taken by a seat not modelled). ``supply`` None:
    every card not placed elsewhere.
    """
    game = ThurnUndTaxisGame(num_players=num_players, **options)
    cards, route, hs, players, meta = new_arrays(num_players)
    cards[:] = 0
    for p, cs in (hands or {}).items():
        cards[L_HAND + p] = counts(cs)
    for p, cs in (known or {}).items():
        cards[L_KNOWN + p] = counts(cs)
    for p, cs in (routes or {}).items():
        for i, c in enumerate(cs):
            if i:
                assert ADJACENT[CITY_ID[cs[i - 1]], CITY_ID[c]], f"{cs[i - 1]}-{c}: no road"
            route[p, i] = CITY_ID[c]
            cards[L_ROUTE + p, CITY_ID[c]] = 1
        players[p, P_ROUTE_LEN] = len(cs)
    cards[L_DISPLAY] = counts(display)
    cards[L_DISCARD] = counts(discard)
    placed = cards[L_DISPLAY:L_ROUTE + num_players].astype(np.int64).sum(axis=0)
    if supply is None:
        cards[L_SUPPLY] = 3 - placed
    else:
        cards[L_SUPPLY] = counts(supply)
    total = cards[L_SUPPLY:L_ROUTE + num_players].astype(np.int64).sum(axis=0)
    assert (total == 3).all(), f"card copies per city: {total.tolist()}"
    for p, cs in (houses or {}).items():
        hs[p] = counts(cs)
    for p in range(num_players):
        players[p, P_HOUSES_LEFT] = HOUSES - int(hs[p].sum())
    for p, v in (houses_left or {}).items():
        players[p, P_HOUSES_LEFT] = v
    for p, v in (carriage or {}).items():
        players[p, P_CARRIAGE] = v
    for name, k in (stacks_taken or {}).items():
        meta[M_STACK_TAKEN + STACK_ID[name]] = k
    meta[M_STEP] = int(Step[step.upper()])
    meta[M_PLAYER] = player
    meta[M_OFFICIAL] = OFFICIALS.index(official)
    meta[M_FORCED] = int(forced)
    meta[M_ROUND] = round
    meta[M_END_BY] = end_by
    if step.upper() in ("AFTER_PLAY",):
        meta[M_PLAYS] = 1
    return ThurnUndTaxisState(game, cards, route, hs, players, meta, seed=seed)


def give_tile(state: ThurnUndTaxisState, player: int, stack: str) -> None:
    """Seat ``player`` takes the top tile of ``stack`` (for setting up holdings)."""
    s = STACK_ID[stack]
    v = int(STACK_VALUES[s, state.meta[M_STACK_TAKEN + s]])
    state.meta[M_STACK_TAKEN + s] += 1
    state.players[player, P_STACK_COUNT + s] += 1
    state.players[player, P_STACK_POINTS + s] += v
    state.players[player, P_TILE_POINTS] += v


def legal_strings(state: ThurnUndTaxisState) -> list[str]:
    return [state.action_to_string(int(a)) for a in state.legal_actions()]


def play(state: ThurnUndTaxisState, *moves: str) -> None:
    """Apply actions and chance outcomes in notation."""
    for m in moves:
        state.apply(m)


def check_invariants(state: ThurnUndTaxisState) -> None:
    """Card and house conservation and the consistency of routes and known cards."""
    n = state.num_players
    c = state.cards.astype(np.int64)
    per_city = c[L_SUPPLY:L_ROUTE + n].sum(axis=0)
    assert (per_city == 3).all(), per_city
    assert int(c[L_SUPPLY:L_ROUTE + n].sum()) == 66
    assert (c[L_KNOWN:L_KNOWN + n] <= c[L_HAND:L_HAND + n]).all()
    assert (c[L_ROUTE:L_ROUTE + n] <= 1).all()
    for p in range(n):
        r = state.route_of(p)
        assert len(set(r)) == len(r)
        assert sorted(CITY_ID[x] for x in r) == list(np.flatnonzero(c[L_ROUTE + p]))
        for a, b in itertools.pairwise(r):
            assert ADJACENT[CITY_ID[a], CITY_ID[b]]
        assert state.houses_left(p) + len(state.houses_of(p)) == HOUSES
        assert state.tile_points(p) == sum(pts for _, pts in state.tiles(p).values())
    assert int(c[L_DISPLAY].sum()) <= 6


def close(state: ThurnUndTaxisState, mode: str = "per_province") -> None:
    """Close the route (``close:<mode>``), placing the houses at the first city offered
    whenever there is a choice."""
    state.apply(f"close:{mode}")
    while state.step is Step.HOUSE:
        state.apply(int(state.legal_actions()[0]))
