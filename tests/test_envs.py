"""The Gymnasium env ``taluva_ai/Taluva-v0`` and the native ``TaluvaVectorEnv``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import taluva_ai.envs
from taluva_ai.envs import EnvStateError, TaluvaEnv, TaluvaVectorEnv
from taluva_ai.errors import ActionOutOfRangeError, IllegalActionError
from taluva_ai.games.taluva.encoding import make_view

A = make_view(13).num_actions  # 10206


def _legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    ids = np.flatnonzero(mask)
    return int(ids[rng.integers(ids.size)])


# -- scalar env ---------------------------------------------------------------------------------


def test_make_and_spaces() -> None:
    env = gym.make("taluva_ai/Taluva-v0", opponents=["random"])
    assert isinstance(env.unwrapped, TaluvaEnv)
    obs, info = env.reset(seed=0)
    assert obs["observation"].shape == (49, 27, 27) and obs["observation"].dtype == np.float32
    assert obs["action_mask"].shape == (A,) and obs["action_mask"].dtype == np.int8
    assert env.action_space.n == A
    # the first tile: the six orientations at the view's centre pixel
    pix = 13 * 27 + 13
    assert np.flatnonzero(obs["action_mask"]).tolist() == [c * 729 + pix for c in range(6)]
    assert info["current_player"] == 0 and info["step_kind"] == "tile"
    assert info["agent_seat"] == 0 and info["outside"] == 0
    np.testing.assert_array_equal(info["action_mask"], obs["action_mask"])
    np.testing.assert_array_equal(env.unwrapped.action_masks(), obs["action_mask"] == 1)


def test_check_env() -> None:
    # the defaults pass too (tests/test_envs_conventions.py); the penalty mode as well
    check_env(gym.make("taluva_ai/Taluva-v0", opponents=["random"], illegal_action="penalty",
                       render_mode="rgb_array").unwrapped)
    # made by gym.make, so that it has a spec: check_env warns that it cannot check the other
    # render modes of an env without one
    check_env(gym.make("taluva_ai/Taluva-v0", opponents=["greedy", "random"],
                       illegal_action="penalty", render_mode="ansi").unwrapped)


def test_full_game_against_random_opponent() -> None:
    env = TaluvaEnv(opponents=["random"])
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(3)
    steps, total = 0, 0.0
    done = False
    while not done:
        assert info["current_player"] == 0
        obs, r, term, trunc, info = env.step(_legal(obs["action_mask"], rng))
        total += r
        steps += 1
        done = term or trunc
    assert term and not trunc
    assert total in (1.0, -1.0)
    assert total == info["rewards"][0] and info["rewards"].sum() == 0
    assert info["step_kind"] == "over" and info["current_player"] == -1
    assert obs["action_mask"].sum() == 0
    with pytest.raises(EnvStateError, match="game is over"):
        env.step(0)


def test_agent_seat_and_python_opponent() -> None:
    from taluva_ai.agents import GreedyAgent

    env = TaluvaEnv(opponents=[GreedyAgent(seed=1)], agent_seat=1)
    _obs, info = env.reset(seed=5)
    # seat 0 (the greedy object) has played its first turn
    assert info["current_player"] == 1 and info["step_kind"] == "tile"
    assert env.state is not None and env.state.tiles_placed == 1
    env2 = TaluvaEnv(opponents=["greedy"], agent_seat="random")
    _, info2 = env2.reset(seed=0)
    assert info2["agent_seat"] in (0, 1)


def test_render() -> None:
    env = TaluvaEnv(opponents=["random"], render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert isinstance(text, str) and text.startswith("ply ")
    env = TaluvaEnv(opponents=["random"], render_mode="rgb_array")
    env.reset(seed=1)
    img = env.render()
    assert isinstance(img, np.ndarray) and img.shape == (480, 480, 3) and img.dtype == np.uint8
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 5


def test_scalar_bad_input() -> None:
    env = TaluvaEnv(opponents=["random"], illegal_action="raise")
    with pytest.raises(EnvStateError, match="reset"):
        env.step(0)
    _obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.array([1, 2]))
    with pytest.raises(ValueError, match="dtype float64"):
        env.step(np.float64(3.0))
    with pytest.raises(ValueError, match="integer view id"):
        env.step(True)
    with pytest.raises(ActionOutOfRangeError, match="0 to 10205"):
        env.step(A)
    with pytest.raises(IllegalActionError, match="masked out"):
        env.step(0)
    with pytest.raises(ValueError, match="num_players must be 2, 3 or 4, got 5"):
        TaluvaEnv(opponents=["random"] * 4)
    with pytest.raises(ValueError, match="num_players must be 2, 3 or 4, got 1"):
        TaluvaEnv(num_players=1)
    with pytest.raises(ValueError, match="unknown opponent 'nobody'"):
        TaluvaEnv(opponents=["nobody"])
    with pytest.raises(ValueError, match="3 seats need 2 opponents, got 1"):
        TaluvaEnv(opponents=["random"], num_players=3)
    with pytest.raises(ValueError, match="agent_seat"):
        TaluvaEnv(opponents=["random"], agent_seat=2)
    with pytest.raises(ValueError, match="render_mode"):
        TaluvaEnv(render_mode="video")
    with pytest.raises(ValueError, match="illegal_action must be one of 'terminate', 'penalty', "
                       "'raise', got 'lose'"):
        TaluvaEnv(illegal_action="lose")


def test_penalty_mode() -> None:
    env = TaluvaEnv(opponents=["random"], illegal_action="penalty", illegal_penalty=-0.5)
    obs, _ = env.reset(seed=0)
    obs2, r, term, trunc, info = env.step(0)
    assert (r, term, trunc, info["illegal_action"]) == (-0.5, False, False, True)
    np.testing.assert_array_equal(obs["observation"], obs2["observation"])


# -- vector env ---------------------------------------------------------------------------------


def test_make_vec() -> None:
    venv = gym.make_vec("taluva_ai/Taluva-v0", num_envs=4, vectorization_mode="vector_entry_point")
    assert isinstance(venv, TaluvaVectorEnv)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = venv.reset(seed=0)
    assert obs["observation"].shape == (4, 49, 27, 27)
    assert obs["action_mask"].shape == (4, A)
    assert info["current_player"].tolist() == [0, 0, 0, 0]
    assert venv.single_action_space.n == A
    v2 = gym.make_vec("taluva_ai/Taluva-v0", num_envs=3, opponents=["greedy"])
    assert isinstance(v2, TaluvaVectorEnv) and v2.opponents == ["greedy"]


@pytest.mark.parametrize("opponents", [None, ["random"], ["greedy", "random"]])
def test_vector_equals_scalar_envs(opponents: list[str] | None) -> None:
    """N games of the vector env give exactly what N scalar envs seeded seed + i give,
    across episode ends (next-step autoreset against a scalar reset)."""
    n_envs, seed = 3, 11
    kw = {} if opponents is None else {"opponents": opponents}
    venv = TaluvaVectorEnv(n_envs, num_players=1 + len(opponents or [None]), **kw)
    envs = [TaluvaEnv(**kw) for _ in range(n_envs)]  # type: ignore[arg-type]
    vobs, vinfo = venv.reset(seed=seed)
    sobs = [e.reset(seed=seed + i)[0] for i, e in enumerate(envs)]
    rng = np.random.default_rng(0)
    s_done = [False] * n_envs
    episodes = 0
    for _ in range(140 if opponents is None else 90):
        for i in range(n_envs):
            np.testing.assert_array_equal(vobs["observation"][i], sobs[i]["observation"])
            np.testing.assert_array_equal(vobs["action_mask"][i], sobs[i]["action_mask"])
        acts = np.array([_legal(m, rng) if m.any() else 0 for m in vobs["action_mask"]])
        vobs, vr, vterm, vtrunc, vinfo = venv.step(acts)
        for i, e in enumerate(envs):
            if s_done[i]:
                sobs[i], _ = e.reset()
                s_done[i] = False
                r, term, trunc = 0.0, False, False
            else:
                sobs[i], r, term, trunc, info = e.step(int(acts[i]))
                np.testing.assert_array_equal(vinfo["rewards"][i], info["rewards"])
                s_done[i] = term or trunc
                episodes += int(term)
            assert (vr[i], vterm[i], vtrunc[i]) == (r, term, trunc)
    assert episodes >= 1


def test_autoreset_disabled() -> None:
    venv = TaluvaVectorEnv(2, opponents=["random"], autoreset_mode="Disabled")
    assert venv.metadata["autoreset_mode"] == AutoresetMode.DISABLED
    obs, _ = venv.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(400):
        acts = np.array([_legal(m, rng) if m.any() else 0 for m in obs["action_mask"]])
        obs, r, term, _trunc, info = venv.step(acts)
        if term.any():
            break
    assert term.any()
    i = int(np.flatnonzero(term)[0])
    assert r[i] == info["rewards"][i][0]
    with pytest.raises(EnvStateError, match=f"game {i} has ended"):
        venv.step(np.zeros(2, dtype=np.int64))
    kept = obs["observation"][1 - i].copy()
    mask = np.zeros(2, dtype=bool)
    mask[i] = True
    obs, info = venv.reset(options={"reset_mask": mask})
    assert info["step_kind"][i] == 1 and obs["action_mask"][i].sum() == 6
    np.testing.assert_array_equal(obs["observation"][1 - i], kept)


def test_vector_per_player_rewards_self_play() -> None:
    venv = TaluvaVectorEnv(4, num_players=3)
    venv.reset(seed=2)
    ended = 0
    for _ in range(400):
        _obs, r, term, _trunc, info = venv.step(venv.sample_legal_actions())
        for i in np.flatnonzero(term):
            ended += 1
            assert info["rewards"][i].sum() == pytest.approx(0.0)
            assert r[i] in info["rewards"][i]
        if ended >= 2:
            break
    assert ended >= 2


def test_vector_bad_input() -> None:
    venv = TaluvaVectorEnv(2)
    with pytest.raises(EnvStateError, match="reset"):
        venv.step(np.zeros(2, dtype=np.int64))
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        venv.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="integers, got dtype float32"):
        venv.step(np.zeros(2, dtype=np.float32))
    with pytest.raises(IndexError, match="outside the action space"):
        venv.step(np.array([0, A]))
    with pytest.raises(IllegalActionError, match="masked out in game 0"):
        venv.step(np.array([0, 0]))
    with pytest.raises(ValueError, match="num_players must be 2, 3 or 4, got 5"):
        TaluvaVectorEnv(2, num_players=5)
    with pytest.raises(ValueError, match="unknown opponent 'nobody'"):
        TaluvaVectorEnv(2, opponents=["nobody"])
    with pytest.raises(ValueError, match="num_envs"):
        TaluvaVectorEnv(0)
    with pytest.raises(ValueError, match="reset_mask"):
        venv.reset(options={"reset_mask": np.ones(3, dtype=bool)})


def test_registered() -> None:
    assert taluva_ai.envs.ENV_ID in gym.registry


def test_parallel_and_serial_kernels_agree() -> None:
    a = TaluvaVectorEnv(8, opponents=["greedy"], parallel=True)
    b = TaluvaVectorEnv(8, opponents=["greedy"], parallel=False)
    oa, _ = a.reset(seed=4)
    ob, _ = b.reset(seed=4)
    for _ in range(30):
        np.testing.assert_array_equal(oa["observation"], ob["observation"])
        np.testing.assert_array_equal(oa["action_mask"], ob["action_mask"])
        act = a.sample_legal_actions()
        oa, ra, ta, _, _ = a.step(act)
        ob, rb, tb, _, _ = b.step(act)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(ta, tb)


def test_bench_env() -> None:
    from taluva_ai.envs.bench import bench_env

    res = bench_env((1, 8), seconds=0.05, repeats=2, warmup_steps=2)
    assert sorted(res["steps_per_s"]) == ["1", "8"]
    assert all(v > 0 for v in res["steps_per_s"].values())
    assert len(res["steps_per_s_runs"]["8"]) == 2
    assert res["view_radius"] == 13 and res["num_players"] == 2 and res["threads"] >= 1
    with pytest.raises(ValueError, match="batch sizes must be >= 1"):
        bench_env((0,), seconds=0.01, repeats=1)


def test_heuristic_action_values_match_the_greedy_player() -> None:
    """The vector env's teacher values equal the engine's heuristic values of each game's
    scalar state, mapped to view ids; playing their argmax beats random."""
    from taluva_ai.games.taluva.encoding import engine_to_view

    n_envs, seed = 4, 3
    venv = TaluvaVectorEnv(n_envs, opponents=["random"])
    envs = [TaluvaEnv(opponents=["random"]) for _ in range(n_envs)]
    vobs, _ = venv.reset(seed=seed)
    for i, e in enumerate(envs):
        e.reset(seed=seed + i)
    _, _, _, hexqr, _ = venv.game.kernel_args()
    wins, ended = 0, 0
    for _ in range(60):
        h = venv.heuristic_action_values()
        assert h.dtype == np.float32 and h.shape == (n_envs, A)
        for i, e in enumerate(envs):
            if e.state is None or e.state.is_terminal():
                continue
            expect = np.full(A, -np.inf, dtype=np.float32)
            ids, values = e.state.heuristic_values()
            qc, rc = e._center
            for a, v in zip(ids, values, strict=True):
                vid = engine_to_view(int(a), venv.game.num_cells, hexqr, qc, rc, e.view.radius)
                if vid >= 0:
                    expect[vid] = v
            np.testing.assert_array_equal(h[i], expect)
            np.testing.assert_array_equal(np.isfinite(h[i]), vobs["action_mask"][i] != 0)
        act = np.where(np.isfinite(h).any(axis=1), h.argmax(axis=1), 0)
        vobs, r, term, _, _ = venv.step(act)
        for i, e in enumerate(envs):
            if e.state is not None and not e.state.is_terminal():
                e.step(int(act[i]))
        ended += int(term.sum())
        wins += int((r[term] > 0).sum())
    assert ended >= 2 and wins == ended
    from taluva_ai.envs import TaluvaSoloVectorEnv

    solo = TaluvaSoloVectorEnv(1)
    solo.reset(seed=0)
    with pytest.raises(NotImplementedError, match="2-4 player"):
        solo.heuristic_action_values()
    with pytest.raises(EnvStateError, match="reset"):
        TaluvaVectorEnv(2).heuristic_action_values()


def test_without_gymnasium_the_import_error_names_the_extra() -> None:
    import subprocess
    import sys

    code = ("import sys\nsys.modules['gymnasium'] = None\n"
            "try:\n    import taluva_ai.envs\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("taluva_ai.envs needs the envs extra: pip install 'taluva-ai[envs]'")
