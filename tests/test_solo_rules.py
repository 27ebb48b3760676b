"""The solo variant's rules (SOLO.md 1-4): set-up, contact classes and what they trigger, bonus
tiles, the three-tile cap, the solo founding rule, the end conditions, every option of SOLO.md
section 6, and bad input. Scenario numbers refer to SOLO.md section 7."""

from __future__ import annotations

import numpy as np
import pytest

from taluva_ai.errors import ActionOutOfRangeError, IllegalActionError, WrongStepError
from taluva_ai.games.taluva import EndReason, RuleError, RuleSet, Step, TaluvaGame
from taluva_ai.games.taluva import solo_kernels as SK
from taluva_ai.games.taluva.solo import (
    WINDMILL,
    island_problems,
    placement_hexes,
)
from taluva_ai.games.taluva.tiles import full_tile_set, parse_tile, tile_name
from tests.helpers import hex_at, legal_strings, random_step, tile_hexes
from tests.solo_helpers import solo_game, solo_position, start, tile_at

GAME = solo_game()
T0 = [("JC", (0, 0), "N")]  # the centre tile alone: V(0,0) J(-1,1) C(0,1)


def bonus_state(game: TaluvaGame, hexes, tile: str, source: str = "pile", **kw):
    """A hand-built position at the tile step with ``tile`` in hand from ``source``."""
    return solo_position(game, hexes, step="tile", tile=tile, source=source, **kw)


# -- set-up (SOLO.md 1) ---------------------------------------------------------------------------


def test_default_island_is_the_windmill_of_solo_md():
    s = GAME.new_initial_state(seed=3)
    expect = {
        (0, 0): "V", (-1, 1): "J", (0, 1): "C",  # T0
        (-3, 1): "V", (-2, 1): "J", (-2, 0): "S",  # A1
        (-3, -1): "V", (-2, -1): "S", (-2, -2): "R",  # A2
        (-1, 3): "V", (-1, 2): "C", (-2, 3): "L",  # B1
        (-4, 4): "V", (-3, 3): "L", (-4, 3): "J",  # B2
        (1, 2): "V", (2, 1): "R", (1, 1): "C",  # C1
        (2, -1): "V", (2, 0): "C", (3, -1): "S",  # C2
    }
    assert {(q, r): hex_at(s, q, r)[1] for q, r in expect} == expect
    assert all(hex_at(s, q, r)[0] == 1 for q, r in expect)
    assert int((s.cells[:, 0] > 0).sum()) == 21
    assert island_problems(WINDMILL) == []
    assert [tile_name(int(t)) for t in s.deck[:7]] == ["JC", "JS", "SR", "CL", "LJ", "RC", "CS"]
    c = s.solo_counts()
    assert (c["draw_pile"], c["bonus_stack"], c["face_up"], c["set_aside"]) == (31, 10, None, 0)
    assert s.step is Step.CHANCE and s.tiles_placed == 7


def test_windmill_joins_are_those_of_the_table():
    # every touching pair has exactly one matching contact (B1 and C2 also touch T0 / C1 with a
    # non-matching one), and the touch graph is the windmill
    from taluva_ai.games.taluva.solo import island_shape, joins

    assert island_shape(WINDMILL) == [(0, 1), (0, 3), (0, 5), (1, 2), (3, 4), (5, 6)]
    assert joins(WINDMILL[0], WINDMILL[3]) == (2, 1, False)
    assert joins(WINDMILL[5], WINDMILL[6]) == (2, 1, False)
    assert joins(WINDMILL[0], WINDMILL[1]) == (1, 1, False)


def test_face_up_tile_then_regular_draw_from_41_unseen_tiles():
    s = GAME.new_initial_state(seed=5)
    outcomes = s.chance_outcomes()
    assert sum(p for _, p in outcomes) == pytest.approx(1.0)
    counts = {t: round(p * 41) for t, p in outcomes}
    assert sum(counts.values()) == 41 and counts[parse_tile("JC")] == 5  # 6 less T0
    t = s.draw()
    assert s.solo_counts()["face_up"] == tile_name(t) and s.step is Step.CHANCE
    s.draw()
    assert s.step is Step.TILE and s.solo_counts()["draw_pile"] == 30


def test_same_seed_same_game_and_random_island():
    for layout in ("windmill", "random"):
        g = solo_game(start_layout=layout)
        a, b = g.new_initial_state(seed=11), g.new_initial_state(seed=11)
        assert np.array_equal(a.cells, b.cells) and np.array_equal(a.deck, b.deck)
    g = solo_game(start_layout="random")
    c = g.new_initial_state(seed=12)
    assert not np.array_equal(g.new_initial_state(seed=11).cells, c.cells)


