"""The PettingZoo AEC env of Taluva."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test

from taluva_ai.envs import EnvStateError
from taluva_ai.envs.pettingzoo_env import TaluvaAECEnv
from taluva_ai.errors import IllegalActionError
from tests.helpers import random_aec_game


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_api_test(num_players: int) -> None:
    api_test(TaluvaAECEnv(num_players=num_players), num_cycles=40, verbose_progress=False)


def test_full_game_rewards() -> None:
    env = TaluvaAECEnv(num_players=3, rules={"tiles_per_player": 4})
    env.reset(seed=4)
    assert env.agent_selection == "player_0"

    def others_have_no_action(agent: str) -> None:
        for other in env.agents:
            if other != agent:
                assert env.observe(other)["action_mask"].sum() == 0

    total, steps = random_aec_game(env, np.random.default_rng(0), others_have_no_action)
    assert steps == 24  # 12 tiles, two decisions each (nobody eliminated in this game)
    # tiles out, every seat built 4 huts: a three-way shared win, returns 0 each
    assert env.state_ is not None and env.state_.places() == [0, 0, 0]
    assert [total[a] for a in env.possible_agents] == [0.0, 0.0, 0.0]


def test_two_player_game_rewards_are_the_returns() -> None:
    env = TaluvaAECEnv(num_players=2)
    env.reset(seed=1)
    total, _ = random_aec_game(env, np.random.default_rng(1))
    assert env.state_ is not None
    ret = env.state_.returns().tolist()
    assert [total[a] for a in env.possible_agents] == ret
    assert sorted(ret) == [-1.0, 1.0]


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="num_players must be 2, 3 or 4, got 1"):
        TaluvaAECEnv(num_players=1)
    env = TaluvaAECEnv(illegal_action="raise")
    with pytest.raises(EnvStateError):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="masked out"):
        env.step(0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.array([1, 2]))
