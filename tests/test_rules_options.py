"""Scenario tests for every rule option of RULES.md and for the end-of-game rules
(elimination, last standing, early victory, tiles out with its tie-breaks, ranked play, returns).
"""

from __future__ import annotations

import pytest
from helpers import (
    builds,
    eruptions,
    hex_at,
    legal_strings,
    make_position,
    play_random_game,
    put,
    settlements_of,
    tile_hexes,
)

from taluva_ai import CHANCE, IllegalActionError, make_game
from taluva_ai.games.taluva import EndReason, RuleError, RuleSet, Status, TaluvaGame
from taluva_ai.games.taluva.hexgrid import DIRECTIONS, hex_distance
from taluva_ai.games.taluva.tiles import parse_tile

FIRST_TILE = tile_hexes(0, 0, "N", "JC", 1, 0)  # V(0,0) J(-1,1) C(0,1)
TWO_TILES = tile_hexes(0, 0, "N", "JJ", 1, 0) + tile_hexes(2, 0, "NE", "JJ", 1, 1)


def last_turn(game: TaluvaGame, supplies, *, player=0, eliminated=(), finished=(),
              destroyed=None):
    """Seat ``player`` has placed the last tile (none left to draw) and builds next: its
    ``hut@-1,1`` ends the game by tiles out."""
    return make_position(
        game, FIRST_TILE, player=player, placed=game.rules.deck_size,
        drawn=game.rules.deck_size, supplies=supplies, eliminated=eliminated, finished=finished,
        destroyed=destroyed,
    )


def owned_by(hexes, player):
    """``hexes`` with every building given to ``player``."""
    return [(*h[:5], h[5], player) if len(h) == 7 else h for h in hexes]


def doomed(game: TaluvaGame, player: int, *, eliminated=(), finished=(), supplies=None,
           upcoming=()):
    """Seat ``player`` holds a tile but has no hut left and nothing on the board: whatever it
    places, it has no legal build and is eliminated."""
    sup = {player: (0, 3, 2)}
    sup.update(supplies or {})
    return make_position(
        game, FIRST_TILE, player=player, step="tile", tile="JJ", supplies=sup,
        eliminated=eliminated, finished=finished, upcoming=upcoming,
    )


# -- tiles_per_player ---------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "k"), [(2, 25), (3, 17), (4, 13)])
def test_tiles_per_player_too_many_rejected(players, k):
    with pytest.raises(RuleError, match=f"needs {players * k} tiles, but the game has only 48"):
        RuleSet(num_players=players, tiles_per_player=k)
    with pytest.raises(RuleError):
        make_game("taluva", num_players=players, tiles_per_player=k)


@pytest.mark.parametrize(("players", "k", "size"), [(2, 24, 48), (3, 16, 48), (4, 12, 48),
                                                     (2, 12, 24), (3, 1, 3), (4, None, 48)])
def test_tiles_per_player_deck_size(players, k, size):
    assert RuleSet(num_players=players, tiles_per_player=k).deck_size == size


@pytest.mark.parametrize("k", [0, -1, True, 2.0])
def test_tiles_per_player_bad_values(k):
    with pytest.raises(RuleError, match="tiles_per_player"):
        RuleSet(tiles_per_player=k)


def test_tiles_per_player_one_each_ends_after_two_tiles():
    game = make_game("taluva", tiles_per_player=1)
    s = game.new_initial_state(deck=[parse_tile("JC"), parse_tile("SR")])
    assert s.tiles_left == 2
    s.draw()
    s.apply("tile@0,0:N")
    s.apply("hut@-1,1")
    assert s.tiles_left == 1
    assert s.draw() == parse_tile("SR")
    s.apply("tile@1,0:SW")
    assert hex_at(s, 2, 0) == (1, "S", ".", -1)
    s.apply("hut@2,0")
    assert s.is_terminal()
    assert s.end_reason == EndReason.TILES_OUT
    assert s.tiles_placed == 2
    # one hut each and nothing else: a shared win
    assert s.winners() == [0, 1]
    assert s.places() == [0, 0]
    assert s.returns().tolist() == [0.0, 0.0]


def test_tiles_per_player_twelve_seeded_game():
    game = make_game("taluva", tiles_per_player=12)
    s, actions = play_random_game(game, seed=0)
    assert s.end_reason == EndReason.TILES_OUT
    assert s.tiles_placed == 24
    assert len(actions) == 48
    assert len(s.history()) == 72  # 24 draws, 24 placements, 24 builds
    assert s.winners() == [0]


