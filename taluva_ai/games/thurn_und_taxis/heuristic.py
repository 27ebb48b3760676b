"""The greedy player's heuristic and compiled rollouts (docs/thurn_und_taxis.md, Players).

:func:`action_values` scores every legal action of the player to move with what that player
knows: its own hand, the display, the routes, the houses and the public counters (never the
supply's make-up or another hand). The greedy player takes the best one. The policy:

1. **Draw**: a display card that extends the route at an end (more for a city without an own
   house, and for one in a bonus group the player is filling); with no route, a card linked by
   roads to many hand cards; otherwise the supply. The administrator only when no display card
   helps.
2. **Postmaster**: only for a display card that extends the route (forced turns: as a draw).
3. **Play**: extend the route, preferring a city without an own house and an end from which
   more hand cards fit next; with nothing that fits, abandon (a short route rather than a long
   one) and restart with the best-linked card.
4. **Postal carrier**: always, when a hand card extends the route.
5. **Close** when the route reaches the next carriage (counting the cartwright when no
   official is spent), when no hand card fits it any more, or in the final round; otherwise
   pass. The mode with the most houses and region-tile points wins.
6. **Houses**: in the bonus group closest to completion. **Cartwright**: always, unless the
   7 would end the game with the player behind. **Discards**: the cards with the fewest road
   links to the rest of the hand, duplicates first.
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games.choice import argmax_random
from taluva_ai.games.compiling import njit
from taluva_ai.games.thurn_und_taxis import actions as A
from taluva_ai.games.thurn_und_taxis import board as B
from taluva_ai.games.thurn_und_taxis import state as S
from taluva_ai.games.thurn_und_taxis.kernels import (
    apply_action,
    apply_chance,
    legal_actions,
    next_carriage,
    returns,
    sample_chance,
    score,
)
from taluva_ai.games.thurn_und_taxis.rules import R_PLAYERS


@njit(cache=True)
def _links(cards, p, c):
    """Distinct hand cities other than ``c``, not in the route, joined to ``c`` by a road."""
    k = 0
    for d in range(B.NUM_CITIES):
        if (d != c and cards[S.L_HAND + p, d] > 0 and cards[S.L_ROUTE + p, d] == 0
                and B.ADJACENT[c, d]):
            k += 1
    return k


@njit(cache=True)
def _fits(cards, route, players, p, c):
    """City ``c`` would extend seat ``p``'s route at an end."""
    n = players[p, S.P_ROUTE_LEN]
    if n == 0 or cards[S.L_ROUTE + p, c] != 0:
        return False
    return B.ADJACENT[route[p, 0], c] or B.ADJACENT[route[p, n - 1], c]


@njit(cache=True)
def _any_fits(cards, route, players, p):
    for c in range(B.NUM_CITIES):
        if cards[S.L_HAND + p, c] > 0 and _fits(cards, route, players, p, c):
            return True
    return False


@njit(cache=True)
def _group_progress(houses, p, c):
    """Own houses in the bonus group of city ``c`` (0 for lodz)."""
    g = B.PROVINCE_GROUP[B.CITY_PROVINCE[c]]
    if g < 0:
        return 0
    k = 0
    for d in range(B.NUM_CITIES):
        if B.GROUP_CITIES[g, d] and houses[p, d] != 0:
            k += 1
    return k


@njit(cache=True)
def _city_value(houses, p, c):
    """Worth of a route through ``c`` for houses: a new city, more in a group being filled."""
    if houses[p, c] != 0:
        return 0.0
    return 5.0 + 2.0 * _group_progress(houses, p, c)


@njit(cache=True)
def _take_value(cards, route, houses, players, p, c):
    if players[p, S.P_ROUTE_LEN] > 0 and _fits(cards, route, players, p, c):
        if cards[S.L_HAND + p, c] == 0:
            return 30.0 + _city_value(houses, p, c)
        return 20.0
    if players[p, S.P_ROUTE_LEN] == 0:
        return 10.0 + 3.0 * _links(cards, p, c)
    return 5.0 + 2.0 * _links(cards, p, c) - 3.0 * cards[S.L_HAND + p, c]


