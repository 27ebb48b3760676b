"""One scenario per numbered clarification of THURN-UND-TAXIS.md §10, through the public API."""

from __future__ import annotations

import pytest

from taluva_ai import make_game
from taluva_ai.errors import IllegalActionError, WrongStepError
from taluva_ai.games.thurn_und_taxis import EndReason, Step
from taluva_ai.protocol import CHANCE
from tests.tnt_helpers import (
    check_invariants,
    close,
    counts,
    give_tile,
    legal_strings,
    play,
    scenario,
)

ROUTE6 = ["sigmaringen", "stuttgart", "nuernberg", "regensburg", "ingolstadt", "augsburg"]


def test_clar01_no_card_fits_so_the_route_is_abandoned_and_no_close_follows() -> None:
    s = scenario(routes={0: ["carlsruhe", "stuttgart", "nuernberg"]},
                 hands={0: ["innsbruck", "lodz"]})
    assert legal_strings(s) == ["abandon:innsbruck", "abandon:lodz"]
    s.apply("abandon:innsbruck")
    assert s.route_of(0) == ["innsbruck"]
    assert s.observation(0)["discard"].tolist() == counts(
        ["carlsruhe", "stuttgart", "nuernberg"]).tolist()
    assert s.step is Step.AFTER_PLAY
    assert legal_strings(s) == ["pass"]  # no close with a 1-card route
    check_invariants(s)


def test_clar02_a_route_may_be_abandoned_when_a_card_fits() -> None:
    s = scenario(routes={0: ["carlsruhe", "stuttgart"]}, hands={0: ["nuernberg"]})
    assert legal_strings(s) == ["abandon:nuernberg", "extend:nuernberg@stuttgart"]
    s.apply("abandon:nuernberg")
    assert s.route_of(0) == ["nuernberg"]


def test_clar03_postal_carrier_extends_a_new_route_to_2_cards_and_never_abandons() -> None:
    s = scenario(hands={0: ["ulm", "stuttgart", "lodz"]})
    s.apply("start:ulm")
    assert legal_strings(s) == ["carrier:stuttgart@ulm", "pass"]
    with pytest.raises(WrongStepError):
        s.apply("abandon:lodz")
    s.apply("carrier:stuttgart@ulm")
    assert s.route_of(0) == ["ulm", "stuttgart"]
    # a 2-card route cannot close and the official is spent: the turn is over
    assert s.step is Step.DRAW and s.current_player == 1


@pytest.mark.parametrize(("hand", "kept"), [(["lodz", "linz"], 2), (["lodz"] * 3, 3)])
def test_clar04_a_close_keeps_a_hand_of_3_or_fewer(hand: list[str], kept: int) -> None:
    s = scenario(routes={0: ["carlsruhe", "stuttgart"]}, hands={0: ["nuernberg", *hand]})
    play(s, "extend:nuernberg@stuttgart", "close:per_province")
    assert sum(s.hand(0).values()) == kept and s.current_player == 1


def test_clar04_a_close_cuts_a_bigger_hand_to_exactly_3_of_the_players_choice() -> None:
    hand = ["lodz", "linz", "passau", "zuerich", "basel"]
    s = scenario(routes={0: ["carlsruhe", "stuttgart"]}, hands={0: ["nuernberg", *hand]})
    play(s, "extend:nuernberg@stuttgart", "close:per_province")
    assert s.step is Step.DISCARD
    assert s.route_of(0) == []  # the route went to the discard pile first
    s.apply("discard:lodz")
    # picks go in city order: zuerich comes after lodz, basel before it
    assert legal_strings(s) == ["discard:passau", "discard:zuerich"]
    s.apply("discard:zuerich")
    assert s.hand(0) == {"basel": 1, "linz": 1, "passau": 1}
    assert s.current_player == 1  # no voluntary discard below 3


def test_clar05_the_postmaster_is_forced_on_every_first_turn() -> None:
    s = make_game("thurn_und_taxis").new_initial_state(seed=3)
    for _ in range(6):
        assert s.current_player == CHANCE
        s.draw()
    assert s.step is Step.DRAW and s.official == "postmaster"
    assert "administrator" not in legal_strings(s)
    first = next(a for a in legal_strings(s) if a.startswith("take:") and a != "take:supply")
    s.apply(first)
    s.draw()  # the display refill
    assert s.step is Step.DRAW2
    assert all(a.startswith("postmaster:") for a in legal_strings(s))
    s.apply("postmaster:supply")
    s.draw()
    assert s.step is Step.PLAY and sum(s.hand(0).values()) == 2
    city = next(iter(s.hand(0)))
    s.apply(f"start:{city}")
    assert s.current_player == 1  # no postal carrier: the turn ended
    assert s.step is Step.DRAW and s.official == "postmaster"  # seat 1's first turn, forced