# -- new_hut_isolated ---------------------------------------------------------------------------


@pytest.mark.parametrize(("isolated", "jungle_level", "expected"), [
    (True, 1, {"hut@3,0", "expand@0,0:J"}),
    # an expansion filling one level-1 hex is the same outcome as a hut there: listed as the hut
    (False, 1, {"hut@1,0", "hut@3,0"}),
    (True, 2, {"hut@3,0", "expand@0,0:J"}),
    (False, 2, {"hut@3,0", "expand@0,0:J"}),
])
def test_new_hut_isolated(isolated, jungle_level, expected):
    game = TaluvaGame(new_hut_isolated=isolated)
    hexes = [(0, 0, 1, "C", 0, "h", 0), (1, 0, jungle_level, "J", 1), (2, 0, 1, "V", 2),
             (3, 0, 1, "S", 3)]
    s = make_position(game, hexes)
    assert legal_strings(s) == expected
    if not isolated and jungle_level == 1:
        s.apply("hut@1,0")
        assert settlements_of(s, 0) == {frozenset({(0, 0), (1, 0)})}
    if isolated:
        with pytest.raises(IllegalActionError) as e:
            s.apply("hut@1,0")
        assert e.value.rule in (
            "new_hut_isolated: a new hut may not touch a settlement of the same player",
            "found a settlement: a new hut goes on a level-1 hex",
        )


# -- ranked -------------------------------------------------------------------------------------


def test_ranked_three_players_early_victory_then_elimination():
    game = TaluvaGame(num_players=3, ranked=True)
    hexes = [*FIRST_TILE, (2, -1, 1, "C", 1, "h", 0), (2, 0, 3, "R", 2)]
    s = make_position(game, hexes, supplies={0: (5, 0, 1), 1: (0, 3, 2)}, upcoming=["JJ"])
    assert builds(s, "tower") == {"tower@2,0"}
    s.apply("tower@2,0")
    assert s.status(0) == Status.FINISHED
    assert s.places() == [0, -1, -1]
    assert not s.is_terminal()
    assert s.returns().tolist() == [0.0, 0.0, 0.0]
    s.draw()
    assert s.current_player == 1
    s.apply("tile@-1,0:S")  # seat 1 has no hut left and no settlement: eliminated
    assert s.status(1) == Status.ELIMINATED
    assert s.is_terminal()
    assert s.end_reason == EndReason.LAST_STANDING
    assert s.places() == [0, 2, 1]
    assert s.returns().tolist() == [1.0, -1.0, 0.0]
    assert s.winners() == [0]


def test_ranked_finished_player_is_skipped():
    game = TaluvaGame(num_players=3, ranked=True)
    s = make_position(game, FIRST_TILE, player=2, finished=[0], upcoming=["JJ"])
    assert s.places() == [0, -1, -1]
    s.apply("hut@-1,1")
    s.draw()
    assert s.current_player == 1  # seat 0 left the table


def test_ranked_four_players_eliminations_take_worst_places_in_order():
    game = TaluvaGame(num_players=4, ranked=True)
    s = doomed(game, 2, eliminated=[1], upcoming=["SS"])
    assert s.places() == [-1, 3, -1, -1]
    s.apply("tile@-1,0:S")
    assert s.status(2) == Status.ELIMINATED
    assert s.places() == [-1, 3, 2, -1]
    assert not s.is_terminal()
    s.draw()
    assert s.current_player == 3


def test_ranked_four_players_tiles_out_with_tie():
    game = TaluvaGame(num_players=4, ranked=True)
    # seat 2 was eliminated (place 3); at the end seats 0 and 1 tie (1 temple, 1 tower,
    # 10 huts built each, seat 0 after its last hut), seat 3 has 1 temple and no tower
    s = last_turn(game, {0: (11, 2, 1), 1: (10, 2, 1), 2: (10, 0, 2), 3: (5, 2, 2)},
                  eliminated=[2])
    s.apply("hut@-1,1")
    assert s.end_reason == EndReason.TILES_OUT
    assert s.places() == [0, 0, 3, 2]
    assert s.winners() == [0, 1]
    assert s.returns().tolist() == pytest.approx([2 / 3, 2 / 3, -1.0, -1 / 3], abs=1e-12)
    assert s.returns().sum() == pytest.approx(0.0, abs=1e-12)


