"""What prioritized replay draws: the share of the draws that falls on each kind of sample.

``[train] priority_alpha`` draws a sample with probability proportional to ``p ** alpha``,
``p`` the search's error on it (:func:`taluva_ai.agents.alphazero.replay.replay_priority`).
This reads sample files (``selfplay/iter_K`` folders of a run) and prints, for each
``alpha`` asked (0 is uniform), the mean priority and the share of the draws of: the samples
of games that ended with a seat eliminated (2-player Taluva's auxiliary targets say so: a
seat that went out without having built all of two kinds of pieces; RULES.md "End of the
game"), the other games' samples, each game's last ``--last`` samples and the rest.

    python experiments/replay_priorities.py runs/s2-sites-l0/selfplay/iter_00{91..99} \\
        runs/s2-sites-l0/selfplay/iter_0100 --alpha 0 1 2 \\
        --json experiments/journal/data/replay_priorities.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heldout import positive, sample_files, write_json


def eliminated_games(aux: np.ndarray) -> np.ndarray:
    """``bool[N]``: whether each sample's game ended with a seat eliminated, from Taluva's
    auxiliary targets ``float32[N, n, 4]`` (:meth:`~taluva_ai.agents.alphazero.encoder.
    TaluvaEncoder.eliminated`, which ``[train] elimination_weight`` reads).

    Raises:
        ValueError: not Taluva's four targets for 2-4 players, or samples without them (NaN).
    """
    from taluva_ai.agents.alphazero.encoder import make_encoder

    if aux.ndim == 3 and aux.shape[2] == 0:
        raise ValueError("samples without auxiliary targets (written before they were "
                         "recorded): their games' ends are unknown")
    if aux.ndim != 3 or aux.shape[2] != 4 or not 2 <= aux.shape[1] <= 4:
        raise ValueError(f"auxiliary targets of shape {list(aux.shape)}: not Taluva's "
                         "[samples, players, 4]")
    if np.isnan(aux).any():
        raise ValueError("samples without auxiliary targets (written before they were "
                         "recorded): their games' ends are unknown")
    got = make_encoder("taluva", int(aux.shape[1])).eliminated(aux)
    assert got is not None
    return got


def from_the_end(game: np.ndarray) -> np.ndarray:
    """``int[N]``: each sample's place counted from its game's last sample (0: the last),
    the samples of a game in the order they were recorded."""
    out = np.zeros(len(game), dtype=np.int64)
    for g in np.unique(game):
        idx = np.flatnonzero(game == g)
        out[idx] = np.arange(len(idx))[::-1]
    return out


def measure(paths: list[Path], alphas: list[float], last: int) -> dict[str, Any]:
    """``{"samples", "games", "alphas": {alpha: {kind: {"samples", "mean_priority",
    "share_drawn", "share_uniform"}}}}`` over the sample files ``paths``.

    Raises:
        ValueError: a file that is not a sample file, or samples without Taluva's auxiliary
            targets."""
    from taluva_ai.agents.alphazero.replay import SampleSet, replay_priority

    prio, elim, tail = [], [], []
    games = 0
    players = None
    for p in paths:
        s = SampleSet.load(p)
        if s.aux is None:
            raise ValueError(f"{p}: no auxiliary targets in it")
        n = int(np.asarray(s.value).shape[1])
        if players is not None and n != players:
            raise ValueError(f"{p}: samples of {n}-player games, the files before it hold "
                             f"{players}-player games; measure each player count apart")
        players = n
        try:
            elim.append(eliminated_games(np.asarray(s.aux)))
        except ValueError as e:
            raise ValueError(f"{p}: {e}") from None
        prio.append(replay_priority(s))
        tail.append(from_the_end(np.asarray(s.game)) < last)
        games += s.games
    pr, el, ta = np.concatenate(prio), np.concatenate(elim), np.concatenate(tail)
    kinds = {"games with an elimination": el, "other games": ~el,
             f"last {last} of games with an elimination": el & ta,
             f"last {last} of other games": ~el & ta, f"before the last {last}": ~ta}
    out: dict[str, Any] = {"samples": len(pr), "games": games, "last": last, "alphas": {}}
    for a in alphas:
        w = pr ** a
        out["alphas"][str(a)] = {
            k: {"samples": int(m.sum()), "mean_priority": round(float(pr[m].mean()), 4),
                "share_drawn": round(float(w[m].sum() / w.sum()), 4),
                "share_uniform": round(float(m.mean()), 4)}
            for k, m in kinds.items() if m.any()}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("samples", type=Path, nargs="+",
                    help="sample files (.npz) or folders of them (a run's selfplay/iter_K)")
    ap.add_argument("--alpha", type=float, nargs="+", default=[0.0, 1.0],
                    help="priority exponents to compare (default: 0 1; 0 is uniform)")
    ap.add_argument("--last", type=positive, default=3,
                    help="how many of each game's last samples count as its end (3)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    bad = [a for a in args.alpha if not 0 <= a <= 4]
    if bad:
        ap.error(f"--alpha must lie in [0, 4] ([train] priority_alpha), got {bad[0]}")
    if args.json is not None:  # before the measurement
        if args.json.is_dir():
            ap.error(f"--json {args.json}: is a folder; give a file name")
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            ap.error(f"--json {args.json}: {e.strerror or e}")
    try:
        res = measure(sample_files(args.samples), args.alpha, args.last)
    except (OSError, ValueError) as e:
        ap.error(str(e))
    print(f"{res['samples']} samples of {res['games']} games")
    for a, kinds in res["alphas"].items():
        print(f"alpha {a}:")
        for k, f in kinds.items():
            print(f"  {k:42s} {f['samples']:6d} samples, mean priority "
                  f"{f['mean_priority']:.3f}, {100 * f['share_drawn']:5.1f}% of draws "
                  f"({100 * f['share_uniform']:.1f}% uniform)")
    try:
        write_json(args.json, res)
    except OSError as e:
        ap.error(f"--json {args.json}: {e.strerror or e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
