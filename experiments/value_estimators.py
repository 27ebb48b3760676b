"""How well a network's value and the mean of greedy rollouts predict the game's result.

For the positions of recorded games (every ``--every``-th decision of each game, replayed from
its record), this compares three estimates of the result for the player to move, by their mean
squared error against the result ``z`` (+1 / -1 / 0, the value targets' scale) and their
correlation with it:

- the network's value (the packaged ``az:builtin`` network, or ``--checkpoint``);
- the mean of ``k`` greedy rollouts (``state.rollout("greedy")``, 8 tile placements sampled
  per decision) for each ``k`` of ``--rollouts``;
- the two mixed half and half.

A constant 0 has an error of 1 for 2-player games without draws. The figures are given for all
positions and by the third of the game the position is in. It is the measurement behind
``[selfplay] value_rollouts`` (docs/alphazero.md, "Rollout value targets").

    python experiments/value_estimators.py --records runs/builtin_mcts400/games --games 100 \\
        --json experiments/journal/data/value_estimators.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

PHASES = ((0.0, 1.0), (0.0, 1 / 3), (1 / 3, 2 / 3), (2 / 3, 1.0))


def positive(text: str) -> int:
    """An argparse type: an integer >= 1."""
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {n}")
    return n


def record_files(folder: Path, games: int) -> list[Path]:
    """The first ``games`` game records (``*.jsonl``, sorted) in ``folder``.

    Raises:
        FileNotFoundError: no such folder, or no records in it."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    files = sorted(folder.glob("*.jsonl"))[:games]
    if not files:
        raise FileNotFoundError(f"{folder}: no game records (*.jsonl) in it")
    return files


def make_evaluator(checkpoint: Path | None) -> Any:
    """A :class:`~taluva_ai.agents.alphazero.evaluator.NetEvaluator` of ``checkpoint``, or of
    the packaged network when None."""
    from taluva_ai.agents.alphazero.evaluator import NetEvaluator

    if checkpoint is None:
        from taluva_ai.agents.alphazero.builtin import load_builtin

        net, encoder, _ = load_builtin()
        return NetEvaluator(net, encoder, seed=0)
    import torch

    from taluva_ai.agents.alphazero.agent import load_net

    torch.set_num_threads(1)
    net, encoder, _ = load_net(checkpoint, torch.device("cpu"))
    return NetEvaluator(net, encoder, seed=0)


def decision_states(path: Path, keep: bool = True) -> tuple[list[Any], Any]:
    """The states of a game record where a player is to move (copies; none when not
    ``keep``), and its final state.

    Raises:
        ValueError: the record does not replay (naming the file, line and field)."""
    from taluva_ai.records import replay_record

    states: list[Any] = []

    def on_state(state: Any, _event: Any) -> None:
        if state.current_player >= 0 and not state.is_terminal():
            states.append(state.clone())

    try:
        final = replay_record(path, on_state if keep else None)
    except ValueError as e:  # a RecordError names the line and field, not the file
        raise ValueError(f"{path}: {e}") from None
    return states, final


def positions(files: list[Path], every: int, evaluator: Any, rollouts: list[int]
              ) -> list[list[float]]:
    """One row per measured position: ``[phase, z, net, rollout mean for each k]``, all for
    the player to move; rollout ``i`` of game ``g``'s position ``j`` has seed ``(g, j, i)``."""
    import numpy as np

    from taluva_ai.agents.alphazero.evaluator import value_targets

    rows: list[list[float]] = []
    most = max(rollouts)
    for g, path in enumerate(files):
        states, final = decision_states(path)
        z = value_targets(final, final.returns())
        for j in range(0, len(states), every):
            st = states[j]
            p = st.current_player
            seeds = np.random.default_rng([g, j]).integers(2**31 - 1, size=most)
            r = np.array([value_targets(st, st.rollout("greedy", int(s), 8))[p] for s in seeds])
            _, v = evaluator.evaluate([st])
            rows.append([j / len(states), float(z[p]), float(v[0][p]),
                         *[float(r[:k].mean()) for k in rollouts]])
    return rows


def summarise(rows: list[list[float]], rollouts: list[int]) -> dict[str, Any]:
    """Per phase: positions, and for each estimate its MSE against ``z`` and correlation."""
    import numpy as np

    a = np.asarray(rows, dtype=np.float64)
    names = ["zero", "net"] + [f"rollouts_{k}" for k in rollouts] + [
        f"net_and_rollouts_{rollouts[-1]}"]
    out: dict[str, Any] = {}
    for lo, hi in PHASES:
        m = (a[:, 0] >= lo) & ((a[:, 0] < hi) if hi < 1 else (a[:, 0] <= hi))
        z = a[m, 1]
        est = [np.zeros_like(z), a[m, 2]] + [a[m, 3 + i] for i in range(len(rollouts))] + [
            0.5 * a[m, 2] + 0.5 * a[m, 2 + len(rollouts)]]
        figs: dict[str, Any] = {"positions": int(m.sum())}
        for name, e in zip(names, est, strict=True):
            corr = float(np.corrcoef(e, z)[0, 1]) if e.std() > 0 and z.std() > 0 else 0.0
            figs[name] = {"mse": round(float(np.mean((e - z) ** 2)), 4),
                          "corr": round(corr, 4)}
        out[f"{lo:.2f}-{hi:.2f}"] = figs
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=Path, required=True,
                    help="a folder of game records (*.jsonl), e.g. a tournament's games/")
    ap.add_argument("--games", type=positive, default=100, help="records read (default 100)")
    ap.add_argument("--every", type=positive, default=3,
                    help="measure every N-th decision of a game (default 3)")
    ap.add_argument("--rollouts", type=positive, nargs="+", default=[1, 4, 16],
                    help="rollout counts k to compare (default 1 4 16)")
    ap.add_argument("--checkpoint", type=Path,
                    help="a training checkpoint (.pt); default: the packaged network")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    try:
        files = record_files(args.records, args.games)
        evaluator = make_evaluator(args.checkpoint)
        rollouts = sorted(set(args.rollouts))
        t0 = time.process_time()
        rows = positions(files, args.every, evaluator, rollouts)
    except (FileNotFoundError, ValueError) as e:
        print(f"value_estimators: {e}", file=sys.stderr)
        return 2
    res = {"records": str(args.records), "games": len(files), "every": args.every,
           "network": str(args.checkpoint or "az:builtin"), "rollouts": rollouts,
           "cpu_s": round(time.process_time() - t0, 1), "phases": summarise(rows, rollouts)}
    for phase, figs in res["phases"].items():
        cells = "  ".join(f"{k} {v['mse']:.3f}/{v['corr']:+.2f}" for k, v in figs.items()
                          if k != "positions")
        print(f"{phase} ({figs['positions']} positions), MSE/corr: {cells}")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(res, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
