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


def average_state_dicts(states: list[dict[str, Any]], names: list[str] | None = None
                        ) -> dict[str, Any]:
    """The element-wise mean of the floating-point tensors of ``states`` (computed in float64,
    stored in each tensor's dtype); other tensors from the last state. ``names``: the
    checkpoints' names for the errors (default: their positions).

    Raises:
        ValueError: no states; a state whose tensor names or shapes differ from the first's
            (another set of heads), or with a tensor that is not finite (naming the
            checkpoint and the tensor).
    """
    import torch

    if not states:
        raise ValueError("no checkpoints to average")
    names = names or [f"checkpoint {i + 1}" for i in range(len(states))]
    ref = states[0]
    for name, state in zip(names, states, strict=True):
        for key in sorted(set(ref) | set(state)):
            a, b = ref.get(key), state.get(key)
            if a is None or b is None:
                where = "is missing" if b is None else "is not in the first checkpoint"
                raise ValueError(f"{name}: tensor {key!r} {where} (a network with other "
                                 "heads)")
            if tuple(a.shape) != tuple(b.shape):
                raise ValueError(f"{name}: tensor {key!r} has shape {tuple(b.shape)}, the "
                                 f"first checkpoint's {tuple(a.shape)}")
            if b.is_floating_point() and not bool(torch.isfinite(b).all()):
                raise ValueError(f"{name}: tensor {key!r} holds NaN or infinite values")
    out: dict[str, Any] = {}
    for key, t in states[-1].items():
        if t.is_floating_point():
            out[key] = torch.stack([s[key].double() for s in states]).mean(dim=0).to(t.dtype)
        else:
            out[key] = t.clone()
    return out


#: The fields of a checkpoint this script reads, and their types.
_FIELDS = {"format": str, "net": dict, "encoder": dict, "game": dict, "state_dict": dict}


def check_fields(path: Path, payload: dict[str, Any]) -> None:
    """Refuse a checkpoint without a field this script reads (a hand-made or truncated one
    that carries no checksum).

    Raises:
        ValueError: naming the checkpoint and the field.
    """
    for field, kind in _FIELDS.items():
        if not isinstance(payload.get(field), kind):
            raise ValueError(f"checkpoint {path}: field {field!r} is missing or not a "
                             f"{kind.__name__}")
    for field in ("name", "options"):
        if field not in payload["game"]:
            raise ValueError(f"checkpoint {path}: field 'game.{field}' is missing")


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
    real = [p.resolve() for p in args.checkpoints]
    for i, p in enumerate(real):
        if p in real[:i]:
            ap.error(f"{args.checkpoints[i]}: named twice (as {args.checkpoints[real.index(p)]})")
    if args.out.name in ("", ".", ".."):
        ap.error(f"--out {str(args.out)!r}: not a file name")
    if args.out.resolve() in real:
        ap.error(f"--out {args.out}: is one of the checkpoints to average (it would be "
                 "overwritten); write the average to a new file")
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
        for path, payload in zip(args.checkpoints, payloads, strict=True):
            check_fields(path, payload)
        first, last = payloads[0], payloads[-1]
        spec = first["encoder"]  # the first checkpoint is the reference the others must fit
        encoder = make_encoder(first["game"]["name"], int(spec["num_players"]),
                               **first.get("encoder_options", {}))
        config = NetConfig(**first["net"])
        for path, payload in zip(args.checkpoints, payloads, strict=True):
            check_compatible(payload, path, encoder, config)
            if payload["game"]["name"] != first["game"]["name"]:
                raise CheckpointError(f"checkpoint {path}: made for the game "
                                      f"{payload['game']['name']!r}, the first checkpoint "
                                      f"for {first['game']['name']!r}")
            a, b = first["game"]["options"], payload["game"]["options"]
            diff = [f"{k} {b.get(k)!r} (the first checkpoint's: {a.get(k)!r})"
                    for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
            if diff:
                raise CheckpointError(f"checkpoint {path}: made for other rules: "
                                      f"{'; '.join(diff)}")
        averaged = {**last, "state_dict": average_state_dicts(
            [p["state_dict"] for p in payloads], [str(p) for p in args.checkpoints])}
        net, config = net_from_checkpoint(averaged, args.checkpoints[-1], encoder)
        seen = 0
        if args.bn_samples:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from heldout import load_samples, sample_files

            seen = recompute_batch_norm(net, load_samples(sample_files(args.bn_samples),
                                                          encoder))
            if not seen:
                raise ValueError("--bn-samples: the files hold no sample, so batch norm's "
                                 "statistics cannot be recomputed from them")
    except (CheckpointError, ValueError) as e:
        ap.error(str(e).splitlines()[0])
    except OSError as e:  # a missing sample file, or a folder named *.npz
        ap.error(f"{e.filename}: {e.strerror}" if e.filename else str(e).splitlines()[0])
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
