"""``ThurnUndTaxisVectorEnv`` (envs/tnt_vector.py): N scalar ``ThurnUndTaxisEnv`` step by step,
its bad input, and the compiled replica of NumPy's random streams it draws with
(envs/pcg64.py)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import taluva_ai.envs  # noqa: F401  (registers the ids)
from taluva_ai.envs import EnvStateError, ThurnUndTaxisEnv, ThurnUndTaxisVectorEnv
from taluva_ai.envs.pcg64 import integers, seed_state, state_from_generator
from taluva_ai.errors import ActionOutOfRangeError, IllegalActionError


def _pick(gen: np.random.Generator, mask: np.ndarray) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[gen.integers(legal.size)])


# -- the compiled random streams --------------------------------------------------------------


def test_seed_state_and_integers_equal_default_rng() -> None:
    rs = np.random.default_rng(5)
    for t in range(60):
        seed = int(rs.integers(2**62)) if t % 2 else int(rs.integers(2**32))
        ply = 0 if t % 5 == 0 else int(rs.integers(3000))
        st = np.zeros(6, dtype=np.uint64)
        seed_state(st, np.array([seed, ply], dtype=np.uint64))
        ref = np.random.PCG64(np.random.SeedSequence([seed, ply])).state["state"]
        assert (int(st[0]) << 64 | int(st[1]), int(st[2]) << 64 | int(st[3])) == (
            ref["state"], ref["inc"])
        gen = np.random.default_rng([seed, ply])
        for k in (66, 1, 2, 7, 1, 3, 2**31 + 5, 22, 100):
            assert integers(st, k) == gen.integers(k)


def test_state_from_generator_continues_the_stream() -> None:
    gen = np.random.default_rng(123)
    gen.integers(5)  # leaves a buffered 32-bit half
    st = np.zeros(6, dtype=np.uint64)
    state_from_generator(gen, st)
    assert st[4] == 1
    assert [integers(st, k) for k in (9, 2, 300, 1, 17)] == [
        int(gen.integers(k)) for k in (9, 2, 300, 1, 17)]
    with pytest.raises(ValueError, match="a PCG64 generator is needed, got 'MT19937'"):
        state_from_generator(np.random.Generator(np.random.MT19937(1)), st)


# -- equal to N scalar envs ---------------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "n_env", "finishes"), [
    ({"opponents": ["random", "greedy"], "agent_seat": "random"}, 3, 2),
    ({"opponents": ["greedy"], "agent_seat": 1, "max_rounds": 4}, 2, 3),
])
def test_equals_scalar_envs_step_by_step(kwargs: dict[str, Any], n_env: int,
                                         finishes: int) -> None:
    venv = ThurnUndTaxisVectorEnv(n_env, **kwargs)
    envs = [ThurnUndTaxisEnv(**kwargs) for _ in range(n_env)]
    gens = [np.random.default_rng(100 + i) for i in range(n_env)]
    obs, info = venv.reset(seed=11)
    sobs = [e.reset(seed=11 + i)[0] for i, e in enumerate(envs)]
    ended = np.zeros(n_env, dtype=np.int64)
    done = np.zeros(n_env, dtype=bool)
    ends: set[str] = set()
    while ended.min() < finishes:
        for i, e in enumerate(envs):
            np.testing.assert_array_equal(obs["observation"][i], sobs[i]["observation"])
            np.testing.assert_array_equal(obs["action_mask"][i], sobs[i]["action_mask"])
            assert info["agent_seat"][i] == e.seat
        acts = np.array([0 if done[i] else _pick(gens[i], obs["action_mask"][i])
                         for i in range(n_env)])
        obs, rew, term, trunc, info = venv.step(acts)
        for i, e in enumerate(envs):
            if done[i]:  # next-step autoreset: the scalar env's reset() without a seed
                sobs[i] = e.reset()[0]
                assert (rew[i], term[i], trunc[i]) == (0.0, False, False)
                continue
            sobs[i], r, t, tr, sinfo = e.step(int(acts[i]))
            assert (rew[i], term[i], trunc[i]) == (r, t, tr)
            assert info["current_player"][i] == sinfo["current_player"]
            if t or tr:
                assert info["rewards"][i].tolist() == sinfo["returns"]
                ended[i] += 1
                ends.add("truncated" if tr else "terminated")
        done = term | trunc
    # 4 rounds end no game by its rules: max_rounds truncates them (and they are scored)
    assert ends == ({"truncated"} if "max_rounds" in kwargs else {"terminated"})


class _Scripted:
    """An opponent for the scalar env that plays as the test's chooser of its game and records
    the observation of the seat to move (no ``reset``: the env draws no seed for it)."""

    def __init__(self, gen: np.random.Generator, log: list[tuple[int, np.ndarray, np.ndarray]]
                 ) -> None:
        self.gen, self.log = gen, log

    def act(self, state: Any) -> int:
        p = state.current_player
        mask = state.legal_action_mask().astype(np.int8)
        self.log.append((p, state.observation_tensor(p), mask))
        return _pick(self.gen, mask)


def test_self_play_equals_scalar_envs_with_the_same_moves() -> None:
    n_env, n = 2, 3
    venv = ThurnUndTaxisVectorEnv(n_env, opponents=None, num_players=n)
    obs, info = venv.reset(seed=4)
    vgens = [np.random.default_rng(7 + i) for i in range(n_env)]
    vlog: list[list[tuple[int, np.ndarray, np.ndarray]]] = [[] for _ in range(n_env)]
    vret: list[list[float] | None] = [None] * n_env
    while any(r is None for r in vret):
        acts = np.zeros(n_env, dtype=np.int64)
        for i in range(n_env):
            if vret[i] is None:
                vlog[i].append((int(info["agent_seat"][i]), obs["observation"][i].copy(),
                                obs["action_mask"][i].copy()))
                assert info["current_player"][i] == info["agent_seat"][i]
                acts[i] = _pick(vgens[i], obs["action_mask"][i])
        mover = info["agent_seat"].copy()
        obs, rew, term, trunc, info = venv.step(acts)
        for i in range(n_env):
            if vret[i] is None and (term[i] or trunc[i]):
                vret[i] = info["rewards"][i].tolist()
                assert rew[i] == info["rewards"][i, mover[i]]
    for i in range(n_env):
        gen = np.random.default_rng(7 + i)
        slog: list[tuple[int, np.ndarray, np.ndarray]] = []
        env = ThurnUndTaxisEnv(opponents=[_Scripted(gen, slog) for _ in range(n - 1)])
        sobs, _ = env.reset(seed=4 + i)
        while True:
            slog.append((0, sobs["observation"], sobs["action_mask"]))
            sobs, _, t, tr, sinfo = env.step(_pick(gen, sobs["action_mask"]))
            if t or tr:
                break
        assert sinfo["returns"] == vret[i]
        assert len(slog) == len(vlog[i]) > 100
        for (p, o, m), (vp, vo, vm) in zip(slog, vlog[i], strict=True):
            assert p == vp
            np.testing.assert_array_equal(o, vo)
            np.testing.assert_array_equal(m, vm)


def test_the_parallel_kernel_equals_the_serial_one() -> None:
    envs = [ThurnUndTaxisVectorEnv(3, opponents=["greedy"], parallel=par) for par in (False, True)]
    outs = [e.reset(seed=2)[0] for e in envs]
    gen = np.random.default_rng(0)
    for _ in range(40):
        np.testing.assert_array_equal(outs[0]["observation"], outs[1]["observation"])
        np.testing.assert_array_equal(outs[0]["action_mask"], outs[1]["action_mask"])
        acts = np.array([_pick(gen, m) for m in outs[0]["action_mask"]])
        outs = [e.step(acts)[0] for e in envs]


def test_make_vec_returns_it() -> None:
    venv = gym.make_vec("taluva_ai/ThurnUndTaxis-v0", num_envs=4,
                        vectorization_mode="vector_entry_point", opponents=["greedy", "random"])
    assert isinstance(venv.unwrapped, ThurnUndTaxisVectorEnv)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, _ = venv.reset(seed=0)
    assert obs["observation"].shape == (4, 536) and obs["observation"].dtype == np.float32
    assert obs["action_mask"].shape == (4, 327) and obs["action_mask"].dtype == np.int8
    assert venv.unwrapped.num_players == 3
    assert venv.observation_space.contains(obs)


# -- illegal actions and bad input --------------------------------------------------------------


def _first_illegal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask == 0)[0])


@pytest.mark.parametrize("mode", ["terminate", "penalty"])
def test_illegal_action_as_the_scalar_env(mode: str) -> None:
    venv = ThurnUndTaxisVectorEnv(2, opponents=["random", "random"], illegal_action=mode,
                                  illegal_penalty=-2.0)
    env = ThurnUndTaxisEnv(opponents=["random", "random"], illegal_action=mode,
                           illegal_penalty=-2.0)
    obs, _ = venv.reset(seed=9)
    env.reset(seed=10)
    legal0 = _pick(np.random.default_rng(0), obs["action_mask"][0])
    bad = _first_illegal(obs["action_mask"][1])
    before = obs["observation"][1].copy()
    obs, rew, term, trunc, info = venv.step(np.array([legal0, bad]))
    sobs2, r, t, tr, sinfo = env.step(bad)
    assert (rew[1], term[1], trunc[1], info["illegal_action"][1]) == (r, t, tr, True) \
        == (-2.0, mode == "terminate", False, True)
    assert info["illegal_action"].tolist() == [False, True]
    np.testing.assert_array_equal(obs["observation"][1], before)
    np.testing.assert_array_equal(obs["observation"][1], sobs2["observation"])
    np.testing.assert_array_equal(obs["action_mask"][1], sobs2["action_mask"])
    if mode == "terminate":
        assert info["rewards"][1].tolist() == sinfo["returns"] == [-2.0, 1.0, 1.0]
        assert info["current_player"][1] == -1
    else:
        assert info["rewards"][1].tolist() == [0.0, 0.0, 0.0]


def test_illegal_action_raise_changes_nothing() -> None:
    venv = ThurnUndTaxisVectorEnv(2, illegal_action="raise")
    obs, _ = venv.reset(seed=1)
    legal0 = int(np.flatnonzero(obs["action_mask"][0])[0])
    bad = _first_illegal(obs["action_mask"][1])
    meta = venv._meta.copy()
    with pytest.raises(IllegalActionError, match="masked out in game 1: not a legal action"):
        venv.step(np.array([legal0, bad]))
    np.testing.assert_array_equal(venv._meta, meta)
    _, rew, _, _, _ = venv.step(np.array([legal0, int(np.flatnonzero(
        obs["action_mask"][1])[0])]))
    assert rew.tolist() == [0.0, 0.0]


def test_bad_action_batches() -> None:
    venv = ThurnUndTaxisVectorEnv(2)
    with pytest.raises(EnvStateError, match=r"call reset\(\) before step\(\)"):
        venv.step(np.zeros(2, dtype=np.int64))
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must have shape \(2,\), got \(3,\)"):
        venv.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="actions must be integers, got dtype float64"):
        venv.step(np.zeros(2))
    with pytest.raises(ActionOutOfRangeError, match=r"action 327 of env 1 is outside the "
                       r"action space 0\.\.326"):
        venv.step(np.array([0, 327]))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown opponent 'mcts'; built-in: greedy, random"):
        ThurnUndTaxisVectorEnv(2, opponents=["mcts"])
    with pytest.raises(ValueError, match="1 opponents for 3 seats: give num_players - 1"):
        ThurnUndTaxisVectorEnv(2, opponents=["random"], num_players=3)
    with pytest.raises(ValueError, match=r"agent_seat must be a seat 0\.\.1 or 'random', got 2"):
        ThurnUndTaxisVectorEnv(2, agent_seat=2)
    with pytest.raises(ValueError, match="num_envs must be a positive integer, got 0"):
        ThurnUndTaxisVectorEnv(0)
    with pytest.raises(ValueError, match="illegal_action must be one of"):
        ThurnUndTaxisVectorEnv(1, illegal_action="ignore")
    with pytest.raises(ValueError, match="max_rounds"):
        ThurnUndTaxisVectorEnv(1, max_rounds=0)
    with pytest.raises(ValueError, match="reset options: unknown key 'reset_masks'"):
        ThurnUndTaxisVectorEnv(1).reset(options={"reset_masks": np.ones(1, dtype=bool)})
    with pytest.raises(ValueError, match=r"opponents must be a list .* got 'random'"):
        ThurnUndTaxisVectorEnv(1, opponents="random")  # type: ignore[arg-type]
    for penalty in ("x", None, float("nan")):
        with pytest.raises(ValueError, match="illegal_penalty must be a finite number"):
            ThurnUndTaxisVectorEnv(1, illegal_penalty=penalty)  # type: ignore[arg-type]


def test_a_refused_reset_touches_no_game() -> None:
    """Every seed is checked before any game is reset: a bad entry of a seed list is named
    and the games stay as they were (they were half reset, and the next step applied a
    decision to a chance step)."""
    venv = ThurnUndTaxisVectorEnv(4)
    obs, _ = venv.reset(seed=1)
    for _ in range(3):
        obs, *_ = venv.step(np.array([_pick(np.random.default_rng(i), m)
                                      for i, m in enumerate(obs["action_mask"])]))
    before = {k: v.copy() for k, v in obs.items()}
    meta = venv._meta.copy()
    for seed, message in (([1, 2, -1, 3], r"seed\[2\] must be a non-negative integer, got -1"),
                          ([1, 2, "x", 4], r"seed\[2\] must be a non-negative integer, got 'x'"),
                          ([1, 2, 3, 1.5], r"seed\[3\] must be a non-negative integer"),
                          (1.5, "seed must be a non-negative integer, got 1.5"),
                          (True, "seed must be a non-negative integer, got True"),
                          ("7", "seed must be a non-negative integer, got '7'")):
        with pytest.raises(ValueError, match=message):
            venv.reset(seed=seed)  # type: ignore[arg-type]
        assert np.array_equal(venv._meta, meta)
    now = venv._observation()
    assert all(np.array_equal(now[k], before[k]) for k in before)
    again, _ = venv.reset(seed=np.array([1, 2, 3, 4]))  # numpy integers are seeds too
    first, _ = ThurnUndTaxisVectorEnv(4).reset(seed=[1, 2, 3, 4])
    assert all(np.array_equal(again[k], first[k]) for k in first)


def test_autoreset_disabled_refuses_a_finished_game() -> None:
    venv = ThurnUndTaxisVectorEnv(2, opponents=["random"], max_rounds=1,
                                  autoreset_mode=AutoresetMode.DISABLED)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.DISABLED
    obs, _ = venv.reset(seed=5)
    gen = np.random.default_rng(0)
    done = np.zeros(2, dtype=bool)
    while not done.any():
        obs, _, term, trunc, _ = venv.step(np.array([_pick(gen, m) for m in obs["action_mask"]]))
        assert not term.any()
        done = trunc
    i = int(np.flatnonzero(done)[0])
    acts = np.array([0 if done[j] else _pick(gen, obs["action_mask"][j]) for j in range(2)])
    with pytest.raises(EnvStateError, match=f"game {i} has ended: reset it with reset"):
        venv.step(acts)
    obs, info = venv.reset(options={"reset_mask": done})
    assert info["step_kind"][i] == 1 and obs["action_mask"][i].sum() > 0  # a fresh game's draw


def test_bench_env_of_thurn_und_taxis(monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``taluva bench --game thurn_und_taxis --env --json`` measures this env at batch 1, 64,
    256 (here with 0.02 s measurements)."""
    import json

    import taluva_ai.envs.bench as eb
    from taluva_ai.cli import main

    real = eb.bench_env
    calls: list[tuple[Any, ...]] = []

    def short(sizes: Any, repeats: int, game: str) -> dict[str, Any]:
        calls.append((tuple(sizes), repeats, game))
        return real(sizes, seconds=0.02, repeats=repeats, warmup_steps=2, game=game)

    monkeypatch.setattr(eb, "bench_env", short)
    assert main(["bench", "--game", "thurn_und_taxis", "--env", "--json", "--repeats", "1"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert calls == [((1, 64, 256), 1, "thurn_und_taxis")]
    assert sorted(res) == ["env", "machine"]
    env = res["env"]
    assert env["game"] == "thurn_und_taxis" and env["num_players"] == 2
    assert sorted(env["steps_per_s"], key=int) == ["1", "64", "256"]
    assert all(v > 0 for v in env["steps_per_s"].values()) and "view_radius" not in env
    with pytest.raises(ValueError, match="no vector env for game 'chess'; known: taluva, "
                       "thurn_und_taxis"):
        real((1,), game="chess")
