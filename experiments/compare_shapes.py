"""Network shapes compared on the same games: held-out losses after equal training, and speed.

Which network plays best per second on a CPU (issue 20) is a question of what a shape learns
and what it costs. This trains each shape from scratch, with the same seed, batches and
steps, on the same self-play samples, then measures each on held-out samples (as
``experiments/heldout.py``) and times its ONNX Runtime inference, interleaved, in the chunks
self-play uses (``NetEvaluator``'s ``max_batch``). A shape is a preset with optional
overrides: ``tiny``, ``tiny/1x1`` (a 1 x 1 stem, ``[net] stem_kernel = 1``), ``tiny/aux``
(the auxiliary head, ``[net] aux_head = true``), ``tiny/blocks=2``, ``small``...

With ``--save DIR`` each trained network is also written as a checkpoint
(``DIR/<shape with / as _>.pt``) that ``az:path=...`` plays, so a larger network trained on
a whole run's games can be matched against the run's own networks; ``--final-lr`` decays
the learning rate along a cosine to it, and ``--eval-every`` records the held-out losses
along the way (``"curve"``), which shows when the value head starts to overfit. With
``--init CKPT`` the one shape given starts from that checkpoint's weights instead (a
fine-tune, e.g. on ``experiments/teacher_games.py``'s samples).

    python experiments/compare_shapes.py --like runs/strong-lr/checkpoints/iter_0040.pt \\
        --train runs/strong-lr/selfplay/iter_003* --heldout runs/strong-aux/selfplay/iter_004* \\
        --shapes tiny tiny/1x1 --steps 600 --json docs/data/compare_shapes.json
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heldout import load_samples, mean_losses, positive, sample_files, write_json


def lr_at(step: int, steps: int, lr: float, final_lr: float | None) -> float:
    """The learning rate of step ``step`` (0-based) of ``steps``: ``lr`` throughout, or,
    with ``final_lr``, a cosine from ``lr`` at step 0 to ``final_lr`` at the last step
    (Loshchilov & Hutter 2017, without restarts)."""
    if final_lr is None or steps <= 1:
        return lr
    return final_lr + 0.5 * (lr - final_lr) * (1 + math.cos(math.pi * step / (steps - 1)))


def compare(like: Path, train: list[Path], heldout: list[Path], shapes: list[str],
            steps: int, batch_size: int = 256, lr: float = 2e-3, seed: int = 0,
            chunk: int = 16, rounds: int = 5, final_lr: float | None = None,
            eval_every: int = 0, save: Path | None = None, threads: int = 1,
            progress: bool = False, init: Path | None = None,
            elimination_weight: float = 1.0) -> dict[str, Any]:
    """Train each shape on ``train`` and measure it on ``heldout`` (module docstring).

    Args:
        final_lr: decay the learning rate along a cosine to this (None: constant).
        eval_every: also measure the held-out losses every this many steps (0: only at the
            end), as ``"curve": [{"step", figure: mean}]``.
        save: write each trained network here as ``<shape with / as _>.pt``.
        threads: torch threads for training.
        progress: show a progress bar of the training steps on stderr.
        init: start from this checkpoint's weights (fine-tuning) instead of fresh ones;
            ``shapes`` must then be one shape of the checkpoint's sizes (its training-only
            heads may differ: an added head starts fresh).
        elimination_weight: ``[train] elimination_weight`` for the training batches (1:
            none).

    Returns ``{"train_samples", "heldout_samples", "steps", "batch_size", "lr", "final_lr",
    "shapes": {shape: {"parameters", "train_cpu_s", "heldout": {figure: mean}, "curve",
    "checkpoint", "positions_per_cpu_s"}}}``.

    Raises:
        OSError: ``save`` cannot be written.
        ValueError: a shape is named twice, ``init`` comes with more than one shape, the
            held-out files hold no samples, ``batch_size`` exceeds the training samples, or
            ``elimination_weight`` is given for samples whose encoding cannot tell which
            games ended with an elimination.
        CheckpointError: ``like`` or ``init`` is not a checkpoint of the samples' encoding,
            or ``init`` is not of the shape's sizes.
    """
    import numpy as np
    import torch
    from tqdm import tqdm

    from taluva_ai.agents.alphazero.config import NetConfig, TrainSection
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import (
        build_net,
        load_checkpoint,
        net_from_checkpoint,
        onnx_forward,
        parameter_count,
        save_checkpoint,
    )
    from taluva_ai.agents.alphazero.train import Trainer

    torch.set_num_threads(threads)
    payload = load_checkpoint(like)
    encoder = make_encoder(payload["game"]["name"], int(payload["encoder"]["num_players"]),
                           **payload.get("encoder_options", {}))

    if getattr(encoder, "network", "conv") != "conv":
        raise ValueError(f"{like}: shapes are of the conv family (Taluva's networks)")
    if len(set(shapes)) < len(shapes):
        raise ValueError("a shape is named twice")
    start = None
    if init is not None:
        if len(shapes) != 1:
            raise ValueError(f"--init {init}: give one shape with it, the checkpoint's own "
                             f"(got {len(shapes)})")
        start = load_checkpoint(init)  # its sizes are checked against the shape below
    train_buf, held_buf = load_samples(train, encoder), load_samples(heldout, encoder)
    if len(held_buf) == 0:
        raise ValueError(f"the held-out files ({', '.join(map(str, heldout[:3]))}) hold no "
                         "samples")
    if batch_size > len(train_buf):
        raise ValueError(f"--batch-size {batch_size} is more than the {len(train_buf)} "
                         "training samples")
    if elimination_weight != 1.0:
        train_buf.eliminated()  # refuses an encoding that cannot tell
    cfg = TrainSection(steps=steps, batch_size=batch_size, lr=lr,
                       elimination_weight=elimination_weight)
    out: dict[str, Any] = {"like": str(like), "train_samples": len(train_buf),
                           "heldout_samples": len(held_buf), "steps": steps,
                           "batch_size": batch_size, "lr": lr, "final_lr": final_lr,
                           "seed": seed, "chunk": chunk,
                           "elimination_weight": elimination_weight,
                           "init": None if init is None else str(init), "shapes": {}}
    runners = {}
    for shape in shapes:
        torch.manual_seed(seed)
        net_cfg = NetConfig.parse(shape)
        if start is None:
            net = build_net(encoder, net_cfg)
        else:
            net, _ = net_from_checkpoint(start, init, encoder, net_cfg)
        trainer = Trainer(net, cfg, torch.device("cpu"))
        rng = np.random.default_rng(seed)
        curve: list[dict[str, Any]] = []
        train_s = 0.0
        with tqdm(total=steps, desc=shape, unit="step", disable=not progress) as bar:
            for done in range(1, steps + 1):  # one step at a time: the same batches as at once
                trainer.set_lr(lr_at(done - 1, steps, lr, final_lr))
                t0 = time.process_time()
                trainer.train(train_buf, 1, rng, bar)
                train_s += time.process_time() - t0
                if eval_every and done % eval_every == 0 and done < steps:
                    curve.append({"step": done, **mean_losses(trainer, held_buf, batch_size)})
        final = mean_losses(trainer, held_buf, batch_size)
        res: dict[str, Any] = {"parameters": parameter_count(net),
                               "train_cpu_s": round(train_s, 1), "heldout": final}
        if eval_every:
            res["curve"] = [*curve, {"step": steps, **final}]
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
            path = save / (shape.replace("/", "_") + ".pt")
            save_checkpoint(path, net, encoder, net_cfg, payload["game"],
                            meta={"trained_on": [str(p) for p in train], "steps": steps,
                                  "batch_size": batch_size, "lr": lr, "final_lr": final_lr,
                                  "seed": seed, "init": out["init"],
                                  "elimination_weight": elimination_weight,
                                  "script": "experiments/compare_shapes.py"})
            res["checkpoint"] = str(path)
        out["shapes"][shape] = res
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
                    help="shapes: preset[/1x1][/aux][/size=N] (default: tiny tiny/1x1)")
    ap.add_argument("--steps", type=positive, default=600, help="training steps (600)")
    ap.add_argument("--batch-size", type=positive, default=256, help="samples per step (256)")
    ap.add_argument("--lr", type=float, default=2e-3, help="AdamW learning rate (2e-3)")
    ap.add_argument("--final-lr", type=float, default=None,
                    help="decay the learning rate along a cosine to this (default: constant)")
    ap.add_argument("--eval-every", type=int, default=0,
                    help="also measure the held-out losses every N steps (0: at the end only)")
    ap.add_argument("--seed", type=int, default=0, help="seed of weights and batches (0)")
    ap.add_argument("--threads", type=positive, default=1, help="torch threads for training (1)")
    ap.add_argument("--save", type=Path, default=None,
                    help="write each trained network here as <shape with / as _>.pt")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--init", type=Path, default=None,
                    help="fine-tune: start from this checkpoint's weights (with --shapes its "
                         "one shape)")
    ap.add_argument("--elimination-weight", type=float, default=1.0,
                    help="weigh the samples of games that ended with an elimination this many "
                         "times the others ([train] elimination_weight; default 1: none)")
    args = ap.parse_args(argv)
    from taluva_ai.agents.alphazero.config import NetConfig
    from taluva_ai.agents.alphazero.net import CheckpointError

    if not args.lr > 0 or (args.final_lr is not None and not 0 <= args.final_lr <= args.lr):
        ap.error(f"--lr must be > 0 and --final-lr in [0, --lr], got {args.lr:g} and "
                 f"{args.final_lr}")
    if not 0 < args.elimination_weight <= 100:
        ap.error(f"--elimination-weight must lie in (0, 100], got {args.elimination_weight}")
    if args.eval_every < 0:
        ap.error(f"--eval-every must be >= 0, got {args.eval_every}")
    if args.json is not None and args.json.is_dir():
        ap.error(f"--json {args.json}: is a folder; give a file name")
    for flag, folder in (("--save", args.save), ("--json", args.json and args.json.parent)):
        try:  # before the training, which may take an hour
            if folder is not None:
                folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            ap.error(f"{flag} {folder}: {e.strerror or e}")
    try:
        for shape in args.shapes:
            NetConfig.parse(shape)
        res = compare(args.like, sample_files(args.train), sample_files(args.heldout),
                      args.shapes, args.steps, args.batch_size, args.lr, args.seed,
                      final_lr=args.final_lr, eval_every=args.eval_every, save=args.save,
                      threads=args.threads, progress=True, init=args.init,
                      elimination_weight=args.elimination_weight)
    except (FileNotFoundError, CheckpointError, ValueError, FloatingPointError) as e:
        ap.error(str(e).splitlines()[0])
    except OSError as e:
        ap.error(f"--save {args.save}: {e.strerror or e}")
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
        for point in v.get("curve", [])[:-1]:
            print(f"  at step {point['step']}: policy {point['policy_loss']:.4f}, value "
                  f"{point['value_loss']:.4f}")
        if "checkpoint" in v:
            print(f"  wrote {v['checkpoint']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
