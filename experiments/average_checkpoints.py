"""One network from the average of several checkpoints' weights (checkpoint averaging).

Averaging the weights of the last networks of a run at a constant learning rate lands nearer
the centre of the region that training moves around in than any one of them (Polyak and
Juditsky 1992; stochastic weight averaging, Izmailov et al. 2018, "Averaging Weights Leads to
Wider Optima and Better Generalization"); KataGo plays an exponential moving average of its
weights. The checkpoints must share the game, the encoding and the network shape
(:func:`taluva_ai.agents.alphazero.net.check_compatible`). Every floating-point tensor of the
``state_dict`` is averaged (batch norm's running means and variances included); integer
tensors (batch norm's step counters) are taken from the last checkpoint.

With ``--bn-samples``, batch norm's running statistics are then recomputed over those sample
files (one pass in training mode with a cumulative average, as SWA does: the mean of averaged
weights' activations is not the mean of the networks' means), without changing any weight.

    python experiments/average_checkpoints.py runs/s2-base/checkpoints/iter_00{61..70}.pt \\
        --out runs/s2-base/avg_61_70.pt

The result is an ordinary checkpoint (``az:path=...``), whose ``meta`` names its sources.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def average_state_dicts(states: list[dict[str, Any]]) -> dict[str, Any]:
    """The element-wise mean of the floating-point tensors of ``states`` (computed in float64,
    stored in each tensor's dtype); other tensors from the last state.

    Raises:
        ValueError: no states, or states whose names or shapes differ (naming the tensor).
    """
    import torch

    if not states:
        raise ValueError("no checkpoints to average")
    last = states[-1]
    out: dict[str, Any] = {}
    for name, t in last.items():
        ts = [s.get(name) for s in states]
        if any(x is None or tuple(x.shape) != tuple(t.shape) for x in ts):
            raise ValueError(f"tensor {name!r}: missing or of another shape in a checkpoint")
        if t.is_floating_point():
            out[name] = torch.stack([x.double() for x in ts]).mean(dim=0).to(t.dtype)
        else:
            out[name] = t.clone()
    extra = set().union(*states) - set(last)
    if extra:
        raise ValueError(f"tensor {sorted(extra)[0]!r}: not in the last checkpoint")
    return out


def recompute_batch_norm(net: Any, buffer: Any, batch_size: int = 256) -> int:
    """Reset every ``BatchNorm`` layer of ``net`` and recompute its running statistics over
    every sample of ``buffer`` (a :class:`~taluva_ai.agents.alphazero.replay.ReplayBuffer`),
    one pass in training mode with a cumulative average (``momentum=None``); the weights are
    unchanged and ``net`` is left in eval mode. Returns the samples seen."""
    import torch

    bns = [m for m in net.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    saved = [m.momentum for m in bns]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    net.train()
    n = 0
    with torch.no_grad():
        for batch in buffer.batches(batch_size):
            net(torch.from_numpy(batch.spatial), torch.from_numpy(batch.globals))
            n += len(batch.value)
    for m, mom in zip(bns, saved, strict=True):
        m.momentum = mom
    net.eval()
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoints", type=Path, nargs="+",
                    help="network checkpoints (.pt) of one game, encoding and shape")
    ap.add_argument("--out", type=Path, required=True, help="the checkpoint to write")
    ap.add_argument("--bn-samples", type=Path, nargs="+", default=None,
                    help="sample files (.npz) or folders of them (a run's selfplay/iter_K) "
                         "to recompute batch norm's statistics over (default: averaged)")
    args = ap.parse_args(argv)
    if len(args.checkpoints) < 2:
        ap.error("give at least two checkpoints to average")
    if len(set(args.checkpoints)) < len(args.checkpoints):
        ap.error("a checkpoint is named twice")
    import torch

    from taluva_ai.agents.alphazero.config import NetConfig
    from taluva_ai.agents.alphazero.encoder import make_encoder
    from taluva_ai.agents.alphazero.net import (
        CheckpointError,
        check_compatible,
        load_checkpoint,
        net_from_checkpoint,
        save_checkpoint,
    )

    torch.set_num_threads(1)
    try:
        payloads = [load_checkpoint(p) for p in args.checkpoints]
        first, last = payloads[0], payloads[-1]
        spec = first["encoder"]  # the first checkpoint is the reference the others must fit
        encoder = make_encoder(first["game"]["name"], int(spec["num_players"]),
                               **first.get("encoder_options", {}))
        config = NetConfig(**first["net"])
        for path, payload in zip(args.checkpoints, payloads, strict=True):
            check_compatible(payload, path, encoder, config)
            if payload["game"] != first["game"]:
                raise CheckpointError(f"checkpoint {path}: made for another game or rules "
                                      f"({payload['game']}, not {first['game']})")
        averaged = {**last, "state_dict": average_state_dicts(
            [p["state_dict"] for p in payloads])}
        net, config = net_from_checkpoint(averaged, args.checkpoints[-1], encoder)
        seen = 0
        if args.bn_samples:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from heldout import load_samples, sample_files

            seen = recompute_batch_norm(net, load_samples(sample_files(args.bn_samples),
                                                          encoder))
    except (CheckpointError, FileNotFoundError, ValueError) as e:
        ap.error(str(e).splitlines()[0])
    meta = {**last.get("meta", {}), "averaged": [str(p) for p in args.checkpoints],
            "batch_norm_samples": seen}
    try:
        save_checkpoint(args.out, net, encoder, config, last["game"], meta)
    except OSError as e:
        ap.error(f"--out {args.out}: {e.strerror or e}")
    print(f"wrote {args.out}: the mean of {len(payloads)} checkpoints"
          + (f", batch norm over {seen} samples" if seen else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
