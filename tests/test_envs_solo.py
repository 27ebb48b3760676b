"""``taluva_ai/TaluvaSolo-v0`` and its native vector env (docs/solo.md): Gymnasium's checker,
rewards (final score, shaped), the solo action ids and planes, vector == scalar."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import taluva_ai.envs  # noqa: F401  (registers the envs)
from taluva_ai.envs import TaluvaSoloEnv, TaluvaSoloVectorEnv
from taluva_ai.envs.vector import EnvStateError
from taluva_ai.errors import IllegalActionError
from taluva_ai.games.taluva.encoding import (
    NUM_SOLO_ACTIONS,
    NUM_SOLO_PLANES,
    SOLO_PLANE_NAMES,
    make_view,
    num_planes,
    plane_names,
)

VIEW = make_view(13)
A = VIEW.num_actions + NUM_SOLO_ACTIONS


def play(env, seed, rng):
    """Play one episode with uniformly random legal actions; return the rewards and the last
    info."""
    _, info = env.reset(seed=seed)
    rewards = []
    done = False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        _, r, term, trunc, info = env.step(int(legal[rng.integers(legal.size)]))
        rewards.append(r)
        done = term or trunc
    return rewards, info


def test_check_env_passes():
    # the defaults pass too (tests/test_envs_conventions.py); the penalty mode as well
    env = gym.make("taluva_ai/TaluvaSolo-v0", illegal_action="penalty", render_mode="ansi")
    check_env(env.unwrapped)
    # through gym.make, so that it has a spec (check_env warns without one)
    check_env(gym.make("taluva_ai/TaluvaSolo-v0", reward="shaped",
                       illegal_action="penalty").unwrapped)
    env.close()


def test_spaces_and_planes():
    env = gym.make("taluva_ai/TaluvaSolo-v0")
    obs, info = env.reset(seed=0)
    assert obs["observation"].shape == (num_planes(1, solo=True), 27, 27) == (66, 27, 27)
    assert obs["action_mask"].shape == (A,) and env.action_space.n == A
    names = plane_names(1, solo=True)
    assert names[-NUM_SOLO_PLANES:] == list(SOLO_PLANE_NAMES)
    planes = dict(zip(names, obs["observation"], strict=True))
    assert planes["solo/draw_pile"].max() == pytest.approx(30 / 31)  # the regular tile drawn
    assert planes["solo/bonus_stack"].max() == pytest.approx(1.0)
    assert sum(planes[f"solo/face_up_a/{t}"].max() for t in "JCSRL") == 1.0
    assert info["step_kind"] == "tile"
    env.close()


def test_rewards_final_score_and_shaped_add_up_to_it():
    rng = np.random.default_rng(0)
    env = TaluvaSoloEnv()
    rewards, info = play(env, 3, rng)
    assert all(r == 0 for r in rewards[:-1])
    assert rewards[-1] == sum(info["score_breakdown"].values()) == info["score"]
    assert info["result_band"] in ("lost", "win", "well played", "very well played", "perfect")
    shaped = TaluvaSoloEnv(reward="shaped")
    rewards2, _ = play(shaped, 3, np.random.default_rng(0))
    assert len(rewards2) == len(rewards)  # the same game: same seeds, same actions
    assert sum(rewards2) == pytest.approx(rewards[-1])
    assert any(r != 0 for r in rewards2[:-1])


def test_bonus_and_box_ids_step_the_game():
    env = TaluvaSoloEnv()
    rng = np.random.default_rng(1)
    seen = set()
    for seed in range(4):
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            kind = info["step_kind"]
            if kind in ("bonus", "box"):
                assert legal.min() >= VIEW.num_actions
                seen.add(kind)
            else:
                assert legal.max() < VIEW.num_actions
            _, _, done, _, info = env.step(int(legal[rng.integers(legal.size)]))
    assert seen == {"bonus", "box"}


def test_bad_actions_and_steps_out_of_order():
    env = TaluvaSoloEnv(illegal_action="raise")
    with pytest.raises(EnvStateError):
        env.step(0)
    _, info = env.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        env.step(bad)
    with pytest.raises(ValueError, match="reward must be"):
        TaluvaSoloEnv(reward="points")
    with pytest.raises(ValueError, match="contacts must be one of"):
        TaluvaSoloEnv(rules={"contacts": "sides"})
    with pytest.raises(ValueError, match="solo RuleSet"):
        from taluva_ai.games.taluva import RuleSet

        TaluvaSoloEnv(rules=RuleSet())
    pen = TaluvaSoloEnv(illegal_action="penalty", illegal_penalty=-5.0)
    pen.reset(seed=0)
    _, r, term, _, info = pen.step(bad)
    assert (r, term, info["illegal_action"]) == (-5.0, False, True)


def test_vector_env_equals_scalar_envs():
    n = 2
    vec = gym.make_vec("taluva_ai/TaluvaSolo-v0", num_envs=n,
                       vectorization_mode="vector_entry_point", reward="shaped")
    obs, _ = vec.reset(seed=10)
    scalars = [TaluvaSoloEnv(reward="shaped") for _ in range(n)]
    for i, e in enumerate(scalars):
        assert np.array_equal(e.reset(seed=10 + i)[0]["observation"], obs["observation"][i])
    rng = np.random.default_rng(0)
    live = np.ones(n, dtype=bool)
    steps = 0
    while live.any():
        # a finished game is reset by the next step (its action ignored), then played on
        acts = np.array([int(rng.choice(np.flatnonzero(obs["action_mask"][i])))
                         if obs["action_mask"][i].any() else 0 for i in range(n)])
        obs, r, term, _, info = vec.step(acts)
        for i in np.flatnonzero(live):
            so, sr, st, _, sinfo = scalars[i].step(int(acts[i]))
            assert np.array_equal(so["observation"], obs["observation"][i])
            assert (sr, st, sinfo["score"]) == (r[i], term[i], info["score"][i])
            live[i] = not st
        steps += 1
    assert steps > 10


def test_vector_env_random_play_reaches_the_end():
    vec = TaluvaSoloVectorEnv(num_envs=4)
    vec.reset(seed=0)
    ended = np.zeros(4, dtype=bool)
    for _ in range(200):
        _, r, term, _, _ = vec.step(vec.sample_legal_actions())
        assert np.all(r[~term] == 0)
        ended |= term
        if ended.all():
            break
    assert ended.all()
