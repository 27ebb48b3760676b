"""The Elo curve of a training run against its fixed anchors, as a PNG.

Reads ``metrics.jsonl`` of a ``taluva train`` run directory (or of a pack of one) and draws,
by iteration, the Elo of the run's best network against each anchor (95% intervals) and its
win rates (:func:`taluva_ai.reports.save_anchor_curves`); the notebook
``notebooks/alphazero_run.ipynb`` draws the same figure inline.

    python experiments/plot_anchors.py experiments/runs/strong --out docs/strong_anchors.png
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from taluva_ai.reports import anchor_curves, save_anchor_curves


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="a run directory or pack (holds metrics.jsonl)")
    ap.add_argument("--out", type=Path, required=True, help="the PNG file to write")
    ap.add_argument("--title", default=None, help="a title (default: the run's name)")
    args = ap.parse_args(argv)
    path = args.run / "metrics.jsonl"
    metrics = []
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        ap.error(f"{path}: {e.strerror}")
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                metrics.append(json.loads(line))
            except json.JSONDecodeError as e:
                ap.error(f"{path}, line {n}: not JSON ({e.msg})")
    curves = anchor_curves(metrics)
    if not curves:
        ap.error(f"{path}: no iteration has anchor results")
    save_anchor_curves(metrics, args.out, args.title or args.run.name)
    for opp, pts in curves.items():
        print(f"{opp}: " + ", ".join(f"{i}: {a['win_rate']:.2f}" for i, a in pts))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
