"""``taluva tournament``: its settings (defaults, a tournament file, the flags), the run or its
resume (:mod:`taluva_ai.tournament`), and its table as text."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from taluva_ai.cli.core import (
    _RULE_DEFAULTS,
    _ArgError,
    _fix_hint,
    _make_game,
    _os_reason,
    _rules_from_args,
    _RunError,
)
from taluva_ai.errors import BackendError, IllegalActionError, RunConfigError


def format_table(table: dict[str, Any]) -> str:
    """The tournament table as text: head-to-head pairs (with pentanomial counts for 2
    players), groups (3-4 players), agent ratings sorted by Elo, first-seat advantage, seat
    win rates, forfeits and the SPRT."""
    from taluva_ai.sprt import SWEEP_NOTE, sweep

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
            lines.append(f"    pairs (LL LD DD+WL DW WW, the first's): "
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
    from taluva_ai.reports import ranked_agents

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
                     f"{sp['max_games']}); pairs (LL LD DD+WL DW WW, the candidate's): "
                     f"{' '.join(str(c) for c in sp['pentanomial'])}")
    return "\n".join(lines)


def _num(x: float | None, fmt: str = ".1f") -> str:
    return "-" if x is None else format(x, fmt)


def _interval(pair: list[float | None]) -> str:
    lo, hi = pair
    return "-" if lo is None or hi is None else f"[{lo:.1f}, {hi:.1f}]"


#: Defaults of the tournament settings that a command line or a tournament file may set.
_TOURNAMENT_DEFAULTS: dict[str, Any] = {
    "games": 20, "players_per_game": 2, "concurrency": None, "seed": 0, "bootstrap": 0,
    "time_margin": None,
}


def _tournament_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The tournament's settings: built-in defaults, then the --config file, then the flags
    given on the command line (each overriding the one before)."""
    from taluva_ai.tournament import DEFAULT_TIME_MARGIN, read_tournament_file

    settings = dict(_TOURNAMENT_DEFAULTS, time_margin=DEFAULT_TIME_MARGIN, rules={})
    if args.config is not None:
        try:
            from_file = read_tournament_file(args.config)
        except ValueError as e:
            raise _ArgError(f"--config: {e}") from None
        except OSError as e:
            raise _ArgError(f"--config: {args.config}: {e.strerror or e}") from None
        settings.update(from_file)
        if "num_players" in settings["rules"]:  # [rules] num_players = k: the seats of a game
            rk = settings["rules"].pop("num_players")
            k = args.players_per_game if args.players_per_game is not None \
                else from_file.get("players_per_game", rk)
            if rk != k:
                raise _ArgError(f"--config: {args.config}: [rules] num_players = {rk!r} differs "
                                f"from players_per_game = {k!r}; give the number of players "
                                "once")
            settings["players_per_game"] = rk
    for key in ("agents", "gauntlet", "games", "players_per_game", "concurrency", "seed",
                "out", "bootstrap", "time_margin", "deals"):
        value = getattr(args, key)
        if value is not None:
            settings[key] = value
    if args.sprt is not None:
        settings["sprt"] = args.sprt
    k = settings["players_per_game"]
    if isinstance(k, bool) or k not in (2, 3, 4):
        raise _ArgError(f"players_per_game must be 2, 3 or 4, got {k!r}")
    defaults = _rules_from_args(argparse.Namespace(**{**vars(_RULE_DEFAULTS),
                                                      "game": args.game}), k)
    given = {key: v for key, v in _rules_from_args(args, k).items() if defaults.get(key) != v}
    settings["rules"] = {**settings["rules"], **given, "num_players": k}
    return settings


