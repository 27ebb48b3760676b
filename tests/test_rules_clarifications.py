"""One scenario per numbered clarification of RULES.md ("Clarifications that tests must pin
down"), on hand-built positions driven through the public API.

Diagrams use axial ``(q, r)`` (q east, r south); see tests/helpers.py. Most scenarios share
the two-tile island ``TWO_TILES``::

    r=0        V(0,0)  J(1,0)  V(2,0)          tile 0: V(0,0) J(-1,1) J(0,1)
    r=1    J(-1,1)  J(0,1)  J(1,1)             tile 1: V(2,0) J(1,0) J(1,1)

on which the only legal eruption is ``tile@0,0:NW``: a new volcano on (0,0) covering (0,1)
(tile 0) and (1,0) (tile 1).
"""

from __future__ import annotations

import pytest
from helpers import (
    builds,
    eruptions,
    hex_at,
    legal_strings,
    make_position,
    put,
    settlements_of,
    tile_hexes,
)

from taluva_ai import IllegalActionError, WrongStepError, make_game
from taluva_ai.games.taluva import EndReason, Status, TaluvaGame
from taluva_ai.games.taluva.tiles import parse_tile

TWO_TILES = tile_hexes(0, 0, "N", "JJ", 1, 0) + tile_hexes(2, 0, "NE", "JJ", 1, 1)


@pytest.fixture(scope="module")
def game() -> TaluvaGame:
    return TaluvaGame()


def test_two_tile_island_has_one_eruption(game):
    s = make_position(game, TWO_TILES, step="tile", tile="CC")
    assert eruptions(s) == {"tile@0,0:NW"}
    # 91 placements in all: the eruption and 90 sea-level ones
    assert len(s.legal_actions()) == 91


def test_clarification_01_direct_adjacency_only(game):
    # hut of seat 0 on (0,0); a chain of three jungle hexes (1,0) (2,0) (3,0) leads east
    s = make_position(game, [
        (-1, 0, 1, "V", 0), (0, 0, 1, "C", 0, "h", 0),
        (1, 0, 1, "J", 1), (2, 0, 1, "J", 2), (3, 0, 1, "J", 3),
    ])
    assert legal_strings(s) == {"expand@0,0:J", "hut@2,0", "hut@3,0"}
    s.apply("expand@0,0:J")
    assert hex_at(s, 1, 0) == (1, "J", "h", 0)
    assert hex_at(s, 2, 0) == (1, "J", ".", -1)
    assert hex_at(s, 3, 0) == (1, "J", ".", -1)
    assert s.supply(0)["huts"] == 18
    assert s.built(0)["huts"] == 2


def test_clarification_02_only_top_of_stack_buildable(game):
    # seat 0's hut on (-1,1) touches jungle (0,1); an eruption covers (0,1) with clearing
    hexes = put(TWO_TILES, {(-1, 1): ("h", 0)})
    s = make_position(game, hexes, step="tile", tile="CC")
    s.apply("tile@0,0:NW")
    assert hex_at(s, 0, 1) == (2, "C", ".", -1)
    assert hex_at(s, 1, 0) == (2, "C", ".", -1)
    # the covered jungle is gone: no jungle expansion; the clearing on top takes 2 huts; the
    # level-2 hexes take no new hut; (1,1) is the only level-1 build site left
    assert legal_strings(s) == {"expand@-1,1:C", "hut@1,1"}
    with pytest.raises(IllegalActionError):
        s.apply("expand@-1,1:J")
    with pytest.raises(IllegalActionError, match="level-1"):
        s.apply("hut@0,1")
    s.apply("expand@-1,1:C")
    assert hex_at(s, 0, 1) == (2, "C", "h", 0)
    assert s.supply(0)["huts"] == 17


def test_clarification_03_exact_huts_expansion_legal(game):
    # two jungle hexes next to the hut on (0,0); seat 0 has exactly 2 huts left
    s = make_position(
        game,
        [(-1, 0, 1, "V", 0), (0, 0, 1, "C", 0, "h", 0), (1, 0, 1, "J", 1), (0, 1, 1, "J", 2)],
        supplies={0: (2, 3, 2)},
    )
    assert legal_strings(s) == {"expand@0,0:J"}
    s.apply("expand@0,0:J")
    assert s.supply(0) == {"huts": 0, "temples": 3, "towers": 2}
    assert hex_at(s, 1, 0)[2:] == ("h", 0)
    assert hex_at(s, 0, 1)[2:] == ("h", 0)
    assert s.status(0) == Status.ACTIVE
    assert s.current_player == -1  # one kind used up only: the game goes on


