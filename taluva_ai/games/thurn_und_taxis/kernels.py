"""The rules of Thurn und Taxis (THURN-UND-TAXIS.md) as Numba-compiled kernels over the arrays
of :mod:`state`: the legal actions, applying an action or a chance outcome, scoring, and
whole random games. The object API, the players, search and the benchmark all call these.

Every kernel takes the five state arrays ``cards, route, houses, players, meta`` (modified in
place by the ``apply`` kernels) and the ``int32`` rules vector of :class:`rules.TnTRules`.
The ``apply`` kernels trust their input: the object API checks legality first.

Turn structure (§3), as steps of ``meta[M_STEP]``: ``DRAW`` (take a card, or the
administrator; skipped, with the official still free, when no card is available at all) →
chance → ``DRAW2`` (the postmaster's second draw; unless forced, a play ends
it) → chance → ``PLAY`` → ``AFTER_PLAY`` (the postal carrier's card, a close or pass) →
``HOUSE`` picks → ``CARRIAGE`` (the cartwright) → ``DISCARD`` picks. A step with one legal
action whose choice depends on public information only is taken automatically (a forced house
or discard pick, the end of a turn whose official is spent and whose route is too short to
close); a step whose options depend on the hand always waits for the player, so the action
sequence reveals nothing of the hand.
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games import compiling
from taluva_ai.games.compiling import njit
from taluva_ai.games.game_kernels import random_legal, winner_returns
from taluva_ai.games.thurn_und_taxis import actions as A
from taluva_ai.games.thurn_und_taxis import board as B
from taluva_ai.games.thurn_und_taxis import state as S
from taluva_ai.games.thurn_und_taxis.rules import (
    R_EXCLUDE_BAIERN,
    R_MAX_ROUNDS,
    R_PLAYERS,
    R_ROUTE_TILE_FALLBACK,
)

compiling.install()  # a first compile says so (taluva_ai.games.compiling)

#: The decorator of every kernel here that allocates nothing (all but :func:`random_playout`):
#: compiled without Numba's reference counting (NRT). The kernels pass the five state arrays
#: down to one another; with NRT each call increments and decrements the reference count of
#: every array argument (atomic operations through function pointers), which cost about 30% of
#: a random game. Such a kernel must not create arrays (no ``np.empty``, no slices that
#: escape); callers with NRT may call it as usual.
kernel = njit(cache=True, _nrt=False)
#: :data:`kernel` for the small helpers that are inlined into their callers (Numba IR).
kernel_inline = njit(cache=True, inline="always", _nrt=False)

#: Modes of a close (``meta[M_MODE]``).
MODE_PER_PROVINCE = 0
MODE_ONE_PROVINCE = 1

# ---------------------------------------------------------------------------------------------
# Small queries
# ---------------------------------------------------------------------------------------------


@kernel_inline
def row_total(cards, row):
    """Cards in row ``row`` of ``cards``."""
    s = 0
    for c in range(B.NUM_CITIES):
        s += cards[row, c]
    return s


@kernel_inline
def card_available(cards):
    """A card can come from the supply (directly or after a reshuffle of the discard pile)."""
    for c in range(B.NUM_CITIES):
        if cards[S.L_SUPPLY, c] > 0 or cards[S.L_DISCARD, c] > 0:
            return True
    return False


@kernel_inline
def next_carriage(players, p):
    """The next carriage value seat ``p`` can take (3..7), or 0 when it holds the 7 (§6)."""
    v = players[p, S.P_CARRIAGE]
    if v == 0:
        return 3
    if v >= 7:
        return 0
    return v + 1


@kernel
def score(players, p):
    """Points of seat ``p`` (§7): highest carriage + bonus tiles - houses not placed."""
    return (B.CARRIAGE_POINTS[players[p, S.P_CARRIAGE]] + players[p, S.P_TILE_POINTS]
            - players[p, S.P_HOUSES_LEFT])


@kernel
def _route_end(route, players, p, right):
    n = players[p, S.P_ROUTE_LEN]
    if n == 0:
        return -1
    return route[p, n - 1] if right else route[p, 0]


# ---------------------------------------------------------------------------------------------
# Legal actions
# ---------------------------------------------------------------------------------------------


@kernel_inline
def _list_extends(cards, route, players, p, base, out, n):
    """Append ``base + edge`` for every hand card that extends the route at an end (§3.2: the
    card's city is adjacent to that end's city and not in the route), ascending.

    The lists here are built without a branch per candidate (each candidate is written at
    ``out[n]`` and ``n`` grows by the condition): a random position makes such branches
    unpredictable, and their mispredictions were most of the cost of a legal list."""
    length = players[p, S.P_ROUTE_LEN]
    if length == 0:
        return n
    e1 = route[p, 0]
    e2 = route[p, length - 1]
    lo = e1 if e1 < e2 else e2
    hi = e2 if e1 < e2 else e1
    hand = S.L_HAND + p
    rrow = S.L_ROUTE + p
    for k in range(2):
        e = lo if k == 0 else hi
        if k == 1 and hi == lo:
            break
        for j in range(B.DEGREE[e]):  # edge ids of one end ascend with the new city
            c = B.NEIGHBOURS[e, j]
            out[n] = base + B.EDGE_ID[e, c]
            n += (cards[hand, c] > 0) & (cards[rrow, c] == 0)
    return n


@kernel_inline
def _list_cities(cards, row, base, out, n):
    """Append ``base + c`` for every city ``c`` with a card in row ``row``, ascending."""
    for c in range(B.NUM_CITIES):
        out[n] = base + c
        n += cards[row, c] > 0
    return n


@kernel_inline
def _list_plays(cards, route, players, p, out, n):
    """The play actions (§3.2): start (no route) or abandon-and-start, and the extensions."""
    if players[p, S.P_ROUTE_LEN] == 0:
        return _list_cities(cards, S.L_HAND + p, A.A_START, out, n)
    n = _list_cities(cards, S.L_HAND + p, A.A_ABANDON, out, n)
    return _list_extends(cards, route, players, p, A.A_EXTEND, out, n)


@kernel
def _house_legal(cards, houses, meta, p, c):
    """City ``c`` may take the next house of the close in progress (§4). Picks follow a
    canonical order (provinces ascending in per_province, cities ascending in one_province)
    so that every set of houses is reached by one sequence of picks only; a pick must leave
    enough eligible places for the houses still to place."""
    if cards[S.L_ROUTE + p, c] == 0 or houses[p, c] != 0:
        return False
    todo = meta[S.M_TODO]
    last = meta[S.M_LAST]
    prov = B.CITY_PROVINCE[c]
    if meta[S.M_MODE] == MODE_ONE_PROVINCE:
        if prov != meta[S.M_MODE_PROVINCE] or c <= last:
            return False
        after = 0
        for c2 in range(c + 1, B.NUM_CITIES):
            if cards[S.L_ROUTE + p, c2] != 0 and houses[p, c2] == 0 and \
                    B.CITY_PROVINCE[c2] == prov:
                after += 1
        return after >= todo - 1
    if prov <= last:
        return False
    after = 0
    for q in range(prov + 1, B.NUM_PROVINCES):
        for c2 in range(B.NUM_CITIES):
            if B.CITY_PROVINCE[c2] == q and cards[S.L_ROUTE + p, c2] != 0 and houses[p, c2] == 0:
                after += 1
                break
    return after >= todo - 1


@kernel
def _discard_legal(cards, meta, p, c):
    """Hand card ``c`` may be the next surplus discard: picks go in non-decreasing city order
    (one sequence per multiset of discards) and must leave enough cards for the rest."""
    if cards[S.L_HAND + p, c] == 0 or c < meta[S.M_LAST]:
        return False
    left = 0
    for c2 in range(c, B.NUM_CITIES):
        left += cards[S.L_HAND + p, c2]
    return left >= meta[S.M_TODO]


@kernel
def legal_actions(cards, route, houses, players, meta, rules, out):
    """Write the legal action ids of the player to move into ``out`` (``int64[>= 327]``),
    ascending; return their number (0 at a chance node or at the end)."""
    step = meta[S.M_STEP]
    p = meta[S.M_PLAYER]
    n = 0
    if step == S.S_DRAW:
        n = _list_cities(cards, S.L_DISPLAY, A.A_TAKE, out, n)
        if card_available(cards):
            out[n] = A.A_TAKE_SUPPLY
            n += 1
        if meta[S.M_OFFICIAL] == B.OF_NONE and card_available(cards):
            # with the supply and the discard pile empty the administrator would deal the
            # same display cards back: a no-op that spends the turn's official, not offered
            out[n] = A.A_ADMINISTRATOR
            n += 1
    elif step == S.S_DRAW2:
        n = _list_cities(cards, S.L_DISPLAY, A.A_POSTMASTER, out, n)
        if card_available(cards):
            out[n] = A.A_POSTMASTER_SUPPLY
            n += 1
        if meta[S.M_FORCED] == 0:
            n = _list_plays(cards, route, players, p, out, n)
    elif step == S.S_PLAY:
        n = _list_plays(cards, route, players, p, out, n)
    elif step == S.S_AFTER_PLAY:
        if meta[S.M_OFFICIAL] == B.OF_NONE:
            n = _list_extends(cards, route, players, p, A.A_CARRIER, out, n)
        out[n] = A.A_PASS
        n += 1
        length = players[p, S.P_ROUTE_LEN]
        if length >= 3:
            out[n] = A.A_CLOSE_PER
            n += 1
            touched = 0
            for i in range(length):
                touched |= 1 << B.CITY_PROVINCE[route[p, i]]
            for q in range(B.NUM_PROVINCES):
                if touched & (1 << q):
                    out[n] = A.A_CLOSE_ONE + q
                    n += 1
    elif step == S.S_HOUSE:
        for c in range(B.NUM_CITIES):
            if _house_legal(cards, houses, meta, p, c):
                out[n] = A.A_HOUSE + c
                n += 1
    elif step == S.S_CARRIAGE:
        out[n] = A.A_PASS
        out[n + 1] = A.A_CARTWRIGHT
        n += 2
    elif step == S.S_DISCARD:  # as _discard_legal, with one pass over the hand
        hand = S.L_HAND + p
        last = meta[S.M_LAST]
        todo = meta[S.M_TODO]
        left = row_total(cards, hand)  # cards of cities c.. in the hand
        for c in range(B.NUM_CITIES):
            k = cards[hand, c]
            out[n] = A.A_DISCARD + c
            n += (k > 0) & (c >= last) & (left >= todo)
            left -= k
    return n


@kernel
def legal_mask(cards, route, houses, players, meta, rules, mask, buf):
    """Fill ``mask`` (``bool[327]``) with the legal mask; ``buf``: ``int64[>= 327]`` scratch.
    Returns the number of legal actions."""
    n = legal_actions(cards, route, houses, players, meta, rules, buf)
    mask[:] = False
    for j in range(n):
        mask[buf[j]] = True
    return n


# ---------------------------------------------------------------------------------------------
# Chance: the supply
# ---------------------------------------------------------------------------------------------


@kernel_inline
def _reshuffle_if_empty(cards, meta):
    """§3 Deck: when the supply is empty, the whole discard pile becomes the new supply (its
    order is left to the chance nodes that deal from it). Returns the supply's size."""
    n = row_total(cards, S.L_SUPPLY)
    if n == 0:
        n = row_total(cards, S.L_DISCARD)
        if n > 0:
            for c in range(B.NUM_CITIES):
                cards[S.L_SUPPLY, c] = cards[S.L_DISCARD, c]
                cards[S.L_DISCARD, c] = 0
            meta[S.M_RESHUFFLES] += 1
    return n


