"""The SB3 pieces (issue 19, A.10): the small CNN features extractor, the masked distribution
that avoids exp's slow path, and a tiny run of experiments/sb3_maskable_ppo.py (the
measurement itself is in docs/envs.md, not a test)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib.common.maskable.distributions import MaskableCategorical  # noqa: E402

from taluva_ai.envs.sb3 import (  # noqa: E402
    GapMaskableCategorical,
    GapMaskablePolicy,
    TaluvaCNN,
    cnn_policy_kwargs,
)

ROOT = Path(__file__).resolve().parents[1]
PLANES = gym.spaces.Box(0.0, 48.0, (49, 27, 27), np.float32)


def test_the_cnn_is_small_and_maps_planes_to_features() -> None:
    net = TaluvaCNN(PLANES)
    assert sum(p.numel() for p in net.parameters()) == 105_952
    out = net(torch.zeros(3, 49, 27, 27))
    assert out.shape == (3, 128)
    solo = TaluvaCNN(gym.spaces.Box(0.0, 48.0, (66, 27, 27), np.float32), 64, 8)
    assert solo(torch.zeros(2, 66, 27, 27)).shape == (2, 64)
    with pytest.raises(ValueError, match="TaluvaCNN takes planes Box"):
        TaluvaCNN(gym.spaces.Box(0.0, 1.0, (536,), np.float32))
    with pytest.raises(ValueError, match="channels must be an integer >= 1, got 0"):
        TaluvaCNN(PLANES, channels=0)


def test_the_gap_masked_distribution_is_sb3_contribs() -> None:
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 500, generator=gen) * 3
    mask = torch.rand(4, 500, generator=gen) < 0.1
    mask[3] = False  # no legal id: uniform, as sb3-contrib gives
    ref = MaskableCategorical(logits=logits, masks=mask)
    gap = GapMaskableCategorical(logits=logits, masks=mask)
    legal = mask.any(-1)
    np.testing.assert_allclose(gap.probs[legal][mask[legal]], ref.probs[legal][mask[legal]],
                               rtol=1e-5)
    assert float(gap.probs[legal][~mask[legal]].max()) < 1e-25
    np.testing.assert_allclose(gap.probs[3], np.full(500, 1 / 500), rtol=1e-5)
    np.testing.assert_allclose(gap.entropy()[:3], ref.entropy()[:3], rtol=1e-5)
    acts = torch.tensor([int(np.flatnonzero(m)[0]) for m in mask[:3]] + [0])
    np.testing.assert_allclose(gap.log_prob(acts)[:3], ref.log_prob(acts)[:3], rtol=1e-5)
    torch.manual_seed(1)
    draws = torch.stack([gap.sample() for _ in range(300)])  # [300, 4]
    assert all(bool(mask[r, draws[:, r]].all()) for r in range(3))  # only legal ids
    # the inverse-CDF sampler draws each id with its probability (row 0, 2,000 draws)
    row = GapMaskableCategorical(logits=torch.tensor([[0.0, 1.0, -1.0, 2.0]]),
                                 masks=torch.tensor([[True, True, False, True]]))
    torch.manual_seed(2)
    counts = np.bincount([int(row.sample()) for _ in range(2000)], minlength=4)
    p = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    assert counts[2] == 0 and np.abs(counts[[0, 1, 3]] / 2000 - p).max() < 0.03


def test_maskable_ppo_learns_with_the_cnn_and_the_gap_policy() -> None:
    from sb3_contrib import MaskablePPO

    import taluva_ai.envs  # noqa: F401
    from taluva_ai.envs.wrappers import PlanesOnly

    env = PlanesOnly(gym.make("taluva_ai/Taluva-v0", opponents=["random"]))
    model = MaskablePPO(GapMaskablePolicy, env, n_steps=16, batch_size=16, n_epochs=1,
                        policy_kwargs=cnn_policy_kwargs(), seed=0, device="cpu")
    assert sum(p.numel() for p in model.policy.parameters()) == 785_919
    model.learn(16)
    obs, _ = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]


def test_the_example_script_runs(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "sb3_maskable_ppo", ROOT / "experiments" / "sb3_maskable_ppo.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sb3_maskable_ppo"] = mod
    spec.loader.exec_module(mod)
    res = mod.main(["--total-steps", "16", "--n-envs", "2", "--n-steps", "8", "--batch-size",
                    "16", "--n-epochs", "1", "--eval-games", "1", "--out", str(tmp_path)])
    assert (res["parameters"], res["steps"], res["policy"]) == (785_919, 16, "GapMaskablePolicy")
    assert res["eval_win_rate"] in (0.0, 0.5, 1.0)
    assert (tmp_path / "model.zip").is_file() and (tmp_path / "result.json").is_file()