@pytest.mark.parametrize("shape", ["windmill", "tree"])
def test_random_island_is_legal(shape):
    from taluva_ai.games.taluva.solo import random_island

    for seed in range(3):
        placements, deck = random_island(np.random.default_rng(seed), shape)
        assert island_problems(placements, shape) == []
        assert placements[0][1] == (0, 0)
        assert [int(t) for t in deck[:7]] == [p[0] for p in placements]
        assert sorted(deck.tolist()) == sorted(full_tile_set().tolist())


def test_island_problems_names_what_is_wrong():
    bad = list(WINDMILL)
    bad[4] = (parse_tile("LJ"), (-4, 5), 0)  # B2 moved so that it no longer touches B1
    assert any("tree" in p for p in island_problems(bad))
    assert any("7 tiles" in p for p in island_problems(WINDMILL[:3]))


# -- classes (SOLO.md 3.1; scenarios 1-6) ---------------------------------------------------------


def test_scenario_1_single_match_and_volcano_only_are_class_1():
    s = start(GAME, T0, tile="CJ")
    pc = s.placement_class(tile_at("CJ", (-2, 0), (-3, 1), (-2, 1)))
    assert (pc["matching"], pc["terrains"], pc["class"]) == (1, "J", 1)
    pc = s.placement_class(tile_at("CJ", (0, -1), (1, -1), (1, -2)))
    assert (pc["matching"], pc["terrains"], pc["class"]) == (1, "V", 1)


def test_scenario_1_class_1_boxes_one_piece_of_the_players_choice():
    s = start(GAME, T0, tile="CJ")
    s.apply(tile_at("CJ", (-2, 0), (-3, 1), (-2, 1)))
    assert s.step is Step.BOX
    assert legal_strings(s) == {"box:hut", "box:temple", "box:tower"}
    s.apply("box:temple")
    assert s.supply(0) == {"huts": 20, "temples": 2, "towers": 2}
    assert s.solo_counts()["boxed"] == {"huts": 0, "temples": 1, "towers": 0}
    assert s.step is Step.BUILD  # phase 2


@pytest.mark.parametrize("tile,v,a,b,m,u,terrains,cls", [
    ("RR", (-1, -4), (-2, -3), (-1, -3), 2, 0, "R", 2),  # scenario 2
    ("SS", (0, -2), (-1, -2), (-1, -1), 3, 1, "S", 2),  # scenario 3 (SOLO.md 6.4)
    ("JC", (-1, -1), (-1, 0), (0, -1), 2, 5, "J", 1),  # scenario 4
    ("RS", (0, -2), (-1, -2), (-1, -1), 3, 1, "SR", 3),  # scenario 5
    ("JS", (-4, 0), (-4, 1), (-3, 0), 3, 3, "SV", 3),  # scenario 5
    ("SJ", (0, -1), (-1, -1), (-1, 0), 5, 2, "JSV", 4),  # scenario 6
])
def test_scenarios_2_to_6_classes_on_the_default_island(tile, v, a, b, m, u, terrains, cls):
    s = start(GAME, tile=tile)
    pc = s.placement_class(tile_at(tile, v, a, b))
    assert (pc["matching"], pc["non_matching"], pc["terrains"], pc["class"]) == \
        (m, u, terrains, cls)


def test_scenario_5_volcano_in_t_false():
    g = solo_game(volcano_in_T=False)
    s = start(g, tile="JS")
    pc = s.placement_class(tile_at("JS", (-4, 0), (-4, 1), (-3, 0)))
    assert (pc["matching"], pc["terrains"], pc["volcano_contacts"], pc["class"]) == \
        (2, "S", 1, 1)
    s = start(g, T0, tile="CJ")  # only V(0,-1)-V(0,0) matches: still legal, class 1
    pc = s.placement_class(tile_at("CJ", (0, -1), (1, -1), (1, -2)))
    assert (pc["matching"], pc["volcano_contacts"], pc["class"]) == (0, 1, 1)


def test_single_terrain_bonus_option_makes_scenario_3_class_3():
    s = start(solo_game(single_terrain_bonus=True), tile="SS")
    assert s.placement_class(tile_at("SS", (0, -2), (-1, -2), (-1, -1)))["class"] == 3