def test_ranked_three_players_tie_for_last():
    game = TaluvaGame(num_players=3, ranked=True)
    s = last_turn(game, {0: (10, 1, 2), 1: (10, 2, 2), 2: (10, 2, 2)})
    s.apply("hut@-1,1")
    assert s.places() == [0, 1, 1]
    assert s.returns().tolist() == pytest.approx([1.0, -0.5, -0.5], abs=1e-12)


@pytest.mark.parametrize("ranked", [False, True])
def test_ranked_two_players_changes_nothing(ranked):
    game = TaluvaGame(ranked=ranked)
    hexes = [*FIRST_TILE, (2, -1, 1, "C", 1, "h", 0), (2, 0, 3, "R", 2)]
    s = make_position(game, hexes, supplies={0: (5, 0, 1)})
    s.apply("tower@2,0")
    assert s.is_terminal()
    assert s.end_reason == EndReason.EARLY_VICTORY
    assert s.places() == [0, 1]
    assert s.returns().tolist() == [1.0, -1.0]
    # elimination
    s = doomed(game, 0)
    s.apply("tile@-1,0:S")
    assert s.end_reason == EndReason.LAST_STANDING
    assert s.places() == [1, 0]
    assert s.returns().tolist() == [-1.0, 1.0]
    # tiles out
    s = last_turn(game, {0: (10, 3, 2), 1: (10, 2, 2)})
    s.apply("hut@-1,1")
    assert s.places() == [1, 0]
    assert s.returns().tolist() == [-1.0, 1.0]


# -- no_lake_building ---------------------------------------------------------------------------


@pytest.mark.parametrize(("no_lake", "expected"), [
    (False, {"hut@5,0", "temple@0,1", "temple@-1,0", "temple@0,-1", "tower@-1,0",
             "expand@0,0:L", "expand@0,0:C"}),
    (True, {"temple@0,-1", "expand@0,0:C"}),
])
def test_no_lake_building(no_lake, expected):
    game = TaluvaGame(no_lake_building=no_lake)
    hexes = [
        (0, 0, 1, "J", 0, "h", 0), (1, 0, 1, "J", 1, "h", 0), (2, 0, 1, "J", 2, "h", 0),
        (0, 1, 1, "L", 3), (-1, 0, 3, "L", 4), (5, 0, 1, "L", 5), (0, -1, 1, "C", 6),
    ]
    s = make_position(game, hexes)
    assert legal_strings(s) == expected
    if no_lake:
        for bad in ("hut@5,0", "temple@0,1", "tower@-1,0"):
            with pytest.raises(IllegalActionError) as e:
                s.apply(bad)
            assert e.value.rule == "no_lake_building: no building of any kind on lake hexes"
        with pytest.raises(IllegalActionError, match="no_lake_building"):
            s.apply("expand@0,0:L")
    else:
        s.apply("expand@0,0:L")
        assert s.supply(0)["huts"] == 17 - 4


# -- tiebreak_towers_first and the final count ---------------------------------------------------


@pytest.mark.parametrize(("towers_first", "winners"), [(False, [0]), (True, [1])])
def test_tiebreak_towers_first(towers_first, winners):
    game = TaluvaGame(tiebreak_towers_first=towers_first)
    # seat 0: 2 temples, no tower; seat 1: 1 temple, 2 towers
    s = last_turn(game, {0: (10, 1, 2), 1: (10, 2, 0)})
    s.apply("hut@-1,1")
    assert s.end_reason == EndReason.TILES_OUT
    assert s.winners() == winners


@pytest.mark.parametrize("towers_first", [False, True])
def test_tiles_out_huts_break_ties_destroyed_included(towers_first):
    game = TaluvaGame(tiebreak_towers_first=towers_first)
    # equal temples and towers; seat 0 built 10 huts (after its last), seat 1 built 11,
    # 3 of them destroyed since
    s = last_turn(game, {0: (11, 2, 1), 1: (9, 2, 1)}, destroyed={1: 3})
    s.apply("hut@-1,1")
    assert s.built(1)["huts"] == 11
    assert s.winners() == [1]
    assert s.returns().tolist() == [-1.0, 1.0]