def test_clar05_an_empty_hand_forces_the_postmaster_and_bars_the_cartwright() -> None:
    s = scenario(step="draw", routes={0: ["carlsruhe", "stuttgart"]}, hands={0: []},
                 display=["nuernberg", "lodz"], carriage={0: 4}, forced=True,
                 official="postmaster")
    assert legal_strings(s) == ["take:lodz", "take:nuernberg", "take:supply"]
    play(s, "take:nuernberg", "deal:linz", "postmaster:lodz", "deal:basel",
         "extend:nuernberg@stuttgart")
    assert legal_strings(s) == ["pass", "close:per_province", "close:baiern", "close:baden",
                                "close:wuerttemberg"]
    s.apply("close:per_province")
    # next carriage 5 needs 5 cards, or 3 with the cartwright, which this turn cannot use
    assert s.carriage(0) == 4 and s.current_player == 1


def test_clar06_the_administrator_refill_reshuffles_the_6_discarded_cards() -> None:
    display = ["augsburg", "basel", "budweis", "carlsruhe", "freiburg", "ingolstadt"]
    # the supply holds 2 cards; everything else is in hands
    rest = [c for c, k in zip(*_all_cards(), strict=True) for _ in range(k)]
    for c in [*display, "lodz", "linz"]:
        rest.remove(c)
    s = scenario(step="draw", hands={0: rest[:30], 1: rest[30:]}, display=display,
                 supply=["lodz", "linz"])
    s.apply("administrator")
    play(s, "deal:lodz", "deal:linz")  # the supply is empty: the 6 come back shuffled
    assert s.observation(0)["reshuffles"] == 1
    assert s.observation(0)["supply_size"] == 6 and s.current_player == CHANCE
    for _ in range(4):
        s.draw()
    obs = s.observation(0)
    assert obs["supply_size"] == 2 and int(obs["display"].sum()) == 6
    assert int(obs["discard"].sum()) == 0
    assert "administrator" not in legal_strings(s) and s.step is Step.DRAW
    check_invariants(s)


def _all_cards() -> tuple[list[str], list[int]]:
    from taluva_ai.games.thurn_und_taxis.board import CITIES

    return list(CITIES), [3] * len(CITIES)


def test_clar07_the_postmaster_may_take_the_card_that_refilled_the_display() -> None:
    s = scenario(step="draw", hands={0: ["ulm"]}, display=["kempten"])
    play(s, "take:kempten", "deal:zuerich")
    assert "postmaster:zuerich" in legal_strings(s)
    s.apply("postmaster:zuerich")
    assert s.hand(0) == {"kempten": 1, "ulm": 1, "zuerich": 1}
    assert s.official == "postmaster"


@pytest.mark.parametrize(("held", "route", "after"), [
    (6, ["carlsruhe", "stuttgart", "nuernberg", "regensburg", "passau"], 7),
    (3, ["carlsruhe", "stuttgart", "nuernberg"], 4),
])
def test_clar08_the_cartwright_takes_the_next_carriage_2_cards_short(
    held: int, route: list[str], after: int
) -> None:
    s = scenario(step="after_play", routes={0: route}, carriage={0: held})
    close(s)
    assert s.step is Step.CARRIAGE and legal_strings(s) == ["pass", "cartwright"]
    s.apply("cartwright")
    assert s.carriage(0) == after and s.current_player == 1
    route_tiles = {k: v for k, v in s.tiles(0).items() if k.startswith("route_")}
    assert route_tiles == ({"route_5": (1, 2)} if len(route) == 5 else {})


def test_clar08_holding_5_a_3_card_route_takes_nothing_even_with_the_cartwright_free() -> None:
    s = scenario(step="after_play", routes={0: ["carlsruhe", "stuttgart", "nuernberg"]},
                 carriage={0: 5})
    s.apply("close:per_province")
    assert s.carriage(0) == 5 and s.current_player == 1  # no CARRIAGE step


def test_clar08_the_cartwright_never_skips_a_value() -> None:
    route = ["carlsruhe", "stuttgart", "nuernberg", "regensburg", "passau"]
    s = scenario(step="after_play", routes={0: route}, carriage={0: 3})
    close(s)
    assert s.carriage(0) == 4 and s.current_player == 1  # the 4, with no cartwright step


