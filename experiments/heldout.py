"""Networks measured on the same held-out games: policy, value and auxiliary losses.

Twenty anchor games a network tell two training runs apart only when they differ by a lot;
the losses of their networks on the same games that neither trained on (the latest
self-play of both runs, say) are a finer comparison of what each has learned. Reads sample
files (``selfplay/iter_K/worker_*.npz`` of a run, or folders of them) and checkpoints, and
prints, per checkpoint, the mean losses over every sample, as recorded (no symmetry), with
the network in eval mode (:meth:`taluva_ai.agents.alphazero.train.Trainer.evaluate`):
policy cross-entropy with the search policy (nats), value mean squared error per player slot
(against the game's result), and the auxiliary loss where the network has that head and the
samples have those targets.

    python experiments/heldout.py --samples runs/a/selfplay/iter_0045 runs/b/selfplay/iter_0045 \\
        --checkpoints runs/a/checkpoints/iter_0044.pt runs/b/checkpoints/iter_0044.pt \\
        --json docs/data/heldout.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def sample_files(paths: list[Path]) -> list[Path]:
    """The ``.npz`` sample files named, or found directly inside the folders named, in order.

    Raises:
        FileNotFoundError: a path that does not exist, or a folder without sample files.
    """
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted(p.glob("worker_*.npz")) or sorted(p.glob("*.npz"))
            if not found:
                raise FileNotFoundError(f"{p}: no sample files (.npz) in it")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
    return out


def load_samples(paths: list[Path], encoder: Any) -> Any:
    """A replay buffer of the sample files ``paths`` (every sample kept), checked against
    ``encoder``'s sizes (a sample file does not name its encoding).

    Raises:
        ValueError: not a sample file, or one made with another encoding (naming it).
    """
    from taluva_ai.agents.alphazero.replay import ReplayBuffer, SampleSet

    buffer = ReplayBuffer(encoder, window_games=10**9)
    for p in paths:
        buffer.add(str(p), SampleSet.load(p, encoder))
    return buffer


def mean_losses(trainer: Any, buffer: Any, batch_size: int = 256) -> dict[str, float]:
    """A :class:`~taluva_ai.agents.alphazero.train.Trainer`'s ``evaluate`` figures over every
    sample of a replay buffer, as recorded, averaged over the samples."""
    sums: dict[str, float] = {}
    n = 0
    for batch in buffer.batches(batch_size):
        b = len(batch.value)
        for k, v in trainer.evaluate(batch).items():
            sums[k] = sums.get(k, 0.0) + v * b
        n += b
    return {k: round(v / max(n, 1), 5) for k, v in sums.items()}


def write_json(path: Path | None, res: dict[str, Any]) -> None:
    """Write ``res`` as indented JSON to ``path`` (its folder made) and say so; None: nothing.

    Raises:
        OSError: it cannot be written."""
    if path is not None:
        from taluva_ai.runfiles import write_atomic

        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(res, indent=2) + "\n")  # the old file, or the new
        print(f"wrote {path}")


def positive(text: str) -> int:
    """An argparse type: an integer >= 1."""
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {n}")
    return n


def measure(checkpoints: list[Path], samples: list[Path], batch_size: int = 256
            ) -> dict[str, Any]:
    """``{"samples", "games", "files", "networks": {checkpoint: {figure: mean}}}``: each
    checkpoint's mean losses (weighted by batch size) over every sample of ``samples``.

    Raises:
        CheckpointError: a checkpoint that cannot be read, or one made for another encoding
            than the first one's (all must read the same samples).
        ValueError: a file that is not a sample file.
    """
    import numpy as np
    import torch

    from taluva_ai.agents.alphazero.config import TrainSection
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import load_checkpoint, net_from_checkpoint
    from taluva_ai.agents.alphazero.train import Trainer

    torch.set_num_threads(1)
    if len(set(samples)) < len(samples):
        raise ValueError("a sample file is named twice")
    out: dict[str, Any] = {"files": [str(p) for p in samples], "networks": {}}
    encoder = None
    for path in checkpoints:
        payload = load_checkpoint(path)
        if encoder is None:
            spec = payload["encoder"]
            encoder = make_encoder(payload["game"]["name"], int(spec["num_players"]),
                                   **payload.get("encoder_options", {}))
            buffer = load_samples(samples, encoder)
            sets = [s for _, s in buffer.sets]
            out["samples"], out["games"] = len(buffer), buffer.games
            known_aux = sum(int(np.isfinite(np.asarray(s.aux)).sum()) for s in sets)
        net, _ = net_from_checkpoint(payload, path, encoder)
        figs = mean_losses(Trainer(net, TrainSection(), torch.device("cpu")), buffer,
                           batch_size)
        if known_aux == 0:  # no sample knows its aux targets (files from before them)
            figs.pop("aux_loss", None)
        out["networks"][str(path)] = figs
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=Path, nargs="+", required=True,
                    help="sample files (.npz) or folders of them (a run's selfplay/iter_K)")
    ap.add_argument("--checkpoints", type=Path, nargs="+", required=True,
                    help="network checkpoints (.pt) of one encoding")
    ap.add_argument("--batch-size", type=positive, default=256, help="samples per batch (256)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    from taluva_ai.agents.alphazero.net import CheckpointError

    try:
        res = measure(args.checkpoints, sample_files(args.samples), args.batch_size)
    except (FileNotFoundError, CheckpointError, ValueError) as e:
        ap.error(str(e).splitlines()[0])
    try:
        write_json(args.json, res)
    except OSError as e:
        ap.error(f"--json {args.json}: {e.strerror or e}")
    print(f"{res['samples']} samples of {res['games']} games in {len(res['files'])} files")
    for name, figs in res["networks"].items():
        print(f"{name}: " + ", ".join(f"{k} {v:.4f}" for k, v in figs.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