def test_tiles_out_temples_first_by_default():
    game = TaluvaGame()
    # seat 0: 2 temples and (after this hut, its last: one kind only) 20 huts;
    # seat 1: 3 temples and 2 huts
    s = last_turn(game, {0: (1, 1, 2), 1: (18, 0, 2)})
    s.apply("hut@-1,1")
    assert s.end_reason == EndReason.TILES_OUT
    assert s.winners() == [1]


@pytest.mark.parametrize(("players", "expected"), [
    (2, [0.0, 0.0]),
    (3, [0.25, 0.25, -0.5]),
    (4, [1 / 3, 1 / 3, -1 / 3, -1 / 3]),
])
def test_tiles_out_shared_win_returns(players, expected):
    game = TaluvaGame(num_players=players)
    sup = {0: (11, 2, 1), 1: (10, 2, 1)}
    for p in range(2, players):
        sup[p] = (10, 3, 2)  # fewer temples than seats 0 and 1
    s = last_turn(game, sup)
    s.apply("hut@-1,1")
    assert s.winners() == [0, 1]
    assert s.places() == [0, 0] + [1] * (players - 2)
    assert s.returns().tolist() == pytest.approx(expected, abs=1e-12)


def test_tiles_out_eliminated_best_count_excluded():
    game = TaluvaGame(num_players=4)
    s = last_turn(game, {0: (12, 2, 1), 1: (10, 0, 1), 2: (10, 2, 2), 3: (5, 3, 2)},
                  eliminated=[1])
    s.apply("hut@-1,1")
    assert s.winners() == [0]
    assert s.places() == [0, 1, 1, 1]
    assert s.returns().tolist() == pytest.approx([1.0, -1 / 3, -1 / 3, -1 / 3], abs=1e-12)


# -- destroyed_huts_return ----------------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("returned", [False, True])
def test_destroyed_huts_return(level, returned):
    game = TaluvaGame(destroyed_huts_return=returned)
    base = [(q, r, level, t, i) for (q, r, _, t, i) in TWO_TILES]
    hexes = put(base, {(-1, 1): ("h", 0), (0, 1): ("h", 0), (1, 0): ("h", 1), (1, 1): ("h", 1)})
    s = make_position(game, hexes, step="tile", tile="CC")
    start = 20 - 2 * level
    assert s.supply(0)["huts"] == start
    s.apply("tile@0,0:NW")
    for p in (0, 1):
        if returned:
            assert s.supply(p)["huts"] == start + level
            assert s.destroyed_huts(p) == 0
            assert s.built(p)["huts"] == level
        else:
            assert s.supply(p)["huts"] == start
            assert s.destroyed_huts(p) == level
            assert s.built(p)["huts"] == 2 * level


# -- early victory ------------------------------------------------------------------------------


TEMPLE_SITE = [(0, 0, 1, "C", 0, "h", 0), (1, 0, 1, "C", 1, "h", 0), (2, 0, 1, "C", 2, "h", 0),
               (0, 1, 1, "S", 3), (3, 0, 1, "V", 4)]


@pytest.mark.parametrize(("kinds", "over"), [(2, True), (3, False)])
def test_early_victory_kinds_temples_and_towers(kinds, over):
    game = TaluvaGame(early_victory_kinds=kinds)
    s = make_position(game, TEMPLE_SITE, supplies={0: (5, 1, 0)})
    s.apply("temple@0,1")
    assert s.is_terminal() is over
    if over:
        assert s.end_reason == EndReason.EARLY_VICTORY
        assert s.winners() == [0]
        assert s.returns().tolist() == [1.0, -1.0]
    else:
        assert s.current_player == -1
        assert s.end_reason == EndReason.NONE
        assert s.winners() == []


def test_early_victory_kinds_three_needs_all_kinds():
    game = TaluvaGame(early_victory_kinds=3)
    s = make_position(game, TEMPLE_SITE, supplies={0: (1, 0, 0)})
    assert builds(s, "hut") == set()  # every level-1 hex touches the settlement
    s.apply("expand@0,0:S")
    assert s.end_reason == EndReason.EARLY_VICTORY
    assert s.winners() == [0]


