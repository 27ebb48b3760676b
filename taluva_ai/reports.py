"""Reports of a tournament's results table: the table as text, a Markdown summary and two
plots.

:func:`format_table` gives the table as text, as ``taluva tournament`` prints it and the web
board's Runs view shows it.

:func:`write_reports` writes into the run directory ``summary.md`` (:func:`markdown_summary`),
``ratings.png`` (Elo with 95% intervals, :func:`plot_ratings`) and ``scores.png`` (the
head-to-head score matrix as a heat map, :func:`plot_scores`). They are made from
``results.json`` (and ``timing.json`` for the time table), so ``write_reports(run_dir,
table, timing)`` remakes them.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

from taluva_ai.sprt import PENTANOMIAL_LABELS, SWEEP_NOTE, sweep

SUMMARY_FILE, RATINGS_PLOT, SCORES_PLOT = "summary.md", "ratings.png", "scores.png"


def write_reports(out_dir: str | Path, table: dict[str, Any],
                  timing: dict[str, Any] | None = None, plots: bool = True) -> list[Path]:
    """Write ``summary.md`` and, with ``plots``, ``ratings.png`` and ``scores.png`` into
    ``out_dir`` (each through a temporary file renamed onto it); returns the paths written.
    ``timing`` is the tournament's ``timing.json`` (time used per agent), for the summary.

    Raises:
        OSError: a file cannot be written.
        ImportError: ``plots`` without matplotlib.
    """
    out = Path(out_dir)
    written = []
    path = out / SUMMARY_FILE
    _atomic_text(path, markdown_summary(table, timing=timing, plots=plots))
    written.append(path)
    if plots:
        for name, draw in ((RATINGS_PLOT, plot_ratings), (SCORES_PLOT, plot_scores)):
            path = out / name
            tmp = path.with_name(f".{path.name}.part.png")
            try:
                draw(table, tmp)
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
            written.append(path)
    return written


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.part")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _f(x: float | None, fmt: str = ".1f") -> str:
    return "–" if x is None else format(x, fmt)


def _ci(pair: list[float | None], fmt: str = ".1f") -> str:
    lo, hi = pair
    return "–" if lo is None or hi is None else f"[{lo:{fmt}}, {hi:{fmt}}]"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _code(s: str) -> str:
    return f"`{s}`"


def ranked_agents(table: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The agents, best Elo first (ties in tournament order)."""
    order = {a: i for i, a in enumerate(table["agents"])}
    return sorted(table["agents"].items(), key=lambda kv: (-(kv[1]["elo"] or 0.0),
                                                          order[kv[0]]))