def test_contacts_hexes_counts_an_island_hex_once():
    # scenario 3's S(-2,-1) touches both new S hexes: 2 edges, 1 hex
    s = start(solo_game(contacts="hexes"), tile="SS")
    pc = s.placement_class(tile_at("SS", (0, -2), (-1, -2), (-1, -1)))
    assert (pc["matching"], pc["non_matching"], pc["class"]) == (2, 1, 1)


def test_class_2_goes_to_phase_2_class_3_and_4_offer_a_bonus_tile():
    s = start(GAME, tile="RR")
    s.apply(tile_at("RR", (-1, -4), (-2, -3), (-1, -3)))
    assert s.step is Step.BUILD and s.solo_counts()["boxed"]["huts"] == 0
    for tile, spec in (("RS", ((0, -2), (-1, -2), (-1, -1))),
                       ("SJ", ((0, -1), (-1, -1), (-1, 0)))):
        s = start(GAME, tile=tile)
        s.apply(tile_at(tile, *spec))
        assert s.step is Step.BONUS
        assert legal_strings(s) == {"bonus:pile", "bonus:faceup", "bonus:stop"}


def test_level_1_needs_a_matching_contact():
    s = start(GAME, T0, tile="SS")  # S matches nothing on T0; only V-V contacts can match
    for a in s.legal_actions():
        text = s.action_to_string(int(a))
        pc = s.placement_class(text)
        assert pc["matching"] >= 1 and pc["terrains"] == "V"
    with pytest.raises(IllegalActionError, match="matching contact"):
        s.apply("tile@-2,2:N")  # touches J(-1,1) with S and V only: no match


# -- higher placements (SOLO.md 2, 3.2; scenario 7) -----------------------------------------------

P_Q = [("JC", (0, 0), "N"), ("SL", (1, -1), "NW")]  # P: V(0,0) J(-1,1) C(0,1); Q: S(1,0) L(2,-1)
P_Q_HEXES = tile_hexes(0, 0, "N", "JC", 1, 0) + tile_hexes(1, -1, "NW", "SL", 1, 1)


def test_scenario_7_exact_regular_tile_earns_a_draw_pile_bonus():
    assert hex_at(start(GAME, P_Q), 1, 0)[1] == "S" and hex_at(start(GAME, P_Q), 2, -1)[1] == "L"
    s = start(GAME, P_Q, tile="CS")
    s.apply(tile_at("CS", (0, 0), (0, 1), (1, 0)))
    assert hex_at(s, 0, 0)[0] == 2
    assert s.step is Step.BONUS and legal_strings(s) == {"bonus:pile", "bonus:stop"}


def test_scenario_7_cr_is_illegal_as_regular_legal_as_bonus_without_chain():
    place = tile_at("CR", (0, 0), (0, 1), (1, 0))
    s = start(GAME, P_Q, tile="CR")
    assert place not in legal_strings(s)
    with pytest.raises(IllegalActionError, match="exact"):
        s.apply(place)
    b = bonus_state(GAME, P_Q_HEXES, "CR")
    assert place in legal_strings(b)
    b.apply(place)
    assert b.step is Step.BUILD  # one terrain hex matches: no further bonus


def test_level_2_bonus_both_terrains_match_chains_from_the_draw_pile_only():
    b = bonus_state(GAME, P_Q_HEXES, "CS")
    b.apply(tile_at("CS", (0, 0), (0, 1), (1, 0)))
    assert b.step is Step.BONUS and legal_strings(b) == {"bonus:pile", "bonus:stop"}
    b = bonus_state(solo_game(bonus_any_source=True), P_Q_HEXES, "CS")
    b.apply(tile_at("CS", (0, 0), (0, 1), (1, 0)))
    assert legal_strings(b) == {"bonus:pile", "bonus:faceup", "bonus:stop"}


def test_level_2_bonus_needs_one_terrain_match():
    b = bonus_state(GAME, P_Q_HEXES, "RR")
    assert tile_at("RR", (0, 0), (0, 1), (1, 0)) not in legal_strings(b)
    with pytest.raises(IllegalActionError, match="level-2 bonus"):
        b.apply(tile_at("RR", (0, 0), (0, 1), (1, 0)))


def _level2_pair():
    """Two level-2 tiles side by side whose volcanoes and terrains allow a level-3 tile."""
    return (tile_hexes(0, 0, "N", "JC", 2, 0)  # V(0,0) J(-1,1) C(0,1)
            + tile_hexes(1, -1, "NW", "SL", 2, 1)  # V(1,-1) S(1,0) L(2,-1)
            + [(5, 5, 1, "J", 2)])  # a level-1 hex: phase 2 has a build