@pytest.mark.parametrize(("players", "expected"), [
    (2, [-1.0, 1.0]),
    (3, [-0.5, 1.0, -0.5]),
    (4, [-1 / 3, 1.0, -1 / 3, -1 / 3]),
])
def test_early_victory_huts_and_temples_returns(players, expected):
    game = TaluvaGame(num_players=players)
    s = make_position(game, owned_by(TEMPLE_SITE, 1), player=1, supplies={1: (0, 1, 2)})
    s.apply("temple@0,1")
    assert s.end_reason == EndReason.EARLY_VICTORY
    assert s.winners() == [1]
    assert s.returns().tolist() == pytest.approx(expected, abs=1e-12)


# -- elimination and last standing --------------------------------------------------------------


def test_elimination_three_players_play_goes_on():
    game = TaluvaGame(num_players=3)
    s = doomed(game, 0, upcoming=["SS", "RR"])
    s.apply("tile@-1,0:S")
    assert s.status(0) == Status.ELIMINATED
    assert not s.is_terminal()
    s.draw()
    assert s.current_player == 1
    s.apply(int(s.legal_actions()[0]))
    s.apply(int(s.legal_actions()[0]))
    s.draw()
    assert s.current_player == 2
    s.apply(int(s.legal_actions()[0]))
    s.apply(int(s.legal_actions()[0]))
    assert s.current_player == -1
    s.draw()
    assert s.current_player == 1  # seat 0 skipped


@pytest.mark.parametrize(("players", "expected"), [
    (3, [-0.5, -0.5, 1.0]),
    (4, [-1 / 3, -1 / 3, 1.0, -1 / 3]),
])
def test_last_standing_returns(players, expected):
    game = TaluvaGame(num_players=players)
    others = [p for p in (1, 3) if p < players]
    s = doomed(game, 0, eliminated=others)
    s.apply("tile@-1,0:S")
    assert s.end_reason == EndReason.LAST_STANDING
    assert s.winners() == [2]
    assert s.places() == [1 if p != 2 else 0 for p in range(players)]
    assert s.returns().tolist() == pytest.approx(expected, abs=1e-12)


# -- tile_preview -------------------------------------------------------------------------------


def test_tile_preview_deal_hidden_hands_and_order_of_use():
    deck = [parse_tile(t) for t in ("JC", "SR", "CS", "LJ")]
    game = TaluvaGame(tile_preview=True, tiles_per_player=2)
    s = game.new_initial_state(deck=deck)
    assert s.current_player == -1
    assert s.chance_outcomes()[0][1] == pytest.approx(1 / 48)  # the whole set is shuffled
    s.draw()  # dealt to seat 0
    assert s.current_player == -1
    s.draw()  # dealt to seat 1
    assert s.current_player == 0
    assert s.tile == deck[0]
    assert s.tiles_left == 4
    assert s.observation(0)["hands"] == [deck[0], -1]
    assert s.observation(1)["hands"] == [-1, deck[1]]
    used = []
    while not s.is_terminal():
        if s.current_player == -1:
            s.draw()
            continue
        used.append((s.current_player, s.tile))
        if s.current_player == 1 and len(used) == 2:
            # seat 0 already holds its next tile (deck[2]); seat 1 sees only its own
            assert s.observation(1)["hands"] == [-1, deck[1]]
            assert s.observation(0)["hands"] == [deck[2], -1]
        s.apply(int(s.legal_actions()[0]))
        s.apply(int(s.legal_actions()[0]))
    assert used == [(0, deck[0]), (1, deck[1]), (0, deck[2]), (1, deck[3])]
    assert s.end_reason == EndReason.TILES_OUT
    assert s.tiles_placed == 4


def test_without_tile_preview_no_hands():
    game = TaluvaGame()
    s = game.new_initial_state(seed=3)
    s.draw()
    assert s.observation(1)["hands"] == [-1, -1]
    assert s.observation(1)["tile"] == s.tile


# -- board_radius -------------------------------------------------------------------------------


def test_board_radius_bounds_placements():
    hexes = tile_hexes(3, 0, "N", "JJ", 1, 0)  # V(3,0) J(2,1) J(3,1)
    small = make_position(TaluvaGame(board_radius=4), hexes, step="tile", tile="CC")
    big = make_position(TaluvaGame(), hexes, step="tile", tile="CC")

    def placements(s):
        board = s.game.board
        out = set()
        for a in s.legal_actions():
            v, o = divmod(int(a), 6)
            q, r = board.hex(v)
            hx = [(q, r)] + [(q + DIRECTIONS[d][0], r + DIRECTIONS[d][1])
                             for d in ((o + 4) % 6, (o + 5) % 6)]
            out.add((s.action_to_string(int(a)), max(hex_distance(*h) for h in hx)))
        return out

    big_p = placements(big)
    small_p = placements(small)
    assert {a for a, _ in small_p} == {a for a, d in big_p if d <= 4}
    assert len(small_p) < len(big_p)
    assert ("tile@4,0:NW", 5) in big_p
    with pytest.raises(IllegalActionError) as e:
        small.apply("tile@4,0:NW")
    assert e.value.rule == "board bound: every hex must lie within board_radius=4 of (0,0)"
    with pytest.raises(IllegalActionError, match="outside the board bound"):
        small.apply("tile@6,0:N")


