"""The MCTS strength ladder (issue 4): a round robin of random, greedy and MCTS at several
simulation budgets, its Elo table, and a plot.

Runs ``taluva_ai.tournament.run_tournament`` (resumable: rerun the same command after an
interruption) for 2 players, and optionally 3 and 4 players, then writes
``<out>/<n>p/results.json`` (the tournament table), ``<out>/ladder.md`` (Markdown tables) and
``<out>/ladder.png`` (Elo with 95% intervals). The default config is the full ladder of the
issue (200 games per pair); ``--smoke`` is a tiny run for the tests.

    python experiments/ladder.py --out runs/ladder --concurrency 2
    python experiments/ladder.py --smoke --out runs/ladder_smoke
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from taluva_ai.agents import match_specs
from taluva_ai.errors import RunConfigError
from taluva_ai.tournament import interim_table, run_tournament


@dataclass
class LadderConfig:
    # Gumbel root selection (Danihelka et al. 2022): at these budgets it beat PUCT's root
    # (docs/benchmarks.md, "Choosing the search for the ladder")
    agents: list[str] = field(default_factory=lambda: [
        "random", "greedy",
        "mcts:sims=100,rollout=greedy,root=gumbel", "mcts:sims=400,rollout=greedy,root=gumbel",
        "mcts:sims=1600,rollout=greedy,root=gumbel",
    ])
    games: int = 200  # per pair (2 players) or group (3-4 players)
    multiplayer_agents: list[str] = field(default_factory=lambda: [
        "random", "greedy", "mcts:sims=100,rollout=greedy,root=gumbel",
        "mcts:sims=400,rollout=greedy,root=gumbel",
    ])
    multiplayer_games: int = 60
    players: list[int] = field(default_factory=lambda: [2, 3, 4])
    seed: int = 1
    concurrency: int = 1
    out: str = "runs/ladder"
    game: str = "taluva"  # any registered game, e.g. thurn_und_taxis
    defer: list[str] = field(default_factory=list)  # agents whose games are played last


SMOKE = LadderConfig(
    agents=["random", "greedy", "mcts:sims=4,rollout=random"], games=2,
    multiplayer_agents=["random", "greedy", "mcts:sims=4,rollout=random"], multiplayer_games=3,
    players=[2, 3],
)


def run(cfg: LadderConfig) -> dict[str, Any]:
    out = Path(cfg.out)
    tables: dict[str, Any] = {}
    for n in cfg.players:
        agents = cfg.agents if n == 2 else cfg.multiplayer_agents
        games = cfg.games if n == 2 else cfg.multiplayer_games
        tables[f"{n}p"] = run_tournament(agents, games, out / f"{n}p", players_per_game=n,
                                         concurrency=cfg.concurrency, seed=cfg.seed,
                                         game_name=cfg.game,
                                         defer=match_specs(cfg.defer, agents)[0])
    (out / "ladder.md").write_text(markdown(tables), encoding="utf-8")
    plot(tables, out / "ladder.png", cfg.game)
    (out / "ladder_config.json").write_text(json.dumps(asdict(cfg), indent=2), encoding="utf-8")
    return tables


def report(cfg: LadderConfig) -> dict[str, Any]:
    """Tables, ``ladder.md`` and ``ladder.png`` of the games finished so far (a running or
    interrupted ladder), without playing; player counts not started are left out."""
    out = Path(cfg.out)
    tables = {f"{n}p": interim_table(out / f"{n}p") for n in cfg.players
              if (out / f"{n}p" / "config.json").exists()}
    for n in cfg.players:
        if f"{n}p" not in tables:
            print(f"{n}p: not started in {out}, left out", file=sys.stderr)
    if not tables:
        wanted = ", ".join(f"{n}p" for n in cfg.players)
        raise SystemExit(f"{out}: no ladder of {wanted} started there (no "
                         f"{'/'.join(f'{n}p' for n in cfg.players)}/config.json)")
    (out / "ladder.md").write_text(markdown(tables), encoding="utf-8")
    plot(tables, out / "ladder.png", cfg.game)
    return tables


def markdown(tables: dict[str, Any]) -> str:
    lines = []
    for key, t in tables.items():
        done = t["games"]
        planned = t.get("scheduled_games", done)
        lines += [f"### {key}" + (f" ({done} of {planned} games so far)" if done < planned
                                  else ""), "",
                  "| agent | Elo | 95% interval | games | wins | score |",
                  "|---|---|---|---|---|---|"]
        rows = sorted(t["agents"].items(), key=lambda kv: -(kv[1]["elo"] or 0))
        for name, a in rows:
            if a["elo"] is None:  # no finished game yet (an interim report)
                lines.append(f"| {name} | — | — | 0 | 0 | — |")
                continue
            lo, hi = a["elo_ci95"]
            lines.append(f"| {name} | {a['elo']:.0f} | [{lo:.0f}, {hi:.0f}] | {a['games']} | "
                         f"{a['wins']} | {a['score']:.3f} |")
        lines.append("")
        if t.get("pairs") and len(t["pairs"][0]["agents"]) == 2:
            lines += ["| pair | games | wins | draws |", "|---|---|---|---|"]
            for pair in t["pairs"]:
                a, b = pair["agents"]
                lines.append(f"| {a} – {b} | {pair['games']} | {pair['wins'][a]}–"
                             f"{pair['wins'][b]} | {pair['draws']} |")
            lines.append("")
    return "\n".join(lines)


def plot(tables: dict[str, Any], path: Path, game: str = "taluva") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(tables), figsize=(5 * len(tables), 4), squeeze=False)
    for ax, (key, t) in zip(axes[0], tables.items(), strict=True):
        rows = sorted(((k, a) for k, a in t["agents"].items() if a["elo"] is not None),
                      key=lambda kv: -kv[1]["elo"])[::-1]  # the table's order, drawn upwards
        names = [r[0] for r in rows]
        elo = [r[1]["elo"] for r in rows]
        lo = [r[1]["elo"] - r[1]["elo_ci95"][0] for r in rows]
        hi = [r[1]["elo_ci95"][1] - r[1]["elo"] for r in rows]
        ax.errorbar(elo, range(len(names)), xerr=[lo, hi], fmt="o", capsize=4)
        ax.set_yticks(range(len(names)), names, fontsize=8)
        ax.set_xlabel(f"Elo ({t.get('elo_anchor', 'random')} = 0), 95% interval")
        title = {"taluva": "Taluva", "thurn_und_taxis": "Thurn und Taxis"}.get(game, game)
        done, planned = t["games"], t.get("scheduled_games", t["games"])
        ax.set_title(f"{title} ladder, {key}" + (f" ({done} of {planned} games so far)"
                                                 if done < planned else ""),
                     fontsize=10 if done < planned else None)
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=LadderConfig.out)
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--games", type=int, default=None, help="games per pair (2 players)")
    p.add_argument("--agents", nargs="+", default=None, help="2-player ladder agents")
    p.add_argument("--players", nargs="+", type=int, default=None, help="player counts")
    p.add_argument("--game", default="taluva", help="the game (default taluva)")
    p.add_argument("--defer", nargs="+", default=[], metavar="AGENT",
                   help="play the games of these agents after all the others (play order "
                        "only: the tables do not change), e.g. the slowest MCTS budget")
    p.add_argument("--report", action="store_true",
                   help="write ladder.md and ladder.png from the games finished so far, "
                        "without playing (a running or interrupted ladder)")
    p.add_argument("--smoke", action="store_true", help="a tiny ladder (seconds)")
    args = p.parse_args()
    cfg = SMOKE if args.smoke else LadderConfig()
    cfg.out, cfg.concurrency, cfg.game = args.out, args.concurrency, args.game
    cfg.defer = [d.strip() for d in args.defer]
    if args.games:
        cfg.games = args.games
    if args.agents:
        cfg.agents = args.agents
    if args.players:
        cfg.players = args.players
    try:
        unknown = match_specs(cfg.defer, cfg.agents + cfg.multiplayer_agents)[1]
    except ValueError as e:
        p.error(f"--defer: {e}")
    if unknown:
        p.error(f"--defer: {', '.join(repr(d) for d in unknown)} is not one of the ladder's "
                f"agents {cfg.agents}")
    try:
        if args.report:
            report(cfg)
        else:
            run(cfg)
    except RunConfigError as e:
        raise SystemExit(f"ladder: {e}") from None
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (the tournament turns it into one)
        print("\nladder: interrupted (run the same command again to resume)", file=sys.stderr)
        raise SystemExit(130) from None
    print((Path(cfg.out) / "ladder.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
