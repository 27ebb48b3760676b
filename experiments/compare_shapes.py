"""Network shapes compared on the same games: held-out losses after equal training, and speed.

Which network plays best per second on a CPU (issue 20) is a question of what a shape learns
and what it costs. This trains each shape from scratch, with the same seed, batches and
steps, on the same self-play samples, then measures each on held-out samples (as
``experiments/heldout.py``) and times its ONNX Runtime inference, interleaved, in the chunks
self-play uses (``NetEvaluator``'s ``max_batch``). A shape is a preset with optional
overrides: ``tiny``, ``tiny/1x1`` (a 1 x 1 stem, ``[net] stem_kernel = 1``),
``tiny/blocks=2``, ``small``...

    python experiments/compare_shapes.py --like runs/strong-lr/checkpoints/iter_0040.pt \\
        --train runs/strong-lr/selfplay/iter_003* --heldout runs/strong-aux/selfplay/iter_004* \\
        --shapes tiny tiny/1x1 --steps 600 --json docs/data/compare_shapes.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heldout import load_samples, mean_losses, positive, sample_files, write_json


def compare(like: Path, train: list[Path], heldout: list[Path], shapes: list[str],
            steps: int, batch_size: int = 256, lr: float = 2e-3, seed: int = 0,
            chunk: int = 16, rounds: int = 5) -> dict[str, Any]:
    """Train each shape on ``train`` and measure it on ``heldout`` (module docstring).

    Returns ``{"train_samples", "heldout_samples", "steps", "batch_size", "lr", "shapes":
    {shape: {"parameters", "train_s", "heldout": {figure: mean}, "positions_per_cpu_s"}}}``.
    """
    import numpy as np
    import torch

    from taluva_ai.agents.alphazero.config import NetConfig, TrainSection
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import (
        build_net,
        load_checkpoint,
        onnx_forward,
        parameter_count,
    )
    from taluva_ai.agents.alphazero.train import Trainer

    torch.set_num_threads(1)
    payload = load_checkpoint(like)
    encoder = make_encoder(payload["game"]["name"], int(payload["encoder"]["num_players"]),
                           **payload.get("encoder_options", {}))

    if getattr(encoder, "network", "conv") != "conv":
        raise ValueError(f"{like}: shapes are of the conv family (Taluva's networks)")
    if len(set(shapes)) < len(shapes):
        raise ValueError("a shape is named twice")
    train_buf, held_buf = load_samples(train, encoder), load_samples(heldout, encoder)
    cfg = TrainSection(steps=steps, batch_size=batch_size, lr=lr)
    out: dict[str, Any] = {"like": str(like), "train_samples": len(train_buf),
                           "heldout_samples": len(held_buf), "steps": steps,
                           "batch_size": batch_size, "lr": lr, "seed": seed, "chunk": chunk,
                           "shapes": {}}
    runners = {}
    for shape in shapes:
        torch.manual_seed(seed)
        net = build_net(encoder, NetConfig.parse(shape))
        trainer = Trainer(net, cfg, torch.device("cpu"))
        t0 = time.process_time()
        trainer.train(train_buf, steps, np.random.default_rng(seed))
        train_s = time.process_time() - t0
        out["shapes"][shape] = {
            "parameters": parameter_count(net), "train_cpu_s": round(train_s, 1),
            "heldout": mean_losses(trainer, held_buf, batch_size)}
        runners[shape] = onnx_forward(net, encoder, threads=1)
    first = next(held_buf.batches(256))
    sp, gl = first.spatial, first.globals
    speeds: dict[str, list[float]] = {s: [] for s in shapes}
    for _ in range(rounds):  # interleaved, so a change of the machine's load hits all alike
        for shape, run in runners.items():
            t = time.process_time()
            for lo in range(0, len(sp), chunk):
                run(sp[lo:lo + chunk], gl[lo:lo + chunk])
            speeds[shape].append(len(sp) / max(time.process_time() - t, 1e-9))
    for shape in shapes:
        out["shapes"][shape]["positions_per_cpu_s"] = round(float(np.median(speeds[shape])))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--like", type=Path, required=True,
                    help="a checkpoint whose game and encoding the samples were made with")
    ap.add_argument("--train", type=Path, nargs="+", required=True,
                    help="training sample files (.npz) or folders of them")
    ap.add_argument("--heldout", type=Path, nargs="+", required=True,
                    help="held-out sample files (.npz) or folders of them")
    ap.add_argument("--shapes", nargs="+", default=["tiny", "tiny/1x1"],
                    help="shapes: preset[/1x1][/size=N] (default: tiny tiny/1x1)")
    ap.add_argument("--steps", type=positive, default=600, help="training steps (600)")
    ap.add_argument("--batch-size", type=positive, default=256, help="samples per step (256)")
    ap.add_argument("--lr", type=float, default=2e-3, help="AdamW learning rate (2e-3)")
    ap.add_argument("--seed", type=int, default=0, help="seed of weights and batches (0)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    from taluva_ai.agents.alphazero.config import NetConfig
    from taluva_ai.agents.alphazero.net import CheckpointError

    try:
        for shape in args.shapes:
            NetConfig.parse(shape)
        res = compare(args.like, sample_files(args.train), sample_files(args.heldout),
                      args.shapes, args.steps, args.batch_size, args.lr, args.seed)
    except (FileNotFoundError, CheckpointError, ValueError, FloatingPointError) as e:
        ap.error(str(e).splitlines()[0])
    try:
        write_json(args.json, res)
    except OSError as e:
        ap.error(f"--json {args.json}: {e.strerror or e}")
    print(f"{res['steps']} steps of {res['batch_size']} on {res['train_samples']} samples; "
          f"held out: {res['heldout_samples']} samples")
    for shape, v in res["shapes"].items():
        h = v["heldout"]
        print(f"{shape} ({v['parameters']:,} parameters): policy {h['policy_loss']:.4f}, "
              f"value {h['value_loss']:.4f}; {v['positions_per_cpu_s']:,} positions per CPU "
              f"second in chunks of {res['chunk']}; trained in {v['train_cpu_s']:.0f} CPU s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