@kernel
def _begin_chance(cards, meta, to, count, resume):
    """Deal ``count`` cards from the supply (to the mover's hand or the display), one chance
    node each, then continue with ``resume``; with no card left anywhere, continue at once."""
    meta[S.M_CHANCE_TO] = to
    meta[S.M_CHANCE_LEFT] = count
    meta[S.M_RESUME] = resume
    if count > 0 and _reshuffle_if_empty(cards, meta) > 0:
        meta[S.M_STEP] = S.S_CHANCE
    else:
        meta[S.M_CHANCE_LEFT] = 0
        meta[S.M_STEP] = T_RESUME


@kernel
def apply_chance(cards, route, houses, players, meta, rules, city):
    """Resolve the chance node: a card of ``city`` leaves the supply (its count must be > 0)."""
    cards[S.L_SUPPLY, city] -= 1
    if meta[S.M_CHANCE_TO] == S.TO_HAND:
        cards[S.L_HAND + meta[S.M_PLAYER], city] += 1
    else:
        cards[S.L_DISPLAY, city] += 1
    meta[S.M_CHANCE_LEFT] -= 1
    meta[S.M_PLY] += 1
    left = _reshuffle_if_empty(cards, meta)  # as soon as the last card is taken
    if meta[S.M_CHANCE_LEFT] > 0 and left > 0:
        return
    meta[S.M_CHANCE_LEFT] = 0
    meta[S.M_STEP] = T_RESUME
    _run(cards, route, houses, players, meta, rules)


