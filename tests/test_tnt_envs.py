"""``taluva_ai/ThurnUndTaxis-v0`` and the PettingZoo AEC env of Thurn und Taxis (envs built on
the protocol only, envs/game_env.py and envs/game_pettingzoo.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import taluva_ai.envs
from taluva_ai.envs import EnvStateError, ThurnUndTaxisEnv, game_aec_env
from taluva_ai.errors import IllegalActionError
from tests.helpers import random_episode


def test_check_env() -> None:
    check_env(gym.make("taluva_ai/ThurnUndTaxis-v0", opponents=["greedy"],
                       illegal_action="penalty").unwrapped)


def test_an_episode_ends_with_the_seats_return() -> None:
    env = gym.make("taluva_ai/ThurnUndTaxis-v0", opponents=["random", "greedy"])
    obs, info = env.reset(seed=3)
    assert obs["observation"].shape == (536,) and obs["action_mask"].dtype == np.int8
    assert info["agent_seat"] == 0 and info["current_player"] == 0
    rewards, (obs, reward, term, trunc, info) = random_episode(env, obs,
                                                               np.random.default_rng(3))
    assert rewards[:-1] == [0.0] * (len(rewards) - 1)
    assert term and not trunc
    assert reward == info["returns"][0] and len(info["scores"]) == 3
    with pytest.raises(EnvStateError):
        env.step(0)


def test_observations_are_the_seats_information_set() -> None:
    env = ThurnUndTaxisEnv(opponents=["greedy"], agent_seat="random")
    seats = set()
    for seed in range(6):
        obs, info = env.reset(seed=seed)
        seats.add(info["agent_seat"])
        state = env.state
        assert state is not None
        for k in range(3):  # the other hand and the supply dealt anew: the same observation
            other = state.resample(env.seat, np.random.default_rng(k))
            assert np.array_equal(other.observation_tensor(env.seat), obs["observation"])
    assert seats == {0, 1}


def test_illegal_actions_raise_and_change_nothing() -> None:
    env = ThurnUndTaxisEnv(opponents=["random"], illegal_action="raise")
    obs, _ = env.reset(seed=1)
    assert env.state is not None
    before = env.state.to_position_string()
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="masked out"):
        env.step(bad)
    assert env.state.to_position_string() == before
    with pytest.raises(ValueError):
        env.step(1.5)
    penalty = ThurnUndTaxisEnv(opponents=["random"], illegal_action="penalty")
    penalty.reset(seed=1)
    _, r, term, trunc, info = penalty.step(bad)
    assert (r, term, trunc, info["illegal_action"]) == (-1.0, False, False, True)


def test_max_rounds_truncates_the_episode() -> None:
    env = ThurnUndTaxisEnv(opponents=["random"], max_rounds=2)
    obs, _ = env.reset(seed=0)
    _, (obs, reward, term, trunc, info) = random_episode(env, obs, np.random.default_rng(0))
    assert trunc and not term and reward == info["returns"][0]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_pettingzoo_api_test(n: int) -> None:
    api_test(game_aec_env(num_players=n, max_rounds=20), num_cycles=200,
             verbose_progress=False)


def test_aec_agents_observe_their_own_hand_and_move_in_turn() -> None:
    env = game_aec_env(num_players=3, max_rounds=5)
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(agent)
        assert env.state.current_player == seat
        assert np.array_equal(obs["observation"], env.state.observation_tensor(seat))
        for other in env.agents:
            if other != agent:
                assert env.observe(other)["action_mask"].sum() == 0
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(legal.size)]))
    assert env.state.is_terminal() and env.state.truncated


def test_unknown_game_or_opponent_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown game"):
        taluva_ai.envs.GameEnv(game="chess")
    with pytest.raises(ValueError, match="no observation tensor"):
        taluva_ai.envs.GameEnv(game="taluva")
    with pytest.raises(ValueError, match="unknown opponent"):
        ThurnUndTaxisEnv(opponents=["nobody"])
    with pytest.raises(ValueError, match="opponents for"):
        ThurnUndTaxisEnv(opponents=["random"], num_players=3)
