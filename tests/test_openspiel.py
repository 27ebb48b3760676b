"""The OpenSpiel games (taluva_ai.openspiel; docs/openspiel.md): declared facts, delegation to the
engines, illegal actions, serialization, information states and resampling. Run when open_spiel
is installed (the ``openspiel`` extra, part of ``test``)."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from taluva_ai.errors import (  # noqa: E402
    ActionOutOfRangeError,
    IllegalActionError,
    WrongStepError,
)
from taluva_ai.games.taluva.encoding import encode  # noqa: E402
from taluva_ai.games.taluva.rules import RuleError  # noqa: E402
from taluva_ai.openspiel import OpenSpielIllegalActionError  # noqa: E402
from taluva_ai.protocol import make_game  # noqa: E402
from tests.helpers import play_openspiel  # noqa: E402

GT = pyspiel.GameType


_play = play_openspiel


def test_taluva_facts_and_parameters():
    game = pyspiel.load_game("python_taluva(players=3,tiles_per_player=12)")
    t = game.get_type()
    assert (t.short_name, t.dynamics, t.chance_mode, t.information, t.utility, t.reward_model) \
        == ("python_taluva", GT.Dynamics.SEQUENTIAL, GT.ChanceMode.EXPLICIT_STOCHASTIC,
            GT.Information.PERFECT_INFORMATION, GT.Utility.ZERO_SUM, GT.RewardModel.TERMINAL)
    assert (t.min_num_players, t.max_num_players) == (2, 4)
    assert sorted(t.parameter_specification) == [
        "board_radius", "destroyed_huts_return", "early_victory_kinds", "new_hut_isolated",
        "no_lake_building", "players", "ranked", "tiebreak_towers_first", "tile_preview",
        "tiles_per_player"]
    # H = 3 R^2 + 3 R + 1 = 3169 hexes at the default radius 32: 14 H action ids
    assert game.num_distinct_actions() == 14 * 3169
    assert game.max_chance_outcomes() == 25
    assert game.num_players() == 3
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-1.0, 1.0, 0.0)
    assert game.max_game_length() == 2 * 36  # place and build per tile in play
    assert game.max_chance_nodes_in_history() == 36
    assert game.observation_tensor_shape() == [35 + 7 * 3, 27, 27]
    params = game.get_parameters()
    assert (params["players"], params["tiles_per_player"], params["board_radius"]) == (3, 12, 32)
    preview = pyspiel.load_game("python_taluva(tile_preview=True)")
    assert preview.get_type().information == GT.Information.IMPERFECT_INFORMATION


def test_thurn_und_taxis_facts_and_parameters():
    game = pyspiel.load_game("python_thurn_und_taxis(players=4,max_rounds=50)")
    t = game.get_type()
    assert (t.information, t.utility, t.chance_mode) == (
        GT.Information.IMPERFECT_INFORMATION, GT.Utility.ZERO_SUM,
        GT.ChanceMode.EXPLICIT_STOCHASTIC)
    assert sorted(t.parameter_specification) == [
        "all_provinces_rule", "max_rounds", "players", "route_tile_fallback"]
    assert (game.num_distinct_actions(), game.max_chance_outcomes(), game.num_players()) == \
        (327, 22, 4)
    assert game.max_game_length() == 6 + 50 * 4 * 100
    assert game.observation_tensor_shape() == [536]


def test_rule_options_reach_the_engine():
    game = pyspiel.load_game("python_taluva(players=4,tiles_per_player=0,ranked=True,"
                             "no_lake_building=True,early_victory_kinds=3,board_radius=20)")
    rules = game.new_initial_state().engine_state.game.rules
    assert (rules.num_players, rules.tiles_per_player, rules.ranked, rules.no_lake_building,
            rules.early_victory_kinds, rules.board_radius) == (4, None, True, True, 3, 20)
    tnt = pyspiel.load_game("python_thurn_und_taxis(all_provinces_rule=exclude_baiern,"
                            "route_tile_fallback=False)")
    r = tnt.new_initial_state().engine_state.game.rules
    assert (r.all_provinces_rule, r.route_tile_fallback) == ("exclude_baiern", False)


def test_bad_option_is_the_engines_one_line_error():
    with pytest.raises(RuleError, match=r"^num_players must be 2, 3 or 4, got 5$"):
        pyspiel.load_game("python_taluva(players=5)")
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'solo'"):
        pyspiel.load_game("python_taluva(solo=True)")


def test_steps_equal_the_engine():
    """Legal actions, chance outcomes, strings and returns are the engine's, step by step."""
    game = pyspiel.load_game("python_taluva(tiles_per_player=3)")
    engine = make_game("taluva", tiles_per_player=3).new_initial_state(seed=0)
    state = game.new_initial_state()
    rng = np.random.default_rng(3)
    while not state.is_terminal():
        assert state.current_player() == engine.current_player
        if state.is_chance_node():
            assert state.chance_outcomes() == engine.chance_outcomes()
            a = int(rng.choice([o for o, _ in engine.chance_outcomes()]))
        else:
            assert state.legal_actions() == engine.legal_actions().tolist()
            a = int(rng.choice(engine.legal_actions()))
        assert state.action_to_string(state.current_player(), a) == engine.action_to_string(a)
        state.apply_action(a)
        engine.apply(a)
        assert str(state) == engine.to_position_string()
    assert engine.is_terminal()
    assert state.returns() == engine.returns().tolist()
    assert state.rewards() == engine.returns().tolist()


