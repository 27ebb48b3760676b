"""The solo score ladder (issue 8): each agent plays the same seeded solo games; the table
gives the mean score with a 95% interval and the share of games in each result band. The
AlphaZero pipeline's solo gating and anchors use the same games (:func:`play`,
:func:`paired`).

Game ``i`` of every agent uses game seed ``seed + i`` (so agents meet the same decks and
islands) and the arena's agent seeds for it. Each finished game appends one JSON line to
``<out>/games/<agent>.jsonl`` (seed, score, its breakdown, band, end reason, plies, seconds);
a rerun of the same command skips the games already there (resumable; more games or more
agents extend the ladder), a different seed or rule set for the same ``--out`` is refused.
Then it writes ``<out>/solo_ladder.json`` (the table), ``<out>/solo_ladder.md`` (Markdown) and
``<out>/solo_ladder.png`` (mean with its interval and the band shares per agent).

    python experiments/solo_ladder.py --out runs/solo_ladder --concurrency 2
    python experiments/solo_ladder.py --smoke --out runs/solo_smoke

(``experiments/solo_ladder.py`` runs :func:`main`.)
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from taluva_ai.games.taluva.solo import BAND_NAMES, result_band
from taluva_ai.parallel import watch_parent
from taluva_ai.runfiles import read_regular

#: The MCTS settings of the ladder (docs/solo.md, Players).
MCTS = "mcts:sims=100,rollout=greedy,prior_temperature=1"


@dataclass
class SoloLadderConfig:
    agents: list[str] = field(default_factory=lambda: ["random", "greedy", MCTS])
    games: int = 200  # per agent
    seed: int = 0  # game i has seed seed + i
    rules: dict[str, Any] = field(default_factory=dict)  # SOLO.md options
    concurrency: int = 1
    out: str = "runs/solo_ladder"


SMOKE = SoloLadderConfig(agents=["random", "greedy", "mcts:sims=3,rollout=random"], games=2)


def _slug(agent: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in agent)


def play_one(agent_spec: str, seed: int, rules: dict[str, Any]) -> dict[str, Any]:
    """One solo game of ``agent_spec`` with game seed ``seed``; its result line."""
    from taluva_ai.agents import make_agent
    from taluva_ai.protocol import make_game
    from taluva_ai.tournament import play_game

    game = make_game("taluva", solo=True, **rules)
    agent = make_agent(agent_spec)
    seen: list[Any] = []

    def keep(state: Any, event: Any) -> None:
        if not seen:
            seen.append(state)  # play_game updates this one state object to the end

    t0 = time.perf_counter()
    res = play_game(game, [agent], seed, on_state=keep)
    state = seen[0]
    breakdown = state.score_breakdown()
    score = sum(breakdown.values())
    return {"agent": agent_spec, "seed": seed, "score": score, "band": result_band(score),
            "breakdown": breakdown, "end_reason": state.end_reason.name.lower(),
            "plies": res.plies, "seconds": round(time.perf_counter() - t0, 3)}


def _done(path: Path, agent: str) -> dict[int, dict[str, Any]]:
    """The finished games of ``agent`` in its games file, by seed. A last line cut short (a
    kill while it was written) is dropped from the file.

    Raises:
        ValueError: a line that is not a game's result (file and line named), or a file that
            holds another agent's games (two specs with the same file name).
    """
    out: dict[int, dict[str, Any]] = {}
    if not path.exists():
        return out
    text = read_regular(path).decode("utf-8")
    lines = text.split("\n")
    if lines and lines[-1].strip():  # no newline at the end: an interrupted write
        try:
            json.loads(lines[-1])
        except ValueError:
            path.write_text("\n".join(lines[:-1]) + ("\n" if len(lines) > 1 else ""),
                            encoding="utf-8")
            lines = lines[:-1]
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            seed = int(row["seed"])
            float(row["score"])
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}, line {i}: not a solo game result ({e})") from None
        if row.get("agent", agent) != agent:
            raise ValueError(f"{path} holds the games of {row['agent']!r}, not of {agent!r} "
                             "(their file names agree); use another --out for one of them")
        out[seed] = row
    return out


def play(cfg: SoloLadderConfig, progress: Callable[[int], None] | None = None
         ) -> dict[str, list[dict[str, Any]]]:
    """Play what is missing of ``cfg`` in ``cfg.out`` (module docstring); returns each agent's
    result lines in seed order. ``progress(n)`` is called after each game with the games
    finished so far.

    Raises:
        ValueError: ``out`` holds a ladder of another config.
        OSError: a file of ``out`` cannot be read, or is not a regular file (a FIFO, a
            device, a directory: :func:`taluva_ai.runfiles.read_regular`).
    """
    from taluva_ai.agents import make_agent

    if cfg.games < 1 or cfg.concurrency < 1:
        raise ValueError(f"games and concurrency must be >= 1, got {cfg.games} and "
                         f"{cfg.concurrency}")
    for agent in cfg.agents:
        make_agent(agent)  # an unknown agent or a bad parameter, before anything is written
    out = Path(cfg.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} is a file, not a ladder directory")
    (out / "games").mkdir(parents=True, exist_ok=True)
    cfg_path = out / "config.json"
    # the games of an agent depend on the seeds and rules only: more games or more agents
    # extend a ladder
    key = {k: v for k, v in asdict(cfg).items() if k in ("seed", "rules")}
    if cfg_path.exists():
        try:
            old = json.loads(read_regular(cfg_path))
            differ = [k for k in key if old.get(k) != key[k]]
        except (ValueError, AttributeError):
            raise ValueError(f"{cfg_path}: not a solo ladder's config") from None
        if differ:
            raise ValueError(f"{out} holds a ladder with another {' and '.join(differ)} "
                             f"({cfg_path}); use another --out")
    cfg_path.write_text(json.dumps(asdict(cfg), indent=2), encoding="utf-8")
    seeds = [cfg.seed + i for i in range(cfg.games)]
    rows: dict[str, list[dict[str, Any]]] = {}
    finished = 0
    ex: ProcessPoolExecutor | None = None
    try:
        for agent in cfg.agents:
            path = out / "games" / f"{_slug(agent)}.jsonl"
            done = _done(path, agent)
            todo = [s for s in seeds if s not in done]
            finished += len(seeds) - len(todo)
            if ex is None and cfg.concurrency > 1 and len(todo) > 1:
                # spawn: a forked copy of a process that has run torch can deadlock; the
                # workers end if this process is killed (taluva_ai.parallel.watch_parent)
                ex = ProcessPoolExecutor(
                    cfg.concurrency, mp_context=multiprocessing.get_context("spawn"),
                    initializer=watch_parent,
                    initargs=(os.getpid(), threading.current_thread() is threading.main_thread()))
            with path.open("a", encoding="utf-8") as f:
                if ex is not None and len(todo) > 1:
                    results = (fut.result() for fut in
                               [ex.submit(play_one, agent, s, cfg.rules) for s in todo])
                else:
                    results = (play_one(agent, s, cfg.rules) for s in todo)
                for row in results:
                    done[row["seed"]] = row
                    f.write(json.dumps(row) + "\n")
                    f.flush()
                    finished += 1
                    if progress is not None:
                        progress(finished)
            rows[agent] = [done[s] for s in seeds]
    finally:
        if ex is not None:
            ex.shutdown(cancel_futures=True)
    return rows


def run(cfg: SoloLadderConfig) -> dict[str, Any]:
    """Play what is missing (:func:`play`), then write and return the table (module
    docstring).

    Raises:
        ValueError: ``out`` holds a ladder of another config.
    """
    rows = play(cfg)
    out = Path(cfg.out)
    table = summarize(rows)
    (out / "solo_ladder.json").write_text(json.dumps(table, indent=2), encoding="utf-8")
    (out / "solo_ladder.md").write_text(markdown(table), encoding="utf-8")
    plot(table, out / "solo_ladder.png")
    return table


def paired(rows: list[dict[str, Any]], other: list[dict[str, Any]]) -> dict[str, Any]:
    """Head to head on the same seeds: a game is won when ``rows`` scored more than ``other``
    on that seed, drawn when equal. ``{"games", "wins", "draws", "losses", "score"}`` (score:
    ``(wins + draws / 2) / games``, ``None`` with no game).

    Raises:
        ValueError: the two lists are not over the same seeds.
    """
    if [r["seed"] for r in rows] != [r["seed"] for r in other]:
        raise ValueError("paired results need the same seeds in the same order")
    wins = sum(a["score"] > b["score"] for a, b in zip(rows, other, strict=True))
    losses = sum(a["score"] < b["score"] for a, b in zip(rows, other, strict=True))
    n = len(rows)
    draws = n - wins - losses
    return {"games": n, "wins": wins, "draws": draws, "losses": losses,
            "score": (wins + 0.5 * draws) / n if n else None}


def summarize(rows: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per agent: games, mean score, its 95% t-interval, standard deviation, median, min, max,
    share of games per result band, mean of each breakdown line, mean seconds per game."""
    from scipy import stats

    table: dict[str, Any] = {"bands": list(BAND_NAMES), "agents": {}}
    for agent, rs in rows.items():
        scores = [r["score"] for r in rs]
        n = len(scores)
        mean = sum(scores) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in scores) / (n - 1)) if n > 1 else 0.0
        half = float(stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)) if n > 1 else 0.0
        lines = rs[0]["breakdown"].keys()
        table["agents"][agent] = {
            "games": n,
            "mean": round(mean, 3),
            "ci95": [round(mean - half, 3), round(mean + half, 3)],
            "sd": round(sd, 3),
            "median": float(sorted(scores)[n // 2] if n % 2 else
                            (sorted(scores)[n // 2 - 1] + sorted(scores)[n // 2]) / 2),
            "min": min(scores),
            "max": max(scores),
            "bands": {b: round(sum(r["band"] == b for r in rs) / n, 4) for b in BAND_NAMES},
            "won": round(sum(x >= 40 for x in scores) / n, 4),
            "lines": {k: round(sum(r["breakdown"][k] for r in rs) / n, 3) for k in lines},
            "end_reasons": {e: sum(r["end_reason"] == e for r in rs)
                            for e in sorted({r["end_reason"] for r in rs})},
            "seconds_per_game": round(sum(r["seconds"] for r in rs) / n, 3),
        }
    return table


def markdown(table: dict[str, Any]) -> str:
    bands = table["bands"]
    head = "| agent | games | mean score | 95% interval | median | min-max | " + \
        " | ".join(bands) + " | s/game |"
    lines = [head, "|" + "---|" * (8 + len(bands) - 1)]
    for agent, a in table["agents"].items():
        lo, hi = a["ci95"]
        shares = " | ".join(f"{100 * a['bands'][b]:.1f}%" for b in bands)
        lines.append(f"| {agent} | {a['games']} | {a['mean']:.2f} | [{lo:.2f}, {hi:.2f}] | "
                     f"{a['median']:g} | {a['min']} to {a['max']} | {shares} | "
                     f"{a['seconds_per_game']:.2f} |")
    return "\n".join(lines) + "\n"


def plot(table: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = list(table["agents"])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 0.6 * len(agents) + 2.5))
    means = [table["agents"][a]["mean"] for a in agents]
    lo = [m - table["agents"][a]["ci95"][0] for m, a in zip(means, agents, strict=True)]
    hi = [table["agents"][a]["ci95"][1] - m for m, a in zip(means, agents, strict=True)]
    ax1.errorbar(means, range(len(agents)), xerr=[lo, hi], fmt="o", capsize=4)
    ax1.axvline(40, color="grey", ls="--", lw=1)
    ax1.set_yticks(range(len(agents)), agents, fontsize=7)
    ax1.set_xlabel("mean final score, 95% interval (40: a win)")
    ax1.grid(axis="x", alpha=0.3)
    left = [0.0] * len(agents)
    colors = ["#bbbbbb", "#9ecae1", "#6baed6", "#3182bd", "#08519c"]
    for band, color in zip(table["bands"], colors, strict=True):
        share = [100 * table["agents"][a]["bands"][band] for a in agents]
        ax2.barh(range(len(agents)), share, left=left, color=color, label=band)
        left = [x + y for x, y in zip(left, share, strict=True)]
    ax2.set_yticks(range(len(agents)), [""] * len(agents))
    ax2.set_xlabel("share of games per result band (%)")
    ax2.legend(fontsize=7, loc="lower right")
    fig.suptitle("Taluva solo: score ladder")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=SoloLadderConfig.out)
    p.add_argument("--games", type=int, default=None, help="games per agent (default 200)")
    p.add_argument("--agents", nargs="+", default=None, help="agent specs")
    p.add_argument("--seed", type=int, default=None, help="first game seed (default 0)")
    p.add_argument("--concurrency", type=int, default=1, help="worker processes")
    p.add_argument("--smoke", action="store_true", help="a tiny ladder (seconds)")
    args = p.parse_args()
    cfg = SMOKE if args.smoke else SoloLadderConfig()
    cfg.out, cfg.concurrency = args.out, args.concurrency
    if args.games is not None:
        cfg.games = args.games
    if args.agents:
        cfg.agents = list(dict.fromkeys(args.agents))
    if args.seed is not None:
        cfg.seed = args.seed
    try:
        run(cfg)
    except ValueError as e:
        p.error(str(e))
    print((Path(cfg.out) / "solo_ladder.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