def test_clar09_closes_of_3_5_4_cards_without_cartwright_give_3_4_nothing() -> None:
    s = scenario(step="after_play", routes={0: ["carlsruhe", "stuttgart", "nuernberg"]},
                 official="postal_carrier")
    s.apply("close:per_province")
    assert s.carriage(0) == 3
    for route, want in ((["lodz", "pilsen", "budweis", "linz", "salzburg"], 4),
                        (["basel", "zuerich", "kempten", "ulm"], 4)):
        s = scenario(step="after_play", routes={0: route}, carriage={0: s.carriage(0)})
        close(s)
        if s.step is Step.CARRIAGE:
            s.apply("pass")  # declines the cartwright
        assert s.carriage(0) == want


def test_clar10_a_9_card_route_takes_route_7_then_falls_back_to_route_5() -> None:
    route9 = ["freiburg", "carlsruhe", "mannheim", "stuttgart", "nuernberg", "regensburg",
              "passau", "linz", "budweis"]
    s = scenario(step="after_play", routes={0: route9}, official="postal_carrier")
    close(s)
    assert s.tiles(0)["route_7"] == (1, 4)
    s = scenario(step="after_play", routes={0: route9}, official="postal_carrier",
                 stacks_taken={"route_7": 4, "route_6": 3})
    close(s)
    assert s.tiles(0)["route_5"] == (1, 2) and "route_7" not in s.tiles(0)
    s = scenario(step="after_play", routes={0: route9}, official="postal_carrier",
                 stacks_taken={"route_7": 4, "route_6": 3, "route_5": 2})
    close(s)
    assert not any(k.startswith("route_") for k in s.tiles(0))


def test_clar11_an_empty_region_stack_and_a_held_group_give_nothing() -> None:
    baden = ["freiburg", "carlsruhe", "mannheim"]
    s = scenario(step="after_play", routes={0: baden}, stacks_taken={"baden": 3},
                 official="postal_carrier")
    s.apply("close:baden")
    assert s.houses_of(0) == ["carlsruhe", "freiburg", "mannheim"]
    assert "baden" not in s.tiles(0)
    s = scenario(step="after_play", routes={0: ["basel", "zuerich", "kempten"]},
                 houses={0: baden}, official="postal_carrier")
    give_tile(s, 0, "baden")
    s.apply("close:schweiz")
    assert s.tiles(0)["baden"] == (1, 3) and s.stack_left("baden") == [2, 1]


def test_clar12_per_province_and_one_province_on_the_rulebook_route() -> None:
    s = scenario(step="after_play", routes={0: ROUTE6}, official="postal_carrier")
    assert legal_strings(s) == ["pass", "close:per_province", "close:baiern",
                                "close:wuerttemberg", "close:hohenzollern"]
    s.apply("close:per_province")
    assert s.step is Step.HOUSE
    assert legal_strings(s) == ["house:augsburg", "house:ingolstadt", "house:nuernberg",
                                "house:regensburg"]
    s.apply("house:regensburg")
    assert s.houses_of(0) == ["regensburg", "sigmaringen", "stuttgart"]
    for province, want in (("baiern", ["augsburg", "ingolstadt", "nuernberg", "regensburg"]),
                           ("wuerttemberg", ["stuttgart"]), ("hohenzollern", ["sigmaringen"])):
        s = scenario(step="after_play", routes={0: ROUTE6}, official="postal_carrier")
        s.apply(f"close:{province}")
        assert s.houses_of(0) == want


def test_clar13_stuttgart_held_then_sigmaringen_and_ulm_take_the_group_tile() -> None:
    s = scenario(step="after_play", routes={0: ["sigmaringen", "ulm", "kempten"]},
                 houses={0: ["stuttgart"]}, official="postal_carrier")
    s.apply("close:per_province")
    assert s.houses_of(0) == ["kempten", "sigmaringen", "stuttgart", "ulm"]
    assert s.tiles(0)["wuerttemberg_hohenzollern"] == (1, 3)


def test_clar14_a_close_placing_no_house_still_earns_carriage_and_route_tile() -> None:
    route = ["carlsruhe", "stuttgart", "nuernberg", "regensburg", "passau"]
    s = scenario(step="after_play", routes={0: route}, houses={0: route},
                 official="postal_carrier")
    s.apply("close:per_province")
    assert s.houses_left(0) == 15 and s.carriage(0) == 3
    assert s.tiles(0) == {"route_5": (1, 2)}


def _others(*skip: str) -> list[str]:
    from taluva_ai.games.thurn_und_taxis.board import CITIES

    return [c for c in CITIES if c not in skip]


