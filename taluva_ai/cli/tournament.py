"""``taluva tournament``: its settings (defaults, a tournament file, the flags), the run or its
resume (:mod:`taluva_ai.tournament`); the table is printed as
:func:`taluva_ai.reports.format_table` writes it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from taluva_ai.cli.core import (
    _AGENTS_HELP,
    _RULE_DEFAULTS,
    _add_command,
    _AgentsHelpParser,
    _ArgError,
    _fix_hint,
    _make_game,
    _os_reason,
    _ray_option,
    _refused,
    _rule_options,
    _rules_from_args,
    _RunError,
    _seed,
)
from taluva_ai.errors import BackendError, IllegalActionError, RunConfigError

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
        with _refused(f"--config: {args.config}: ", OSError), _refused("--config: ", ValueError):
            from_file = read_tournament_file(args.config)
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
    from taluva_ai.reports import format_table
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


def register(sub: argparse._SubParsersAction[_AgentsHelpParser]) -> None:
    """Add ``taluva tournament``, its options and its handler to the subcommands ``sub``."""
    tour = _add_command(
        sub, "tournament",
        help="round robin or gauntlet between agents, with Elo, SPRT, "
        "openskill and reports",
        description="Tournament between agents on shared deals (duplicate play): every pair "
        "of agents (or group of 3 or 4 with --players-per-game) plays --games games, each "
        "deal once per seat rotation (so --games is rounded up to a multiple of the players "
        "per game); with --gauntlet only the candidate's groups play. Writes OUT/config.json, "
        "every record to OUT/games/<id>.jsonl, one line per finished game to "
        "OUT/results.jsonl, the table to OUT/results.json, OUT/summary.md and the plots "
        "OUT/ratings.png and OUT/scores.png, then prints the table: head to head (with "
        "pentanomial counts of the paired games for 2 players), Elo with 95% intervals and "
        "LOS from a maximum-likelihood fit with a first-seat advantage term (the first agent "
        "anchored at 0), openskill ratings and win rates per seat for 3-4 players. An agent "
        "whose spec has time=S must move within S seconds plus --time-margin; an agent that "
        "exceeds it, raises or plays an illegal move forfeits the game, and the tournament "
        "goes on. With --sprt (two agents) the tournament stops as soon as the test decides. "
        "Interrupted? Run the same command again, or --resume OUT: finished games are kept. "
        "A different command with the same OUT is refused. See docs/tournaments.md.",
        examples=[
            "taluva tournament --agents random greedy --games 20 --out runs/demo",
            "taluva tournament --agents random greedy greedy:epsilon=0.2 --games 200 "
            "--concurrency 2 --seed 1 --players-per-game 3 --out runs/t3",
            "taluva tournament --gauntlet mcts:sims=400,rollout=greedy --agents random greedy "
            "--games 100 --out runs/g1",
            "taluva tournament --agents greedy mcts:sims=100,rollout=greedy --games 2000 --sprt "
            "elo0=0 elo1=50 alpha=0.05 beta=0.05 --out runs/s1",
            "taluva tournament --config tournament.toml",
            "taluva tournament --resume runs/t3 --concurrency 2",
            "taluva tournament --agents random greedy --games 2000 --out runs/t4 --ray auto",
        ],
        handler=_cmd_tournament, agents_help=True)
    tour.add_argument("--agents", nargs="+", default=None, metavar="AGENT",
                      help=_AGENTS_HELP + "; distinct; the first is the Elo anchor (and the "
                      "SPRT baseline)")
    tour.add_argument("--gauntlet", default=None, metavar="AGENT",
                      help="gauntlet: AGENT (the candidate) plays every group of the --agents, "
                      "which do not play each other")
    tour.add_argument("--config", default=None, metavar="FILE",
                      help="read the settings from a TOML file (docs/tournaments.md); flags on "
                      "the command line override it")
    tour.add_argument("--games", type=int, default=None,
                      help="games per pair or group (default 20; with --sprt the maximum)")
    tour.add_argument("--players-per-game", type=int, choices=(2, 3, 4), default=None,
                      help="players in each game (default 2)")
    _ray_option(tour, "play the games as Ray tasks",
                after="; --concurrency then defaults to the cluster's CPUs")
    tour.add_argument("--concurrency", type=int, default=None,
                      help="worker processes (default 1); results do not depend on it")
    tour.add_argument("--seed", type=_seed, default=None, help="tournament seed (default 0)")
    tour.add_argument("--out", default=None, metavar="DIR", help="run directory")
    tour.add_argument("--resume", default=None, metavar="DIR",
                      help="finish the interrupted tournament of DIR with the settings of "
                      "DIR/config.json")
    tour.add_argument("--sprt", nargs="+", default=None, metavar="KEY=VALUE",
                      help="sequential probability ratio test of the second agent (or the "
                      "gauntlet's) against the first: elo0=E0 elo1=E1 [alpha=0.05] "
                      "[beta=0.05] [model=normalized|logistic] (fishtest's formulas)")
    tour.add_argument("--deals", default=None, metavar="FILE",
                      help="play the deals of FILE (JSON Lines, one deal a line: its seed and "
                      "tile order, like cutechess's openings; docs/tournaments.md) instead of "
                      "those of --seed, so two runs play the same deals; every run writes its "
                      "deals to OUT/deals.jsonl, such a file")
    tour.add_argument("--time-margin", type=float, default=None, metavar="S",
                      help="seconds a move may exceed its agent's time= budget before it "
                      "forfeits (default 0.5)")
    tour.add_argument("--bootstrap", type=int, default=None,
                      help="also give percentile bootstrap intervals over deals (N resamples; "
                      "default 0: none)")
    tour.add_argument("--defer", nargs="+", default=None, metavar="AGENT",
                      help="play the games of these agents (some of --agents, named by name "
                      "and parameters in any order) after all the others, e.g. the slowest "
                      "search budget, so an interrupted run has the cheap pairs complete; also "
                      "with --resume; play order only: the records and the table do not "
                      "depend on it")
    tour.add_argument("--no-plots", action="store_true",
                      help="no ratings.png and scores.png")
    tour.add_argument("--no-progress", action="store_true", help="no progress bar")
    _rule_options(tour)
