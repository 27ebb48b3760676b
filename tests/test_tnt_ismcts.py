"""Information-set MCTS (agents/ismcts.py) on Thurn und Taxis, and on Taluva as plain UCT."""

from __future__ import annotations

import numpy as np
import pytest

from taluva_ai import make_game
from taluva_ai.agents import ISMCTSAgent, make_agent
from taluva_ai.games.thurn_und_taxis.bench import midgame_state
from taluva_ai.tournament import play_game
from tests.tnt_helpers import scenario


def test_the_move_depends_only_on_the_information_set() -> None:
    s = midgame_state()
    p = s.current_player
    moves = set()
    for k in range(3):
        other = s.resample(p, np.random.default_rng(k))  # other hands, other supply
        agent = make_agent("ismcts:sims=60", seed=5)
        moves.add(agent.act(other))
    agent = make_agent("ismcts:sims=60", seed=5)
    assert moves == {agent.act(s)}
    assert agent.stats()["simulations"] == 60 and "top" in agent.stats()


@pytest.mark.parametrize("prior", ["heuristic", "none"])
def test_plays_legal_games_for_3_players(prior: str) -> None:
    game = make_game("thurn_und_taxis", num_players=3, max_rounds=4)
    agents = [make_agent(f"ismcts:sims=8,prior={prior}"), make_agent("greedy"),
              make_agent("random")]
    res = play_game(game, agents, 3)
    assert res.end_reason == "truncated" and len(res.returns) == 3


def test_a_forced_move_is_not_searched() -> None:
    s = scenario(step="after_play", routes={0: ["ulm"]}, hands={0: ["lodz"]})
    agent = ISMCTSAgent(seed=0, sims=50)
    assert s.action_to_string(agent.act(s)) == "pass"
    assert agent.stats()["simulations"] == 0


def test_taluva_is_searched_as_plain_uct() -> None:
    s = make_game("taluva").new_initial_state(seed=1)
    s.draw()
    a = ISMCTSAgent(seed=0, sims=20, prior="none", rollout="random").act(s)
    assert a in s.legal_actions()


@pytest.mark.parametrize(("spec", "match"), [
    ("ismcts:sims=0", "sims"), ("ismcts:c=-1", "c must be"), ("ismcts:rollout=smart", "rollout"),
    ("ismcts:prior=big", "prior"), ("ismcts:depth=3", "unknown ismcts parameter"),
])
def test_bad_parameters(spec: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make_agent(spec)
