"""The solo variant's scoring table (SOLO.md 5; scenarios 9-12 of section 7) and its options:
exact points by line, the breakdown adding up to the score, the result bands."""

from __future__ import annotations

import pytest

from taluva_ai.games.taluva.solo import SCORE_LINES, result_band
from tests.helpers import tile_hexes
from tests.solo_helpers import solo_game, solo_position

GAME = solo_game()
R6 = [(0, 0), (-1, 1), (0, 1), (-2, 2), (-1, 2), (0, 2)]  # the triangle of 6 of SOLO.md 5


def breakdown(hexes, game=GAME, **kw):
    s = solo_position(game, hexes, **kw)
    b = s.score_breakdown()
    assert list(b) == list(SCORE_LINES)
    assert sum(b.values()) == s.score()
    return b


def test_scenario_9_triangle_of_3_of_lakes():
    b = breakdown([(0, 0, 1, "L", 0), (1, 0, 1, "L", 1), (0, 1, 1, "L", 2)])
    assert (b["triangles_of_3"], b["triangles_of_6"]) == (3, 0)


@pytest.mark.parametrize("terrain,points", [("J", 0), ("C", 0), ("S", 0), ("V", 0), ("R", 1),
                                            ("L", 3)])
def test_triangle_of_3_points_by_terrain(terrain, points):
    b = breakdown([(0, 0, 1, terrain, 0), (1, 0, 1, terrain, 1), (0, 1, 1, terrain, 2)])
    assert b["triangles_of_3"] == points


def test_scenario_9_triangle_of_6_of_rocks_and_its_four_triangles_of_3():
    b = breakdown([(q, r, 1, "R", i) for i, (q, r) in enumerate(R6)])
    assert (b["triangles_of_6"], b["triangles_of_3"]) == (8, 4)
    b = breakdown([(q, r, 1, "R", i) for i, (q, r) in enumerate(R6)],
                  solo_game(pattern_overlap="disjoint"))
    assert (b["triangles_of_6"], b["triangles_of_3"]) == (8, 0)


def test_scenario_9_a_hut_leaves_one_triangle_of_rocks():
    hexes = [(q, r, 1, "R", i) + (("h", 0) if (q, r) == (-1, 2) else ())
             for i, (q, r) in enumerate(R6)]
    b = breakdown(hexes)
    assert (b["triangles_of_6"], b["triangles_of_3"]) == (0, 1)


@pytest.mark.parametrize("terrain,points", [("J", 4), ("C", 5), ("V", 6), ("S", 7), ("R", 8),
                                            ("L", 10)])
def test_triangle_of_6_points_by_terrain_levels_may_differ(terrain, points):
    hexes = [(q, r, 1 + i % 2, terrain, i) for i, (q, r) in enumerate(R6)]
    assert breakdown(hexes)["triangles_of_6"] == points


def test_triangles_of_6_in_both_orientations_overlap_all():
    # u = E, w = SE: rows of 3, 2, 1 (the other orientation than R6's rows of 1, 2, 3)
    down = [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (0, 2)]
    b = breakdown([(q, r, 1, "L", i) for i, (q, r) in enumerate(down)])
    assert (b["triangles_of_6"], b["triangles_of_3"]) == (10, 4 * 3)


def test_disjoint_takes_the_best_packing():
    # a rhombus of 4 lakes holds two triangles of 3 sharing an edge: 3 + 3, or one of them
    rhombus = [(0, 0, 1, "L", 0), (1, 0, 1, "L", 1), (0, 1, 1, "L", 2), (1, 1, 1, "L", 3)]
    assert breakdown(rhombus)["triangles_of_3"] == 6
    assert breakdown(rhombus, solo_game(pattern_overlap="disjoint"))["triangles_of_3"] == 3
    # a triangle of 6 of lakes (10) beats its two disjoint triangles of 3 (3 + 3)
    big = [(q, r, 1, "L", i) for i, (q, r) in enumerate(R6)]
    b = breakdown(big, solo_game(pattern_overlap="disjoint"))
    assert (b["triangles_of_6"], b["triangles_of_3"]) == (10, 0)


def test_scenario_10_settlement_lines():
    row = [(0, 0, 1, "J", 0, "h", 0), (1, 0, 1, "J", 1, "h", 0), (2, 0, 1, "J", 2, "h", 0),
           (3, 0, 1, "J", 3, "h", 0), (4, 0, 2, "C", 4, "h", 0), (5, 0, 1, "S", 5, "T", 0)]
    b = breakdown(row)
    assert (b["settlement_size"], b["hut_levels"], b["terrains_in_settlements"],
            b["distinct_terrains"]) == (4, 2, 1, 1)
    assert b["settlement_size"] + b["hut_levels"] + b["terrains_in_settlements"] + \
        b["distinct_terrains"] == 8


def test_terrain_lines_add_up_or_best_only():
    row = [(i, 0, 1, "J", i, "h", 0) for i in range(4)] + \
          [(i, 0, 1, "C", i, "h", 0) for i in range(4, 9)]
    assert breakdown(row)["terrains_in_settlements"] == 1 + 2
    assert breakdown(row, solo_game(terrain_best_only=True))["terrains_in_settlements"] == 2
    row6 = [(i, 0, 1, "S", i, "h", 0) for i in range(7)]
    assert breakdown(row6)["terrains_in_settlements"] == 4