@kernel
def sample_chance(cards):
    """A city drawn from the supply, uniformly among its cards (numba's random stream)."""
    total = row_total(cards, S.L_SUPPLY)
    r = np.random.randint(total)
    for c in range(B.NUM_CITIES):
        r -= cards[S.L_SUPPLY, c]
        if r < 0:
            return c
    return -1


# ---------------------------------------------------------------------------------------------
# The turn: transient phases, run in a loop until a decision, a chance node or the end
# ---------------------------------------------------------------------------------------------

T_RESUME = 20  # after a chance: meta[M_RESUME] says where to go
T_START_TURN = 21  # the turn of meta[M_PLAYER] begins
T_ENTER_DRAW = 22
T_AFTER_DRAW1 = 23
T_ENTER_PLAY = 24
T_AFTER_PLAY = 25
T_SETTLE_HOUSES = 26
T_AFTER_HOUSES = 27
T_FINISH_CLOSE = 28
T_SETTLE_DISCARDS = 29
T_END_TURN = 30


@kernel
def _run(cards, route, houses, players, meta, rules):
    """Advance through transient phases until the state waits for a decision, a chance
    outcome, or is over (one loop, no recursion: the turn's flow of §3)."""
    while True:
        s = meta[S.M_STEP]
        p = meta[S.M_PLAYER]
        if s == T_RESUME:
            code = meta[S.M_RESUME]
            if code == S.RS_START:
                meta[S.M_PLAYER] = 0
                meta[S.M_STEP] = T_START_TURN
            elif code == S.RS_DRAW1:
                meta[S.M_STEP] = T_AFTER_DRAW1
            elif code == S.RS_DRAW2:
                meta[S.M_STEP] = T_ENTER_PLAY
            else:  # RS_ADMIN
                meta[S.M_STEP] = T_ENTER_DRAW
        elif s == T_START_TURN:
            meta[S.M_OFFICIAL] = B.OF_NONE
            meta[S.M_DRAWS] = 0
            meta[S.M_PLAYS] = 0
            meta[S.M_FORCED] = 0
            if row_total(cards, S.L_HAND + p) == 0:  # the postmaster is forced (clar. 5)
                meta[S.M_FORCED] = 1
                meta[S.M_OFFICIAL] = B.OF_POSTMASTER
            meta[S.M_STEP] = T_ENTER_DRAW
        elif s == T_ENTER_DRAW:
            if row_total(cards, S.L_DISPLAY) > 0 or card_available(cards):
                meta[S.M_STEP] = S.S_DRAW
            else:  # no card available at all: the draw is skipped, the official stays free
                meta[S.M_STEP] = T_AFTER_DRAW1
        elif s == T_AFTER_DRAW1:
            if (meta[S.M_FORCED] == 1 or meta[S.M_OFFICIAL] == B.OF_NONE) and (
                    row_total(cards, S.L_DISPLAY) > 0 or card_available(cards)):
                meta[S.M_STEP] = S.S_DRAW2
            else:
                meta[S.M_STEP] = T_ENTER_PLAY
        elif s == T_ENTER_PLAY:
            if row_total(cards, S.L_HAND + p) == 0:  # nothing to play: no play, no close
                meta[S.M_STEP] = T_END_TURN
            else:
                meta[S.M_STEP] = S.S_PLAY
        elif s == T_AFTER_PLAY:
            if meta[S.M_OFFICIAL] != B.OF_NONE and players[p, S.P_ROUTE_LEN] < 3:
                meta[S.M_STEP] = T_END_TURN  # nothing left to decide
            else:
                meta[S.M_STEP] = S.S_AFTER_PLAY
        elif s == T_SETTLE_HOUSES:
            _settle(cards, houses, players, meta, False)
        elif s == T_AFTER_HOUSES:
            _after_houses(cards, houses, players, meta, rules)
        elif s == T_FINISH_CLOSE:
            _discard_route(cards, route, players, p)
            surplus = row_total(cards, S.L_HAND + p) - B.HAND_KEEP
            if surplus > 0:
                meta[S.M_TODO] = surplus
                meta[S.M_LAST] = 0
                meta[S.M_STEP] = T_SETTLE_DISCARDS
            else:
                meta[S.M_STEP] = T_END_TURN
        elif s == T_SETTLE_DISCARDS:
            _settle(cards, houses, players, meta, True)
        elif s == T_END_TURN:
            _end_turn(players, meta, rules)
        else:
            return