def test_clar15_the_last_house_triggers_the_end_and_completes_no_region_by_itself() -> None:
    baden = ["freiburg", "carlsruhe", "mannheim"]
    s = scenario(step="after_play", routes={0: baden}, houses={0: _others(*baden)[:19]},
                 official="postal_carrier")
    assert s.houses_left(0) == 1
    s.apply("close:baden")  # 3 eligible cities, 1 house: the player picks
    assert legal_strings(s) == ["house:carlsruhe", "house:freiburg", "house:mannheim"]
    s.apply("house:mannheim")
    assert s.houses_left(0) == 0 and "baden" not in s.tiles(0)
    assert s.end_triggered_by == 0 and s.end_reason is EndReason.LAST_HOUSE
    assert s.tiles(0)["game_end"] == (1, 1)
    assert s.tiles(0)["all_provinces"] == (1, 6)  # every province now has a house
    # the round is finished: seat 1 moves, then the game ends
    assert s.current_player == 1 and not s.is_terminal()


def test_clar15_a_region_completed_by_the_houses_placed_scores() -> None:
    baden = ["freiburg", "carlsruhe", "mannheim"]
    others = _others(*baden)[:17]
    s = scenario(step="after_play", routes={0: ["basel", "freiburg", "carlsruhe"]},
                 houses={0: [*others, "freiburg", "mannheim"]}, official="postal_carrier")
    s.apply("close:baden")
    assert s.houses_left(0) == 0 and s.tiles(0)["baden"] == (1, 3)


def test_clar16_the_game_end_tile_goes_to_the_first_trigger_only() -> None:
    s = scenario(player=1, step="after_play", end_by=0,
                 routes={1: ["carlsruhe", "stuttgart", "nuernberg", "regensburg", "passau"]},
                 carriage={1: 6}, official="none")
    give_tile(s, 0, "game_end")
    close(s)
    s.apply("cartwright")  # the 7, in the final round
    assert s.carriage(1) == 7 and "game_end" not in s.tiles(1)
    assert s.end_triggered_by == 0 and s.is_terminal()  # seat 1 = n-1 finished the round
    assert s.returns().tolist() == ([1.0, -1.0] if s.scores()[0] >= s.scores()[1]
                                    else [-1.0, 1.0])


def test_clar17_the_reshuffle_takes_the_whole_discard_pile() -> None:
    route = ["carlsruhe", "stuttgart", "nuernberg"]
    hand = ["lodz", "linz", "passau", "zuerich", "basel"]
    rest = [c for c, k in zip(*_all_cards(), strict=True) for _ in range(k)]
    for c in route + hand + ["kempten", "kempten", "ulm"]:
        rest.remove(c)
    s = scenario(step="after_play", routes={0: route}, hands={0: hand, 1: rest},
                 discard=["kempten", "kempten"], supply=["ulm"], official="postal_carrier")
    play(s, "close:per_province", "discard:basel", "discard:lodz")
    expected = counts(["kempten", "kempten", *route, "basel", "lodz"])
    assert s.observation(0)["discard"].tolist() == expected.tolist()
    play(s, "take:supply", "deal:ulm")  # seat 1 takes the last supply card
    assert s.cards[0].tolist() == expected.tolist()  # the supply is the whole pile
    assert s.observation(0)["reshuffles"] == 1 and int(s.observation(0)["discard"].sum()) == 0


def test_clar17_with_an_empty_discard_pile_the_reshuffle_waits_for_the_next_need() -> None:
    rest = [c for c, k in zip(*_all_cards(), strict=True) for _ in range(k)]
    for c in ["ulm", "carlsruhe", "stuttgart", "nuernberg"]:
        rest.remove(c)
    s = scenario(player=1, step="draw", routes={0: ["carlsruhe", "stuttgart", "nuernberg"]},
                 hands={1: rest}, supply=["ulm"])
    play(s, "take:supply", "deal:ulm")
    assert s.observation(0)["supply_size"] == 0 and s.observation(0)["reshuffles"] == 0
    assert "postmaster:supply" not in legal_strings(s)  # supply and discard both empty


def test_clar18_a_route_never_holds_two_cards_of_one_city() -> None:
    s = scenario(routes={0: ["stuttgart", "ulm"]}, hands={0: ["stuttgart", "stuttgart"]})
    assert legal_strings(s) == ["abandon:stuttgart"]
    with pytest.raises(IllegalActionError, match="clarification 18"):
        s.apply("extend:stuttgart@ulm")


def test_clar19_carriage_copies_never_run_out() -> None:
    for p in range(4):
        s = scenario(4, player=p, step="after_play",
                     routes={p: ["carlsruhe", "stuttgart", "nuernberg"]},
                     carriage={q: 3 for q in range(4) if q != p}, official="postal_carrier")
        s.apply("close:per_province")
        assert [s.carriage(q) for q in range(4)] == [3, 3, 3, 3]
