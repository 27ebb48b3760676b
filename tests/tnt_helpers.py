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
from taluva_ai.games.thurn_und_taxis import board as B
from taluva_ai.games.thurn_und_taxis import state as S


def counts(cities: Sequence[str]) -> np.ndarray:
    """``int8[22]`` copies per city of a list of city names."""
    row = np.zeros(B.NUM_CITIES, dtype=np.int8)
    for c in cities:
        row[B.CITY_ID[c]] += 1
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
    cards, route, hs, players, meta = S.new_arrays(num_players)
    cards[:] = 0
    for p, cs in (hands or {}).items():
        cards[S.L_HAND + p] = counts(cs)
    for p, cs in (known or {}).items():
        cards[S.L_KNOWN + p] = counts(cs)
    for p, cs in (routes or {}).items():
        for i, c in enumerate(cs):
            if i:
                assert B.ADJACENT[B.CITY_ID[cs[i - 1]], B.CITY_ID[c]], f"{cs[i - 1]}-{c}: no road"
            route[p, i] = B.CITY_ID[c]
            cards[S.L_ROUTE + p, B.CITY_ID[c]] = 1
        players[p, S.P_ROUTE_LEN] = len(cs)
    cards[S.L_DISPLAY] = counts(display)
    cards[S.L_DISCARD] = counts(discard)
    placed = cards[S.L_DISPLAY:S.L_ROUTE + num_players].astype(np.int64).sum(axis=0)
    if supply is None:
        cards[S.L_SUPPLY] = 3 - placed
    else:
        cards[S.L_SUPPLY] = counts(supply)
    total = cards[S.L_SUPPLY:S.L_ROUTE + num_players].astype(np.int64).sum(axis=0)
    assert (total == 3).all(), f"card copies per city: {total.tolist()}"
    for p, cs in (houses or {}).items():
        hs[p] = counts(cs)
    for p in range(num_players):
        players[p, S.P_HOUSES_LEFT] = B.HOUSES - int(hs[p].sum())
    for p, v in (houses_left or {}).items():
        players[p, S.P_HOUSES_LEFT] = v
    for p, v in (carriage or {}).items():
        players[p, S.P_CARRIAGE] = v
    for name, k in (stacks_taken or {}).items():
        meta[S.M_STACK_TAKEN + B.STACK_ID[name]] = k
    meta[S.M_STEP] = int(S.Step[step.upper()])
    meta[S.M_PLAYER] = player
    meta[S.M_OFFICIAL] = B.OFFICIALS.index(official)
    meta[S.M_FORCED] = int(forced)
    meta[S.M_ROUND] = round
    meta[S.M_END_BY] = end_by
    if step.upper() in ("AFTER_PLAY",):
        meta[S.M_PLAYS] = 1
    return ThurnUndTaxisState(game, cards, route, hs, players, meta, seed=seed)


def give_tile(state: ThurnUndTaxisState, player: int, stack: str) -> None:
    """Seat ``player`` takes the top tile of ``stack`` (for setting up holdings)."""
    s = B.STACK_ID[stack]
    v = int(B.STACK_VALUES[s, state.meta[S.M_STACK_TAKEN + s]])
    state.meta[S.M_STACK_TAKEN + s] += 1
    state.players[player, S.P_STACK_COUNT + s] += 1
    state.players[player, S.P_STACK_POINTS + s] += v
    state.players[player, S.P_TILE_POINTS] += v


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
    per_city = c[S.L_SUPPLY:S.L_ROUTE + n].sum(axis=0)
    assert (per_city == 3).all(), per_city
    assert int(c[S.L_SUPPLY:S.L_ROUTE + n].sum()) == 66
    assert (c[S.L_KNOWN:S.L_KNOWN + n] <= c[S.L_HAND:S.L_HAND + n]).all()
    assert (c[S.L_ROUTE:S.L_ROUTE + n] <= 1).all()
    for p in range(n):
        r = state.route_of(p)
        assert len(set(r)) == len(r)
        assert sorted(B.CITY_ID[x] for x in r) == list(np.flatnonzero(c[S.L_ROUTE + p]))
        for a, b in itertools.pairwise(r):
            assert B.ADJACENT[B.CITY_ID[a], B.CITY_ID[b]]
        assert state.houses_left(p) + len(state.houses_of(p)) == B.HOUSES
        assert state.tile_points(p) == sum(pts for _, pts in state.tiles(p).values())
    assert int(c[S.L_DISPLAY].sum()) <= 6


def close(state: ThurnUndTaxisState, mode: str = "per_province") -> None:
    """Close the route (``close:<mode>``), placing the houses at the first city offered
    whenever there is a choice."""
    state.apply(f"close:{mode}")
    while state.step is S.Step.HOUSE:
        state.apply(int(state.legal_actions()[0]))