@kernel_inline
def _leave_hand(cards, p, c):
    """A card leaves seat ``p``'s hand (§9: the known multiset loses it if it holds it)."""
    cards[S.L_HAND + p, c] -= 1
    if cards[S.L_KNOWN + p, c] > 0:
        cards[S.L_KNOWN + p, c] -= 1


@kernel
def _discard_route(cards, route, players, p):
    for c in range(B.NUM_CITIES):
        if cards[S.L_ROUTE + p, c] != 0:
            cards[S.L_ROUTE + p, c] = 0
            cards[S.L_DISCARD, c] += 1
        route[p, c] = -1
    players[p, S.P_ROUTE_LEN] = 0


@kernel
def _extend(cards, route, players, p, edge):
    e = B.EDGE_END[edge]
    c = B.EDGE_NEW[edge]
    n = players[p, S.P_ROUTE_LEN]
    _leave_hand(cards, p, c)
    cards[S.L_ROUTE + p, c] = 1
    if route[p, n - 1] == e:  # the right end (also the only end of a 1-card route)
        route[p, n] = c
    else:
        for i in range(n, 0, -1):
            route[p, i] = route[p, i - 1]
        route[p, 0] = c
    players[p, S.P_ROUTE_LEN] = n + 1


@kernel
def _play(cards, route, players, meta, a):
    p = meta[S.M_PLAYER]
    if a < A.A_EXTEND:  # start, or abandon the route (unscored) and start a new one
        if a < A.A_ABANDON:
            c = a - A.A_START
        else:
            c = a - A.A_ABANDON
            _discard_route(cards, route, players, p)
        _leave_hand(cards, p, c)
        cards[S.L_ROUTE + p, c] = 1
        route[p, 0] = c
        players[p, S.P_ROUTE_LEN] = 1
    else:
        _extend(cards, route, players, p, a - A.A_EXTEND)
    meta[S.M_PLAYS] = 1
    meta[S.M_STEP] = T_AFTER_PLAY