def format_table(table: dict[str, Any]) -> str:
    """The tournament table as text: head-to-head pairs (with pentanomial counts for 2
    players), groups (3-4 players), agent ratings sorted by Elo, first-seat advantage, seat
    win rates, forfeits and the SPRT."""
    lines = [f"{table['games']} games; endings: "
             + ", ".join(f"{k} {v}" for k, v in table["end_reasons"].items())]
    lines.append("")
    many = table.get("config", {}).get("players_per_game", len(table["seats"])) > 2
    lines.append("head to head (wins-draws-losses, score of the first" +
                 ("; 3-4 players: by place, a draw is the same place" if many else "") + "):")
    for p in table["pairs"]:
        a, b = p["agents"]
        sc = p["score"][a]
        trunc = f", {p['truncated']} truncated" if p["truncated"] else ""
        lines.append(f"  {a} vs {b}: {p['wins'][a]}-{p['draws']}-{p['wins'][b]}"
                     f"  score {'-' if sc is None else f'{sc:.3f}'}  ({p['games']} games"
                     f"{trunc})")
        if "pentanomial" in p and p["paired"]["pairs"]:
            q = p["paired"]
            lines.append(f"    pairs ({' '.join(PENTANOMIAL_LABELS)}, the first's): "
                         f"{' '.join(str(c) for c in p['pentanomial'])}; paired Elo "
                         f"{_num(q['elo'])} {_interval(q['elo_ci95'])}, nElo {_num(q['nelo'])}"
                         f", LOS {_num(q['los'], '.3f')}")
            if sweep(p["pentanomial"]):
                lines.append(f"    (a sweep: {SWEEP_NOTE})")
    for g in table.get("groups", []):
        wins = ", ".join(f"{k} {v}" for k, v in g["wins"].items())
        lines.append(f"  group {' / '.join(g['agents'])}: {g['games']} games; wins: {wins}; "
                     f"shared wins {g['draws']}")
    lines.append("")
    has_os = any("openskill" in v for v in table["agents"].values())
    w = max([24, *(len(a) for a in table["agents"])])
    head = (f"  {'agent':<{w}} {'elo':>8}  {'95% interval':<18} {'los next':>8} {'score':>6} "
            f"{'games':>6}")
    if has_os:
        head += f"  {'mu':>7} {'sigma':>6} {'ordinal':>8}"
    lines.append(f"ratings (Elo anchored: {table['elo_anchor']} = 0):")
    lines.append(head)
    order = ranked_agents(table)
    for r, (name, a) in enumerate(order):
        nxt = order[r + 1][0] if r + 1 < len(order) else None
        los = table.get("los", {}).get(name, {}).get(nxt) if nxt else None
        score = "-" if a["score"] is None else f"{a['score']:.3f}"
        row = (f"  {name:<{w}} {a['elo']:>8.1f}  {_interval(a['elo_ci95']):<18} "
               f"{_num(los, '.3f'):>8} {score:>6} {a['games']:>6}")
        if has_os:
            o = a["openskill"]
            row += f"  {o['mu']:>7.2f} {o['sigma']:>6.2f} {o['ordinal']:>8.2f}"
        lines.append(row)
    fs = table.get("first_seat")
    if fs:
        lines.append(f"first-seat advantage: {_num(fs['elo'])} Elo {_interval(fs['elo_ci95'])}"
                     "; win rate by seat: " + ", ".join(
                         f"{s['seat']}: {_num(s['win_rate'], '.3f')}" for s in table["seats"]))
    if table.get("forfeits"):
        lines.append("")
        lines.append(f"forfeits: {len(table['forfeits'])}")
        for f in table["forfeits"]:
            lines.append(f"  {f['id']} {f['agent']} (seat {f['seat']}), {f['reason']} at ply "
                         f"{f['ply']}: {f['detail']}")
    sp = table.get("sprt")
    if sp:
        verdict = {"H1": "H1 accepted", "H0": "H0 accepted", None: "not decided"}
        lines.append("")
        lines.append(f"SPRT {sp['candidate']} vs {sp['baseline']}: elo0={sp['elo0']:g} "
                     f"elo1={sp['elo1']:g} ({sp['model']}) alpha={sp['alpha']:g} "
                     f"beta={sp['beta']:g}")
        lines.append(f"  LLR {sp['llr']:.2f} [{sp['lower_bound']:.2f}, {sp['upper_bound']:.2f}]"
                     f": {verdict[sp['decision']]} after {sp['games']} games (max "
                     f"{sp['max_games']}); pairs ({' '.join(PENTANOMIAL_LABELS)}, the "
                     f"candidate's): "
                     f"{' '.join(str(c) for c in sp['pentanomial'])}")
    return "\n".join(lines)


def _num(x: float | None, fmt: str = ".1f") -> str:
    return "-" if x is None else format(x, fmt)


def _interval(pair: list[float | None]) -> str:
    lo, hi = pair
    return "-" if lo is None or hi is None else f"[{lo:.1f}, {hi:.1f}]"