def test_board_radius_out_of_range():
    with pytest.raises(RuleError, match="board_radius"):
        RuleSet(board_radius=3)
    with pytest.raises(RuleError, match="board_radius"):
        RuleSet(board_radius=101)


def test_board_radius_truncation():
    game = TaluvaGame(board_radius=4)
    board = game.board
    # every hex of the radius-4 board holds a level-1 jungle hex: no sea-level room, no volcano
    hexes = [(int(board.q[c]), int(board.r[c]), 1, "J", c // 3) for c in range(board.num_cells)]
    assert len(hexes) == 61
    s = make_position(game, hexes, player=1, step="chance", placed=21, drawn=21)
    s.draw()
    assert s.is_terminal()
    assert s.truncated
    assert s.end_reason == EndReason.TRUNCATED
    assert s.returns().tolist() == [0.0, 0.0]
    assert s.winners() == []
    assert s.places() == [-1, -1]
    assert len(s.legal_actions()) == 0


def test_board_radius_truncation_with_tile_preview():
    """With tile preview the next seat's tile step opens after the mover's preview draw: the
    game ends there as truncated, checked once the draw is applied."""
    game = TaluvaGame(board_radius=4, tile_preview=True)
    board = game.board
    hexes = [(int(board.q[c]), int(board.r[c]), 1, "J", c // 3) for c in range(board.num_cells)]
    s = make_position(game, hexes, player=0, step="build", placed=21, drawn=21,
                      hands={1: "JC"})
    s.apply(int(s.legal_actions()[0]))  # a hut: then seat 0 draws its next preview tile
    assert not s.is_terminal() and s.current_player == CHANCE
    s.draw()
    assert s.is_terminal()
    assert s.end_reason == EndReason.TRUNCATED
    assert s.returns().tolist() == [0.0, 0.0]


@pytest.mark.parametrize(("ranked", "left"), [(False, "eliminated"), (True, "eliminated"),
                                              (True, "finished")])
def test_pieces_of_players_out_of_play_stay_and_block(ranked, left):
    """An eliminated (or, ranked, finished) player's lone hut is still a whole settlement that
    no eruption may cover, and its huts still count as a settlement of that player."""
    game = TaluvaGame(num_players=3, ranked=ranked)
    hexes = put(TWO_TILES, {(0, 1): ("h", 1)})
    kw = {"eliminated": [1]} if left == "eliminated" else {"finished": [1]}
    s = make_position(game, hexes, step="tile", tile="CC", **kw)
    assert s.status(1) == (Status.ELIMINATED if left == "eliminated" else Status.FINISHED)
    assert eruptions(s) == set()
    assert settlements_of(s, 1) == {frozenset({(0, 1)})}
    control = make_position(game, TWO_TILES, step="tile", tile="CC", **kw)
    assert eruptions(control) == {"tile@0,0:NW"}


def test_ranked_four_players_finished_eliminated_then_tiles_out():
    game = TaluvaGame(num_players=4, ranked=True)
    # seat 3 left first with an early victory (place 0), seat 2 was eliminated (place 3);
    # at the end seat 0 (2 temples) beats seat 1 (1 temple)
    s = last_turn(game, {0: (11, 1, 2), 1: (10, 2, 2), 2: (10, 2, 2), 3: (10, 0, 0)},
                  eliminated=[2], finished=[3])
    assert s.places() == [-1, -1, 3, 0]
    s.apply("hut@-1,1")
    assert s.end_reason == EndReason.TILES_OUT
    assert s.places() == [1, 2, 3, 0]
    assert s.winners() == [3]
    assert s.returns().tolist() == pytest.approx([1 / 3, -1 / 3, -1.0, 1.0], abs=1e-12)