@kernel
def _take_tile(players, meta, p, s):
    """Seat ``p`` takes the top tile of stack ``s`` (which must not be empty)."""
    v = B.STACK_VALUES[s, meta[S.M_STACK_TAKEN + s]]
    meta[S.M_STACK_TAKEN + s] += 1
    players[p, S.P_STACK_COUNT + s] += 1
    players[p, S.P_STACK_POINTS + s] += v
    players[p, S.P_TILE_POINTS] += v


@kernel
def _trigger_end(players, meta, p, reason):
    """§7: the first trigger takes the game_end tile; later ones change nothing (clar. 16)."""
    if meta[S.M_END_BY] < 0:
        meta[S.M_END_BY] = p
        meta[S.M_END] = reason
        _take_tile(players, meta, p, np.int64(B.ST_GAME_END))


@kernel
def _close(cards, houses, players, meta, a):
    """Start a close (§3.3): the mode, then the houses (§4)."""
    p = meta[S.M_PLAYER]
    allowed = 0
    if a == A.A_CLOSE_PER:
        meta[S.M_MODE] = MODE_PER_PROVINCE
        meta[S.M_MODE_PROVINCE] = -1
        for q in range(B.NUM_PROVINCES):
            for c in range(B.NUM_CITIES):
                if B.CITY_PROVINCE[c] == q and cards[S.L_ROUTE + p, c] != 0 and houses[p, c] == 0:
                    allowed += 1
                    break
    else:
        q = a - A.A_CLOSE_ONE
        meta[S.M_MODE] = MODE_ONE_PROVINCE
        meta[S.M_MODE_PROVINCE] = q
        for c in range(B.NUM_CITIES):
            if B.CITY_PROVINCE[c] == q and cards[S.L_ROUTE + p, c] != 0 and houses[p, c] == 0:
                allowed += 1
    left = players[p, S.P_HOUSES_LEFT]
    meta[S.M_TODO] = allowed if allowed < left else left
    meta[S.M_LAST] = -1
    meta[S.M_STEP] = T_SETTLE_HOUSES


