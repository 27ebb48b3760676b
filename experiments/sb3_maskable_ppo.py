"""sb3-contrib's ``MaskablePPO`` on ``taluva_ai/Taluva-v0`` with the small CNN features extractor
(:mod:`taluva_ai.envs.sb3`), at a useful speed on a 2-core machine (docs/envs.md).

The env is ``PlanesOnly(TaluvaEnv(opponents=[...]))`` (the planes as the observation, the legal
mask through ``action_masks()``), ``--n-envs`` copies stepped by SB3's ``DummyVecEnv``; the
policy is ``"MlpPolicy"`` with ``policy_kwargs=cnn_policy_kwargs()``. ``--mlp`` uses SB3's
default MLP instead (5.2 million parameters, for comparison). Reports the parameter count and
the training speed (agent steps per second of ``model.learn``, updates included; also per CPU
second of the process, the figure that a loaded machine distorts least), and with
``--eval-games N`` the win rate of the trained policy (sampled, masked) against the opponent.

    pip install 'taluva-ai[rl]'
    python experiments/sb3_maskable_ppo.py --total-steps 20480 --threads 2
    python experiments/sb3_maskable_ppo.py --total-steps 200000 --eval-games 200 --out runs/sb3

Writes ``<out>/model.zip`` (``MaskablePPO.load``) and ``<out>/result.json`` with ``--out``; prints
one JSON line (``parameters``, ``steps``, ``seconds``, ``steps_per_s``, ``cpu_seconds``,
``steps_per_cpu_s``, ``eval_win_rate``).
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

import taluva_ai.envs  # noqa: F401  (registers the envs)
from taluva_ai.envs.sb3 import GapMaskablePolicy, cnn_policy_kwargs
from taluva_ai.envs.wrappers import PlanesOnly


def make_env(opponent: str, view_radius: int) -> gym.Env:
    return PlanesOnly(gym.make("taluva_ai/Taluva-v0", opponents=[opponent],
                               agent_seat="random", view_radius=view_radius))


def build(args: argparse.Namespace) -> Any:
    """The ``MaskablePPO`` model of the arguments (on a ``DummyVecEnv``)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: make_env(args.opponent, args.view_radius)] * args.n_envs)
    venv.seed(args.seed)
    kwargs: dict[str, Any] = {} if args.mlp else {
        "policy_kwargs": cnn_policy_kwargs(args.features_dim, args.channels)}
    policy: Any = "MlpPolicy" if args.sb3_masking else GapMaskablePolicy
    return MaskablePPO(policy, venv, n_steps=args.n_steps, batch_size=args.batch_size,
                       n_epochs=args.n_epochs, learning_rate=args.lr, gamma=1.0,
                       ent_coef=args.ent_coef, seed=args.seed, device="cpu", verbose=0,
                       **kwargs)


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process (all its threads) so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def evaluate(model: Any, args: argparse.Namespace) -> float:
    """Win rate (a shared win counts as half) of the sampled, masked policy in
    ``--eval-games`` fresh games against the opponent, seats drawn at random."""
    env = make_env(args.opponent, args.view_radius)
    score = 0.0
    for g in range(args.eval_games):
        obs, _ = env.reset(seed=10_000 + g)
        done = False
        reward = 0.0
        while not done:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=False)
            obs, reward, term, trunc, _ = env.step(int(action))
            done = term or trunc
        score += 1.0 if reward > 0 else 0.5 if reward == 0 else 0.0
    return score / args.eval_games


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--total-steps", type=int, default=20_480, help="agent steps to train")
    p.add_argument("--n-envs", type=int, default=16, help="envs in the DummyVecEnv")
    p.add_argument("--n-steps", type=int, default=128, help="rollout steps per env and update")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--n-epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--features-dim", type=int, default=128)
    p.add_argument("--channels", type=int, default=16)
    p.add_argument("--view-radius", type=int, default=13)
    p.add_argument("--opponent", default="random", help="the other seat's agent")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (default 1: on a loaded 2-core machine two threads "
                   "spent most of their CPU time waiting for each other; docs/envs.md)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mlp", action="store_true", help="SB3's default MLP instead of the CNN")
    p.add_argument("--sb3-masking", action="store_true",
                   help="sb3-contrib's own masked distribution (masked logits at -1e8, a slow "
                   "path of exp) instead of GapMaskablePolicy's")
    p.add_argument("--eval-games", type=int, default=0, help="games to evaluate at the end")
    p.add_argument("--out", default=None, help="directory for model.zip and result.json")
    args = p.parse_args(argv)
    for name in ("total_steps", "n_envs", "n_steps", "batch_size", "n_epochs", "threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.eval_games < 0:
        p.error(f"--eval-games must be >= 0, got {args.eval_games}")
    torch.set_num_threads(args.threads)
    # the masked distributions over 10,206 ids are rebuilt at every step: skip torch's
    # argument checks of them (a global torch setting, this script's process only)
    torch.distributions.Distribution.set_default_validate_args(False)
    model = build(args)
    params = sum(int(np.prod(t.shape)) for t in model.policy.parameters())
    cpu0 = _cpu_seconds()
    t0 = time.perf_counter()
    model.learn(args.total_steps)
    seconds = time.perf_counter() - t0
    cpu = _cpu_seconds() - cpu0
    steps = int(model.num_timesteps)
    result: dict[str, Any] = {
        "features": "mlp" if args.mlp else "cnn",
        "policy": "MlpPolicy" if args.sb3_masking else "GapMaskablePolicy",
        "parameters": params, "steps": steps,
        "seconds": round(seconds, 2), "steps_per_s": round(steps / seconds, 1),
        "cpu_seconds": round(cpu, 2), "steps_per_cpu_s": round(steps / cpu, 1),
        "n_envs": args.n_envs, "threads": args.threads,
    }
    if args.eval_games:
        result["eval_win_rate"] = evaluate(model, args)
        result["eval_games"] = args.eval_games
    if args.out is not None:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        model.save(out / "model.zip")
        (out / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