@pytest.mark.parametrize("bad, exc, message", [
    (5, IllegalActionError,
     "illegal action tile@0,-32:NE: the first tile's volcano goes on the origin (0,0)"),
    (10**6, ActionOutOfRangeError, "illegal action 1000000: action ids run from 0 to 44365"),
    (6 * 3169, WrongStepError,
     "illegal action 19014: a build during the tile step (place the tile first)"),
])
def test_illegal_action_raises_the_projects_message_and_leaves_the_state(bad, exc, message):
    state = pyspiel.load_game("python_taluva").new_initial_state()
    state.apply_action(3)
    before = (str(state), state.history(), state.legal_actions(), state.move_number())
    with pytest.raises(OpenSpielIllegalActionError) as info:
        state.apply_action(bad)
    err = info.value
    assert isinstance(err, pyspiel.SpielError) and isinstance(err, IllegalActionError)
    assert isinstance(err.__cause__, exc)
    assert str(err) == message
    assert (str(state), state.history(), state.legal_actions(), state.move_number()) == before


def test_illegal_chance_outcome_and_terminal():
    state = pyspiel.load_game("python_thurn_und_taxis").new_initial_state()
    with pytest.raises(OpenSpielIllegalActionError, match=r"city id 0\.\.21$"):
        state.apply_action(40)
    assert state.history() == []
    over = _play(pyspiel.load_game("python_taluva(tiles_per_player=2)").new_initial_state(), 99)
    assert over.is_terminal()
    with pytest.raises(OpenSpielIllegalActionError, match=r"^illegal action 0: the game is over$"):
        over.apply_action(0)


def test_clone_is_independent_and_serialization_uses_the_position_string():
    game = pyspiel.load_game("python_thurn_und_taxis(max_rounds=4)")
    state = _play(game.new_initial_state(), 30)
    clone = state.clone()
    assert str(clone) == str(state) and clone.history() == state.history()
    _play(clone, 5, seed=1)
    assert str(clone) != str(state) and len(state.history()) == 30
    text = state.serialize()
    lines = text.split("\n")  # no pickle: the history, the start and the position, as text
    assert [line.split("=", 1)[0] for line in lines] == ["history", "move_number", "start",
                                                        "position"]
    assert lines[3] == "position=" + state.engine_state.to_position_string()
    assert "__dict__" not in text
    back = game.deserialize_state(text)
    assert str(back) == str(state)
    assert back.history() == state.history()
    for p in range(2):
        assert back.information_state_string(p) == state.information_state_string(p)
    g2, s2 = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert str(g2) == str(game) and str(s2) == str(state)


def test_information_state_hides_other_hands():
    game = pyspiel.load_game("python_thurn_und_taxis(max_rounds=20)")
    state = _play(game.new_initial_state(), 100)
    strings = [state.information_state_string(p) for p in range(2)]
    assert strings[0].startswith("seat 0: deal:") and strings[1].startswith("seat 1: deal:")
    # a card seat 1 drew from the supply is "?" for seat 0, and the other way round
    hist0, hist1 = (s.split("\n")[0].split(" ")[2:] for s in strings)
    assert len(hist0) == len(hist1) == 100
    hidden0 = [i for i, t in enumerate(hist0) if t == "?"]
    hidden1 = [i for i, t in enumerate(hist1) if t == "?"]
    assert hidden0 and hidden1 and not set(hidden0) & set(hidden1)
    for i in hidden0:
        assert hist1[i].startswith("deal:")
    # the observation part is the engine's view: seat 0's hand only
    obs = state.observation_string(0)
    hand = ",".join(str(int(x)) for x in state.engine_state.observation(0)["hand"])
    assert f"player=0 hand={hand} " in obs


def test_resample_from_infostate_keeps_what_the_player_knows():
    game = pyspiel.load_game("python_thurn_und_taxis(max_rounds=4)")
    state = _play(game.new_initial_state(), 40)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    changed = 0
    for _ in range(5):
        for p in range(2):
            other = state.resample_from_infostate(p, sampler)
            assert other.information_state_string(p) == state.information_state_string(p)
            assert other.observation_tensor(p) == state.observation_tensor(p)
            assert other.current_player() == state.current_player()
            changed += str(other) != str(state)
    assert changed > 0
    assert str(state) == str(_play(game.new_initial_state(), 40))  # untouched


def test_taluva_preview_information_and_resample():
    game = pyspiel.load_game("python_taluva(tile_preview=True,tiles_per_player=4)")
    state = _play(game.new_initial_state(), 2)  # each seat has drawn its held tile
    s0, s1 = state.information_state_string(0), state.information_state_string(1)
    assert s0.split("\n")[0].split(" ")[2:] == [s0.split(" ")[2], "?"]
    assert s1.split("\n")[0].split(" ")[2] == "?"
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    other = state.resample_from_infostate(1, sampler)
    assert other.information_state_string(1) == s1


def test_observation_tensor_is_the_projects_encoder():
    game = pyspiel.load_game("python_taluva(tiles_per_player=3)")
    state = _play(game.new_initial_state(), 4)
    for p in range(2):
        planes = encode(state.engine_state, p)[0]
        assert np.array_equal(np.asarray(state.observation_tensor(p)), planes.ravel())
    tnt = _play(pyspiel.load_game("python_thurn_und_taxis").new_initial_state(), 12)
    assert np.array_equal(np.asarray(tnt.observation_tensor(1), dtype=np.float32),
                          tnt.engine_state.observation_tensor(1))
