"""Gymnasium and PettingZoo conventions with the envs' default options (issue 19, A.5):
Gymnasium's ``check_env`` on every registered id, Pgx's illegal-action convention (an illegal
action ends the episode with a penalty for the actor; the raising mode is an option),
PettingZoo's ``render_test`` (``human`` mode included) and the Thurn und Taxis picture."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, render_test

import taluva_ai.envs
from taluva_ai.envs import EnvStateError, TaluvaEnv, TaluvaSoloEnv, ThurnUndTaxisEnv
from taluva_ai.envs.pettingzoo_env import TaluvaAECEnv
from taluva_ai.errors import IllegalActionError

REGISTERED = (taluva_ai.envs.ENV_ID, taluva_ai.envs.TNT_ENV_ID, taluva_ai.envs.SOLO_ENV_ID)


@pytest.mark.parametrize("env_id", REGISTERED)
def test_check_env_passes_with_the_default_options(env_id: str) -> None:
    env = gym.make(env_id)
    assert env.unwrapped.illegal_action == "terminate"
    check_env(env.unwrapped)  # also makes the env in each declared render mode


def _masked(obs: dict[str, np.ndarray]) -> int:
    return int(np.flatnonzero(obs["action_mask"] == 0)[0])


def test_an_illegal_action_ends_the_episode_with_a_penalty_for_the_actor() -> None:
    env = TaluvaEnv(opponents=["random", "random"])
    obs, _ = env.reset(seed=2)
    assert env.state is not None
    before = env.state.to_position_string()
    obs2, r, term, trunc, info = env.step(_masked(obs))
    assert (r, term, trunc) == (-1.0, True, False)
    assert info["illegal_action"] is True and info["step_kind"] == "over"
    assert info["current_player"] == -1
    assert info["rewards"].tolist() == [-1.0, 0.5, 0.5]  # a forfeit: zero-sum
    assert env.state.to_position_string() == before  # the action was not played
    np.testing.assert_array_equal(obs2["observation"], obs["observation"])
    with pytest.raises(EnvStateError, match="an illegal action ended it"):
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    obs, info = env.reset(seed=2)  # a new episode plays normally
    _, r, term, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert (r, term, info["illegal_action"]) == (0.0, False, False)


def test_self_play_the_mover_forfeits_and_the_penalty_is_an_option() -> None:
    env = TaluvaEnv(illegal_penalty=-2.0)  # self-play, 2 seats
    obs, _ = env.reset(seed=0)
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    obs, *_ = env.step(legal)  # seat 0 places its tile: seat 0 builds next
    _, r, term, _, info = env.step(_masked(obs))
    assert (r, term, info["rewards"].tolist()) == (-2.0, True, [-2.0, 2.0])


def test_the_raising_mode_is_kept() -> None:
    for env in (TaluvaEnv(illegal_action="raise"), TaluvaSoloEnv(illegal_action="raise"),
                ThurnUndTaxisEnv(illegal_action="raise")):
        obs, _ = env.reset(seed=1)
        with pytest.raises(IllegalActionError, match="masked out"):
            env.step(_masked(obs))


def test_solo_and_thurn_und_taxis_terminate_too() -> None:
    solo = TaluvaSoloEnv()
    obs, _ = solo.reset(seed=0)
    _, r, term, trunc, info = solo.step(_masked(obs))
    assert (r, term, trunc, info["illegal_action"], info["step_kind"]) == (
        -1.0, True, False, True, "over")
    with pytest.raises(EnvStateError):
        solo.step(0)
    tnt = ThurnUndTaxisEnv(opponents=["random", "random", "random"], agent_seat=2)
    obs, _ = tnt.reset(seed=1)
    assert tnt.state is not None
    before = tnt.state.to_position_string()
    _, r, term, trunc, info = tnt.step(_masked(obs))
    assert (r, term, trunc, info["illegal_action"]) == (-1.0, True, False, True)
    assert info["returns"] == [1 / 3, 1 / 3, -1.0, 1 / 3] and info["current_player"] == -1
    assert tnt.state.to_position_string() == before
    with pytest.raises(EnvStateError, match="episode is over"):
        tnt.step(0)


@pytest.mark.parametrize("make", [lambda: TaluvaAECEnv(num_players=3),
                                  lambda: taluva_ai.envs.game_aec_env(num_players=3)])
def test_aec_illegal_action_ends_the_game_for_every_agent(make) -> None:
    env = make()
    env.reset(seed=0)
    actor = env.agent_selection
    obs, *_ = env.last()
    env.step(_masked(obs))
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": -1.0, "player_1": 0.5, "player_2": 0.5}
    assert env.infos[actor]["illegal_action"] is True
    seen = 0
    for agent in env.agent_iter():  # the dead steps PettingZoo requires
        _, _, term, _, _ = env.last()
        assert term and env.observe(agent)["action_mask"].sum() == 0
        env.step(None)
        seen += 1
    assert seen == 3 and env.agents == []


def test_aec_penalty_mode_keeps_the_actor_to_move() -> None:
    env = TaluvaAECEnv(illegal_action="penalty", illegal_penalty=-0.25)
    env.reset(seed=0)
    obs, *_ = env.last()
    env.step(_masked(obs))
    assert env.agent_selection == "player_0" and not any(env.terminations.values())
    assert env._cumulative_rewards["player_0"] == -0.25
    api_test(TaluvaAECEnv(illegal_action="penalty"), num_cycles=10, verbose_progress=False)


@pytest.mark.parametrize("make", [TaluvaAECEnv, lambda render_mode: taluva_ai.envs.game_aec_env(
    num_players=2, render_mode=render_mode)], ids=["taluva", "thurn_und_taxis"])
def test_render_test_passes_for_the_aec_envs(make, capsys: pytest.CaptureFixture[str]) -> None:
    render_test(make)
    assert "ply " in capsys.readouterr().out  # "human" prints the position


def test_human_mode_prints_the_text_of_ansi(capsys: pytest.CaptureFixture[str]) -> None:
    for cls in (TaluvaEnv, TaluvaSoloEnv, ThurnUndTaxisEnv):
        text = cls(render_mode="ansi")
        text.reset(seed=4)
        human = cls(render_mode="human")
        human.reset(seed=4)
        capsys.readouterr()
        assert human.render() is None
        assert capsys.readouterr().out == text.render() + "\n"


def test_thurn_und_taxis_rgb_array_picture() -> None:
    env = gym.make(taluva_ai.envs.TNT_ENV_ID, opponents=["greedy", "random"],
                   render_mode="rgb_array")
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(60):  # some routes, houses and hands to draw
        legal = np.flatnonzero(obs["action_mask"])
        obs, _, term, trunc, _ = env.step(int(legal[rng.integers(legal.size)]))
        if term or trunc:
            break
    img = env.render()
    assert isinstance(img, np.ndarray) and img.shape == (480, 480, 3) and img.dtype == np.uint8
    colours = {tuple(c) for c in img.reshape(-1, 3)[::7]}
    assert (214, 39, 40) in colours  # seat 0's red: its route or its houses are drawn
    assert len(colours) > 50


def test_thurn_und_taxis_picture_of_one_players_hand() -> None:
    from taluva_ai.games.thurn_und_taxis.draw import draw_state, render_rgb
    from taluva_ai.protocol import make_game

    state = make_game("thurn_und_taxis", num_players=2).new_initial_state(seed=0)
    while state.current_player < 0:
        state.draw()
    assert render_rgb(state, size=240, player=1).shape == (240, 240, 3)
    with pytest.raises(ValueError, match=r"player must be a seat 0\.\.1 or None, got 2"):
        draw_state(state, player=2)