def markdown_summary(table: dict[str, Any], timing: dict[str, Any] | None = None,
                     plots: bool = True) -> str:
    """The tournament as Markdown: settings, ratings (Elo, 95% interval, LOS against the next
    agent, score, openskill for 3–4 players), first-seat advantage, SPRT, head to head with
    pentanomial counts, win rates per seat, forfeits and time used."""
    cfg = table.get("config", {})
    k = cfg.get("players_per_game", len(table["seats"]))
    kind = (f"gauntlet of {_code(cfg['gauntlet'])}" if cfg.get("gauntlet") else "round robin")
    lines = [f"# Tournament: {kind}, {k} players per game", ""]
    if cfg:
        lines += [
            f"- game: {cfg.get('game')}; rules: "
            + ", ".join(f"{key}={v}" for key, v in cfg.get("rules", {}).items()),
            f"- agents: {', '.join(_code(a) for a in cfg.get('agents', []))}",
            f"- games per group: {cfg.get('games_per_group')} (each deal once per seat "
            f"rotation); seed {cfg.get('seed')}; time margin {cfg.get('time_margin_s')} s",
        ]
    lines.append(f"- games counted: {table['games']}; endings: "
                 + ", ".join(f"{r} {n}" for r, n in table["end_reasons"].items()))
    lines.append("")

    ranked = ranked_agents(table)
    has_os = any("openskill" in a for _, a in ranked)
    has_boot = any("elo_ci95_bootstrap" in a for _, a in ranked)
    head = "| rank | agent | Elo | 95% interval | LOS next | score | W-D-L | games |"
    rule = "|---|---|---|---|---|---|---|---|"
    if has_boot:
        head += " bootstrap 95% |"
        rule += "---|"
    if has_os:
        head += " mu | sigma | ordinal |"
        rule += "---|---|---|"
    lines += [f"## Ratings (Elo; {_code(table['elo_anchor'])} = 0)", "", head, rule]
    for r, (name, a) in enumerate(ranked):
        nxt = ranked[r + 1][0] if r + 1 < len(ranked) else None
        los = table.get("los", {}).get(name, {}).get(nxt) if nxt else None
        wins_only = a["wins"] - a.get("draws", 0)
        row = (f"| {r + 1} | {_code(name)} | {_f(a['elo'])} | {_ci(a['elo_ci95'])} | "
               f"{_pct(los)} | {_f(a['score'], '.3f')} | {wins_only}-{a.get('draws', 0)}-"
               f"{a.get('losses', 0)} | {a['games']} |")
        if has_boot:
            row += f" {_ci(a.get('elo_ci95_bootstrap', [None, None]))} |"
        if has_os:
            o = a["openskill"]
            row += f" {o['mu']:.2f} | {o['sigma']:.2f} | {o['ordinal']:.2f} |"
        lines.append(row)
    fs = table.get("first_seat")
    lines.append("")
    if fs:
        lines.append(f"First-seat advantage: {_f(fs['elo'])} Elo, 95% interval "
                     f"{_ci(fs['elo_ci95'])}.")
    lines += [f"Method: {table['elo_method']}. W-D-L: wins, shared wins, losses of decided "
              "games. LOS next: likelihood that the agent is stronger than the one below it.",
              ""]
    if plots:
        lines += [f"![ratings]({RATINGS_PLOT})", ""]

    sp = table.get("sprt")
    if sp:
        verdict = {"H1": f"H1 accepted ({_code(sp['candidate'])} is elo1 rather than elo0 "
                         "stronger)", "H0": f"H0 accepted ({_code(sp['candidate'])} is elo0 "
                         "rather than elo1 stronger)", None: "not decided"}[sp["decision"]]
        p = sp["paired"]
        lines += [
            "## SPRT", "",
            f"- candidate {_code(sp['candidate'])} against baseline {_code(sp['baseline'])}: "
            f"H0 elo0={sp['elo0']:g}, H1 elo1={sp['elo1']:g} ({sp['model']} Elo), "
            f"alpha={sp['alpha']:g}, beta={sp['beta']:g}",
            f"- LLR {sp['llr']:.2f} in [{sp['lower_bound']:.2f}, {sp['upper_bound']:.2f}]: "
            f"**{verdict}** after {sp['games']} games (at most {sp['max_games']})",
            f"- pentanomial {_penta(sp['pentanomial'])}; Elo {_f(p['elo'])} "
            f"{_ci(p['elo_ci95'])}, nElo {_f(p['nelo'])} {_ci(p['nelo_ci95'])}, LOS "
            f"{_pct(p['los'])}" + (f" (a sweep: {SWEEP_NOTE})" if sweep(sp["pentanomial"])
                                   else ""),
            "",
        ]

    lines += ["## Head to head", ""]
    two = any("pentanomial" in p for p in table["pairs"])
    head = "| A | B | games | A wins | draws | B wins | score A |" if k == 2 else \
        "| A | B | games | A placed higher | same place | B placed higher | score A |"
    rule = "|---|---|---|---|---|---|---|"
    if two:
        head += f" A's pairs {' / '.join(PENTANOMIAL_LABELS)} | Elo A (paired) | LOS A |"
        rule += "---|---|---|"
    lines += [head, rule]
    for p in table["pairs"]:
        a, b = p["agents"]
        row = (f"| {_code(a)} | {_code(b)} | {p['games']} | {p['wins'][a]} | {p['draws']} | "
               f"{p['wins'][b]} | {_f(p['score'][a], '.3f')} |")
        if two:
            q = p["paired"]
            swept = " (sweep)" if sweep(p["pentanomial"]) else ""
            row += f" {_penta(p['pentanomial'], ' / ')} | {_f(q['elo'])} {_ci(q['elo_ci95'])}" \
                f"{swept} | {_pct(q['los'])} |"
        lines.append(row)
    lines.append("")
    if two and any(sweep(p["pentanomial"]) for p in table["pairs"] if "pentanomial" in p):
        lines += [f"(sweep): {SWEEP_NOTE}.", ""]
    if plots:
        lines += [f"![score matrix]({SCORES_PLOT})", ""]

    lines += ["## Seats", "", "| seat | games | wins | win rate |", "|---|---|---|---|"]
    for s in table["seats"]:
        lines.append(f"| {s['seat']} | {s['games']} | {s['wins']} | {_pct(s['win_rate'])} |")
    lines += ["", "Win rate by agent and seat:", "",
              "| agent | " + " | ".join(f"seat {s['seat']}" for s in table["seats"]) + " |",
              "|---|" + "---|" * len(table["seats"])]
    for name, a in ranked:
        lines.append(f"| {_code(name)} | " + " | ".join(
            f"{_pct(x['win_rate'])} ({x['wins']}/{x['games']})" for x in a["seats"]) + " |")
    lines.append("")

    if table.get("forfeits"):
        lines += ["## Forfeits", "", "| game | agent | seat | reason | ply | detail |",
                  "|---|---|---|---|---|---|"]
        for f in table["forfeits"]:
            detail = str(f["detail"]).replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {f['id']} | {_code(f['agent'])} | {f['seat']} | {f['reason']} | "
                         f"{f['ply']} | {detail} |")
        lines.append("")

    if timing:
        lines += ["## Time used (wall clock)", "",
                  "| agent | budget s | limit s | moves | total s | mean ms/move | "
                  "max ms/move |", "|---|---|---|---|---|---|---|"]
        for name, t in timing["agents"].items():
            mean = None if t["mean_move_s"] is None else 1000 * t["mean_move_s"]
            mx = None if t["max_move_s"] is None else 1000 * t["max_move_s"]
            lines.append(f"| {_code(name)} | {_f(t['budget_s'], 'g')} | "
                         f"{_f(t['limit_s'], 'g')} | {t['moves']} | {t['time_s']:.2f} | "
                         f"{_f(mean)} | {_f(mx)} |")
        lines.append("")
    return "\n".join(lines)