def test_level_3_bonus_exact_chains_from_either_source():
    b = bonus_state(GAME, _level2_pair(), "CS")
    b.apply(tile_at("CS", (0, 0), (0, 1), (1, 0)))
    assert hex_at(b, 0, 0)[0] == 3
    assert legal_strings(b) == {"bonus:pile", "bonus:faceup", "bonus:stop"}
    b = bonus_state(solo_game(level3_chain=False), _level2_pair(), "CS")
    b.apply(tile_at("CS", (0, 0), (0, 1), (1, 0)))
    assert b.step is Step.BUILD
    b = bonus_state(GAME, _level2_pair(), "CR")  # level 3 must be exact
    assert tile_at("CR", (0, 0), (0, 1), (1, 0)) not in legal_strings(b)


def test_upper_bonus_false_exact_regular_tile_goes_to_phase_2():
    s = start(solo_game(upper_bonus=False), P_Q, tile="CS")
    s.apply(tile_at("CS", (0, 0), (0, 1), (1, 0)))
    assert s.step is Step.BUILD


def test_bonus_no_eruption_volcano_on_a_terrain_hex_chains_only_then():
    # bonus tile (C,S): volcano on J(-1,1), C on C(0,1), S on S(1,0)? not a tile shape; use
    # (J,C) with its volcano on S(1,0): a on J? Build a row J C S at level 1 instead.
    hexes = [(0, 0, 1, "S", 0), (-1, 1, 1, "J", 1), (0, 1, 1, "C", 2), (5, 5, 1, "V", 3)]
    place = tile_at("JC", (0, 0), (-1, 1), (0, 1))  # volcano covers S(0,0)
    b = bonus_state(solo_game(bonus_no_eruption=True), hexes, "JC")
    assert place in legal_strings(b)
    b.apply(place)
    assert b.step is Step.BONUS and legal_strings(b) == {"bonus:pile", "bonus:stop"}
    assert place not in legal_strings(bonus_state(GAME, hexes, "JC"))
    # a volcano on a volcano with both terrains matching: legal, but no chain under the option
    b = bonus_state(solo_game(bonus_no_eruption=True), P_Q_HEXES, "CS")
    b.apply(tile_at("CS", (0, 0), (0, 1), (1, 0)))
    assert b.step is Step.BUILD


# -- bonus tiles and the three-tile cap (SOLO.md 3.2) ---------------------------------------------


def test_three_tiles_a_turn_the_third_triggers_nothing():
    s = start(GAME, tile="SJ", face_up="SJ")
    s.apply(tile_at("SJ", (0, -1), (-1, -1), (-1, 0)))  # class 4
    s.apply("bonus:faceup")
    assert s.solo_counts()["tiles_this_turn"] == 2 and s.solo_counts()["face_up"] is None
    s.apply(_class34(s))
    assert s.step is Step.BONUS and legal_strings(s) == {"bonus:pile", "bonus:stop"}
    s.apply("bonus:pile")
    s.apply(parse_tile("JS"))
    assert s.solo_counts()["tiles_this_turn"] == 3
    s.apply(_class34(s))
    assert s.solo_counts()["last_class"] >= 3
    # the third tile's trigger does nothing: phase 2 turns up a new face-up tile, then builds
    assert s.step is Step.CHANCE
    s.draw()
    assert s.step is Step.BUILD and s.solo_counts()["face_up"] is not None


