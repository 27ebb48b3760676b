"""Self-play throughput on the local multiprocessing backend and on Ray (docs/ray.md).

For each worker count, one training run per backend (the same config, the same network: a
fresh random one of the config's size) plays its self-play phase ``--rounds`` times through
:meth:`TrainingRun.selfplay`, exactly as ``taluva train`` plays an iteration: worker processes
on this machine (one worker plays in this process), or Ray actors in the run's CPU reservation
(``--ray``'s cluster; by default a Ray instance on this machine). Round ``r`` is iteration
``r``: both backends play the same games. The backends take turns round by round, in the order
A B, B A, A B... so that a change in the machine's load falls on both.

Figures per round: ``positions_per_s``, training positions (samples) per second of the phase's
wall clock, and ``play_positions_per_s``, per second of the slowest worker's playing time
(start-up, network loading and result transfer left out). Both backends keep their workers from
one round to the next, so round 1 includes the start-up of the workers (``first_round``) and
the later rounds do not (``steady``: all positions of rounds 2.. over all their wall time;
``ray_over_local``: the ratio of the two ``steady`` figures).

The learner is measured too (``--learner-steps`` optimiser steps of the config's ``[train]``
settings on the positions played, in this process with ``torch_threads`` threads): the
positions per second it draws (``batch_size`` x steps/s), which bounds the self-play rate a
run can use at its replay ratio (docs/ray.md, Scaling).

Prints the figures and one JSON object (also written to ``--out``), with the load average of
the machine before and after.

    python experiments/bench_ray.py --config experiments/configs/demo.toml --games 8 --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from taluva_ai.agents.alphazero.config import load_config, make_encoder_for
from taluva_ai.agents.alphazero.net import NetConfig, build_net
from taluva_ai.agents.alphazero.replay import ReplayBuffer, SampleSet
from taluva_ai.agents.alphazero.train import Trainer, TrainingRun
from taluva_ai.parallel import Backend, LocalBackend, RayBackend

ROOT = Path(__file__).resolve().parents[1]


def one_round(run: TrainingRun, ckpt: Path, r: int, games: int) -> dict[str, Any]:
    """Iteration ``r``'s self-play of ``run``: its figures."""
    stats = run.selfplay(r, ckpt, games)
    d = run.out / "selfplay" / f"iter_{r:04d}"
    workers = [json.loads(p.read_text()) for p in d.glob("worker_*.json")]
    play = max(w["seconds"] for w in workers)
    return {"round": r, "games": stats["games"], "samples": stats["samples"],
            "wall_s": stats["wall_s"], "positions_per_s": stats["positions_per_s"],
            "play_s": round(play, 3),
            "play_positions_per_s": round(stats["samples"] / play, 3) if play else None,
            "load": round(os.getloadavg()[0], 2)}


def compare(backends: dict[str, Backend], cfg: Any, workers: int, games: int, rounds: int,
            tmp: Path) -> dict[str, Any]:
    """The rounds of every backend with ``workers`` workers, taking turns."""
    cfg = dataclasses.replace(cfg, workers=workers,
                              selfplay=dataclasses.replace(cfg.selfplay, games=games))
    out: dict[str, Any] = {"workers": workers}
    with contextlib.ExitStack() as stack:
        runs = {}
        for name, backend in backends.items():
            run = TrainingRun(tmp / f"{name}_{workers}", cfg, progress=False, backend=backend)
            torch.manual_seed(cfg.seed)
            ckpt = run.save_network(0, build_net(run.encoder, run.net_config))
            stack.enter_context(backend.reserve(workers))
            stack.callback(run.close)
            runs[name] = (run, ckpt)
            out[name] = {"rounds": []}
        names = list(backends)
        for r in range(1, rounds + 1):
            for name in (names if r % 2 else names[::-1]):
                run, ckpt = runs[name]
                res = one_round(run, ckpt, r, games)
                out[name]["rounds"].append(res)
                print(f"  {name:5s} {workers} worker(s) round {r}: {res['samples']} positions "
                      f"in {res['wall_s']:.1f} s = {res['positions_per_s']:.2f}/s (playing: "
                      f"{res['play_positions_per_s']:.2f}/s; load {res['load']})",
                      file=sys.stderr, flush=True)
    for name in names:
        rs = out[name]["rounds"]
        out[name]["first_round"] = rs[0]["positions_per_s"]
        later = rs[1:]
        if later:
            out[name]["steady"] = round(sum(x["samples"] for x in later)
                                        / sum(x["wall_s"] for x in later), 3)
            out[name]["steady_playing"] = round(sum(x["samples"] for x in later)
                                                / sum(x["play_s"] for x in later), 3)
    if "local" in out and "ray" in out and "steady" in out["local"]:
        out["ray_over_local"] = round(out["ray"]["steady"] / out["local"]["steady"], 3)
    return out


def learner(cfg: Any, files: list[Path], steps: int) -> dict[str, Any]:
    """Optimiser steps per second of the config's network and ``[train]`` settings on the
    positions of ``files`` (a replay buffer of them), and the positions per second it draws."""
    encoder = make_encoder_for(cfg)
    buffer = ReplayBuffer(encoder, 10**9)
    buffer.add("bench", SampleSet.concatenate([SampleSet.load(f, encoder) for f in files]))
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
    p.add_argument("--games", type=int, default=8, help="self-play games per round")
    p.add_argument("--rounds", type=int, default=3, help="self-play phases per backend")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--backends", nargs="+", choices=("local", "ray"), default=["local", "ray"])
    p.add_argument("--ray", default="auto", metavar="ADDRESS", help="Ray address (auto)")
    p.add_argument("--learner-steps", type=int, default=20,
                   help="optimiser steps to time the learner (0: skip)")
    p.add_argument("--out", default=None, metavar="FILE", help="also write the JSON here")
    args = p.parse_args(argv)

    cfg = dataclasses.replace(load_config(args.config), device="cpu")
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    backends: dict[str, Backend] = {
        name: LocalBackend() if name == "local" else RayBackend(args.ray)
        for name in args.backends}
    try:
        with tempfile.TemporaryDirectory(prefix="bench_ray_") as tmp:
            results = [compare(backends, cfg, n, args.games, args.rounds, Path(tmp))
                       for n in args.workers]
            files = sorted(Path(tmp).glob("*/selfplay/iter_*/worker_*.npz"))
            learn = learner(cfg, files, args.learner_steps) if args.learner_steps and files \
                else None
    finally:
        for b in backends.values():
            b.close()
    report = {"config": args.config, "games_per_round": args.games, "rounds": args.rounds,
              "cpus": len(os.sched_getaffinity(0)), "load_before": load_before,
              "load_after": os.getloadavg(), "seconds": round(time.perf_counter() - t0, 1),
              "results": results, "learner": learn}
    print(f"{'workers':>7s} " + " ".join(f"{b + ' first':>12s} {b + ' steady':>12s}"
                                         for b in args.backends) + "   ray/local")
    for res in results:
        cells = " ".join(f"{res[b]['first_round']:12.2f} {res[b].get('steady', 0):12.2f}"
                         for b in args.backends)
        ratio = res.get("ray_over_local")
        print(f"{res['workers']:7d} {cells}   {'' if ratio is None else f'{ratio:.1%}'}")
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