def _penta(counts: list[int], sep: str = "-") -> str:
    return sep.join(str(c) for c in counts)


def plot_ratings(table: dict[str, Any], path: str | Path) -> None:
    """Elo of every agent with its 95% interval (error bars), best at the top."""
    plt = _pyplot()
    rows = ranked_agents(table)[::-1]
    names = [r[0] for r in rows]
    elo = [r[1]["elo"] or 0.0 for r in rows]
    lo = [e - (r[1]["elo_ci95"][0] if r[1]["elo_ci95"][0] is not None else e)
          for e, r in zip(elo, rows, strict=True)]
    hi = [(r[1]["elo_ci95"][1] if r[1]["elo_ci95"][1] is not None else e) - e
          for e, r in zip(elo, rows, strict=True)]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.45 * len(names)))
    ax.errorbar(elo, range(len(names)), xerr=[lo, hi], fmt="o", capsize=4)
    ax.set_yticks(range(len(names)), [tick_label(n) for n in names], fontsize=8)
    ax.axvline(0.0, color="0.7", lw=0.8)
    ax.set_xlabel(f"Elo ({table['elo_anchor']} = 0), 95% interval")
    cfg = table.get("config", {})
    ax.set_title(f"{table['games']} games, {cfg.get('players_per_game', '?')} players per game")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)


