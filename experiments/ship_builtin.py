"""Package a trained network as the built-in one (``az:builtin``; docs/alphazero.md).

    python experiments/ship_builtin.py runs/strong
    python experiments/ship_builtin.py runs/strong --checkpoint checkpoints/iter_0040.pt

Exports the run's ``best.pt`` (or ``--checkpoint``) to ONNX, checks that ONNX Runtime gives
the network's exact outputs (PyTorch in float64: its values and its policy, the softmax of the
logits) to 1e-5 on real positions, and writes
``builtin-<n>p.onnx`` and ``builtin-<n>p.json`` for the run's table of n players (2-4;
``az:builtin`` plays the one of the table at hand) (the run's config, the checkpoint's iteration,
the anchors' metrics by iteration, the encoder settings, the ONNX file's SHA-256) into the
package (``agents/alphazero/data/``, or ``--out``). It reads the run directory only. Needs
the ``train`` extra (PyTorch, onnx).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ship_builtin.py", description=__doc__.splitlines()[0])
    p.add_argument("run", help="a taluva train run directory (config.toml, metrics.jsonl, "
                   "best.pt)")
    p.add_argument("--checkpoint", default=None, metavar="PT",
                   help="the network to ship (default RUN/best.pt; a relative path that is not "
                   "a file is looked up in RUN, e.g. checkpoints/iter_0040.pt)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="where to write the two files (default: the package's "
                   "agents/alphazero/data/)")
    p.add_argument("--positions", type=int, default=64, metavar="N",
                   help="positions of the ONNX-PyTorch equality check (default 64)")
    args = p.parse_args(argv)
    if args.positions < 1:
        p.error(f"--positions must be >= 1, got {args.positions}")
    from taluva_ai.agents.alphazero.builtin import DATA_DIR, json_name, onnx_name, ship

    try:
        info = ship(args.run, args.checkpoint, args.out, positions=args.positions)
    except ImportError as e:
        print(f"ship_builtin.py: error: exporting needs the train extra (PyTorch, onnx): pip "
              f"install -e '.[train]' ({e})", file=sys.stderr)
        return 1
    except (ValueError, OSError) as e:  # CheckpointError and ConfigError are ValueErrors
        print(f"ship_builtin.py: error: {e}", file=sys.stderr)
        return 1
    out = args.out or DATA_DIR
    here = Path(__file__).resolve().parents[1] / "agents" / "alphazero" / "data"
    if args.out is None and Path(DATA_DIR).resolve() != here:
        print(f"ship_builtin.py: note: wrote into the installed package ({DATA_DIR}), not into "
              f"this repository's {here}", file=sys.stderr)
    src = info["source"]
    players = info["game"]["num_players"]
    print(f"wrote {out}/{onnx_name(players)} ({info['bytes']} bytes, sha256 "
          f"{info['sha256'][:16]}...) and {json_name(players)}: {src['run']}/"
          f"{src['checkpoint']}, iteration {src['iteration']}; "
          f"ONNX Runtime = the exact (float64) outputs to "
          f"{max(info['check']['max_abs_diff'][k] for k in ('policy', 'values')):.2g} on "
          f"{info['check']['positions']} positions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