@njit(cache=True)
def _extend_value(cards, route, houses, players, p, edge):
    """An extension: a new city for houses, and an end from which more hand cards fit."""
    c = B.EDGE_NEW[edge]
    e = B.EDGE_END[edge]
    n = players[p, S.P_ROUTE_LEN]
    other = route[p, n - 1] if route[p, 0] == e else route[p, 0]
    nxt = 0
    for d in range(B.NUM_CITIES):
        if d != c and cards[S.L_HAND + p, d] > 0 and cards[S.L_ROUTE + p, d] == 0:
            if B.ADJACENT[c, d] or B.ADJACENT[other, d]:
                nxt += 1
    return 100.0 + 2.0 * _city_value(houses, p, c) + 5.0 * nxt


@njit(cache=True)
def _close_value(cards, houses, players, meta, p, province):
    """Houses a close places (``province`` -1: per_province) and the region-tile points they
    complete, as ``3 x houses + 4 x points``."""
    k = 0
    gain = np.zeros(B.NUM_CITIES, dtype=np.int8)
    for q in range(B.NUM_PROVINCES):
        if province >= 0 and q != province:
            continue
        for c in range(B.NUM_CITIES):
            if B.CITY_PROVINCE[c] == q and cards[S.L_ROUTE + p, c] != 0 and houses[p, c] == 0:
                if province >= 0:
                    gain[c] = 1
                    k += 1
                else:  # per_province: the city in the group closest to completion
                    best = c
                    for c2 in range(c + 1, B.NUM_CITIES):
                        if B.CITY_PROVINCE[c2] == q and cards[S.L_ROUTE + p, c2] != 0 and \
                                houses[p, c2] == 0 and \
                                _group_progress(houses, p, c2) > _group_progress(houses, p, best):
                            best = c2
                    gain[best] = 1
                    k += 1
                    break
    left = min(k, players[p, S.P_HOUSES_LEFT])
    points = 0
    for s in range(B.GROUP_CITIES.shape[0]):
        if B.GROUP_SIZE[s] == 0 or players[p, S.P_STACK_COUNT + s] > 0:
            continue
        if meta[S.M_STACK_TAKEN + s] >= B.STACK_SIZE[s]:
            continue
        full = True
        for c in range(B.NUM_CITIES):
            if B.GROUP_CITIES[s, c] and houses[p, c] == 0 and gain[c] == 0:
                full = False
                break
        if full:
            points += B.STACK_VALUES[s, meta[S.M_STACK_TAKEN + s]]
    return 3.0 * left + 4.0 * points


@njit(cache=True)
def action_values(cards, route, houses, players, meta, rules, ids, vals):
    """Write the legal actions of the player to move into ``ids`` and their heuristic values
    into ``vals`` (both of length >= 327); return their number. Higher is better."""
    n = legal_actions(cards, route, houses, players, meta, rules, ids)
    p = meta[S.M_PLAYER]
    step = meta[S.M_STEP]
    length = players[p, S.P_ROUTE_LEN]
    best_take = 0.0
    for j in range(n):
        a = ids[j]
        if a < A.A_TAKE_SUPPLY:
            v = _take_value(cards, route, houses, players, p, a - A.A_TAKE)
            if v > best_take:
                best_take = v
    for j in range(n):
        a = ids[j]
        v = 0.0
        if a < A.A_TAKE_SUPPLY:
            v = _take_value(cards, route, houses, players, p, a - A.A_TAKE)
        elif a == A.A_TAKE_SUPPLY:
            v = 12.0
        elif a == A.A_ADMINISTRATOR:
            v = 11.0 if best_take < 12.0 else 0.0
        elif a < A.A_POSTMASTER_SUPPLY:
            c = a - A.A_POSTMASTER
            if meta[S.M_FORCED] == 1:
                v = _take_value(cards, route, houses, players, p, c)
            elif length > 0 and _fits(cards, route, players, p, c):
                v = 120.0 + _city_value(houses, p, c)
            else:
                v = -10.0
        elif a == A.A_POSTMASTER_SUPPLY:
            v = 12.0 if meta[S.M_FORCED] == 1 else -10.0
        elif a < A.A_ABANDON:
            c = a - A.A_START
            v = 50.0 + 5.0 * _links(cards, p, c) + _city_value(houses, p, c)
        elif a < A.A_EXTEND:
            c = a - A.A_ABANDON
            v = 5.0 * _links(cards, p, c) + _city_value(houses, p, c) - 3.0 * length
        elif a < A.A_CARRIER:
            v = _extend_value(cards, route, houses, players, p, a - A.A_EXTEND)
        elif a < A.A_PASS:
            v = 100.0 + _extend_value(cards, route, houses, players, p, a - A.A_CARRIER)
        elif a == A.A_PASS:
            if step == S.S_AFTER_PLAY:
                v = 50.0
            else:  # declining the cartwright
                v = 0.0
                if next_carriage(players, p) == 7:
                    gain = B.CARRIAGE_POINTS[7] - B.CARRIAGE_POINTS[players[p, S.P_CARRIAGE]]
                    mine = score(players, p) + gain
                    for q in range(rules[R_PLAYERS]):
                        if q != p and score(players, q) > mine:
                            v = 2.0  # the 7 would end the game with the player behind
        elif a < A.A_HOUSE:
            province = -1 if a == A.A_CLOSE_PER else a - A.A_CLOSE_ONE
            nextv = next_carriage(players, p)
            target = 3 if nextv == 0 else nextv
            if meta[S.M_OFFICIAL] == B.OF_NONE:
                target -= 2
            if target < 3:
                target = 3
            urgent = (length >= target or meta[S.M_END_BY] >= 0
                      or not _any_fits(cards, route, players, p))
            v = (100.0 if urgent else 10.0) + _close_value(cards, houses, players, meta, p,
                                                           province)
        elif a < A.A_CARTWRIGHT:
            c = a - A.A_HOUSE
            v = 10.0 + _group_progress(houses, p, c)
        elif a == A.A_CARTWRIGHT:
            v = 1.0
        else:
            c = a - A.A_DISCARD
            v = 10.0 - 2.0 * _links(cards, p, c) + 3.0 * (cards[S.L_HAND + p, c] - 1)
        vals[j] = v
    return n