def plot_scores(table: dict[str, Any], path: str | Path) -> None:
    """The score matrix as a heat map: row agent's score against the column agent (0 to 1;
    blank where they never met)."""
    import numpy as np

    plt = _pyplot()
    sm = table["score_matrix"]
    names = sm["agents"]
    m = np.array([[np.nan if v is None else v for v in row] for row in sm["score"]],
                 dtype=np.float64)
    size = 2.5 + 0.7 * len(names)
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    im = ax.imshow(np.ma.masked_invalid(m), cmap="RdYlGn", vmin=0.0, vmax=1.0)
    labels = [tick_label(n) for n in names]
    ax.set_xticks(range(len(names)), labels, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(names)), labels, fontsize=8)
    for i in range(len(names)):
        for j in range(len(names)):
            if not math.isnan(m[i, j]):
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=8)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent (row's score)")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="score")
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)


def anchor_curves(metrics: list[dict[str, Any]]) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """The anchor results of a training run by opponent: ``{opponent: [(iteration, result)]}``
    in iteration order, from the lines of its ``metrics.jsonl`` (docs/alphazero.md; a result
    holds ``games``, ``wins``, ``draws``, ``losses``, ``win_rate``, ``elo`` and
    ``elo_ci95``, the Elo of the run's best network with the anchor at 0)."""
    curves: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for m in metrics:
        for opp, a in (m.get("anchors") or {}).items():
            curves.setdefault(opp, []).append((int(m["iteration"]), a))
    return curves


def plot_anchor_curves(metrics: list[dict[str, Any]], axes: Any) -> None:
    """Draws a training run's anchor results by iteration on two matplotlib axes: the Elo of
    its best network against each anchor with 95% intervals (error bars; results with no Elo,
    all wins or all losses, left out), and the win rates."""
    from matplotlib.ticker import MaxNLocator

    for opp, pts in sorted(anchor_curves(metrics).items()):
        rated = [(i, a) for i, a in pts if a["elo"] is not None]
        elo = [a["elo"] for _, a in rated]
        lo = [a["elo"] - a["elo_ci95"][0] if a["elo_ci95"][0] is not None else 0.0
              for _, a in rated]
        hi = [a["elo_ci95"][1] - a["elo"] if a["elo_ci95"][1] is not None else 0.0
              for _, a in rated]
        axes[0].errorbar([i for i, _ in rated], elo, yerr=[lo, hi], fmt="o-", capsize=3,
                         label=f"vs {opp}")
        axes[1].plot([i for i, _ in pts], [a["win_rate"] for _, a in pts], "o-",
                     label=f"vs {opp}")
    axes[0].axhline(0, color="grey", lw=0.5)
    axes[0].set_ylabel("Elo of the best network (anchor = 0)")
    axes[1].set_ylabel("win rate")
    axes[1].set_ylim(0, 1.05)
    for ax in axes:
        ax.legend(fontsize=8)
        ax.set_xlabel("iteration")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def save_anchor_curves(metrics: list[dict[str, Any]], path: str | Path,
                       title: str | None = None) -> None:
    """:func:`plot_anchor_curves` into a PNG file."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    plot_anchor_curves(metrics, axes)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)


def tick_label(spec: str, width: int = 36) -> str:
    """An agent spec as a plot's tick label: broken into lines of at most ``width`` characters
    after its commas, and after the slashes of a long path (a piece longer than that keeps its
    own line), so that a long spec such as ``az:path=runs/x/checkpoints/iter_0020.pt,...``
    leaves room for the axes."""
    lines = [""]
    for piece in re.split(r"(?<=,)", spec):
        pieces = [piece] if len(piece) <= width else re.split(r"(?<=/)", piece)
        for part in pieces:
            if lines[-1] and len(lines[-1]) + len(part) > width:
                lines.append(part)
            else:
                lines[-1] += part
    return "\n".join(lines)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