@kernel
def _place_house(houses, players, meta, c):
    p = meta[S.M_PLAYER]
    houses[p, c] = 1
    players[p, S.P_HOUSES_LEFT] -= 1
    meta[S.M_TODO] -= 1
    meta[S.M_LAST] = c if meta[S.M_MODE] == MODE_ONE_PROVINCE else B.CITY_PROVINCE[c]
    if players[p, S.P_HOUSES_LEFT] == 0:
        _trigger_end(players, meta, p, np.int64(S.END_LAST_HOUSE))


@kernel
def _after_houses(cards, houses, players, meta, rules):
    """Close steps 2 and 3: bonus tiles (§5), then the carriage (§6)."""
    p = meta[S.M_PLAYER]
    length = players[p, S.P_ROUTE_LEN]
    # route tile: 7+ -> route_7, 6 -> route_6, 5 -> route_5; fallback to shorter stacks
    first = -1
    if length >= 7:
        first = B.ST_ROUTE_7
    elif length == 6:
        first = B.ST_ROUTE_6
    elif length == 5:
        first = B.ST_ROUTE_5
    if first >= 0:
        last = B.ST_ROUTE_5 if rules[R_ROUTE_TILE_FALLBACK] else first
        for s in range(first, last + 1):
            if meta[S.M_STACK_TAKEN + s] < B.STACK_SIZE[s]:
                _take_tile(players, meta, p, np.int64(s))
                break
    # region tiles: at most one per group; an empty stack gives nothing
    for i in range(B.REGION_STACKS.shape[0]):
        s = B.REGION_STACKS[i]
        if players[p, S.P_STACK_COUNT + s] > 0 or meta[S.M_STACK_TAKEN + s] >= B.STACK_SIZE[s]:
            continue
        full = True
        for c in range(B.NUM_CITIES):
            if B.GROUP_CITIES[s, c] and houses[p, c] == 0:
                full = False
                break
        if full:
            _take_tile(players, meta, p, np.int64(s))
    s = B.ST_ALL_PROVINCES
    if players[p, S.P_STACK_COUNT + s] == 0 and meta[S.M_STACK_TAKEN + s] < B.STACK_SIZE[s]:
        every = True
        for q in range(B.NUM_PROVINCES):
            if q == B.BAIERN and rules[R_EXCLUDE_BAIERN]:
                continue
            has = False
            for c in range(B.NUM_CITIES):
                if B.CITY_PROVINCE[c] == q and houses[p, c] != 0:
                    has = True
                    break
            if not has:
                every = False
                break
        if every:
            _take_tile(players, meta, p, np.int64(s))
    # carriage: the next value, never skipping one (§6)
    meta[S.M_STEP] = T_FINISH_CLOSE
    v = next_carriage(players, p)
    if v > 0:
        if length >= v:
            _take_carriage(players, meta, p, v)
        elif length >= v - 2 and meta[S.M_OFFICIAL] == B.OF_NONE:
            meta[S.M_STEP] = S.S_CARRIAGE