def _class34(s):
    """A legal level-1 placement of class 3 or 4 of the tile in hand."""
    for a in s.legal_actions():
        if s.cells[int(a) // 6, 0] == 0 and s.placement_class(int(a))["class"] >= 3:
            return int(a)
    raise AssertionError("no class-3/4 placement")


def test_face_up_tile_offered_only_with_a_legal_placement():
    # a hexagon around an inner volcano: (R,R) matches no terrain, and no volcano lies on the
    # coast for a V-V contact, so the face-up (R,R) has no legal placement; (J,J) has
    ring = [((1, 0), "J"), ((1, -1), "J"), ((0, -1), "C"), ((-1, 0), "J"), ((-1, 1), "J"),
            ((0, 1), "C")]
    hexes = [(0, 0, 1, "V", 0)] + [(q, r, 1, t, 1 + i) for i, ((q, r), t) in enumerate(ring)]
    regular = tile_at("JC", (0, 0), (-1, 1), (0, 1))  # exact at level 2: a bonus tile
    game = solo_game(bonus_any_source=True)
    for face_up, offer in (("RR", {"bonus:pile", "bonus:stop"}),
                           ("JJ", {"bonus:pile", "bonus:faceup", "bonus:stop"})):
        s = solo_position(game, hexes, step="tile", tile="JC", face_up=face_up)
        s.apply(regular)
        assert legal_strings(s) == offer


def test_unplaceable_bonus_tile_is_set_aside_and_play_goes_to_phase_2():
    hexes = [(0, 0, 1, "J", 0), (1, 0, 1, "J", 0), (0, 1, 1, "C", 0)]
    s = solo_position(GAME, hexes, step="bonus", face_up=None)
    s.apply("bonus:pile")
    s.apply(parse_tile("RR"))  # no R, no volcano on the island: no legal placement
    c = s.solo_counts()
    assert c["set_aside"] == 1 and s.step is Step.BUILD and c["draw_pile"] == 30
    assert s.score_breakdown()["tiles_left"] == -(30 + 10 + 1 - 11)


def test_unplaceable_bottom_puts_the_tile_under_the_pile():
    hexes = [(0, 0, 1, "J", 0), (1, 0, 1, "J", 0), (0, 1, 1, "C", 0)]
    s = solo_position(solo_game(unplaceable="bottom"), hexes, step="bonus", face_up=None,
                      pile=2, stack=0, upcoming=("RR",))
    s.apply("bonus:pile")
    s.apply(parse_tile("RR"))
    c = s.solo_counts()
    assert (c["set_aside"], c["under_pile"], c["draw_pile"]) == (0, 1, 2)
    assert s.step is Step.BUILD
    assert {t for t, _ in _outcomes_after_build(s)} != {parse_tile("RR")}
    assert SK.check_invariants(s.players, s.deck, s.meta) == 0


def _outcomes_after_build(s):
    s.apply(int(s.legal_actions()[0]))
    return s.chance_outcomes() if s.step is Step.CHANCE else []


def test_known_tile_under_the_pile_is_drawn_without_a_chance_node():
    hexes = [(0, 0, 1, "J", 0), (1, 0, 1, "J", 0), (0, 1, 1, "C", 0)]
    s = solo_position(solo_game(unplaceable="bottom"), hexes, step="bonus", face_up=None,
                      pile=1, stack=0, upcoming=("RR",))
    s.apply("bonus:pile")
    s.apply(parse_tile("RR"))  # set under the pile: the pile holds only the known RR
    ply = s.ply
    s.apply("hut@0,0")
    # the next turn draws RR at once (no chance node), cannot place it and puts it back under
    # the pile: phase 2 of the new turn
    assert s.step is Step.BUILD and s.ply == ply + 1
    c = s.solo_counts()
    assert (c["draw_pile"], c["under_pile"], c["tiles_this_turn"]) == (1, 1, 1)
    assert SK.check_invariants(s.players, s.deck, s.meta) == 0


# -- phase 2: the solo founding rule (SOLO.md 3.3; scenario 8) ------------------------------------

FOUND_HEXES = [(0, 0, 1, "J", 0), (1, 0, 1, "J", 1), (-1, 0, 2, "J", 2), (0, -1, 1, "V", 3),
               (1, 1, 1, "J", 4), (2, 1, 1, "J", 4), (5, 5, 1, "C", 5)]


def test_scenario_8_founding_fills_direct_same_terrain_neighbours():
    s = solo_position(GAME, FOUND_HEXES)
    s.apply("hut@0,0")
    # (0,0) level 1 + (1,0) level 1 + (-1,0) level 2 = 4 huts
    assert s.supply(0)["huts"] == 20 - 4
    assert {(q, r) for q, r in ((0, 0), (1, 0), (-1, 0), (1, 1), (2, 1))
            if hex_at(s, q, r)[2] == "h"} == {(0, 0), (1, 0), (-1, 0)}
    assert hex_at(s, -1, 0)[0] == 2  # two huts there


def test_scenario_8_all_or_nothing():
    s = solo_position(GAME, FOUND_HEXES, supply=(3, 3, 2))
    assert "hut@0,0" not in legal_strings(s)
    with pytest.raises(IllegalActionError, match="4 huts, the supply has 3"):
        s.apply("hut@0,0")
    assert "hut@5,5" in legal_strings(s)


def test_found_flood_and_found_plain():
    s = solo_position(solo_game(found_flood=True), FOUND_HEXES)
    s.apply("hut@0,0")  # the connected J area: (0,0) (1,0) (-1,0) (1,1) (2,1)
    assert hex_at(s, 2, 1)[2] == "h" and s.supply(0)["huts"] == 20 - 6
    s = solo_position(solo_game(found_plain=True), FOUND_HEXES)
    s.apply("hut@0,0")
    assert s.supply(0)["huts"] == 19 and hex_at(s, 1, 0)[2] == "."


def test_foundings_with_the_same_outcome_have_one_id():
    # J(0,0) and J(1,0) alone: founding on either fills both; flood: one id per area
    hexes = [(0, 0, 1, "J", 0), (1, 0, 1, "J", 1), (0, -1, 1, "V", 1), (5, 5, 1, "C", 2)]
    assert {a for a in legal_strings(solo_position(GAME, hexes)) if a.startswith("hut")} == \
        {"hut@0,0", "hut@5,5"}
    # flood: J(0,0) J(1,0) J(1,1) J(2,1) and J(-1,0) (level 2, not a founding hex) are one area
    assert {a for a in legal_strings(solo_position(solo_game(found_flood=True), FOUND_HEXES))
            if a.startswith("hut")} == {"hut@0,0", "hut@5,5"}


# -- the box (SOLO.md 3.1, 6.10) ------------------------------------------------------------------


def test_box_piece_hut_option_and_single_kind_left():
    s = start(solo_game(box_piece="hut"), T0, tile="CJ")
    s.apply(tile_at("CJ", (-2, 0), (-3, 1), (-2, 1)))
    assert s.step is Step.BUILD and s.solo_counts()["boxed"]["huts"] == 1
    hexes = [(-1, 1, 1, "J", 0), (0, 1, 1, "C", 0), (0, 0, 1, "V", 0)]
    s = solo_position(GAME, hexes, step="tile", tile="CJ", supply=(5, 0, 0))
    s.apply(tile_at("CJ", (-2, 0), (-3, 1), (-2, 1)))  # class 1; only huts left: no choice
    assert s.step is Step.BUILD and s.supply(0)["huts"] == 4


def test_bonus_tile_class_1_costs_nothing():
    hexes = [(-1, 1, 1, "J", 0), (0, 1, 1, "C", 0), (0, 0, 1, "V", 0)]
    s = solo_position(GAME, hexes, step="tile", tile="CJ", source="faceup", face_up=None,
                      stack=9)
    s.apply(tile_at("CJ", (-2, 0), (-3, 1), (-2, 1)))
    assert s.solo_counts()["boxed"] == {"huts": 0, "temples": 0, "towers": 0}
    assert s.step is Step.CHANCE  # the face-up tile is replaced before the build


# -- the end (SOLO.md 4) --------------------------------------------------------------------------


def test_end_no_legal_build_scenario_13():
    hexes = [(-1, 1, 1, "J", 0), (0, 1, 1, "C", 0), (0, 0, 1, "V", 0)]
    s = solo_position(GAME, hexes, step="tile", tile="RR", supply=(0, 3, 2), pile=3, stack=10)
    s.apply(int(s.legal_actions()[0]))  # class 1 (V-V only): a piece into the box
    s.apply("box:temple")
    assert s.is_terminal() and s.end_reason is EndReason.NO_BUILD
    b = s.score_breakdown()
    assert (b["tiles_left"], b["bonus"]) == (-2, 0)
    assert s.returns().tolist() == [float(s.score())]


def test_end_supply_empty_after_a_build_and_after_a_box():
    hexes = [(-1, 1, 1, "J", 0), (0, 1, 1, "C", 0), (0, 0, 1, "V", 0)]
    s = solo_position(GAME, hexes, supply=(1, 0, 0))
    s.apply("hut@-1,1")
    assert s.end_reason is EndReason.SUPPLY_OUT
    s = solo_position(GAME, hexes, step="tile", tile="CJ", supply=(0, 1, 0))
    s.apply(tile_at("CJ", (-2, 0), (-3, 1), (-2, 1)))  # class 1 boxes the last piece
    assert s.end_reason is EndReason.SUPPLY_OUT and s.solo_counts()["boxed"]["temples"] == 1


def test_end_draw_pile_empty_at_the_end_of_the_turn():
    hexes = [(-1, 1, 1, "J", 0), (0, 1, 1, "C", 0), (0, 0, 1, "V", 0)]
    s = solo_position(GAME, hexes, pile=0, stack=4)
    s.apply("hut@-1,1")
    assert s.end_reason is EndReason.PILE_OUT and s.is_terminal()


def test_end_last_tile_taken_as_a_bonus_tile_ends_after_the_build():
    # the regular tile in hand, one tile left in the draw pile, the bonus stack empty
    hexes = [(x[0], x[1], x[2], x[3], x[4]) for p in WINDMILL
             for x in tile_hexes(*p[1], p[2], tile_name(p[0]), 1, WINDMILL.index(p))]
    s = solo_position(GAME, hexes, step="tile", tile="RS", pile=1, stack=0, face_up=None)
    assert SK.check_invariants(s.players, s.deck, s.meta) == 0
    s.apply(tile_at("RS", (0, -2), (-1, -2), (-1, -1)))  # class 3
    assert legal_strings(s) == {"bonus:pile", "bonus:stop"}
    s.apply("bonus:pile")
    s.draw()  # the last tile
    assert s.solo_counts()["draw_pile"] == 0
    if s.step is Step.TILE:
        s.apply(int(s.legal_actions()[0]))
    if s.step is Step.BONUS:
        s.apply("bonus:stop")
    assert s.step is Step.BUILD
    s.apply(int(s.legal_actions()[0]))
    assert s.is_terminal() and s.end_reason is EndReason.PILE_OUT
    assert s.score_breakdown()["tiles_left"] == 10


# -- whole games ----------------------------------------------------------------------------------


def test_random_games_keep_the_counters_consistent_and_end():
    rng = np.random.default_rng(0)
    for opts in ({}, {"unplaceable": "bottom", "contacts": "hexes", "found_flood": True},
                 {"bonus_any_source": True, "bonus_no_eruption": True, "box_piece": "hut"}):
        g = solo_game(**opts)
        for seed in range(3):
            s = g.new_initial_state(seed=seed)
            plies = 0
            while not s.is_terminal():
                random_step(s, rng)
                assert SK.check_invariants(s.players, s.deck, s.meta) == 0
                plies += 1
            assert plies <= g.max_game_length
            assert s.end_reason in (EndReason.NO_BUILD, EndReason.SUPPLY_OUT,
                                    EndReason.PILE_OUT)
            assert s.returns()[0] == s.score() == sum(s.score_breakdown().values())
            assert s.winners() == ([0] if s.score() >= 40 else [])


def test_no_step_forces_a_no_op_along_games():
    """Issue 23's question for the solo variant: no decision's only legal action leaves the
    island and the pieces as they are. A bonus tile is never forced (``bonus:stop`` is always
    offered, with only sources that hold a tile: the draw pile not empty, the face-up tile
    with a placement); the box step is a choice between kinds left in the supply; a step with
    one legal action (a tile placement or a build) changes the island. The games follow the
    greedy rollout policy's preferences (``prior_values``), with 20% random moves: uniformly
    random games run out of pieces after some 10 builds and rarely reach a bonus step."""
    rng = np.random.default_rng(23)
    for opts in ({}, {"unplaceable": "bottom", "box_piece": "hut"},
                 {"bonus_any_source": True, "upper_bonus": False}):
        g = solo_game(**opts)
        h = g.num_cells
        for seed in range(8):
            s = g.new_initial_state(seed=seed)
            s.record_history = False
            while not s.is_terminal():
                if s.current_player < 0:
                    s.draw()
                    continue
                legal = s.legal_actions()
                assert legal.size > 0
                if s.step is Step.BONUS:
                    assert legal[-1] == 14 * h + SK.A_STOP and legal.size >= 2
                    counts = s.solo_counts()
                    for a in legal[:-1]:
                        t = s.clone()
                        t.apply(int(a))
                        assert t.step is not Step.TILE or t.legal_actions().size > 0
                        assert a != 14 * h + SK.A_BONUS_PILE or counts["draw_pile"] > 0
                elif s.step is Step.BOX:
                    assert legal.size >= 2
                elif legal.size == 1:
                    t = s.clone()
                    t.apply(int(legal[0]))
                    assert not np.array_equal(t.cells, s.cells)
                ids, values = s.prior_values()
                if rng.random() >= 0.2:
                    ids = ids[values == values.max()]
                s.apply(int(ids[rng.integers(ids.size)]))


def test_undo_and_clone_in_a_solo_game():
    s = start(GAME, tile="RS")
    before = (s.cells.copy(), s.meta.copy())
    c = s.clone()
    s.apply(tile_at("RS", (0, -2), (-1, -2), (-1, -1)))
    s.apply("bonus:faceup")
    s.undo()
    s.undo()
    assert np.array_equal(s.cells, before[0]) and np.array_equal(s.meta, before[1])
    assert np.array_equal(c.meta, before[1])


# -- bad input ------------------------------------------------------------------------------------


def test_wrong_step_and_out_of_range_actions():
    s = start(GAME, tile="RS")
    with pytest.raises(WrongStepError, match="bonus choice during the tile step"):
        s.apply("bonus:pile")
    with pytest.raises(WrongStepError, match="build during the tile step"):
        s.apply("hut@0,1")
    with pytest.raises(ActionOutOfRangeError):
        s.apply(GAME.num_actions)
    s.apply(tile_at("RS", (0, -2), (-1, -2), (-1, -1)))
    with pytest.raises(WrongStepError, match="tile placement during the bonus step"):
        s.apply("tile@5,5:N")
    with pytest.raises(WrongStepError, match="box choice during the bonus step"):
        s.apply("box:hut")
    assert s.step is Step.BONUS  # unchanged


def test_illegal_choices_name_the_rule():
    b = bonus_state(GAME, P_Q_HEXES, "CS")
    b.apply(tile_at("CS", (0, 0), (0, 1), (1, 0)))
    with pytest.raises(IllegalActionError, match="draw pile only"):
        b.apply("bonus:faceup")
    s = start(GAME, T0, tile="CJ")
    s.apply(tile_at("CJ", (-2, 0), (-3, 1), (-2, 1)))
    s.apply("box:tower")
    s2 = start(GAME, T0, tile="CJ")
    s2.players[0, 2] = 0  # no tower left
    s2.apply(tile_at("CJ", (-2, 0), (-3, 1), (-2, 1)))
    with pytest.raises(IllegalActionError, match="no tower left"):
        s2.apply("box:tower")


def test_solo_actions_in_a_multiplayer_game_and_solo_methods_refused():
    g = TaluvaGame(num_players=2)
    s = g.new_initial_state(seed=0)
    s.draw()
    with pytest.raises(IllegalActionError, match="solo variant"):
        s.apply("bonus:pile")
    with pytest.raises(ValueError, match="solo variant"):
        s.score()
    with pytest.raises(ValueError, match="solo variant"):
        g.new_initial_state(seed=0, island=T0)


@pytest.mark.parametrize("opts,match", [
    ({"contacts": "sides"}, "contacts must be one of"),
    ({"pattern_overlap": "none"}, "pattern_overlap must be one of"),
    ({"volcano_in_T": "yes"}, "volcano_in_T must be True or False"),
    ({"found_flood": True, "found_plain": True}, "exclude each other"),
    ({"ranked": True}, "ranked is not an option of the solo variant"),
    ({"num_players": 3}, "solo variant has one player"),
])
def test_bad_solo_options(opts, match):
    with pytest.raises(RuleError, match=match):
        RuleSet(solo=True, **opts)


def test_solo_options_need_solo_and_multiplayer_dicts_are_unchanged():
    with pytest.raises(RuleError, match="needs solo=True"):
        RuleSet(level3_chain=False)
    assert "solo" not in RuleSet().to_dict()
    r = RuleSet(solo=True, pattern_overlap="disjoint")
    assert r.num_players == 1 and RuleSet.from_dict(r.to_dict()) == r


def test_bad_islands_and_decks():
    with pytest.raises(ValueError, match="covers a hex already"):
        GAME.new_initial_state(island=[("JC", (0, 0), 0), ("JC", (0, 0), 1)])
    with pytest.raises(ValueError, match="starting island entry 0"):
        GAME.new_initial_state(island=[("XX", (0, 0), 0)])
    with pytest.raises(ValueError, match="more copies"):
        GAME.new_initial_state(deck=[parse_tile("LL")] * 2)
    with pytest.raises(ValueError, match="explicit deck"):
        solo_game(start_layout="random").new_initial_state(seed=1, deck=[0])
    s = GAME.new_initial_state(island=["JC@0,0:N"], deck=[parse_tile("SS")])
    assert placement_hexes(WINDMILL[0]) == ((0, 0), (-1, 1), (0, 1))
    assert s.solo_counts()["draw_pile"] == 37 and s.draw() == parse_tile("SS")
