"""Self-play throughput on the local multiprocessing backend and on Ray (docs/ray.md).

For each backend and worker count, one training run's self-play phase is played ``--rounds``
times (the same network, a fresh random one of the config's size; ``--games`` games each
round) through :meth:`TrainingRun.selfplay`, exactly as ``taluva train`` plays it: worker
processes on this machine, or Ray actors (``--ray``'s cluster; by default a Ray instance on
this machine). Figures per round:

- ``positions_per_s``: training positions (samples) per second of the phase's wall clock,
  worker start-up included (both backends keep their workers from one round, an iteration of
  a run, to the next, so the first round pays the start-up and the later ones do not);
- ``play_positions_per_s``: samples per second of the slowest worker's playing time (start-up,
  network loading and result transfer left out).

The learner is measured too (``--learner-steps`` optimiser steps of the config's ``[train]``
settings on the positions played, in this process with ``torch_threads`` threads): the
positions per second it draws (``batch_size`` x steps/s), which bounds the self-play rate a
run can use at its replay ratio (docs/ray.md, Scaling).

Prints a table and one JSON object (also written to ``--out``), with the load average of the
machine before and after.

    python experiments/bench_ray.py --config experiments/configs/demo.toml --games 12
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from taluva_ai.agents.alphazero.config import load_config
from taluva_ai.agents.alphazero.net import NetConfig, build_net
from taluva_ai.agents.alphazero.replay import ReplayBuffer, SampleSet
from taluva_ai.agents.alphazero.train import Trainer, TrainingRun
from taluva_ai.parallel import LocalBackend, RayBackend

ROOT = Path(__file__).resolve().parents[1]


def measure(backend: Any, cfg: Any, workers: int, games: int, rounds: int,
            out: Path) -> dict[str, Any]:
    """The self-play figures of ``rounds`` phases of ``games`` games on ``workers`` workers."""
    cfg = dataclasses.replace(cfg, workers=workers,
                              selfplay=dataclasses.replace(cfg.selfplay, games=games))
    run = TrainingRun(out, cfg, progress=False, backend=backend)
    torch.manual_seed(cfg.seed)
    net = build_net(run.encoder, NetConfig(**dataclasses.asdict(cfg.net)))
    ckpt = run.save_network(0, net)
    with backend.reserve(workers):
        try:
            res = _rounds(run, backend, ckpt, workers, games, rounds, out)
        finally:
            run.close()
    return {"backend": backend.name, "workers": workers, "rounds": res}


def _rounds(run: TrainingRun, backend: Any, ckpt: Path, workers: int, games: int, rounds: int,
            out: Path) -> list[dict[str, Any]]:
    res: list[dict[str, Any]] = []
    for r in range(1, rounds + 1):
        stats = run.selfplay(r, ckpt, games)
        d = out / "selfplay" / f"iter_{r:04d}"
        workers_json = [json.loads(p.read_text()) for p in d.glob("worker_*.json")]
        play = max(w["seconds"] for w in workers_json)
        res.append({
            "round": r, "games": stats["games"], "samples": stats["samples"],
            "wall_s": stats["wall_s"], "positions_per_s": stats["positions_per_s"],
            "play_s": round(play, 3),
            "play_positions_per_s": round(stats["samples"] / play, 3) if play else None,
            "setup_s": round(max(w["setup_seconds"] for w in workers_json), 3),
        })
        print(f"  {backend.name:5s} {workers} worker(s) round {r}: "
              f"{stats['samples']} positions in {stats['wall_s']:.1f} s = "
              f"{stats['positions_per_s']:.2f}/s (playing: "
              f"{res[-1]['play_positions_per_s']:.2f}/s)", file=sys.stderr, flush=True)
    return res


def learner(cfg: Any, files: list[Path], steps: int) -> dict[str, Any]:
    """Optimiser steps per second of the config's network and ``[train]`` settings on the
    positions of ``files`` (a replay buffer of them), and the positions per second it draws."""
    import numpy as np

    from taluva_ai.agents.alphazero.config import make_encoder_for

    encoder = make_encoder_for(cfg)
    buffer = ReplayBuffer(encoder, 10**9)
    buffer.add("bench", SampleSet.concatenate([SampleSet.load(f) for f in files]))
    torch.set_num_threads(cfg.torch_threads or len(os.sched_getaffinity(0)))
    torch.manual_seed(0)
    net = build_net(encoder, NetConfig(**dataclasses.asdict(cfg.net)))
    trainer = Trainer(net, cfg.train, torch.device("cpu"))
    rng = np.random.default_rng(0)
    trainer.train(buffer, 2, rng)  # warm-up
    t = time.perf_counter()
    for _ in range(steps):
        buffer.sample(cfg.train.batch_size, rng)
    sample_s = time.perf_counter() - t
    t = time.perf_counter()
    trainer.train(buffer, steps, rng)
    train_s = time.perf_counter() - t
    return {"steps": steps, "batch_size": cfg.train.batch_size, "buffer_positions": len(buffer),
            "steps_per_s": round(steps / train_s, 2),
            "positions_per_s": round(steps * cfg.train.batch_size / train_s, 1),
            "batch_draw_share": round(sample_s / train_s, 3),
            "torch_threads": torch.get_num_threads()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default=str(ROOT / "experiments" / "configs" / "demo.toml"))
    p.add_argument("--games", type=int, default=12, help="self-play games per round")
    p.add_argument("--rounds", type=int, default=2, help="self-play phases per measurement")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--backends", nargs="+", choices=("local", "ray"), default=["local", "ray"])
    p.add_argument("--ray", default="auto", metavar="ADDRESS", help="Ray address (auto)")
    p.add_argument("--learner-steps", type=int, default=20,
                   help="optimiser steps to time the learner (0: skip)")
    p.add_argument("--out", default=None, metavar="FILE", help="also write the JSON here")
    args = p.parse_args(argv)

    cfg = load_config(args.config)
    cfg = dataclasses.replace(cfg, device="cpu")
    load_before = os.getloadavg()
    results = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_ray_") as tmp:
        for name in args.backends:
            backend = LocalBackend() if name == "local" else RayBackend(args.ray)
            try:
                for n in args.workers:
                    results.append(measure(backend, cfg, n, args.games, args.rounds,
                                           Path(tmp) / f"{name}_{n}"))
            finally:
                backend.close()
        files = sorted(Path(tmp).glob("*/selfplay/iter_*/worker_*.npz"))
        learn = learner(cfg, files, args.learner_steps) if args.learner_steps and files \
            else None
    report = {"config": args.config, "games_per_round": args.games, "rounds": args.rounds,
              "cpus": len(os.sched_getaffinity(0)), "load_before": load_before,
              "load_after": os.getloadavg(), "seconds": round(time.perf_counter() - t0, 1),
              "results": results, "learner": learn}
    last = {(r["backend"], r["workers"]): r["rounds"][-1] for r in results}
    print(f"{'backend':8s} {'workers':>7s} {'positions/s':>12s} {'playing/s':>10s} "
          f"{'setup s':>8s}")
    for (b, n), r in last.items():
        print(f"{b:8s} {n:7d} {r['positions_per_s']:12.2f} {r['play_positions_per_s']:10.2f} "
              f"{r['setup_s']:8.2f}")
    for n in args.workers:
        if ("local", n) in last and ("ray", n) in last:
            ratio = last[("ray", n)]["positions_per_s"] / last[("local", n)]["positions_per_s"]
            report[f"ray_over_local_{n}"] = round(ratio, 3)
            print(f"Ray / local with {n} worker(s): {ratio:.1%} (last round, wall clock)")
    if learn is not None:
        print(f"learner: {learn['steps_per_s']} steps/s of {learn['batch_size']} positions = "
              f"{learn['positions_per_s']} positions/s drawn ({learn['torch_threads']} "
              f"thread(s); batch drawing {learn['batch_draw_share']:.0%} of the time)")
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
