"""Interop with OpenSpiel (taluva_ai.openspiel; docs/openspiel.md): OpenSpiel's MCTSBot as the
``openspiel`` agent of the registry (arena and tournaments), this project's agents as OpenSpiel
bots in ``evaluate_bots``, and the stepping benchmark. Run when open_spiel is installed."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import evaluate_bots  # noqa: E402
from open_spiel.python.bots.uniform_random import UniformRandomBot  # noqa: E402

import taluva_ai.openspiel as tos  # noqa: E402
from taluva_ai.agents import (  # noqa: E402
    make_agent,
    parse_agent_spec,
    registered_agent_parameters,
    spec_key,
)
from taluva_ai.protocol import make_game  # noqa: E402
from taluva_ai.tournament import play_game  # noqa: E402


def test_registry_parameters_are_the_agents():
    assert registered_agent_parameters("openspiel") == {
        f.name: f.default for f in dataclasses.fields(tos.OpenSpielMCTSConfig)}


def test_the_bot_is_the_positional_parameter():
    """The issue's spelling ``openspiel:mcts,sims=400`` names the bot by a first bare item."""
    assert parse_agent_spec("openspiel:mcts,sims=400") == ("openspiel",
                                                            {"bot": "mcts", "sims": 400})
    assert spec_key("openspiel:mcts,sims=400") == spec_key("openspiel:sims=400,bot=mcts")
    assert make_agent("openspiel:mcts,sims=7").config.sims == 7
    with pytest.raises(ValueError, match="bot='ucb': the bot offered is 'mcts'"):
        make_agent("openspiel:ucb")


@pytest.mark.parametrize("spec, message", [
    ("openspiel:sims=0", "sims=0 must be a positive integer"),
    ("openspiel:bot=cfr", "bot='cfr': the bot offered is 'mcts'"),
    ("openspiel:uct=1", "unknown openspiel parameter(s) uct; known: bot, sims, uct_c, "
                        "rollouts, solve"),
])
def test_bad_parameters(spec, message):
    with pytest.raises(ValueError) as info:
        make_agent(spec)
    assert str(info.value) == f"agent {spec!r}: " + (
        message if message.startswith("unknown") else f"openspiel parameter {message}")


@pytest.mark.parametrize("name, options", [("taluva", {"tiles_per_player": 2}),
                                           ("thurn_und_taxis", {"max_rounds": 2})])
def test_openspiel_mcts_plays_in_the_arena(name, options):
    game = make_game(name, **options)
    agents = [make_agent("openspiel:sims=4", seed=1), make_agent("random", seed=2)]
    first = play_game(game, agents, seed=5)
    again = play_game(game, [make_agent("openspiel:sims=4", seed=1),
                             make_agent("random", seed=2)], seed=5)
    assert first.returns == again.returns  # seeded: the same game
    assert sum(first.returns) == pytest.approx(0.0)
    assert agents[0].stats()["sims"] == 4


def test_openspiel_mcts_searches_a_determinization():
    """With hidden information the bot searches ``resample(player)``: the hidden cards of the
    real state do not decide its move (two states that differ only there get the same move
    from the same seed)."""
    game = make_game("thurn_und_taxis", max_rounds=3)
    state = game.new_initial_state(seed=4)
    rng = np.random.default_rng(0)
    while True:  # until some card is hidden from the player to move
        if state.current_player < 0:
            state.draw()
            continue
        other = state.resample(state.current_player, 9)
        if other.to_position_string() != state.to_position_string():
            break
        state.apply(int(rng.choice(state.legal_actions())))
    moves = {make_agent("openspiel:sims=6", seed=3).act(s) for s in (state, other)}
    assert len(moves) == 1
    assert make_agent("openspiel:sims=6", seed=3).stats() == {}


def test_solo_has_no_openspiel_game():
    with pytest.raises(ValueError, match=r"^the solo variant has no OpenSpiel game here"):
        tos.openspiel_game(make_game("taluva", solo=True))


def test_agents_play_in_evaluate_bots():
    game = pyspiel.load_game("python_taluva(tiles_per_player=3)")
    bots = [tos.AgentBot("greedy", 0, seed=1),
            UniformRandomBot(1, np.random.RandomState(2))]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots,
                                          np.random.RandomState(3))
    assert sum(returns) == pytest.approx(0.0) and len(returns) == 2
    tnt = pyspiel.load_game("python_thurn_und_taxis(max_rounds=2)")
    bots = [tos.AgentBot("ismcts:sims=4", 0, seed=1), tos.AgentBot("random", 1, seed=2)]
    first = evaluate_bots.evaluate_bots(tnt.new_initial_state(), bots, np.random.RandomState(4))
    again = evaluate_bots.evaluate_bots(tnt.new_initial_state(), bots, np.random.RandomState(4))
    assert list(first) == list(again)  # restart_at reseeds the agents


def test_agent_bot_refuses_other_states():
    bot = tos.AgentBot("random", 0)
    with pytest.raises(TypeError, match="AgentBot plays the states of python_taluva"):
        bot.step(pyspiel.load_game("tic_tac_toe").new_initial_state())


def test_bench_prints_json(capsys):
    assert tos.main(["bench", "--game", "python_taluva(tiles_per_player=2)", "--games", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted(out) == ["game", "games", "native_steps_per_s",
                           "native_unchecked_steps_per_s", "openspiel_steps_per_s", "slowdown",
                           "steps"]
    assert out["games"] == 1 and out["steps"] == 12  # 4 tiles: a draw, a placement, a build