@pytest.mark.parametrize(("huts", "expected"), [
    (3, {"expand@0,0:J", "expand@0,0:C"}),
    (2, {"expand@0,0:C"}),
])
def test_clarification_04_expansion_cost_sum_of_levels(game, huts, expected):
    # jungle (1,0) at level 1 and jungle (0,1) at level 2 touch the hut: cost 1 + 2 = 3
    hexes = [
        (-1, 0, 1, "V", 0), (0, 0, 1, "C", 0, "h", 0), (0, -1, 1, "C", 3),
        (1, 0, 1, "J", 1), (0, 1, 2, "J", 2),
    ]
    s = make_position(game, hexes, supplies={0: (huts, 3, 2)})
    assert legal_strings(s) == expected
    if huts == 3:
        s.apply("expand@0,0:J")
        assert hex_at(s, 0, 1) == (2, "J", "h", 0)
        assert hex_at(s, 1, 0) == (1, "J", "h", 0)
        assert s.supply(0)["huts"] == 0
    else:
        before = s.to_position_string()
        with pytest.raises(IllegalActionError) as e:
            s.apply("expand@0,0:J")
        assert "short of huts" in e.value.rule
        assert s.to_position_string() == before


class TestClarification05Eruptions:
    """Eruption cases of clarification 5, all on ``TWO_TILES`` with ``tile@0,0:NW``."""

    def test_clarification_05a_single_hut_settlement_cannot_be_covered(self, game):
        s = make_position(game, put(TWO_TILES, {(0, 1): ("h", 1)}), step="tile", tile="CC")
        assert eruptions(s) == set()
        before = s.to_position_string()
        with pytest.raises(IllegalActionError) as e:
            s.apply("tile@0,0:NW")
        assert e.value.rule == "eruption rule 5: it would cover a whole settlement"
        assert s.to_position_string() == before

    def test_clarification_05b_two_hut_settlement_fully_covered_illegal(self, game):
        hexes = put(TWO_TILES, {(0, 1): ("h", 1), (1, 0): ("h", 1)})
        s = make_position(game, hexes, step="tile", tile="CC")
        assert settlements_of(s, 1) == {frozenset({(0, 1), (1, 0)})}
        assert eruptions(s) == set()

    def test_clarification_05c_two_players_each_keep_a_hex(self, game):
        hexes = put(TWO_TILES, {
            (-1, 1): ("h", 0), (0, 1): ("h", 0), (1, 0): ("h", 1), (1, 1): ("h", 1),
        })
        s = make_position(game, hexes, step="tile", tile="CC")
        assert eruptions(s) == {"tile@0,0:NW"}
        s.apply("tile@0,0:NW")
        assert hex_at(s, 0, 1) == (2, "C", ".", -1)
        assert hex_at(s, 1, 0) == (2, "C", ".", -1)
        assert (s.destroyed_huts(0), s.destroyed_huts(1)) == (1, 1)
        assert (s.supply(0)["huts"], s.supply(1)["huts"]) == (18, 18)
        assert (s.built(0)["huts"], s.built(1)["huts"]) == (2, 2)
        assert settlements_of(s, 0) == {frozenset({(-1, 1)})}
        assert settlements_of(s, 1) == {frozenset({(1, 1)})}
        assert s.current_player == 0
        assert legal_strings(s) == {"expand@-1,1:C"}

    def test_clarification_05d_temple_remains_so_legal(self, game):
        hexes = put(TWO_TILES, {(1, 1): ("T", 1), (1, 0): ("h", 1), (0, 1): ("h", 1)})
        s = make_position(game, hexes, step="tile", tile="CC")
        assert settlements_of(s, 1) == {frozenset({(1, 1), (1, 0), (0, 1)})}
        assert eruptions(s) == {"tile@0,0:NW"}
        s.apply("tile@0,0:NW")
        assert s.destroyed_huts(1) == 2
        assert s.built(1) == {"huts": 2, "temples": 1, "towers": 0}
        assert settlements_of(s, 1) == {frozenset({(1, 1)})}
        assert hex_at(s, 1, 1) == (1, "J", "T", 1)
        assert legal_strings(s) == {"hut@-1,1"}


