"""Every option of THURN-UND-TAXIS.md §8, the turn order, the end and the scoring (§7)."""

from __future__ import annotations

import numpy as np
import pytest

from taluva_ai import make_game
from taluva_ai.games.thurn_und_taxis import EndReason, TnTRuleError, TnTRules
from taluva_ai.games.thurn_und_taxis.board import CARRIAGE_POINTS, CITIES
from tests.helpers import random_step
from tests.tnt_helpers import check_invariants, close, give_tile, scenario

ROUTE9 = ["freiburg", "carlsruhe", "mannheim", "stuttgart", "nuernberg", "regensburg",
          "passau", "linz", "budweis"]


def test_defaults_and_bad_options() -> None:
    g = make_game("thurn_und_taxis")
    assert g.options() == {"num_players": 2, "all_provinces_rule": "all",
                           "route_tile_fallback": True, "max_rounds": 200}
    assert make_game("thurn_und_taxis", **g.options()).options() == g.options()
    for bad, match in (({"num_players": 5}, "num_players"), ({"num_players": True}, "integer"),
                       ({"all_provinces_rule": "some"}, "all_provinces_rule"),
                       ({"route_tile_fallback": 1}, "True or False"),
                       ({"max_rounds": 0}, "max_rounds")):
        with pytest.raises(TnTRuleError, match=match):
            TnTRules(**bad)
    with pytest.raises(TnTRuleError) as e:
        make_game("thurn_und_taxis", tile_preview=True, zz=1)
    assert str(e.value) == ("unknown rule option(s): tile_preview, zz; known: num_players, "
                            "all_provinces_rule, route_tile_fallback, max_rounds")


@pytest.mark.parametrize("n", [2, 3, 4])
def test_seats_move_in_order_and_the_first_turns_are_forced(n: int) -> None:
    s = make_game("thurn_und_taxis", num_players=n).new_initial_state(seed=5)
    rng = np.random.default_rng(5)
    movers = []
    while s.round == 0:
        if s.current_player < 0:
            s.draw()
            continue
        if s.step.name == "DRAW":
            movers.append(s.current_player)
            assert s.official == "postmaster"  # every first turn
        legal = s.legal_actions()
        s.apply(int(legal[rng.integers(legal.size)]))
    assert movers == list(range(n))


def _all_but_baiern() -> list[str]:
    from taluva_ai.games.thurn_und_taxis.board import CITY_PROVINCE

    return [c for i, c in enumerate(CITIES) if CITY_PROVINCE[i] != 0]


@pytest.mark.parametrize(("rule", "gets"), [("all", False), ("exclude_baiern", True)])
def test_all_provinces_rule(rule: str, gets: bool) -> None:
    houses = [c for c in _all_but_baiern() if c not in ("freiburg",)]
    s = scenario(step="after_play", routes={0: ["basel", "freiburg", "carlsruhe"]},
                 houses={0: houses}, official="postal_carrier", all_provinces_rule=rule)
    close(s, "baden")
    assert ("all_provinces" in s.tiles(0)) is gets
    if gets:
        assert s.tiles(0)["all_provinces"] == (1, 6)
    # with Baiern too, the rulebook rule gives it
    s = scenario(step="after_play", routes={0: ["basel", "freiburg", "carlsruhe"]},
                 houses={0: [*houses, "augsburg"]}, official="postal_carrier",
                 all_provinces_rule=rule)
    close(s, "baden")
    assert s.tiles(0)["all_provinces"] == (1, 6)


def test_route_tile_fallback_off_gives_nothing_for_an_empty_stack() -> None:
    s = scenario(step="after_play", routes={0: ROUTE9}, official="postal_carrier",
                 stacks_taken={"route_7": 4}, route_tile_fallback=False)
    close(s)
    assert not any(k.startswith("route_") for k in s.tiles(0))
    s = scenario(step="after_play", routes={0: ROUTE9}, official="postal_carrier",
                 stacks_taken={"route_7": 4})
    close(s)
    assert s.tiles(0)["route_6"] == (1, 3)