@kernel
def _take_carriage(players, meta, p, v):
    players[p, S.P_CARRIAGE] = v
    if v == 7:
        _trigger_end(players, meta, p, np.int64(S.END_CARRIAGE_7))


@kernel
def _discard_card(cards, meta, c):
    p = meta[S.M_PLAYER]
    _leave_hand(cards, p, c)
    cards[S.L_DISCARD, c] += 1
    meta[S.M_TODO] -= 1
    meta[S.M_LAST] = c


@kernel
def _settle(cards, houses, players, meta, discards):
    """Make the forced picks of a close in progress: its houses (§4), or with ``discards`` its
    surplus discards; stop at a choice (``HOUSE`` or ``DISCARD`` step) or go on with the close
    (its bonus tiles after the houses, the end of the turn after the discards).

    Raises:
        RuntimeError: picks are due and none is legal.
    """
    p = meta[S.M_PLAYER]
    while meta[S.M_TODO] > 0:
        only = -1
        count = 0
        for c in range(B.NUM_CITIES):
            if (_discard_legal(cards, meta, p, c) if discards
                    else _house_legal(cards, houses, meta, p, c)):
                count += 1
                only = c
                if count > 1:
                    break
        if count > 1:
            meta[S.M_STEP] = S.S_DISCARD if discards else S.S_HOUSE
            return
        if count == 0:
            if discards:
                raise RuntimeError("no card can be discarded, yet discards are due")
            raise RuntimeError("no house can be placed, yet houses are due")
        if discards:
            _discard_card(cards, meta, only)
        else:
            _place_house(houses, players, meta, only)
    meta[S.M_STEP] = T_END_TURN if discards else T_AFTER_HOUSES


@kernel
def _end_turn(players, meta, rules):
    """§7: after the trigger, the round is finished (seat n-1 moves last); ``max_rounds``
    rounds without a trigger end the game too (truncated)."""
    n = rules[R_PLAYERS]
    p = meta[S.M_PLAYER]
    meta[S.M_TURN] += 1
    meta[S.M_TODO] = 0
    meta[S.M_LAST] = -1
    if p == n - 1:
        meta[S.M_ROUND] += 1
        if meta[S.M_END_BY] >= 0:
            _finish_game(players, meta, rules)
            return
        if meta[S.M_ROUND] >= rules[R_MAX_ROUNDS]:
            meta[S.M_END] = S.END_TRUNCATED
            _finish_game(players, meta, rules)
            return
    meta[S.M_PLAYER] = (p + 1) % n
    meta[S.M_STEP] = T_START_TURN


@kernel
def _beats(players, meta, n, a, b):
    """Seat ``a`` ranks above seat ``b`` (§7): more points; on a tie, the game_end holder,
    then the first tied seat clockwise after the holder. No holder: a tie is shared."""
    sa = score(players, a)
    sb = score(players, b)
    if sa != sb:
        return sa > sb
    h = meta[S.M_END_BY]
    if h < 0:
        return False
    return (a - h) % n < (b - h) % n


@kernel
def _finish_game(players, meta, rules):
    n = rules[R_PLAYERS]
    meta[S.M_STEP] = S.S_TERMINAL
    for a in range(n):
        place = 0
        for b in range(n):
            if b != a and _beats(players, meta, n, b, a):
                place += 1
        players[a, S.P_PLACE] = place


# ---------------------------------------------------------------------------------------------
# Apply
# ---------------------------------------------------------------------------------------------


@kernel_inline
def _draw(cards, meta, p, c, resume):
    """A draw of seat ``p`` (§3.1): display card ``c`` into its hand (the display is refilled
    at once, a chance node), or with ``c < 0`` the top supply card (dealt by a chance node);
    then ``resume``."""
    if c >= 0:
        cards[S.L_DISPLAY, c] -= 1
        cards[S.L_HAND + p, c] += 1
        cards[S.L_KNOWN + p, c] += 1
    meta[S.M_DRAWS] += 1
    _begin_chance(cards, meta, np.int64(S.TO_DISPLAY if c >= 0 else S.TO_HAND), np.int64(1),
                  resume)


