"""Measure how often legal and chosen actions fall outside the network's view (docs/encoding.md).

Plays random and greedy self-play games and, at every decision, records for the view
recentred on the island (:func:`taluva_ai.games.taluva.encoding.view_center`) the largest hex
distance from the view centre of any legal action's hex, and that of the chosen action's hex.
A view of radius ``R`` hides a legal action exactly when that distance exceeds ``R``. Prints, per
radius, the share of decisions where any legal action is outside and where the chosen action is.

    python experiments/measure_view.py --games 300 --greedy-games 100 --out runs/measure_view
    python experiments/measure_view.py --games 0 --greedy-games 0 --agent mcts:sims=100 \
        --agent-games 10 --players 2 --out runs/measure_view_mcts
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from taluva_ai.games.taluva import TaluvaGame
from taluva_ai.games.taluva import kernels as K
from taluva_ai.games.taluva.encoding import view_center
from taluva_ai.games.taluva.heuristic import policy_actions, policy_choice
from taluva_ai.games.taluva.state import M_DRAWN, M_STEP


@dataclass
class Config:
    games: int = 300  # random self-play games per player count
    greedy_games: int = 100  # greedy self-play games per player count
    players: tuple[int, ...] = (2, 3, 4)
    radii: tuple[int, ...] = (8, 9, 10, 11, 12, 13, 14, 16)
    seed: int = 0
    agent: str = ""  # an agent spec (e.g. "mcts:sims=100") to measure as well, in self-play
    agent_games: int = 0
    out: str = "runs/measure_view"


@njit(cache=True)
def _hex_of(action, ncell):
    if action < 6 * ncell:
        return action // 6
    if action < 9 * ncell:
        return action % ncell
    return (action - 9 * ncell) // 5


@njit(cache=True)
def play_view(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, greedy, seed,
              max_d, chosen_d):
    """Play one self-play game; per decision write the largest view distance of a legal
    action's hex (``max_d``) and that of the chosen action (``chosen_d``). Returns decisions."""
    np.random.seed(seed)
    size = 8 * cells.shape[0]
    ncell = cells.shape[0]
    ids = np.empty(size, dtype=np.int64)
    vals = np.empty(size, dtype=np.float64)
    n_dec = 0
    while meta[M_STEP] != K.S_TERMINAL:
        if meta[M_STEP] == K.S_CHANCE:
            K.apply_chance(cells, players, deck, meta, rules, nbr, cell_of, origin,
                           deck[meta[M_DRAWN]])
            continue
        n = policy_actions(cells, players, meta, rules, nbr, cell_of, hexqr, origin, greedy,
                           ids, vals)
        qc, rc = view_center(cells, meta, cell_of)
        md = 0
        for j in range(n):
            c = _hex_of(ids[j], ncell)
            dq = hexqr[c, 0] - qc
            dr = hexqr[c, 1] - rc
            md = max(md, (abs(dq) + abs(dr) + abs(dq + dr)) // 2)
        a = policy_choice(ids, vals, n, greedy)
        c = _hex_of(a, ncell)
        dq = hexqr[c, 0] - qc
        dr = hexqr[c, 1] - rc
        max_d[n_dec] = md
        chosen_d[n_dec] = (abs(dq) + abs(dr) + abs(dq + dr)) // 2
        n_dec += 1
        K.apply_action(cells, players, deck, meta, rules, nbr, cell_of, hexqr, origin, a)
    return n_dec


def view_distances(state: Any, action: int) -> tuple[int, int]:
    """``(largest view distance of a legal action's hex, that of ``action``)`` for a state."""
    game = state.game
    _, _, cell_of, hexqr, _ = game.kernel_args()
    qc, rc = view_center(state.cells, state.meta, cell_of)
    legal = state.legal_actions()
    cells = np.array([_hex_of(int(a), game.num_cells) for a in legal])
    dq, dr = hexqr[cells, 0] - qc, hexqr[cells, 1] - rc
    d = (np.abs(dq) + np.abs(dr) + np.abs(dq + dr)) // 2
    c = _hex_of(int(action), game.num_cells)
    dqa, dra = int(hexqr[c, 0] - qc), int(hexqr[c, 1] - rc)
    return int(d.max()), (abs(dqa) + abs(dra) + abs(dqa + dra)) // 2


def measure_agent(spec: str, games: int, players: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Self-play games of the agent ``spec`` (any registered agent); per decision the view
    distances of :func:`view_distances`."""
    from taluva_ai.agents import make_agent

    game = TaluvaGame(num_players=players)
    mx: list[int] = []
    ch: list[int] = []
    for g in range(games):
        agents = [make_agent(spec, seed=seed * 1000 + 10 * g + p) for p in range(players)]
        st = game.new_initial_state(seed=seed * 100_000 + g)
        while not st.is_terminal():
            if st.current_player == -1:
                st.draw()
                continue
            a = agents[st.current_player].act(st)
            m, c = view_distances(st, a)
            mx.append(m)
            ch.append(c)
            st.apply(a)
    return np.array(mx), np.array(ch)


def _row(mx: np.ndarray, ch: np.ndarray, games: int, radii: tuple[int, ...]) -> dict[str, float]:
    row: dict[str, float] = {"decisions": float(mx.size), "games": float(games)}
    for r in radii:
        row[f"any_outside/{r}"] = float((mx > r).mean())
        row[f"chosen_outside/{r}"] = float((ch > r).mean())
    row["max_legal_distance"] = float(mx.max())
    row["max_chosen_distance"] = float(ch.max())
    return row


def measure(cfg: Config) -> dict[str, dict[str, dict[str, float]]]:
    """Run the games; return ``{policy: {players: {"any_outside/R": share, "chosen_outside/R":
    share, "decisions": n}}}``."""
    result: dict[str, dict[str, dict[str, float]]] = {}
    for policy, games in (("random", cfg.games), ("greedy", cfg.greedy_games)):
        if games <= 0:
            continue
        result[policy] = {}
        for n in cfg.players:
            game = TaluvaGame(num_players=n)
            rules, nbr, cell_of, hexqr, origin = game.kernel_args()
            all_max: list[np.ndarray] = []
            all_ch: list[np.ndarray] = []
            for g in range(games):
                st = game.new_initial_state(seed=cfg.seed * 100_000 + g)
                md = np.zeros(400, dtype=np.int64)
                cd = np.zeros(400, dtype=np.int64)
                k = play_view(st.cells, st.players, st.deck, st.meta, rules, nbr, cell_of, hexqr,
                              origin, policy == "greedy", cfg.seed * 100_000 + g, md, cd)
                all_max.append(md[:k])
                all_ch.append(cd[:k])
            result[policy][str(n)] = _row(np.concatenate(all_max), np.concatenate(all_ch),
                                          games, cfg.radii)
    if cfg.agent and cfg.agent_games > 0:
        key = f"agent:{cfg.agent}"
        result[key] = {}
        for n in cfg.players:
            mx, ch = measure_agent(cfg.agent, cfg.agent_games, n, cfg.seed)
            result[key][str(n)] = _row(mx, ch, cfg.agent_games, cfg.radii)
    return result


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=Config.games)
    ap.add_argument("--greedy-games", type=int, default=Config.greedy_games)
    ap.add_argument("--players", type=int, nargs="+", default=list(Config.players))
    ap.add_argument("--seed", type=int, default=Config.seed)
    ap.add_argument("--agent", default="", help="agent spec to measure too, e.g. mcts:sims=100")
    ap.add_argument("--agent-games", type=int, default=0)
    ap.add_argument("--out", default=Config.out)
    a = ap.parse_args(argv)
    cfg = Config(games=a.games, greedy_games=a.greedy_games, players=tuple(a.players),
                 seed=a.seed, agent=a.agent, agent_games=a.agent_games, out=a.out)
    res = measure(cfg)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps({"config": asdict(cfg), "result": res},
                                                 indent=1))
    for policy, per_n in res.items():
        for n, row in per_n.items():
            print(f"{policy} {n}p: {int(row['decisions'])} decisions, max legal distance "
                  f"{int(row['max_legal_distance'])}, max chosen {int(row['max_chosen_distance'])}")
            print("  R   any legal outside   chosen outside")
            for r in cfg.radii:
                print(f"  {r:2d}  {100 * row[f'any_outside/{r}']:8.3f}%  "
                      f"{100 * row[f'chosen_outside/{r}']:8.3f}%")


if __name__ == "__main__":
    main()