def test_max_rounds_truncates_scores_and_shares_a_tie() -> None:
    game = make_game("thurn_und_taxis", max_rounds=1)
    s = game.new_initial_state(seed=2)
    rng = np.random.default_rng(0)
    while not s.is_terminal():
        random_step(s, rng)
    assert s.truncated and s.end_reason is EndReason.TRUNCATED and s.round == 1
    assert s.end_triggered_by == -1
    assert s.scores() == [-20, -20]  # one card played each: no close, no tile
    assert s.winners() == [0, 1] and s.returns().tolist() == [0.0, 0.0]


def test_the_round_is_finished_after_the_trigger() -> None:
    route = ["carlsruhe", "stuttgart", "nuernberg", "regensburg", "passau", "linz", "budweis"]
    s = scenario(3, player=0, step="after_play", routes={0: route}, carriage={0: 6},
                 hands={1: ["lodz"], 2: ["lodz"]}, official="postal_carrier")
    close(s)
    assert s.carriage(0) == 7 and s.end_reason is EndReason.CARRIAGE_7
    assert s.end_triggered_by == 0 and s.tiles(0)["game_end"] == (1, 1)
    seen = []
    while not s.is_terminal():
        if s.current_player < 0:
            s.draw()
            continue
        seen.append(s.current_player)
        s.apply(int(s.legal_actions()[0]))
    assert sorted(set(seen)) == [1, 2] and s.round == 1
    check_invariants(s)


def test_the_last_seat_triggering_ends_the_game_at_once() -> None:
    route = ["carlsruhe", "stuttgart", "nuernberg", "regensburg", "passau", "linz", "budweis"]
    s = scenario(2, player=1, step="after_play", routes={1: route}, carriage={1: 6},
                 official="postal_carrier")
    close(s)
    assert s.is_terminal() and s.winners() == [1]


#: 17 cities that complete no bonus group and miss tyrol (so no all_provinces tile).
NO_GROUP = [c for c in CITIES if c not in ("augsburg", "linz", "carlsruhe", "ulm", "innsbruck")]


def test_score_is_carriage_plus_tiles_minus_houses_left() -> None:
    s = scenario(3, player=2, step="after_play", routes={2: ["lodz", "pilsen", "budweis"]},
                 carriage={0: 5, 1: 5, 2: 4}, official="postal_carrier", end_by=1,
                 houses={0: CITIES[:20], 1: CITIES[:18], 2: NO_GROUP})
    give_tile(s, 1, "game_end")  # 1 point
    give_tile(s, 0, "baden")  # 3
    give_tile(s, 2, "route_5")  # 2
    close(s, "polen")  # every route city already holds a house: nothing changes
    assert s.is_terminal()
    for p in range(3):
        want = int(CARRIAGE_POINTS[s.carriage(p)]) + s.tile_points(p) - s.houses_left(p)
        assert s.scores()[p] == want
    assert s.scores() == [5 + 3, 5 + 1 - 2, 3 + 2 - 3]
    assert s.places() == [0, 1, 2] and s.winners() == [0]
    assert s.returns().tolist() == [1.0, -0.5, -0.5]


def test_a_tie_goes_to_the_holder_then_clockwise_after_it() -> None:
    # seat 1 triggered the end; all three seats end on 3 points
    s = scenario(3, player=2, step="after_play", routes={2: ["lodz", "pilsen", "budweis"]},
                 carriage={0: 4, 1: 3, 2: 4}, official="postal_carrier", end_by=1,
                 houses={0: CITIES[:20], 1: CITIES[:20], 2: NO_GROUP})
    give_tile(s, 1, "game_end")
    give_tile(s, 2, "route_6")  # 3 points, less 3 houses left
    close(s, "polen")
    assert s.scores() == [3, 3, 3]
    # the holder first, then seat 2 (first clockwise after seat 1), then seat 0
    assert s.places() == [2, 0, 1] and s.winners() == [1]
