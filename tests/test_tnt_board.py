"""Thurn und Taxis components (THURN-UND-TAXIS.md §1 and §11, sanity facts)."""

from __future__ import annotations

import numpy as np
import pytest

from taluva_ai import make_game
from taluva_ai.errors import IllegalActionError, NotationError
from taluva_ai.games.thurn_und_taxis.board import (
    ADJACENT,
    CARRIAGE_COPIES,
    CARRIAGES,
    CITIES,
    CITY_ID,
    CITY_PROVINCE,
    DEGREE,
    GROUP_SIZE,
    HOUSES,
    NUM_CARDS,
    PROVINCES,
    ROADS,
    STACK_ID,
    STACK_SIZE,
    STACK_VALUES,
    TOTAL_TILE_POINTS,
)
from taluva_ai.protocol import known_games
from tests.tnt_helpers import legal_strings, scenario


def test_the_registry_knows_both_games() -> None:
    assert {"taluva", "thurn_und_taxis"} <= set(known_games())
    assert make_game("thurn_und_taxis").name == "thurn_und_taxis"
    assert make_game("taluva").name == "taluva"
    with pytest.raises(KeyError, match=r"unknown game 'chess'; known: .*taluva, thurn_und_taxis"):
        make_game("chess")


def test_graph_has_22_cities_45_roads_degree_sum_90_and_is_connected() -> None:
    assert len(CITIES) == 22 and len(ROADS) == 45
    assert len({frozenset(r) for r in ROADS}) == 45
    assert int(ADJACENT.sum()) == 90 and int(DEGREE.sum()) == 90
    assert (ADJACENT == ADJACENT.T).all() and not ADJACENT.diagonal().any()
    seen, todo = {0}, [0]
    while todo:
        c = todo.pop()
        for d in np.flatnonzero(ADJACENT[c]):
            if int(d) not in seen:
                seen.add(int(d))
                todo.append(int(d))
    assert len(seen) == 22


def test_degrees_lodz_is_the_only_leaf_stuttgart_highest() -> None:
    deg = dict(zip(CITIES, DEGREE.tolist(), strict=True))
    assert [c for c, d in deg.items() if d == 1] == ["lodz"]
    assert ADJACENT[CITY_ID["lodz"], CITY_ID["pilsen"]]
    assert deg["stuttgart"] == 7 and max(deg.values()) == 7
    assert sorted(c for c, d in deg.items() if d == 6) == ["ingolstadt", "muenchen"]


def test_provinces_and_bonus_groups() -> None:
    sizes = {p: int((i == CITY_PROVINCE).sum()) for i, p in enumerate(PROVINCES)}
    assert sizes == {"baiern": 8, "baden": 3, "wuerttemberg": 2, "hohenzollern": 1,
                     "schweiz": 2, "tyrol": 1, "boehmen": 2, "salzburg": 2, "polen": 1}
    groups = {s: int(GROUP_SIZE[STACK_ID[s]]) for s in
              ("baiern", "baden", "wuerttemberg_hohenzollern", "schweiz_tyrol",
               "boehmen_salzburg")}
    assert groups == {"baiern": 8, "baden": 3, "wuerttemberg_hohenzollern": 3,
                      "schweiz_tyrol": 3, "boehmen_salzburg": 4}


def test_totals_66_cards_20_carriages_30_tiles_worth_79_and_20_houses() -> None:
    assert NUM_CARDS == 66
    assert len(CARRIAGES) * CARRIAGE_COPIES == 20
    assert int(STACK_SIZE.sum()) == 30 and TOTAL_TILE_POINTS == 79 == int(STACK_VALUES.sum())
    assert HOUSES == 20
    s = make_game("thurn_und_taxis", num_players=4).new_initial_state(seed=1)
    assert [s.houses_left(p) for p in range(4)] == [20] * 4
    assert int(s.cards.astype(int).sum()) == 66


@pytest.mark.parametrize("route", [
    ["carlsruhe", "stuttgart", "nuernberg", "regensburg"],
    ["sigmaringen", "stuttgart", "nuernberg", "regensburg", "ingolstadt", "augsburg"],
])
def test_the_rulebook_legal_routes_can_be_built_card_by_card(route: list[str]) -> None:
    for i in range(1, len(route)):
        s = scenario(routes={0: route[:i]}, hands={0: [route[i]]})
        assert f"extend:{route[i]}@{route[i - 1]}" in legal_strings(s)
        s.apply(f"extend:{route[i]}@{route[i - 1]}")
        assert s.route_of(0) == route[: i + 1]


def test_innsbruck_fits_neither_end_of_the_first_route() -> None:
    s = scenario(routes={0: ["carlsruhe", "stuttgart", "nuernberg", "regensburg"]},
                 hands={0: ["innsbruck"]})
    assert legal_strings(s) == ["abandon:innsbruck"]
    for end in ("carlsruhe", "regensburg"):
        with pytest.raises(NotationError, match="no road joins"):
            s.apply(f"extend:innsbruck@{end}")


def test_wuerzburg_cannot_be_inserted_between_stuttgart_and_nuernberg() -> None:
    s = scenario(routes={0: ["carlsruhe", "stuttgart", "nuernberg", "regensburg"]},
                 hands={0: ["wuerzburg"]})
    before = s.to_position_string()
    for end in ("stuttgart", "nuernberg"):
        with pytest.raises(IllegalActionError, match="not an end of the route"):
            s.apply(f"extend:wuerzburg@{end}")
    assert legal_strings(s) == ["abandon:wuerzburg"]
    assert s.to_position_string() == before


def test_stuttgart_cannot_join_a_route_that_holds_it() -> None:
    s = scenario(routes={0: ["carlsruhe", "stuttgart", "nuernberg"]},
                 hands={0: ["stuttgart", "wuerzburg"]})
    with pytest.raises(IllegalActionError, match="clarification 18"):
        s.apply("extend:stuttgart@carlsruhe")
    assert "extend:stuttgart@carlsruhe" not in legal_strings(s)
