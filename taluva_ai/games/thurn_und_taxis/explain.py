"""The rule an illegal action breaks, in THURN-UND-TAXIS.md's words (for error messages)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from taluva_ai.games.thurn_und_taxis import actions as A
from taluva_ai.games.thurn_und_taxis import board as B
from taluva_ai.games.thurn_und_taxis import state as S

if TYPE_CHECKING:
    from taluva_ai.games.thurn_und_taxis.game import ThurnUndTaxisState


def _official_rule(state: ThurnUndTaxisState) -> str:
    if state.meta[S.M_FORCED]:
        return ("the postmaster is forced this turn (empty hand at its start), so no other "
                "official may be used (clarification 5)")
    return f"at most one official per turn, and the {state.official} was used this turn"


def _extend_rule(state: ThurnUndTaxisState, edge: int) -> str:
    p = int(state.meta[S.M_PLAYER])
    end, new = int(B.EDGE_END[edge]), int(B.EDGE_NEW[edge])
    route = state.route_of(p)
    if not route:
        return "there is no route to extend (start one: start:<city>)"
    if state.cards[S.L_HAND + p, new] == 0:
        return f"no {B.CITIES[new]} card in hand"
    if state.cards[S.L_ROUTE + p, new]:
        return (f"{B.CITIES[new]} is already in the route; a route never holds two cards of one "
                "city (clarification 18)")
    if B.CITIES[end] not in (route[0], route[-1]):
        return (f"{B.CITIES[end]} is not an end of the route {'-'.join(route)}: a card goes at "
                "either end, never inserted (§3.2)")
    return "not a legal extension here"


def explain(state: ThurnUndTaxisState, a: int) -> str:
    """Why action id ``a`` is illegal in ``state`` (its kind belongs to the step)."""
    p = int(state.meta[S.M_PLAYER])
    step = state.step
    hand = state.cards[S.L_HAND + p]
    if a <= A.A_TAKE_SUPPLY or A.A_POSTMASTER <= a <= A.A_POSTMASTER_SUPPLY:
        supply = a in (A.A_TAKE_SUPPLY, A.A_POSTMASTER_SUPPLY)
        if supply:
            return ("the supply and the discard pile are both empty, so drawing from the "
                    "supply is not a legal choice (§3 Deck)")
        c = a - (A.A_TAKE if a < A.A_TAKE_SUPPLY else A.A_POSTMASTER)
        if state.cards[S.L_DISPLAY, c] == 0:
            return f"no {B.CITIES[c]} card in the display"
    if a == A.A_ADMINISTRATOR:
        if state.meta[S.M_OFFICIAL] == B.OF_NONE:
            return ("the supply and the discard pile are both empty, so the administrator "
                    "would deal the same display cards back: a no-op that spends the turn's "
                    "official, not offered (docs/thurn_und_taxis.md, Officials)")
        return _official_rule(state)
    if A.A_START <= a < A.A_CARRIER:
        if step == S.Step.DRAW2 and state.meta[S.M_FORCED]:
            return ("the postmaster's second draw is forced this turn (empty hand at its start, "
                    "clarification 5); play after it")
        if a < A.A_ABANDON:
            c = a - A.A_START
            if state.players[p, S.P_ROUTE_LEN] > 0:
                return ("the player has a route: a card extends it, or abandon:<city> discards "
                        "it and starts a new one (§3.2)")
            return f"no {B.CITIES[c]} card in hand"
        if a < A.A_EXTEND:
            c = a - A.A_ABANDON
            if state.players[p, S.P_ROUTE_LEN] == 0:
                return "there is no route to abandon (start one: start:<city>)"
            return f"no {B.CITIES[c]} card in hand"
        return _extend_rule(state, a - A.A_EXTEND)
    if A.A_CARRIER <= a < A.A_PASS:
        if state.meta[S.M_OFFICIAL] != B.OF_NONE:
            return _official_rule(state)
        return _extend_rule(state, a - A.A_CARRIER)
    if A.A_CLOSE_PER <= a < A.A_HOUSE:
        n = int(state.players[p, S.P_ROUTE_LEN])
        if n < 3:
            return f"a route closes with 3 or more cards; this one has {n} (§3.3)"
        q = a - A.A_CLOSE_ONE
        return f"the route touches no city of {B.PROVINCES[q]} (one_province, §4)"
    if A.A_HOUSE <= a < A.A_CARTWRIGHT:
        c = a - A.A_HOUSE
        if not state.cards[S.L_ROUTE + p, c]:
            return f"{B.CITIES[c]} is not in the route being closed (§4)"
        if state.houses[p, c]:
            return f"the player already has a house in {B.CITIES[c]} (§4)"
        last = int(state.meta[S.M_LAST])
        if state.meta[S.M_MODE] == 1:
            if B.CITY_PROVINCE[c] != state.meta[S.M_MODE_PROVINCE]:
                province = B.PROVINCES[int(state.meta[S.M_MODE_PROVINCE])]
                return (f"{B.CITIES[c]} is not in {province}, "
                        "the province of this one_province close (§4)")
            if c <= last:
                return (f"one_province houses are picked in city-id order (each set of cities "
                        f"once); the next pick comes after {B.CITIES[last]}")
            return ("too few eligible cities would remain after it for the houses still due "
                    "(every house the close allows is placed while the supply lasts, §4)")
        if last >= 0 and B.CITY_PROVINCE[c] <= last:
            return (f"per_province houses are picked in province order, one per province; the "
                    f"next pick lies in a province after {B.PROVINCES[last]}")
        return ("too few provinces would remain after it for the houses still due (every "
                "house the close allows is placed while the supply lasts, §4)")
    if a >= A.A_DISCARD:
        c = a - A.A_DISCARD
        if hand[c] == 0:
            return f"no {B.CITIES[c]} card in hand"
        last = int(state.meta[S.M_LAST])
        return (f"surplus discards are picked in city-id order (each multiset once); the next "
                f"discard is {B.CITIES[last]} or a later city")
    return "not legal here"
