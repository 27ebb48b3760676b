"""Issue 23: the turn when no card is left to draw (THURN-UND-TAXIS.md §3 "Deck and display",
"Officials"), through position strings and the public API.

With the display, the supply and the discard pile all empty, the draw is skipped and the turn
goes on to the play with its official still free; the administrator, which would deal the same
display cards back, is offered only when the supply or the discard pile holds a card
(docs/thurn_und_taxis.md, The turn as steps). The positions are the issue's report and
variations of it; each is entered one decision before the turn concerned (the previous seat
passes), as a draw step with nothing to draw is no longer a position of the game.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from taluva_ai.errors import IllegalActionError, PositionError
from taluva_ai.games.thurn_und_taxis import (
    EndReason,
    Step,
    ThurnUndTaxisGame,
    ThurnUndTaxisState,
)
from taluva_ai.games.thurn_und_taxis import actions as A
from taluva_ai.games.thurn_und_taxis.state import (
    L_DISCARD,
    L_ROUTE,
    L_SUPPLY,
    M_DRAWS,
    P_CARRIAGE,
)
from taluva_ai.protocol import CHANCE
from tests.tnt_helpers import check_invariants, legal_strings, play

#: The issue's report: seat 0 to draw, with the display, the supply and the discard pile empty
#: (2 players, max_rounds 80).
REPORT = ";".join([
    "tnt=1", "players=2", "seed=13001", "ply=261", "step=draw", "player=0", "official=none",
    "forced=0", "chance=display.0.draw2", "close=per_province.baiern.0.-1", "round=23",
    "turn=46", "end=none.-1", "reshuffles=2", "draws=0", "plays=0",
    "stacks=0.0.0.0.0.0.0.0.0.0", "supply=0000000000000000000000",
    "display=0000000000000000000000", "discard=0000000000000000000000",
    "hands=1120100112320310110012/1203122111002001111120",
    "known=1120100112220310110012/1203111110002001101120",
    "routes=ulm-stuttgart-nuernberg-regensburg-pilsen/regensburg-pilsen-budweis-linz-salzburg-"
    "innsbruck-muenchen-ingolstadt-augsburg-kempten-ulm-stuttgart-sigmaringen-freiburg-zuerich",
    "houses=0000000000000000000000/0000000000000000000000", "seats=20.0.-1/20.0.-1",
    "tiles=0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0/0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0",
])
#: Seat 0's plays in the report's position: its route runs ulm ... pilsen; 15 hand cities
#: may restart a route, 5 extend it.
REPORT_PLAYS = [
    "abandon:augsburg", "abandon:basel", "abandon:budweis", "abandon:freiburg",
    "abandon:kempten", "abandon:linz", "abandon:lodz", "abandon:mannheim", "abandon:muenchen",
    "abandon:passau", "abandon:pilsen", "abandon:salzburg", "abandon:sigmaringen",
    "abandon:wuerzburg", "abandon:zuerich", "extend:budweis@pilsen", "extend:lodz@pilsen",
    "extend:augsburg@ulm", "extend:kempten@ulm", "extend:sigmaringen@ulm",
]


def _with(text: str, **fields: object) -> str:
    """``text`` with the given fields replaced."""
    for key, value in fields.items():
        text, n = re.subn(rf"(^|;){key}=[^;]*", rf"\g<1>{key}={value}", text)
        assert n == 1, key
    return text


#: One decision earlier: seat 1 has played (its own draw skipped) and may pass.
BEFORE_REPORT = _with(REPORT, ply=260, step="after_play", player=1, round=22, turn=45, plays=1)


def _load(text: str, num_players: int = 2) -> ThurnUndTaxisState:
    return ThurnUndTaxisGame(num_players=num_players, max_rounds=80).state_from_position(text)


def test_deck_with_no_card_available_the_draw_is_skipped_and_the_official_stays_free() -> None:
    s = _load(BEFORE_REPORT)
    s.apply("pass")
    # the report's position, at the play: no official spent, nothing drawn
    assert s.to_position_string() == _with(REPORT, step="play")
    assert legal_strings(s) == REPORT_PLAYS
    s.apply("extend:budweis@pilsen")
    assert legal_strings(s) == [
        "carrier:linz@budweis", "carrier:augsburg@ulm", "carrier:kempten@ulm",
        "carrier:sigmaringen@ulm", "pass", "close:per_province", "close:baiern",
        "close:wuerttemberg", "close:boehmen",
    ]
    s.apply("carrier:linz@budweis")
    assert s.official == "postal_carrier"
    assert s.route_of(0) == ["ulm", "stuttgart", "nuernberg", "regensburg", "pilsen",
                             "budweis", "linz"]
    check_invariants(s)


def test_deck_a_draw_step_with_no_card_available_is_not_a_position() -> None:
    with pytest.raises(PositionError) as e:
        _load(REPORT)
    assert (e.value.field, e.value.reason) == (
        "step", "draw, but the display, the supply and the discard pile are empty: with no "
        "card available at all the draw is skipped (§3 Deck)")
    with pytest.raises(PositionError) as e:
        _load(_with(REPORT, step="draw2", draws=1))
    assert e.value.field == "step" and e.value.reason.startswith("draw2, but the display")


def test_deck_a_forced_postmaster_turn_with_empty_hand_and_no_card_is_skipped() -> None:
    # seat 0's hand is empty (its cards are in seat 1's): its turn forces the postmaster, but
    # there is nothing to draw and nothing to play, so the turn ends at once; seat 1's turn
    # then skips its draw with its official free
    h0, h1 = re.search(r"hands=(\d+)/(\d+)", REPORT).groups()  # type: ignore[union-attr]
    hand1 = "".join(str(int(a) + int(b)) for a, b in zip(h0, h1, strict=True))
    known1 = REPORT.split("known=")[1].split(";")[0].split("/")[1]
    before = _with(BEFORE_REPORT, hands=f"{'0' * 22}/{hand1}", known=f"{'0' * 22}/{known1}")
    s = _load(before)
    s.apply("pass")
    assert s.to_position_string() == _with(before, ply=261, step="play", round=23, turn=47,
                                           plays=0)
    assert s.hand(0) == {} and s.route_of(0) == ["ulm", "stuttgart", "nuernberg",
                                                 "regensburg", "pilsen"]
    # all 22 cities written out, not board.CITIES: the test's own oracle of the id order
    cities = ["augsburg", "basel", "budweis", "carlsruhe", "freiburg", "ingolstadt",
              "innsbruck", "kempten", "linz", "lodz", "mannheim", "muenchen", "nuernberg",
              "passau", "pilsen", "regensburg", "salzburg", "sigmaringen", "stuttgart", "ulm",
              "wuerzburg", "zuerich"]
    assert legal_strings(s) == [*(f"abandon:{c}" for c in cities), "extend:nuernberg@regensburg",
                                "extend:passau@regensburg", "extend:basel@zuerich"]
    s.apply("extend:nuernberg@regensburg")
    assert legal_strings(s) == [  # the official is free
        "carrier:wuerzburg@nuernberg", "carrier:basel@zuerich", "pass", "close:per_province",
        "close:baiern", "close:baden", "close:wuerttemberg", "close:hohenzollern",
        "close:schweiz", "close:tyrol", "close:boehmen", "close:salzburg",
    ]
    check_invariants(s)


#: 3 players, round 30: seat 0 took the 7 carriage this round (the end is triggered), seat 1
#: used the administrator and took the last card; the display, the supply and the discard pile
#: are empty for seat 2, the last seat of the final round.
FINAL_ROUND = ";".join([
    "tnt=1", "players=3", "seed=0", "ply=1200", "step=after_play", "player=1",
    "official=administrator", "forced=0", "chance=display.6.start",
    "close=per_province.baiern.0.-1", "round=30", "turn=91", "end=carriage_7.0",
    "reshuffles=4", "draws=1", "plays=1", "stacks=0.0.1.0.0.0.0.0.0.1",
    "supply=0000000000000000000000", "display=0000000000000000000000",
    "discard=0000000000000000000000",
    "hands=0000000100000000000101/3222333222332222332232/0100000000000101000000",
    "known=0000000000000000000000/0000000000000000000000/0000000000000000000000",
    "routes=/lodz-pilsen-budweis-linz/carlsruhe-stuttgart-nuernberg",
    "houses=1000101000100010000100/0000000000000000000000/0000000000000000000000",
    "seats=14.7.-1/20.0.-1/20.5.-1",
    "tiles=0:0.0:0.1:2.0:0.0:0.0:0.0:0.0:0.0:0.1:1/0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0/"
    "0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0",
])


def test_deck_empty_in_the_final_round_the_last_seat_plays_with_its_official_free() -> None:
    s = _load(FINAL_ROUND, 3)
    s.apply("pass")
    assert (s.current_player, s.step, s.official) == (2, Step.PLAY, "none")
    assert legal_strings(s) == ["abandon:basel", "abandon:passau", "abandon:regensburg",
                                "extend:regensburg@nuernberg"]
    s.apply("extend:regensburg@nuernberg")
    assert legal_strings(s) == ["carrier:passau@regensburg", "pass", "close:per_province",
                                "close:baiern", "close:baden", "close:wuerttemberg"]
    s.apply("close:per_province")
    assert legal_strings(s) == ["house:nuernberg", "house:regensburg"]
    s.apply("house:nuernberg")
    # holding the 5, a 4-card route takes the 6 with the cartwright, which is still free
    assert s.step is Step.CARRIAGE and legal_strings(s) == ["pass", "cartwright"]
    s.apply("cartwright")
    # seat 2 ends the final round: the game is over
    assert s.is_terminal() and s.end_reason is EndReason.CARRIAGE_7
    assert s.end_triggered_by == 0 and s.carriage(2) == 6
    assert s.houses_of(2) == ["carlsruhe", "nuernberg", "stuttgart"]
    assert s.scores() == [-1, -20, -10] and s.winners() == [0]
    check_invariants(s)


def test_officials_no_administrator_when_the_supply_and_the_discard_pile_are_empty() -> None:
    # as FINAL_ROUND, with two of seat 1's cards in the display: the administrator would move
    # them to the discard pile and deal the same two back (a no-op that spends the official)
    text = _with(FINAL_ROUND, display="0000000000010000000010",
                 hands="0000000100000000000101/3222333222322222332222/0100000000000101000000")
    s = _load(text, 3)
    s.apply("pass")
    assert (s.current_player, s.step, s.official) == (2, Step.DRAW, "none")
    assert legal_strings(s) == ["take:muenchen", "take:wuerzburg"]
    with pytest.raises(IllegalActionError, match="would deal the same display cards back"):
        s.apply("administrator")
    s.apply("take:wuerzburg")  # no refill: nothing is left to deal
    assert s.step is Step.DRAW2 and s.display() == {"muenchen": 1}
    assert legal_strings(s) == ["postmaster:muenchen", "abandon:basel", "abandon:passau",
                                "abandon:regensburg", "abandon:wuerzburg",
                                "extend:regensburg@nuernberg", "extend:wuerzburg@nuernberg"]


#: The report's position one decision earlier, with 18 of seat 0's houses placed (its baden,
#: schweiz_tyrol and all_provinces tiles taken): 2 houses left.
FEW_HOUSES = _with(
    BEFORE_REPORT, stacks="0.0.0.0.0.1.0.1.1.0", houses="1101111101110111111011/" + "0" * 22,
    seats="2.0.-1/20.0.-1",
    tiles="0:0.0:0.0:0.0:0.0:0.1:3.0:0.1:3.1:6.0:0/0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0.0:0")


def test_houses_too_few_for_per_province_the_player_picks_and_the_last_ends_the_game() -> None:
    s = _load(FEW_HOUSES)
    s.apply("pass")
    assert s.step is Step.PLAY and legal_strings(s) == REPORT_PLAYS  # the draw skipped
    play(s, "extend:budweis@pilsen", "carrier:linz@budweis")
    assert legal_strings(s) == ["pass", "close:per_province", "close:baiern",
                                "close:wuerttemberg", "close:boehmen", "close:salzburg"]
    # per_province allows 4 houses (ulm, a free baiern city, budweis, linz), 2 are left:
    # picks in province order, the first leaving a later province for the second
    s.apply("close:per_province")
    assert legal_strings(s) == ["house:budweis", "house:nuernberg", "house:ulm"]
    s.apply("house:nuernberg")
    assert legal_strings(s) == ["house:budweis", "house:linz", "house:ulm"]
    s.apply("house:ulm")
    assert s.houses_left(0) == 0 and s.end_reason is EndReason.LAST_HOUSE
    assert s.end_triggered_by == 0
    assert s.tiles(0) == {"route_7": (1, 4), "baiern": (1, 5), "baden": (1, 3),
                          "wuerttemberg_hohenzollern": (1, 3), "schweiz_tyrol": (1, 3),
                          "all_provinces": (1, 6), "game_end": (1, 1)}
    assert s.carriage(0) == 3 and s.step is Step.DISCARD  # 21 cards in hand: 18 to discard
    while s.step is Step.DISCARD:
        s.apply(int(s.legal_actions()[0]))
    assert sum(s.hand(0).values()) == 3 and s.scores() == [27, -20]
    assert (s.current_player, s.step) == (1, Step.DRAW)  # the final round's last turn
    check_invariants(s)


# -- fuzz: an official is never the only choice, and never a no-op ------------------------------

_OFFICIAL = np.zeros(A.NUM_ACTIONS, dtype=bool)
_OFFICIAL[[A.A_ADMINISTRATOR, A.A_CARTWRIGHT]] = True
_OFFICIAL[A.A_POSTMASTER:A.A_POSTMASTER_SUPPLY + 1] = True
_OFFICIAL[A.A_CARRIER:A.A_PASS] = True


def _hoarding(legal: np.ndarray, rng: np.random.Generator) -> int:
    """A random player that hoards cards (the second draw nearly always, extensions first,
    seldom a close or an abandon), so that the display, the supply and the discard pile run
    empty together in many games."""
    second = legal[(legal >= A.A_POSTMASTER) & (legal <= A.A_POSTMASTER_SUPPLY)]
    if second.size and rng.random() < 0.9:
        return int(rng.choice(second))
    grow = legal[((legal >= A.A_START) & (legal < A.A_ABANDON))
                 | ((legal >= A.A_EXTEND) & (legal < A.A_PASS))]
    if grow.size:
        return int(rng.choice(grow))
    if A.A_PASS in legal and rng.random() < 0.9:
        return A.A_PASS
    return int(rng.choice(legal))


def _locations(s: ThurnUndTaxisState) -> np.ndarray:
    n = s.num_players
    return np.concatenate([s.cards[L_SUPPLY:L_ROUTE + n].ravel(), s.route[:n].ravel(),
                           s.players[:n, P_CARRIAGE]])


def _changes(s: ThurnUndTaxisState, a: int, tries: int = 8) -> bool:
    """Action ``a`` changes the cards, the routes or the carriages for some cards it deals
    (``tries`` deals: at each card from the supply, try ``k`` deals the ``k``-th city with a
    card there, cyclically). An administrator may deal the same display again by chance; one
    with nothing to deal from does so with certainty."""
    before = _locations(s)
    for k in range(tries):
        t = s.clone()
        t.record_history = False
        t.apply_unchecked(a)  # legal: from s.legal_actions()
        while t.current_player == CHANCE:
            cities = np.flatnonzero(t.cards[L_SUPPLY])
            t.apply_unchecked(int(cities[k % cities.size]))
        if not np.array_equal(_locations(t), before):
            return True
    return False


def test_officials_are_never_the_only_choice_nor_a_no_op_along_hoarding_games() -> None:
    """Every decision of 2-, 3- and 4-player games of :func:`_hoarding` players: an unused
    official is never the only legal action; the administrator is offered only with a card
    in the supply or the discard pile; every official offered changes the cards, the routes
    or the carriages (:func:`_changes`). The games reach turns whose draw
    is skipped."""
    skipped = 0
    for num_players, seed in [(2, 1), (3, 1), (4, 0)]:
        s = ThurnUndTaxisGame(num_players=num_players, max_rounds=80).new_initial_state(seed)
        s.record_history = False
        rng = np.random.default_rng(seed)
        while not s.is_terminal():
            if s.current_player == CHANCE:
                s.draw()
                continue
            legal = s.legal_actions()
            assert legal.size > 0, s.to_position_string()
            if s.official == "none":
                assert not _OFFICIAL[legal].all(), s.to_position_string()
            deck = int(s.cards[L_SUPPLY].sum() + s.cards[L_DISCARD].sum())
            if A.A_ADMINISTRATOR in legal:
                assert deck > 0, s.to_position_string()
            for a in legal[_OFFICIAL[legal]]:
                assert _changes(s, int(a)), (s.to_position_string(), int(a))
            if s.step is Step.PLAY and s.meta[M_DRAWS] == 0:
                assert s.cards[L_SUPPLY:L_DISCARD + 1].sum() == 0, s.to_position_string()
                assert s.official == "none", s.to_position_string()
                skipped += 1
            s.apply_unchecked(_hoarding(legal, rng))
    assert skipped >= 10