def test_clarification_06_connectivity_transitive(game):
    # huts A (0,0) and C (2,0) of seat 0; jungle B (1,0) between them; sand (1,1) below
    hexes = [
        (0, 0, 1, "C", 0, "h", 0), (1, 0, 1, "J", 1), (2, 0, 1, "C", 2, "h", 0),
        (1, 1, 1, "S", 3), (3, 0, 1, "V", 4),
    ]
    s = make_position(game, hexes, upcoming=["SS", "RR"])
    # expanding (0,0) or (2,0) into jungle fills the same hex: listed once, by the smaller hex
    assert legal_strings(s) == {"expand@0,0:J", "expand@2,0:S"}
    s.apply("expand@0,0:J")
    assert settlements_of(s, 0) == {frozenset({(0, 0), (1, 0), (2, 0)})}
    # seat 1: a tile west of the island and a hut on it
    assert s.draw() == parse_tile("SS")
    s.apply("tile@-1,0:N")
    s.apply("hut@-2,1")
    # seat 0 again: a tile east, then the temple is legal next to the 3-hex settlement
    assert s.draw() == parse_tile("RR")
    assert s.current_player == 0
    s.apply("tile@4,0:N")
    assert builds(s, "temple") == {"temple@1,1", "temple@-1,1"}


def test_clarification_07_split_parts_checked_separately(game):
    # seat 0's chain on row 0: T(0,0) W(1,0, level 3) h(2,0) h(3,0) h(4,0) h(5,0) h(6,0);
    # the eruption tile@4,-1:NE covers (3,-1) and (3,0) and splits it into
    # A = {(0,0), (1,0), (2,0)} (temple and tower) and B = {(4,0), (5,0), (6,0)} (neither).
    # Level-3 rock (0,1) touches A only, level-3 rock (5,1) touches B only.
    hexes = [
        (0, 0, 1, "C", 0, "T", 0), (1, 0, 3, "R", 1, "W", 0), (2, 0, 1, "C", 2, "h", 0),
        (3, 0, 1, "C", 3, "h", 0), (4, 0, 1, "C", 4, "h", 0), (5, 0, 1, "C", 5, "h", 0),
        (6, 0, 1, "C", 6, "h", 0), (4, -1, 1, "V", 7), (3, -1, 1, "J", 8),
        (0, 1, 3, "R", 9), (5, 1, 3, "R", 10),
    ]
    # before the split: one settlement holding a temple and a tower takes neither again
    whole = make_position(game, hexes)
    assert builds(whole, "temple") == set()
    assert builds(whole, "tower") == set()

    s = make_position(game, hexes, step="tile", tile="JJ")
    assert "tile@4,-1:NE" in eruptions(s)
    s.apply("tile@4,-1:NE")
    assert s.destroyed_huts(0) == 1
    assert settlements_of(s, 0) == {
        frozenset({(0, 0), (1, 0), (2, 0)}), frozenset({(4, 0), (5, 0), (6, 0)}),
    }
    assert legal_strings(s) == {
        "temple@3,0", "temple@5,1", "tower@5,1",
        "expand@0,0:J", "expand@0,0:R", "expand@4,0:J", "expand@4,0:R",
    }