@pytest.mark.parametrize("terrains,points", [("JC", 0), ("JCS", 1), ("JCSR", 2), ("JCSRL", 5)])
def test_distinct_terrains(terrains, points):
    row = [(i, 0, 1, t, i, "h", 0) for i, t in enumerate(terrains)]
    assert breakdown(row)["distinct_terrains"] == points


def test_scenario_11_level_3_tile_with_huts_on_its_jungle():
    hexes = [(0, 0, 3, "V", 0), (-1, 1, 3, "J", 0, "h", 0), (0, 1, 3, "C", 0)]
    b = breakdown(hexes)
    assert (b["high_hexes"], b["hut_levels"]) == (6, 6)
    assert breakdown(hexes, solo_game(high_no_volcano=True))["high_hexes"] == 3


def test_high_hexes_and_hut_levels_by_level():
    hexes = [(0, 0, 4, "V", 0), (-1, 1, 5, "J", 1), (0, 1, 2, "C", 2),
             (3, 0, 4, "J", 3, "h", 0), (4, 0, 7, "C", 4, "h", 0), (6, 0, 2, "S", 5, "h", 0)]
    b = breakdown(hexes)
    assert b["high_hexes"] == 8 + 8
    assert b["hut_levels"] == 12 + 12 + 2


def test_scenario_12_counters():
    huts = [(3 * i, 0, 1, "J", i, "h", 0) for i in range(5)]  # 5 settlements
    b = breakdown(huts, pile=0, stack=4, face_up="JC", supply=(0, 0, 1), boxed=(1, 0, 0),
                  destroyed=2)
    assert (b["tiles_left"], b["bonus"], b["settlement_count"]) == (2, 6, 5)
    assert (b["temple_tower_penalty"], b["hut_penalty"], b["all_built"]) == (-3, -3, 0)


@pytest.mark.parametrize("left,points", [(0, 10), (1, 5), (3, 5), (4, 2), (6, 2), (7, 0),
                                         (10, 0), (11, -1), (12, -1), (13, -2), (20, -9)])
def test_tiles_left_line(left, points):
    pile = min(left, 31)
    b = breakdown([(0, 0, 1, "J", 0)], pile=pile, stack=left - pile, face_up=None,
                  aside=0)
    assert b["tiles_left"] == points


def test_set_aside_tiles_count_as_remaining():
    assert breakdown([(0, 0, 1, "J", 0)], pile=2, stack=0, face_up=None,
                     aside=2)["tiles_left"] == 2


@pytest.mark.parametrize("count,points", [(3, 0), (4, 2), (5, 5), (6, 10), (7, 18), (8, 18)])
def test_settlement_count_line(count, points):
    huts = [(3 * i, 0, 1, "J", i, "h", 0) for i in range(count)]
    assert breakdown(huts)["settlement_count"] == points


def test_bonus_line_and_bonus_literal():
    assert breakdown([(0, 0, 1, "J", 0)], pile=20, stack=3)["bonus"] == 7
    assert breakdown([(0, 0, 1, "J", 0)], solo_game(bonus_literal=True), pile=20,
                     stack=3)["bonus"] == 17


def test_all_built_and_penalties():
    b = breakdown([(0, 0, 1, "J", 0)], supply=(0, 0, 0))
    assert (b["all_built"], b["hut_penalty"], b["temple_tower_penalty"]) == (5, 0, 0)
    b = breakdown([(0, 0, 1, "J", 0)], supply=(0, 0, 0), boxed=(0, 1, 0))
    assert (b["all_built"], b["temple_tower_penalty"]) == (0, -3)
    b = breakdown([(0, 0, 1, "J", 0)], supply=(0, 0, 0), destroyed=3)
    assert (b["all_built"], b["hut_penalty"]) == (5, -3)  # destroyed huts count as built
    b = breakdown([(0, 0, 1, "J", 0)], supply=(4, 2, 1))
    assert (b["hut_penalty"], b["temple_tower_penalty"]) == (-4, -9)


@pytest.mark.parametrize("score,band", [(-5, "lost"), (39, "lost"), (40, "win"), (44, "win"),
                                        (45, "well played"), (49, "well played"),
                                        (50, "very well played"), (59, "very well played"),
                                        (60, "perfect"), (99, "perfect")])
def test_result_bands(score, band):
    assert result_band(score) == band


def test_start_of_a_game_scores_the_tiles_and_pieces_only():
    s = GAME.new_initial_state(seed=0)
    b = s.score_breakdown()
    assert b["tiles_left"] == -(41 - 11) and b["hut_penalty"] == -20
    assert b["temple_tower_penalty"] == -15 and s.result_band() == "lost"


def test_breakdown_of_a_played_level_3_tile():
    hexes = tile_hexes(0, 0, "N", "JC", 3, 0)
    assert breakdown(hexes)["high_hexes"] == 9
