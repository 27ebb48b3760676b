"""Smoke run of experiments/ppo_masked.py (masked PPO on the native vector env)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]


def _load() -> Any:
    spec = importlib.util.spec_from_file_location("ppo_masked", ROOT / "experiments" /
                                                  "ppo_masked.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["ppo_masked"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_smoke_run(tmp_path: Path) -> None:
    ppo = _load()
    cfg = ppo.Config(num_envs=4, num_steps=8, total_steps=64, channels=8, blocks=1,
                     eval_games=2, eval_every=0, threads=1, out=str(tmp_path / "run"))
    last = ppo.train(cfg)
    assert last["update"] == 2 and last["steps"] == 64
    assert 0.0 <= last["eval_win_rate"] <= 1.0
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["update"] == 1
    state = torch.load(tmp_path / "run" / "model.pt", weights_only=True)
    net = ppo.PolicyValueNet(49, 8, 1)
    net.load_state_dict(state)
    with torch.no_grad():
        logits, v = net(torch.zeros(3, 49, 27, 27))
    assert logits.shape == (3, 10206) and v.shape == (3,)
    mask = torch.zeros(3, 10206, dtype=torch.bool)
    mask[0, 5] = True
    ml = ppo.masked_logits(logits, mask)
    assert int(ml[0].argmax()) == 5 and float(ml[0, 4]) == -1e9
    assert torch.equal(ml[1], logits[1])  # no legal id: a reset step keeps its logits


def test_warm_start_shaping_and_seats(tmp_path: Path) -> None:
    ppo = _load()
    cfg = ppo.Config(num_envs=4, num_steps=8, total_steps=32, channels=8, blocks=1,
                     eval_games=4, eval_every=0, threads=1, shaping=0.5,
                     warm_start_games=2, warm_start_epochs=1, out=str(tmp_path / "run"))
    env = ppo.SeatedVectorEnv(4, cfg)
    assert env.seat_of.tolist() == [0, 0, 1, 1]
    obs = env.reset(seed=0)
    assert env.potential(obs["observation"]).tolist() == [0.0] * 4  # nothing built yet
    planes = obs["observation"].copy()
    planes[0, env._temples] = 2 / 3  # slot 0 built one temple
    planes[1, env._towers + 1] = 0.0  # slot 1 (the opponent) built both towers
    assert env.potential(planes).tolist() == [1.0, -2.0, 0.0, 0.0]
    ppo.train(cfg)
    lines = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text()
             .splitlines()]
    first = lines[0]
    assert first["update"] == 0 and first["warm_start_samples"] > 20
    assert 0.0 <= first["warm_start_accuracy"] <= 1.0
    assert set(first) >= {"eval_win_rate", "eval_win_rate/seat0", "eval_win_rate/seat1"}
    assert (tmp_path / "run" / "curve.png").stat().st_size > 0


def test_kickstart_loss_weight_and_run(tmp_path: Path) -> None:
    ppo = _load()
    logits = torch.zeros(3, 6)
    best = torch.zeros(3, 6, dtype=torch.bool)
    best[0, :2] = True  # the teacher ties two ids: cross-entropy log 6 for a uniform policy
    best[1, 5] = True
    # row 2 has no best id (a reset step): left out of the mean
    assert float(ppo.distillation_loss(logits, best)) == pytest.approx(np.log(6.0))
    logits[1, 5] = 10.0
    expect = (np.log(6.0) + np.log(5.0 + np.exp(10.0)) - 10.0) / 2
    assert float(ppo.distillation_loss(logits, best)) == pytest.approx(expect, rel=1e-5)
    assert float(ppo.distillation_loss(logits, torch.zeros_like(best))) == 0.0
    cfg = ppo.Config(kickstart=2.0, kickstart_steps=100)
    assert [ppo.kickstart_weight(cfg, s) for s in (0, 50, 100, 200)] == [2.0, 1.0, 0.0, 0.0]
    assert ppo.kickstart_weight(ppo.Config(kickstart=0.5), 10**9) == 0.5
    assert ppo.kickstart_weight(ppo.Config(), 0) == 0.0

    cfg = ppo.Config(num_envs=4, num_steps=8, total_steps=64, channels=8, blocks=1,
                     eval_games=2, eval_every=0, threads=1, kickstart=1.0, kickstart_steps=32,
                     out=str(tmp_path / "run"))
    env = ppo.SeatedVectorEnv(4, cfg)
    obs = env.reset(seed=0)
    best = env.teacher_targets()
    # the first decision is a tile placement: every legal id the greedy player ranks first
    assert best.any(axis=1).all() and not (best & (obs["action_mask"] == 0)).any()
    ppo.train(cfg)
    lines = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text()
             .splitlines()]
    assert [x["kickstart_weight"] for x in lines] == [1.0, 0.0]
    assert lines[0]["kickstart_loss"] > 0 and "kickstart_loss" not in lines[1]
    result = ppo.evaluate_model(dataclasses.replace(cfg, eval_model=str(tmp_path / "run" /
                                                                       "model.pt")))
    assert result["eval_games"] == 2 and 0.0 <= result["eval_win_rate"] <= 1.0
    with pytest.raises(SystemExit, match="no such file"):
        ppo.main(["--eval-model", str(tmp_path / "missing.pt")])
    lone = tmp_path / "lone" / "model.pt"  # without its run's config.json: default network
    lone.parent.mkdir()
    lone.write_bytes((tmp_path / "run" / "model.pt").read_bytes())
    with pytest.raises(SystemExit, match="do not fit a network with --channels 16 --blocks 1"):
        ppo.main(["--eval-model", str(lone), "--eval-games", "2"])  # trained with 8 channels
    lone.write_bytes(b"not a model")
    with pytest.raises(SystemExit, match="cannot be read as a saved state_dict"):
        ppo.main(["--eval-model", str(lone), "--eval-games", "2"])
    ppo.main(["--eval-model", str(tmp_path / "run" / "model.pt"), "--eval-games", "2",
              "--threads", "1"])  # the run's config.json gives channels 8


@pytest.mark.parametrize(("argv", "message"), [
    (["--eval-games", "0"], "--eval-games must be at least 2"),
    (["--num-envs", "1"], "--num-envs must be at least 2"),
    (["--num-steps", "0"], "--num-steps must be at least 1"),
    (["--kickstart", "-1"], "--kickstart must be >= 0"),
    (["--kickstart-steps", "-5"], "--kickstart-steps must be at least 0"),
    (["--seats", "first"], "--seats: 'all' or a seat 0..1"),
    (["--opponents", "bogus"], "unknown opponent 'bogus'"),
    (["--view-radius", "0"], "view_radius must be an integer in 2..40"),
])
def test_bad_settings_fail_before_work(argv: list[str], message: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    ppo = _load()
    with pytest.raises(SystemExit):
        ppo.main(argv)
    assert message in capsys.readouterr().err


def test_a_game_with_no_legal_id_in_the_view_is_an_error() -> None:
    ppo = _load()
    env = ppo.SeatedVectorEnv(2, ppo.Config(view_radius=2))
    obs = env.reset(seed=0)
    rng = np.random.default_rng(0)
    with pytest.raises(RuntimeError, match="outside the view of radius 2"):
        for _ in range(300):
            mask = obs["action_mask"] != 0
            act = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask])
            obs, _, _ = env.step(act)


def test_maskable_ppo_runs() -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import gymnasium as gym

    import taluva_ai.envs  # noqa: F401
    from taluva_ai.envs.wrappers import PlanesOnly

    env = PlanesOnly(gym.make("taluva_ai/Taluva-v0", opponents=["random"]))
    assert env.observation_space.shape == (49, 27, 27)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=16, n_epochs=1,
                                    policy_kwargs={"net_arch": [16]}, seed=0, device="cpu")
    model.learn(64)
    obs, _ = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]