def test_clarification_08_no_tower_left_and_no_hut_left(game):
    hexes = [(0, 0, 1, "C", 0, "h", 0), (1, 0, 3, "R", 1)]
    with_tower = make_position(game, hexes, supplies={0: (19, 3, 1)})
    assert legal_strings(with_tower) == {"tower@1,0", "expand@0,0:R"}
    no_tower = make_position(game, hexes, supplies={0: (19, 3, 0)})
    assert legal_strings(no_tower) == {"expand@0,0:R"}
    with pytest.raises(IllegalActionError) as e:
        no_tower.apply("tower@1,0")
    assert e.value.rule == "tower: no tower left in the supply"

    # no hut left, a tower spot next to the settlement: placing a tile does not eliminate
    s = make_position(game, hexes, step="tile", tile="JJ", supplies={0: (0, 3, 2)})
    s.apply("tile@-1,0:N")
    assert s.status(0) == Status.ACTIVE
    assert s.current_player == 0
    assert legal_strings(s) == {"tower@1,0"}
    # the same with the rock at level 2: no build at all, so seat 0 is eliminated
    low = [(0, 0, 1, "C", 0, "h", 0), (1, 0, 2, "R", 1)]
    s = make_position(game, low, step="tile", tile="JJ", supplies={0: (0, 3, 2)})
    s.apply("tile@-1,0:N")
    assert s.status(0) == Status.ELIMINATED
    assert s.end_reason == EndReason.LAST_STANDING
    assert s.winners() == [1]


def test_clarification_09_early_victory_on_last_tile(game):
    # seat 1 places the last tile (none left to draw); it has no hut left and builds its
    # second tower: huts and towers all built = early victory, although seat 0 (3 temples
    # built against 2) would win the final count
    hexes = [*tile_hexes(0, 0, "N", "JC", 1, 0), (1, 1, 3, "R", 1), (2, 1, 1, "C", 2, "h", 1)]
    s = make_position(
        game, hexes, player=1, step="tile", tile="JJ", placed=47, drawn=48,
        supplies={0: (10, 0, 2), 1: (0, 1, 1)},
    )
    assert s.tiles_left == 1
    s.apply("tile@-1,0:S")
    assert s.tiles_left == 0
    assert legal_strings(s) == {"tower@1,1"}
    s.apply("tower@1,1")
    assert s.is_terminal()
    assert s.end_reason == EndReason.EARLY_VICTORY
    assert s.winners() == [1]
    assert s.returns().tolist() == [-1.0, 1.0]


def test_clarification_09_control_last_tile_without_victory_counts(game):
    # the same last turn, but seat 1 still has huts: its tower wins nothing, the count does
    hexes = [*tile_hexes(0, 0, "N", "JC", 1, 0), (1, 1, 3, "R", 1), (2, 1, 1, "C", 2, "h", 1)]
    s = make_position(
        game, hexes, player=1, step="tile", tile="JJ", placed=47, drawn=48,
        supplies={0: (10, 0, 2), 1: (1, 1, 1)},
    )
    s.apply("tile@-1,0:S")
    s.apply("tower@1,1")
    assert s.end_reason == EndReason.TILES_OUT
    assert s.winners() == [0]


def test_clarification_10_every_turn_builds_first_included():
    game = make_game("taluva")
    s = game.new_initial_state(deck=[parse_tile("JC"), parse_tile("SR")])
    assert s.current_player == -1
    assert s.draw() == parse_tile("JC")
    assert legal_strings(s) == {f"tile@0,0:{o}" for o in ("N", "NW", "SW", "S", "SE", "NE")}
    s.apply("tile@0,0:N")
    # still seat 0, now to build; there is no pass and no draw before the build
    assert s.current_player == 0
    assert legal_strings(s) == {"hut@-1,1", "hut@0,1"}
    with pytest.raises(WrongStepError):
        s.draw()
    with pytest.raises(WrongStepError):
        s.apply("tile@1,0:N")
    s.apply("hut@0,1")
    assert s.current_player == -1
    assert s.draw() == parse_tile("SR")
    assert s.current_player == 1


def test_clarification_11_no_height_limit(game):
    # a volcano and two hexes of two other tiles, all at level 5; seat 0's hut on (1,1)
    hexes = [
        (0, 0, 5, "V", 10), (0, 1, 5, "J", 11), (1, 0, 5, "J", 12),
        (1, 1, 1, "C", 3, "h", 0),
    ]
    s = make_position(game, hexes, step="tile", tile="JJ")
    assert eruptions(s) == {"tile@0,0:NW"}
    s.apply("tile@0,0:NW")
    assert hex_at(s, 0, 0) == (6, "V", ".", -1)
    assert hex_at(s, 0, 1) == (6, "J", ".", -1)
    assert legal_strings(s) == {"tower@0,1", "tower@1,0", "expand@1,1:J"}
    s.apply("expand@1,1:J")
    assert hex_at(s, 1, 0) == (6, "J", "h", 0)
    assert s.supply(0)["huts"] == 19 - 12