def _cmd_tournament(args: argparse.Namespace) -> int:
    from taluva_ai.parallel import make_backend
    from taluva_ai.sprt import parse_sprt
    from taluva_ai.tournament import MAX_GAMES, resume_tournament, run_tournament

    if args.sprt is not None:
        try:
            args.sprt = parse_sprt(args.sprt).to_json()
        except ValueError as e:
            raise _ArgError(f"--{e}") from None
    if args.resume is not None:
        given = [f"--{a.replace('_', '-')}" for a in ("agents", "gauntlet", "config", "games",
                                                      "players_per_game", "seed", "out",
                                                      "sprt", "time_margin", "deals")
                 if getattr(args, a) is not None]
        if args.game != "taluva":
            given.append("--game")
        if given or _rules_from_args(args, 2) != _rules_from_args(_RULE_DEFAULTS, 2):
            raise _ArgError(f"--resume DIR takes the settings from DIR/config.json; with it "
                            f"give only --concurrency, --ray, --bootstrap, --defer, --no-plots, "
                            f"--no-progress (got {', '.join(given) or 'rule options'})")
        settings = {"out": args.resume, "concurrency": args.concurrency,
                    "bootstrap": args.bootstrap or 0}
    else:
        settings = _tournament_settings(args)
        if not settings.get("agents") and not settings.get("gauntlet"):
            raise _ArgError("give the agents: --agents A B ... (or --gauntlet A --agents ..., "
                            "or a --config file, or --resume DIR)")
        if settings.get("out") is None:
            raise _ArgError("give the run directory: --out DIR (or out = ... in --config)")
    out = str(settings["out"])
    if args.resume is None and not 1 <= settings["games"] <= MAX_GAMES:
        raise _ArgError(f"--games must be in 1..{MAX_GAMES} (games per group), got "
                        f"{settings['games']}")
    if settings["concurrency"] is not None and settings["concurrency"] < 1:
        raise _ArgError(f"--concurrency must be >= 1, got {settings['concurrency']}")
    if settings["bootstrap"] < 0:
        raise _ArgError(f"--bootstrap must be >= 0 (0: no bootstrap intervals), got "
                        f"{settings['bootstrap']}")
    if not out.strip():
        raise _ArgError(f"--{'resume' if args.resume is not None else 'out'}: empty directory "
                        "name")
    try:
        backend = make_backend(args.ray)
        backend.connect()
    except BackendError as e:
        raise _ArgError(str(e)) from None
    try:
        if settings["concurrency"] is None:  # one game at a time here; with Ray, one per CPU
            settings["concurrency"] = 1 if args.ray is None else backend.cpus()
        if args.resume is not None:
            table = resume_tournament(out, concurrency=settings["concurrency"],
                                      bootstrap=settings["bootstrap"],
                                      progress=not args.no_progress, plots=not args.no_plots,
                                      backend=backend, defer=args.defer or ())
        else:
            _make_game(settings["rules"], args.game)  # validates the game and its options
            rules = {key: v for key, v in settings["rules"].items() if key != "num_players"}
            table = run_tournament(
                settings.get("agents") or [], settings["games"], out,
                players_per_game=settings["players_per_game"],
                concurrency=settings["concurrency"], seed=settings["seed"], rules=rules,
                bootstrap=settings["bootstrap"], progress=not args.no_progress,
                gauntlet=settings.get("gauntlet"), sprt=settings.get("sprt"),
                time_margin=settings["time_margin"], plots=not args.no_plots,
                game_name=args.game, backend=backend,
                defer=args.defer or settings.get("defer") or (),
                deals=settings.get("deals"),
            )
    except (RunConfigError, BackendError) as e:
        raise _ArgError(str(e)) from None
    except IllegalActionError as e:  # a chance outcome the game refused: a broken game
        raise _RunError(str(e)) from None
    except (ValueError, ImportError, AttributeError) as e:
        msg = str(e)
        if msg.startswith("defer:") and not args.defer and settings.get("defer"):
            msg = f"--config: {args.config}: {msg}"  # the defer of the tournament file
        raise _ArgError(msg) from None
    except BrokenPipeError:
        raise
    except OSError as e:
        print(f"{e.filename or out}: {_os_reason(e, e.filename or out)}; "
              f"{_fix_hint(e)}, then run the same command again to resume (finished games "
              "are kept)", file=sys.stderr)
        return 1
    finally:
        backend.close()
    print(format_table(table))
    d = Path(out)
    print(f"\nrecords: {d / 'games'}  table: {d / 'results.json'}  summary: "
          f"{d / 'summary.md'}" + ("" if args.no_plots else
                                   f"  plots: {d / 'ratings.png'}, {d / 'scores.png'}"))
    pgn = f"  PGN: {d / 'games.pgn'}" if (d / "games.pgn").is_file() else ""
    print(f"deals: {d / 'deals.jsonl'}{pgn}")
    return 0
