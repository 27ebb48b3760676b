"""Action notation, action ids, position strings, and the errors on bad input."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import make_position, play_random_game, same_arrays, state_arrays, tile_hexes

from taluva_ai import (
    ActionOutOfRangeError,
    IllegalActionError,
    NotationError,
    PositionError,
    WrongStepError,
)
from taluva_ai.agents import make_agent
from taluva_ai.games.taluva import Action, ActionKind, Step, TaluvaGame, TaluvaState, Terrain
from taluva_ai.games.taluva.actions import decode, encode
from taluva_ai.games.taluva.position import parse_position
from taluva_ai.games.taluva.tiles import parse_tile

# -- actions ------------------------------------------------------------------------------------


def test_notation_examples():
    game = TaluvaGame()
    b = game.board
    h = game.num_cells
    o = b.origin
    assert game.action_to_string(6 * o) == "tile@0,0:N"
    assert game.action_to_string(6 * o + 5) == "tile@0,0:NE"
    assert game.action_to_string(6 * h + b.cell(1, 0)) == "hut@1,0"
    assert game.action_to_string(7 * h + b.cell(-2, 3)) == "temple@-2,3"
    assert game.action_to_string(8 * h + b.cell(0, -1)) == "tower@0,-1"
    assert game.action_to_string(9 * h + 5 * b.cell(3, -3) + 4) == "expand@3,-3:L"
    assert Action.parse("expand@3,-3:L") == Action(ActionKind.EXPAND, 3, -3,
                                                   terrain=Terrain.LAKE)
    assert Action.parse("tile@-1,2:SW") == Action(ActionKind.TILE, -1, 2, orientation=2)
    assert Action.parse("  hut@0,0 ") == Action(ActionKind.HUT, 0, 0)
    assert Action.parse("draw:RC") == Action(ActionKind.DRAW, tile=parse_tile("RC"))
    assert str(Action(ActionKind.DRAW, tile=24)) == "draw:LL"


@pytest.mark.parametrize("radius", [4, 32])
def test_every_id_round_trips(radius):
    game = TaluvaGame(board_radius=radius)
    for a in range(game.num_actions):
        act = decode(a, game.board)
        text = str(act)
        assert Action.parse(text) == act
        assert encode(act, game.board) == a
        assert game.string_to_action(text) == a
    with pytest.raises(ActionOutOfRangeError):
        decode(game.num_actions, game.board)
    with pytest.raises(ActionOutOfRangeError):
        decode(-1, game.board)


@pytest.mark.parametrize(("players", "seed"), [(2, 5), (4, 6)])
def test_legal_actions_round_trip_along_games(players, seed):
    game = TaluvaGame(num_players=players)
    seen = {"tile": 0, "build": 0, "draw": 0}

    def check(state: TaluvaState) -> None:
        for a in state.legal_actions():
            a = int(a)
            act = decode(a, game.board)
            text = state.action_to_string(a)
            assert text == str(act)
            assert Action.parse(text) == act
            assert encode(act, game.board) == a
            assert decode(encode(act, game.board), game.board) == act
            assert state.parse_action(text) == a
            seen["tile" if act.kind is ActionKind.TILE else "build"] += 1

    state = game.new_initial_state(seed=seed)
    agent = make_agent("random", seed=seed)
    while not state.is_terminal():
        if state.current_player == -1:
            for t, _ in state.chance_outcomes():
                text = state.action_to_string(t)
                assert re.fullmatch(r"draw:[JCSRL]{2}", text)
                assert state.parse_action(text) == t
                seen["draw"] += 1
            state.draw()
            continue
        check(state)
        state.apply(agent.act(state))
    assert min(seen.values()) > 0


def test_expansion_named_by_any_hex_of_the_settlement():
    game = TaluvaGame()
    hexes = [(0, 0, 1, "C", 0, "h", 0), (1, 0, 1, "C", 1, "h", 0), (0, 1, 1, "J", 2),
             (2, 0, 1, "J", 3)]
    s = make_position(game, hexes)
    canon = s.parse_action("expand@0,0:J")
    assert s.parse_action("expand@1,0:J") == canon
    assert s.action_to_string(canon) == "expand@0,0:J"
    s.apply("expand@1,0:J")
    assert s.history()[-1] == canon
    s2 = make_position(game, hexes)
    with pytest.raises(IllegalActionError) as e:
        s2.apply("expand@0,1:J")
    assert e.value.rule == "expansion: the named hex holds no settlement of the player to move"


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "", "foo", "tile@0,0", "tile@0,0:X", "tile@0,0:n", "hut@a,b", "hut@0,0:J", "hut@0;0",
    "expand@0,0", "expand@0,0:V", "expand@0,0:JJ", "temple@1,1:N", "draw:XX", "draw:J",
    "draw:", "tile@1234567890,0:N", "Hut@0,0", "hut 0,0", "tile@\u0660,\u0660:N",
])
def test_malformed_notation(text):
    with pytest.raises(NotationError):
        Action.parse(text)
    game = TaluvaGame()
    s = game.new_initial_state(seed=0)
    s.draw()
    before = s.to_position_string()
    with pytest.raises(NotationError):
        s.apply(text)
    assert s.to_position_string() == before


def test_far_hexes_parse_but_are_outside_the_board_bound():
    assert str(Action.parse("tile@12345,0:N")) == "tile@12345,0:N"
    s = TaluvaGame().new_initial_state(seed=0)
    s.draw()
    before = s.to_position_string()
    with pytest.raises(IllegalActionError, match="outside the board bound"):
        s.apply("tile@12345,0:N")
    assert s.to_position_string() == before


@pytest.mark.parametrize("kwargs", [
    {"kind": ActionKind.TILE, "q": -1, "r": -2, "orientation": 6},
    {"kind": ActionKind.TILE, "orientation": -1},
    {"kind": ActionKind.TILE, "q": 0.5},
    {"kind": ActionKind.DRAW, "tile": 3.0},
    {"kind": ActionKind.DRAW, "tile": True},
    {"kind": ActionKind.DRAW, "tile": 99},
    {"kind": ActionKind.EXPAND, "terrain": Terrain.VOLCANO},
    {"kind": "tile"},
])
def test_malformed_action_values_are_rejected(kwargs):
    with pytest.raises(NotationError):
        Action(**kwargs)


@pytest.mark.parametrize("bad", [3.0, None, True, [1], b"hut@0,0"])
def test_apply_rejects_non_actions(bad):
    s = TaluvaGame().new_initial_state(seed=0)
    s.draw()
    with pytest.raises(NotationError):
        s.apply(bad)


def test_notation_off_board():
    game = TaluvaGame(board_radius=4)
    with pytest.raises(NotationError, match="outside the board"):
        game.string_to_action("hut@5,0")


def _mid_game(seed=3, decisions=20, game=None):
    game = game or TaluvaGame()
    state = game.new_initial_state(seed=seed)
    agent = make_agent("random", seed=seed)
    n = 0
    while n < decisions:
        if state.current_player == -1:
            state.draw()
        else:
            state.apply(agent.act(state))
            n += 1
    if state.current_player == -1:
        state.draw()
    return state


def test_illegal_action_names_rule_and_leaves_state():
    s = _mid_game()
    assert s.step.name == "TILE"
    before = s.to_position_string()
    hist = s.history()
    with pytest.raises(IllegalActionError) as e:
        s.apply("tile@0,0:N")  # the first volcano is still a volcano at level >= 1
    assert e.value.rule.startswith("eruption rule")
    assert s.to_position_string() == before
    assert s.history() == hist
    with pytest.raises(IllegalActionError) as e:
        s.apply("tile@20,0:N")
    assert e.value.rule == "sea-level placement: one of the three hexes must touch the island"
    assert s.to_position_string() == before


def test_illegal_build_rules():
    game = TaluvaGame()
    hexes = [*tile_hexes(0, 0, "N", "JC", 1, 0), (1, 0, 1, "S", 1, "h", 1)]
    s = make_position(game, hexes)
    before = s.to_position_string()
    cases = {
        "hut@0,0": "build: no building is ever placed on a volcano hex",
        "hut@1,0": "build: the hex already holds a building",
        "hut@5,5": "build: the hex is empty table (only the top of a tile is a build site)",
        "temple@-1,1": "temple: it must touch an own settlement of at least 3 hexes that holds "
                       "no temple",
        "tower@0,1": "tower: it goes on a hex of level 3 or more",
        "expand@1,0:J": "expansion: the named hex holds no settlement of the player to move",
    }
    for text, rule in cases.items():
        with pytest.raises(IllegalActionError) as e:
            s.apply(text)
        assert e.value.rule == rule, text
        assert not isinstance(e.value, WrongStepError)
    assert s.to_position_string() == before


def test_wrong_step_errors():
    game = TaluvaGame()
    s = game.new_initial_state(seed=0)
    s.draw()
    before = s.to_position_string()
    with pytest.raises(WrongStepError):
        s.apply("hut@-1,1")
    with pytest.raises(WrongStepError):
        s.apply(6 * game.num_cells + game.board.origin)
    with pytest.raises(WrongStepError):
        s.chance_outcomes()
    with pytest.raises(WrongStepError):
        s.draw()
    assert s.to_position_string() == before
    s.apply("tile@0,0:N")
    with pytest.raises(WrongStepError):
        s.apply("tile@1,1:N")
    with pytest.raises(WrongStepError):
        s.apply(6 * game.board.origin)


def test_wrong_step_at_terminal():
    s, _ = play_random_game(TaluvaGame(tiles_per_player=2), seed=1)
    assert s.is_terminal()
    before = s.to_position_string()
    for bad in ("hut@0,0", "tile@0,0:N", 0, "draw:JJ"):
        with pytest.raises(WrongStepError, match="over"):
            s.apply(bad)
    with pytest.raises(WrongStepError):
        s.draw()
    assert s.to_position_string() == before


def test_tile_or_build_notation_at_chance_node_is_wrong_step():
    """errors.py: WrongStepError covers "a tile or build at a chance node"."""
    s = TaluvaGame().new_initial_state(seed=0)
    before = s.to_position_string()
    with pytest.raises(WrongStepError):
        s.apply("tile@0,0:N")
    with pytest.raises(WrongStepError):
        s.apply("hut@0,0")
    assert s.to_position_string() == before


def test_draw_notation_at_tile_step_is_wrong_step():
    """A draw (chance outcome) given at the tile step is of the wrong kind for the step; it must
    not be read as the tile action whose id equals the tile type id."""
    game = TaluvaGame(board_radius=4)
    # an island hex at (1,-3): tile action id 0 (= tile@0,-4:N, covering (0,-4) (-1,-3) (0,-3))
    # is then a legal sea-level placement, and JJ's tile type id is 0
    s = make_position(game, [(1, -3, 1, "V", 0), (2, -3, 1, "J", 0), (1, -2, 1, "J", 0)],
                      step="tile", tile="JJ")
    assert game.action_to_string(0) == "tile@0,-4:N"
    assert 0 in s.legal_actions()
    before = s.to_position_string()
    with pytest.raises(WrongStepError):
        s.apply("draw:JJ")
    assert s.to_position_string() == before
    with pytest.raises(WrongStepError):
        s.apply(Action(ActionKind.DRAW, tile=0))
    assert s.to_position_string() == before


def test_out_of_range_ids():
    game = TaluvaGame()
    s = game.new_initial_state(seed=0)
    with pytest.raises(ActionOutOfRangeError):
        s.apply(25)
    with pytest.raises(ActionOutOfRangeError):
        s.apply(-1)
    s.draw()
    before = s.to_position_string()
    for bad in (-1, game.num_actions, 10**9, np.int64(game.num_actions)):
        with pytest.raises(ActionOutOfRangeError) as e:
            s.apply(bad)
        assert isinstance(e.value, IndexError)
        assert isinstance(e.value, IllegalActionError)
    assert s.to_position_string() == before


def test_draw_of_exhausted_tile_type():
    game = TaluvaGame()
    s = game.new_initial_state(deck=[0])  # JJ: one copy
    s.apply(0)
    s.apply("tile@0,0:N")
    s.apply("hut@-1,1")
    with pytest.raises(IllegalActionError, match="no undrawn copy of tile JJ"):
        s.apply(0)
    with pytest.raises(IllegalActionError):
        s.apply("draw:JJ")


# -- position strings ---------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "opts", "seed"), [
    (2, {}, 21), (3, {"tile_preview": True}, 22), (4, {"ranked": True}, 23),
])
def test_position_round_trip_along_game(players, opts, seed):
    game = TaluvaGame(num_players=players, **opts)
    count = [0]

    def check(state: TaluvaState) -> None:
        text = state.to_position_string()
        parsed = parse_position(game, text)
        assert parsed.to_position_string() == text
        assert same_arrays(state_arrays(parsed), state_arrays(state))
        count[0] += 1

    final, _ = play_random_game(game, seed, on_decision=check)
    check(final)
    assert count[0] > 20


@pytest.mark.parametrize("decisions", [0, 1, 17, 40])
def test_parsed_position_plays_on_identically(decisions):
    game = TaluvaGame(num_players=3)
    s = _mid_game(seed=31, decisions=decisions, game=game)
    p = parse_position(game, s.to_position_string())
    a1 = make_agent("greedy", seed=9)
    a2 = make_agent("greedy", seed=9)
    for st, ag in ((s, a1), (p, a2)):
        while not st.is_terminal():
            if st.current_player == -1:
                st.draw()
            else:
                st.apply(ag.act(st))
    assert s.history()[-len(p.history()):] == p.history()
    assert p.to_position_string() == s.to_position_string()
    assert s.returns().tolist() == p.returns().tolist()


def _fields(text: str) -> list[list[str]]:
    return [f.split("=", 1) for f in text.split(";")]


def _join(fields: list[list[str]]) -> str:
    return ";".join("=".join(f) for f in fields)


def _with(text: str, key: str, value: str) -> str:
    fields = _fields(text)
    for f in fields:
        if f[0] == key:
            f[1] = value
    return _join(fields)


@pytest.fixture(scope="module")
def sample_position() -> str:
    s = _mid_game(seed=4, decisions=12)
    return s.to_position_string()


BAD_FIELDS = [
    ("taluva", "2"), ("players", "5"), ("players", "3"), ("players", "x"), ("step", "play"),
    ("player", "2"), ("player", "-1"), ("tile", "XX"), ("tile", "J"), ("drawn", "x"),
    ("placed", "-1"), ("ply", "1.5"), ("end", "won"), ("nelim", ""), ("best", "b"),
    ("worst", "-2"), ("drawfor", "x"), ("setup", "?"), ("bbox", "1,2,3"), ("bbox", "99,0,0,0"),
    ("bbox", "a,b,c,d"), ("seats", "20.3.2.0.0.-1.-1.-1"),
    ("seats", "20.3.2.0.0.-1.-1/20.3.2.0.0.-1.-1.-1"),
    ("seats", "20.3.2.0.0.-1.30.-1/20.3.2.0.0.-1.-1.-1"),
    ("seats", "20.3.2.0.0.-1.-1.x/20.3.2.0.0.-1.-1.-1"),
    ("deck", "JJ"), ("deck", "JV" * 48), ("deck", "JJ" * 48),
    ("cells", "0,0:1V0"), ("cells", "0,0:1V0../0,0:1V0.."), ("cells", "50,0:1V0.."),
    ("cells", "0,0:1V0h5"), ("cells", "0,0:0V0.."), ("cells", "0,0:1V99.."),
    ("cells", "0,0:1X0.."),
]


@pytest.mark.parametrize(("field", "value"), BAD_FIELDS)
def test_malformed_position_field(sample_position, field, value):
    game = TaluvaGame()
    bad = _with(sample_position, field, value)
    assert bad != sample_position
    with pytest.raises(PositionError) as e:
        parse_position(game, bad)
    assert e.value.field == field
    assert field in str(e.value)


def test_malformed_position_structure(sample_position):
    game = TaluvaGame()
    fields = _fields(sample_position)
    with pytest.raises(PositionError) as e:
        parse_position(game, _join(fields[:-1]))
    assert e.value.field == "(whole)"
    swapped = [*fields]
    swapped[2], swapped[3] = swapped[3], swapped[2]
    with pytest.raises(PositionError) as e:
        parse_position(game, _join(swapped))
    assert e.value.field == "step"
    renamed = [*fields[:5], ["drawn_", fields[5][1]], *fields[6:]]
    with pytest.raises(PositionError) as e:
        parse_position(game, _join(renamed))
    assert e.value.field == "drawn"
    with pytest.raises(PositionError) as e:
        parse_position(game, 42)  # type: ignore[arg-type]
    assert e.value.field == "(whole)"
    with pytest.raises(PositionError) as e:
        parse_position(TaluvaGame(num_players=3), sample_position)
    assert e.value.field == "players"


def test_position_string_is_deterministic_and_sample(sample_position):
    game = TaluvaGame()
    s = game.new_initial_state(deck=[parse_tile("JC")])
    text = s.to_position_string()
    assert text.startswith(
        "taluva=1;players=2;step=chance;player=0;tile=-;drawn=0;placed=0;ply=0;end=none;"
        "nelim=0;best=0;worst=1;drawfor=0;setup=0;bbox=0,0,0,0;"
        "seats=20.3.2.0.0.-1.-1.-1/20.3.2.0.0.-1.-1.-1;deck=JC"
    )
    assert text.endswith(";cells=")
    s.draw()
    s.apply("tile@0,0:N")
    s.apply("hut@0,1")
    assert s.to_position_string().endswith(";cells=0,0:1V0../-1,1:1J0../0,1:1C0h0")
    assert isinstance(parse_position(game, sample_position), TaluvaState)


def _midgame_position() -> tuple[TaluvaGame, str]:
    game = TaluvaGame()
    s = game.new_initial_state(seed=3)
    rng = np.random.default_rng(3)
    while s.tiles_placed < 12 or s.step != Step.TILE:
        if s.current_player < 0:
            s.draw()
        else:
            legal = s.legal_actions()
            s.apply(int(legal[rng.integers(legal.size)]))
    return game, s.to_position_string()  # at a tile step


def _with_field(text: str, key: str, value: str) -> str:
    return ";".join(f"{key}={value}" if f.startswith(key + "=") else f for f in text.split(";"))


@pytest.mark.parametrize(("key", "value", "field"), [
    ("bbox", "0,0,0,0", "bbox"),
    ("tile", "-", "tile"),
    ("tile", "LL", "tile"),
    ("drawn", "49", "drawn"),
    ("placed", "40", "placed"),
    ("end", "early_victory", "end"),
    ("step", "terminal", "end"),
    ("setup", "1", "setup"),
])
def test_inconsistent_positions_name_the_field(key, value, field):
    game, text = _midgame_position()
    parse_position(game, text)  # the original is consistent
    bad = _with_field(text, key, value)
    with pytest.raises(PositionError) as e:
        parse_position(game, bad)
    assert e.value.field == field


@pytest.mark.parametrize("seat_fields", [
    "5.3.2.0.0.-1.-1.-1", "20.3.2.0.0.-1.-1.-1", "19.3.2.0.3.-1.-1.-1", "19.3.2.0.0.-1.7.-1",
    "19.3.2.0.0.9.-1.-1",
])
def test_inconsistent_seats_are_refused(seat_fields):
    game, text = _midgame_position()
    seats = _field(text, "seats").split("/")
    bad = _with_field(text, "seats", "/".join([seat_fields, seats[1]]))
    with pytest.raises(PositionError) as e:
        parse_position(game, bad)
    assert e.value.field == "seats"


def _field(text: str, key: str) -> str:
    return next(f.split("=", 1)[1] for f in text.split(";") if f.startswith(key + "="))


def test_a_position_of_other_rules_is_refused():
    _, text = _midgame_position()
    with pytest.raises(PositionError):
        parse_position(TaluvaGame(tiles_per_player=3), text)


def test_parse_action_checks_the_step():
    s = TaluvaGame().new_initial_state(seed=1)
    with pytest.raises(WrongStepError):
        s.parse_action("tile@0,-32:SW")  # its id would be a tile type id at a chance node
    s.draw()
    with pytest.raises(WrongStepError):
        s.parse_action("draw:JJ")


def test_expansion_hex_is_mapped_only_within_the_movers_settlements():
    game = TaluvaGame()
    s = make_position(game, [
        (0, 0, 1, "V", 0), (-1, 1, 1, "J", 0, "h", 1), (0, 1, 1, "J", 0, "h", 1),
        (1, 0, 1, "V", 1), (1, 1, 1, "J", 1, "h", 0), (2, 0, 1, "C", 1),
    ], player=0, step="build")
    # (0,1) belongs to seat 1: the notation is kept as written, and it is illegal for seat 0
    a = s.parse_action("expand@0,1:C")
    assert s.action_to_string(a) == "expand@0,1:C"
    with pytest.raises(IllegalActionError, match="no settlement of the player to move"):
        s.apply("expand@0,1:C")


def test_failed_apply_leaves_history_untouched():
    s = TaluvaGame().new_initial_state(seed=1)
    for bad in (Action, 3.0, "draw:XX"):
        with pytest.raises((NotationError, TypeError)):
            s.apply(bad(ActionKind.DRAW, tile=3.0) if bad is Action else bad)
    assert s.history() == []
    s.draw()
    s.undo()
    assert s.history() == []


_ONE_TILE = ("taluva=1;players=2;step=chance;player=1;tile=CS;drawn=1;placed=1;ply=3;end=none;"
             "nelim=0;best=0;worst=1;drawfor=1;setup=0;bbox=-1,0,0,1;"
             "seats=19.3.2.0.0.-1.-1.-1/20.3.2.0.0.-1.-1.-1;"
             "deck=CSRCCRJRSCCJCRRJJCJCCJCLRRSJJCLRLLJRRSJLSLCSCCSCJJLCRCLJJSJCCJSSRLSJSJJSJSJCSR"
             "SJSRLSCJJLRJJSJCCJ;cells=0,0:1V0../-1,1:1C0h0/0,1:1S0..")


@pytest.mark.parametrize("edit, field, reason", [
    (("0,0:1V0..", "0,0:1V0h1", "20.3.2", "19.3.2"), "cells", "a building stands on a volcano"),
    (("0,1:1S0..", "0,1:1S0W1", "20.3.2", "20.3.1"), "cells", "a tower stands below level 3"),
    (("0,1:1S0..", "0,1:1V0..",), "cells", "a tile shows more than one volcano"),
    (("0,1:1S0..", "0,1:3S0..",), "cells", "a hex at level L shows a tile placed before"),
    (("placed=1", "placed=0"), "placed", "the island has hexes, but no tile is placed"),
])
def test_position_strings_of_impossible_islands_are_refused(edit, field, reason) -> None:
    from taluva_ai import make_game
    from taluva_ai.errors import PositionError
    from taluva_ai.games.taluva.position import parse_position

    game = make_game("taluva")
    assert parse_position(game, _ONE_TILE).to_position_string() == _ONE_TILE
    text = _ONE_TILE
    for old, new in zip(edit[::2], edit[1::2], strict=True):
        assert old in text
        text = text.replace(old, new, 1)
    with pytest.raises(PositionError, match=f"field '{field}': {reason}"):
        parse_position(game, text)