def test_clarification_12_expansion_of_one_settlement(game):
    # seat 0: settlements (0,0) and (3,0); jungle (1,0) touches the first, (4,0) the second
    hexes = [
        (0, 0, 1, "C", 0, "h", 0), (1, 0, 1, "J", 1), (3, 0, 1, "C", 2, "h", 0),
        (4, 0, 1, "J", 3),
    ]
    s = make_position(game, hexes)
    assert legal_strings(s) == {"expand@0,0:J", "expand@3,0:J"}
    s.apply("expand@0,0:J")
    assert hex_at(s, 1, 0)[2:] == ("h", 0)
    assert hex_at(s, 4, 0)[2:] == (".", -1)
    assert s.supply(0)["huts"] == 17
    assert settlements_of(s, 0) == {frozenset({(0, 0), (1, 0)}), frozenset({(3, 0)})}


def test_clarification_13_temple_needs_three_hexes(game):
    # seat 0: A = two level-3 hut hexes (6 huts, 2 hexes); B = three level-1 hut hexes
    hexes = [
        (0, 0, 3, "C", 0, "h", 0), (1, 0, 3, "C", 1, "h", 0), (0, -1, 1, "C", 2),
        (0, 3, 1, "C", 3, "h", 0), (1, 3, 1, "C", 4, "h", 0), (2, 3, 1, "C", 5, "h", 0),
        (0, 4, 1, "C", 6),
    ]
    s = make_position(game, hexes)
    assert s.supply(0)["huts"] == 20 - 6 - 3
    assert legal_strings(s) == {"temple@0,4", "expand@0,0:C", "expand@0,3:C"}
    with pytest.raises(IllegalActionError) as e:
        s.apply("temple@0,-1")
    assert "at least 3 hexes" in e.value.rule
    s.apply("temple@0,4")
    assert hex_at(s, 0, 4) == (1, "C", "T", 0)
    assert s.supply(0)["temples"] == 2


def test_clarification_14_eliminated_skipped_never_winner():
    game = TaluvaGame(num_players=3)
    # seat 1 is eliminated although it built the most (3 temples); one tile is left to draw
    hexes = tile_hexes(0, 0, "N", "JC", 1, 0)
    s = make_position(
        game, hexes, player=0, placed=47, drawn=47, upcoming=["JJ"], eliminated=[1],
        supplies={0: (15, 1, 2), 1: (10, 0, 2), 2: (15, 2, 2)},
    )
    s.apply("hut@-1,1")
    assert s.current_player == -1
    s.draw()
    assert s.current_player == 2
    s.apply("tile@2,0:N")
    s.apply("hut@1,1")
    assert s.is_terminal()
    assert s.end_reason == EndReason.TILES_OUT
    assert s.winners() == [0]
    assert s.places() == [0, 1, 1]
    assert s.returns().tolist() == [1.0, -0.5, -0.5]


@pytest.mark.parametrize("num_players", [2, 3])
def test_clarification_15_no_lake_first_tile_lake_lake(num_players):
    game = make_game("taluva", num_players=num_players, no_lake_building=True)
    s = game.new_initial_state(deck=[parse_tile("LL"), parse_tile("JJ")])
    s.draw()
    s.apply("tile@0,0:N")
    assert s.status(0) == Status.ELIMINATED
    if num_players == 2:
        assert s.is_terminal()
        assert s.end_reason == EndReason.LAST_STANDING
        assert s.winners() == [1]
        assert s.returns().tolist() == [-1.0, 1.0]
    else:
        assert not s.is_terminal()
        assert s.current_player == -1
        s.draw()
        assert s.current_player == 1
        assert s.status(1) == Status.ACTIVE


def test_clarification_15_control_lake_lake_without_option():
    game = make_game("taluva")
    s = game.new_initial_state(deck=[parse_tile("LL")])
    s.draw()
    s.apply("tile@0,0:N")
    assert s.current_player == 0
    assert legal_strings(s) == {"hut@-1,1", "hut@0,1"}
