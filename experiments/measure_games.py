"""Measure self-play games: how far legal placements reach (board bound), game length, endings.

Plays random and greedy self-play games on a board so large that its bound never binds
(radius 60; no island of these games comes near it), recording per game the farthest hex of
any legal tile placement from the first volcano. The bound ``R`` would have bound in a game
exactly when that reach exceeds ``R`` (the games are identical up to the first decision where
it does). Writes ``<out>/games.json`` (one entry per game) and ``<out>/summary.json`` (the figures
docs/benchmarks.md quotes), and prints one JSON line of figures per player count and policy.

    python experiments/measure_games.py --games 10000 --greedy-games 300 --out runs/measure
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from numba import njit
from tqdm import tqdm

from taluva_ai.games.taluva import TaluvaGame
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva.heuristic import policy_actions, policy_choice
from taluva_ai.games.taluva.state import M_DRAWN, M_END, M_PLACED, M_STEP


@dataclass
class Config:
    games: int = 2000  # random self-play games per player count
    greedy_games: int = 300  # greedy self-play games per player count
    radius: int = 60  # measuring board: never binds
    seed: int = 0
    out: str = "runs/measure"


@njit(cache=True)
def play_measured(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, greedy, seed):
    """Play one self-play game (uniform random, or greedy with random tie-breaks); return
    ``(max reach of any legal placement hex, decisions)``."""
    np.random.seed(seed)
    size = 8 * cells.shape[0]
    ids = np.empty(size, dtype=np.int64)
    vals = np.empty(size, dtype=np.float64)
    reach = 0
    decisions = 0
    while meta[M_STEP] != K.S_TERMINAL:
        if meta[M_STEP] == K.S_CHANCE:
            K.apply_chance(cells, players, deck, meta, rules, nbr, cell_of, origin,
                           deck[meta[M_DRAWN]])
            continue
        n = policy_actions(cells, players, meta, rules, nbr, cell_of, hexqr, origin, greedy,
                           ids, vals)
        if meta[M_STEP] == K.S_TILE:
            for j in range(n):
                v = ids[j] // 6
                o = ids[j] % 6
                for i in range(3):
                    c = v if i == 0 else nbr[v, (o + 3 + i) % 6]
                    q = hexqr[c, 0]
                    r = hexqr[c, 1]
                    reach = max(reach, (abs(q) + abs(r) + abs(q + r)) // 2)
        a = policy_choice(ids, vals, n, greedy)
        K.apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, a)
        decisions += 1
    return reach, decisions


def measure(cfg: Config) -> dict:
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for n_players in (2, 3, 4):
        game = TaluvaGame(num_players=n_players, board_radius=cfg.radius)
        rules, nbr, cell_of, hexqr, origin = game.kernel_args()
        for policy, count in (("random", cfg.games), ("greedy", cfg.greedy_games)):
            for i in tqdm(range(count), desc=f"{n_players}p {policy}"):
                seed = cfg.seed + i
                s = game.new_initial_state(seed=seed)
                reach, dec = play_measured(s.cells, s.players, s.deck, s.meta, rules, nbr,
                                           cell_of, hexqr, origin, policy == "greedy", seed)
                records.append({
                    "players": n_players, "policy": policy, "seed": seed, "reach": int(reach),
                    "decisions": int(dec), "tiles_placed": int(s.meta[M_PLACED]),
                    "end": s.end_reason.name.lower(), "winners": s.winners(),
                    "end_code": int(s.meta[M_END]),
                    "eliminated": sum(s.status(q).name == "ELIMINATED" for q in range(n_players)),
                })
    (out / "games.json").write_text(json.dumps(records))
    summary = summarize(records)
    (out / "summary.json").write_text(json.dumps({"config": asdict(cfg), **summary}, indent=2))
    return summary


def summarize(records: list[dict]) -> dict:
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(f"{r['players']}p {r['policy']}", []).append(r)
    table = {}
    for key, rs in groups.items():
        reach = np.array([r["reach"] for r in rs])
        tiles = np.array([r["tiles_placed"] for r in rs])
        ends = Counter(r["end"] for r in rs)
        table[key] = {
            "games": len(rs),
            "reach_max": int(reach.max()),
            "reach_p99": float(np.percentile(reach, 99)),
            "reach_median": float(np.median(reach)),
            "share_reach_over": {str(R): float((reach > R).mean()) for R in (24, 26, 28, 30, 32)},
            "tiles_placed_mean": float(tiles.mean()),
            "tiles_placed_quartiles": [float(x) for x in np.percentile(tiles, [25, 50, 75])],
            "tiles_placed_min": int(tiles.min()),
            "ends": {k: ends[k] / len(rs) for k in sorted(ends)},
            "games_with_elimination": float(np.mean([r["eliminated"] > 0 for r in rs])),
        }
    return {"table": table}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    for f, v in asdict(Config()).items():
        p.add_argument(f"--{f.replace('_', '-')}", type=type(v), default=v)
    cfg = Config(**vars(p.parse_args()))
    summary = measure(cfg)
    for key, row in summary["table"].items():
        print(key, json.dumps(row))


if __name__ == "__main__":
    main()