@kernel
def apply_action(cards, route, houses, players, meta, rules, a):
    """Apply legal action ``a`` of the player to move (unchecked), then advance to the next
    decision, chance node or the end."""
    step = meta[S.M_STEP]
    p = meta[S.M_PLAYER]
    meta[S.M_PLY] += 1
    if a <= A.A_TAKE_SUPPLY:  # the first draw
        _draw(cards, meta, p, a - A.A_TAKE if a < A.A_TAKE_SUPPLY else -1, np.int64(S.RS_DRAW1))
    elif a == A.A_ADMINISTRATOR:
        meta[S.M_OFFICIAL] = B.OF_ADMINISTRATOR
        for c in range(B.NUM_CITIES):
            cards[S.L_DISCARD, c] += cards[S.L_DISPLAY, c]
            cards[S.L_DISPLAY, c] = 0
        _begin_chance(cards, meta, np.int64(S.TO_DISPLAY), np.int64(B.DISPLAY_SIZE),
                      np.int64(S.RS_ADMIN))
    elif a <= A.A_POSTMASTER_SUPPLY:  # the postmaster's second draw
        meta[S.M_OFFICIAL] = B.OF_POSTMASTER
        _draw(cards, meta, p, a - A.A_POSTMASTER if a < A.A_POSTMASTER_SUPPLY else -1,
              np.int64(S.RS_DRAW2))
    elif a < A.A_CARRIER:
        _play(cards, route, players, meta, a)
    elif a < A.A_PASS:
        meta[S.M_OFFICIAL] = B.OF_POSTAL_CARRIER
        _extend(cards, route, players, p, a - A.A_CARRIER)
        meta[S.M_PLAYS] = 2
        meta[S.M_STEP] = T_AFTER_PLAY
    elif a == A.A_PASS:
        meta[S.M_STEP] = T_FINISH_CLOSE if step == S.S_CARRIAGE else T_END_TURN
    elif a < A.A_HOUSE:
        _close(cards, houses, players, meta, a)
    elif a < A.A_CARTWRIGHT:
        _place_house(houses, players, meta, a - A.A_HOUSE)
        meta[S.M_STEP] = T_SETTLE_HOUSES
    elif a == A.A_CARTWRIGHT:
        meta[S.M_OFFICIAL] = B.OF_CARTWRIGHT
        _take_carriage(players, meta, p, next_carriage(players, p))
        meta[S.M_STEP] = T_FINISH_CLOSE
    else:
        _discard_card(cards, meta, a - A.A_DISCARD)
        meta[S.M_STEP] = T_SETTLE_DISCARDS
    _run(cards, route, houses, players, meta, rules)


@kernel
def returns(players, meta, rules, out):
    """Final value per seat: the winner +1, the others -1/(n-1); a shared win (a truncated
    game's tie) splits so the values sum to 0. Zeros before the end."""
    n = rules[R_PLAYERS]
    for q in range(n):
        out[q] = 0.0
    if meta[S.M_STEP] != S.S_TERMINAL:
        return
    winner_returns(players, S.P_PLACE, n, out)


# ---------------------------------------------------------------------------------------------
# Whole games
# ---------------------------------------------------------------------------------------------


@njit(cache=True)
def random_playout(cards, route, houses, players, meta, rules, mask, seed):
    """Play the game to the end with uniformly random legal actions and chance outcomes drawn
    from the supply (numba's stream seeded with ``seed``), filling the dense legal mask
    (``bool[327]``, clean on entry and on exit) at every decision.

    Returns:
        Number of decisions taken.
    """
    np.random.seed(seed)
    buf = np.empty(A.NUM_ACTIONS, dtype=np.int64)
    decisions = 0
    while meta[S.M_STEP] != S.S_TERMINAL:
        if meta[S.M_STEP] == S.S_CHANCE:
            apply_chance(cards, route, houses, players, meta, rules, sample_chance(cards))
            continue
        n = legal_actions(cards, route, houses, players, meta, rules, buf)
        a = random_legal(buf, n, mask)
        apply_action(cards, route, houses, players, meta, rules, a)
        decisions += 1
    return decisions