@njit(cache=True)
def greedy_choice(cards, route, houses, players, meta, rules, ids, vals):
    """The greedy player's action: the best heuristic value, ties broken uniformly at random
    (numba's stream)."""
    n = action_values(cards, route, houses, players, meta, rules, ids, vals)
    return argmax_random(ids, vals, n)


@njit(cache=True)
def _play_to_end(cards, route, houses, players, meta, rules, greedy_seats, ids, vals):
    """Play to the end: seat ``p`` greedy where ``greedy_seats[p]``, else uniformly random;
    chance from the supply's make-up (numba's stream as it stands)."""
    while meta[S.M_STEP] != S.S_TERMINAL:
        if meta[S.M_STEP] == S.S_CHANCE:
            apply_chance(cards, route, houses, players, meta, rules, sample_chance(cards))
            continue
        if greedy_seats[meta[S.M_PLAYER]]:
            a = greedy_choice(cards, route, houses, players, meta, rules, ids, vals)
        else:
            n = legal_actions(cards, route, houses, players, meta, rules, ids)
            a = ids[np.random.randint(n)]
        apply_action(cards, route, houses, players, meta, rules, a)


@njit(cache=True)
def rollout(cards, route, houses, players, meta, rules, greedy, seed, out):
    """Play the game to the end (random or greedy actions, chance from the supply's make-up;
    numba's stream seeded with ``seed``) and write ``returns`` into ``out``."""
    np.random.seed(seed)
    ids = np.empty(A.NUM_ACTIONS, dtype=np.int64)
    vals = np.empty(A.NUM_ACTIONS, dtype=np.float64)
    seats = np.full(players.shape[0], greedy, dtype=np.bool_)
    _play_to_end(cards, route, houses, players, meta, rules, seats, ids, vals)
    returns(players, meta, rules, out)


@njit(cache=True)
def play_greedy_vs(cards, route, houses, players, meta, rules, greedy_seats, seed):
    """Play to the end: seats with ``greedy_seats[p]`` play greedy, the others uniformly at
    random (for measurements). Returns nothing; the arrays hold the final state."""
    np.random.seed(seed)
    ids = np.empty(A.NUM_ACTIONS, dtype=np.int64)
    vals = np.empty(A.NUM_ACTIONS, dtype=np.float64)
    _play_to_end(cards, route, houses, players, meta, rules, greedy_seats, ids, vals)


__all__ = ["action_values", "greedy_choice", "play_greedy_vs", "rollout"]
