"""The ``taluva`` command: play, replay, tournament, bench (``taluva <command> --help``).

Exit codes: 0 success; 1 a record that fails to replay, a file that cannot be read or written,
or an agent that fails during a game; 2 bad arguments (unknown agent, invalid rule option, a
path that cannot be a file, ...), argparse style; 130 interrupted. Every error is one line on
stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from taluva_ai.errors import IllegalActionError, RecordError, RunConfigError
from taluva_ai.protocol import CHANCE, GameState
from taluva_ai.records import MoveEvent

_FORMATTER = argparse.RawDescriptionHelpFormatter


class _ArgError(Exception):
    """A bad argument found after parsing; reported like an argparse error (exit 2)."""


class _RunError(Exception):
    """A failure while running (e.g. an agent's illegal move): ``taluva <command>: error:
    ...``, exit 1."""


def _os_reason(e: OSError, path: str | Path | None = None) -> str:
    """``strerror`` of an OSError, with the file it names when that is not ``path`` itself (a
    parent folder, say); temporary ``.part`` files are not named."""
    reason = e.strerror or str(e)
    name = e.filename
    if name is not None and str(name) != str(path) and not str(name).endswith(".part"):
        reason += f": {name}"
    return reason


def _check_output_path(option: str, value: str) -> Path:
    """Refuse, before any work, an output file path that cannot be written: empty, a
    directory, a parent that is a file or not writable (exit 2)."""
    if not value.strip():
        raise _ArgError(f"{option}: empty file name")
    path = Path(value)
    if path.is_dir():
        raise _ArgError(f"{option}: {value} is a directory, not a file")
    if path.exists() and not os.access(path, os.W_OK):
        raise _ArgError(f"{option}: {value} is not writable (permission denied)")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise _ArgError(f"{option}: {parent} is not a directory")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise _ArgError(f"{option}: cannot write in {parent} (permission denied)")
            break
    return path


def _rule_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("rule options (docs/rules.md; defaults are the standard rules)")
    g.add_argument("--tiles-per-player", type=int, default=None, metavar="K",
                   help="play K tiles per player (12 is the BGA practice); default: all 48")
    g.add_argument("--ranked", action="store_true",
                   help="ranked play: play on after an early victory or an elimination")
    g.add_argument("--no-new-hut-isolated", action="store_true",
                   help="a new hut may touch an own settlement (Spanish/TaluvaUJF reading)")
    g.add_argument("--no-lake-building", action="store_true",
                   help="variant: no building of any kind on lake hexes")
    g.add_argument("--tiebreak-towers-first", action="store_true",
                   help="variant: final count by towers, then temples, then huts")
    g.add_argument("--destroyed-huts-return", action="store_true",
                   help="variant: huts destroyed by an eruption return to their owner")
    g.add_argument("--early-victory-kinds", type=int, choices=(2, 3), default=2,
                   help="kinds of pieces all built for an early victory (default 2)")
    g.add_argument("--tile-preview", action="store_true",
                   help="each player holds their next tile (BGA practice)")
    g.add_argument("--board-radius", type=int, default=None, metavar="R",
                   help="engine board bound in hexes from the first volcano (default: the "
                   "engine's, which never binds in practice)")
    g.add_argument("--solo", action="store_true",
                   help="the solo variant (docs/solo.md): one player, a score to beat")
    g.add_argument("--solo-option", action="append", default=[], metavar="NAME=VALUE",
                   help="a solo option of docs/solo.md, e.g. pattern_overlap=disjoint or "
                   "volcano_in_T=false (repeatable; needs --solo)")


def _rules_from_args(args: argparse.Namespace, num_players: int) -> dict[str, Any]:
    """The RuleSet keyword options of the parsed rule flags."""
    opts: dict[str, Any] = {
        "num_players": num_players,
        "tiles_per_player": args.tiles_per_player,
        "new_hut_isolated": not args.no_new_hut_isolated,
        "ranked": args.ranked,
        "no_lake_building": args.no_lake_building,
        "tiebreak_towers_first": args.tiebreak_towers_first,
        "destroyed_huts_return": args.destroyed_huts_return,
        "early_victory_kinds": args.early_victory_kinds,
        "tile_preview": args.tile_preview,
    }
    if args.board_radius is not None:
        opts["board_radius"] = args.board_radius
    if getattr(args, "solo", False):
        opts["solo"] = True
        opts["num_players"] = 1
    for item in getattr(args, "solo_option", []):
        if not getattr(args, "solo", False):
            raise _ArgError("--solo-option needs --solo")
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise _ArgError(f"--solo-option: {item!r} is not NAME=VALUE")
        low = value.strip().lower()
        opts[name.strip()] = {"true": True, "false": False}.get(low, value.strip())
    return opts


def _make_game(opts: dict[str, Any]) -> Any:
    from taluva_ai.protocol import make_game

    try:
        return make_game("taluva", **opts)
    except (ValueError, TypeError) as e:
        raise _ArgError(str(e)) from None


def _seat_line(state: GameState, seat: int, name: str) -> str:
    """``seat 0  greedy   built 3 temples, 2 towers, 14 huts (2 destroyed), active``."""
    parts = [f"seat {seat}  {name:<12}"]
    built = getattr(state, "built", None)
    if built is not None:
        b = built(seat)
        text = "built " + ", ".join(
            _count(b[k], k[:-1]) for k in ("temples", "towers", "huts")
        )
        destroyed = getattr(state, "destroyed_huts", None)
        if destroyed is not None and destroyed(seat):
            text += f" ({destroyed(seat)} destroyed)"
        parts.append(text)
    status = getattr(state, "status", None)
    if status is not None:
        parts.append(status(seat).name.lower())
    return "  ".join(parts)


def _print_result(state: GameState, players: Sequence[str], plies: int) -> None:
    from taluva_ai.records import outcome_of

    out = outcome_of(state, plies)
    breakdown = getattr(state, "score_breakdown", None)
    if getattr(getattr(state, "game", None), "rules", None) is not None \
            and state.game.rules.solo and breakdown is not None:  # type: ignore[attr-defined]
        print(format_solo_score(state))
        print(f"result: {out.end_reason} after {out.plies} plies ({players[0]})")
        return
    for seat, name in enumerate(players):
        print(_seat_line(state, seat, name))
    if out.winners:
        who = ", ".join(f"seat {w} ({players[w]})" for w in out.winners)
    else:
        who = "none (no result)"
    print(f"result: {out.end_reason or 'over'} after {out.plies} plies; winners: {who}")
    print(f"returns: {[round(x, 4) for x in out.returns]}  places: {list(out.places)}")


def _show(players: Sequence[str]) -> Any:
    """An ``on_state`` callback printing every position and action."""

    def show(state: GameState, event: MoveEvent | None) -> None:
        if event is not None:
            who = "chance" if event.player == CHANCE else f"seat {event.player} " \
                f"({players[event.player]})"
            line = f"[{event.ply}] {who}: {event.notation}"
            if event.stats:  # an agent's own one-line summary when it gives one
                summary = event.stats.get("summary")
                line += "  " + (str(summary) if summary else json.dumps(event.stats,
                                                                        sort_keys=True))
            print(line)
        print(state)
        print()

    return show


def format_solo_score(state: Any) -> str:
    """The solo score by line of the scoring table (docs/solo.md), the total and its band."""
    from taluva_ai.games.taluva.solo import SCORE_LINE_TEXT

    b = state.score_breakdown()
    width = max(len(t) for t in SCORE_LINE_TEXT.values())
    lines = ["score (SOLO.md 5):"]
    lines += [f"  {SCORE_LINE_TEXT[k]:<{width}}  {v:+4d}" for k, v in b.items()]
    total = sum(b.values())
    lines.append(f"  {'total':<{width}}  {total:4d}  ({state.result_band()})")
    return "\n".join(lines)


# -- play -------------------------------------------------------------------------------------


def _cmd_play(args: argparse.Namespace) -> int:
    import numpy as np

    from taluva_ai.arena import make_agent, play_game

    if args.solo and len(args.players) != 1:
        raise _ArgError(f"--players: the solo variant has one player, got {len(args.players)}")
    if not args.solo and not 2 <= len(args.players) <= 4:
        raise _ArgError(f"--players: give 2 to 4 agents, got {len(args.players)}")
    if args.record is not None:
        _check_output_path("--record", args.record)
    game = _make_game(_rules_from_args(args, len(args.players)))
    agents = []
    for spec in args.players:
        try:
            agents.append(make_agent(spec))
        except (ValueError, ImportError, AttributeError) as e:
            raise _ArgError(f"--players: {e}") from None
    seed = args.seed
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    print(f"taluva: solo, seed {seed}" if args.solo else
          f"taluva: {len(agents)} players, seed {seed}")
    shown: list[GameState] = []
    show = _show(args.players) if args.show else None

    def keep(state: GameState, event: MoveEvent | None) -> None:
        if not shown:
            shown.append(state)  # play_game works on this one state object to the end
        if show is not None:
            show(state, event)

    try:
        res = play_game(game, agents, seed, record_path=args.record, on_state=keep)
    except IllegalActionError as e:
        raise _RunError(str(e)) from None
    except BrokenPipeError:
        raise
    except OSError as e:  # the record cannot be written (found before the first move)
        print(f"{args.record}: cannot write the record: {_os_reason(e, args.record)}",
              file=sys.stderr)
        return 1
    _print_result(shown[0], res.players, res.plies)
    if args.record:
        print(f"record: {args.record}")
    return 0


# -- replay -----------------------------------------------------------------------------------


def _cmd_replay(args: argparse.Namespace) -> int:
    from taluva_ai.records import read_header, replay_record

    path = Path(args.record)
    try:
        header = read_header(path)
        players = list(header.players)
        show = _show(players) if args.show else None
        plies = [0]

        def count(state: GameState, event: MoveEvent | None) -> None:
            if event is not None:
                plies[0] += 1
            if show is not None:
                show(state, event)

        state = replay_record(path, on_state=count)
    except RecordError as e:
        print(f"{args.record}: line {e.line}: field {e.field!r}: {e.reason}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        raise  # the output was closed (e.g. `| head`), not the record: main() handles it
    except OSError as e:
        print(f"{args.record}: cannot read the record: {e.strerror or e}", file=sys.stderr)
        return 1
    _print_result(state, players, plies[0])
    print(f"record OK: {args.record}")
    for fmt, out_dir in (("svg", args.svg), ("png", args.png)):
        if out_dir:
            try:
                from taluva_ai.games.taluva.draw import save_pictures
            except ImportError as e:
                raise _ArgError(f"--{fmt} needs matplotlib (pip install -e '.[envs]'): {e}") \
                    from None
            try:
                files = save_pictures(path, out_dir, fmt)
            except OSError as e:
                raise _ArgError(f"--{fmt} {out_dir}: {e.strerror or e}") from None
            print(f"pictures: {len(files)} {fmt.upper()} files in {out_dir}")
    return 0


# -- tournament -------------------------------------------------------------------------------


def format_table(table: dict[str, Any]) -> str:
    """The tournament table as text: head-to-head pairs, groups (3-4 players), agent ratings
    sorted by Elo."""
    lines = [f"{table['games']} games; endings: "
             + ", ".join(f"{k} {v}" for k, v in table["end_reasons"].items())]
    lines.append("")
    lines.append("head to head (wins-draws-losses, score of the first):")
    for p in table["pairs"]:
        a, b = p["agents"]
        sc = p["score"][a]
        trunc = f", {p['truncated']} truncated" if p["truncated"] else ""
        lines.append(f"  {a} vs {b}: {p['wins'][a]}-{p['draws']}-{p['wins'][b]}"
                     f"  score {'-' if sc is None else f'{sc:.3f}'}  ({p['games']} games"
                     f"{trunc})")
    for g in table.get("groups", []):
        wins = ", ".join(f"{k} {v}" for k, v in g["wins"].items())
        lines.append(f"  group {' / '.join(g['agents'])}: {g['games']} games; wins: {wins}; "
                     f"shared wins {g['draws']}")
    lines.append("")
    has_os = any("openskill" in v for v in table["agents"].values())
    head = f"  {'agent':<24} {'elo':>8}  {'95% interval':<18} {'score':>6} {'games':>6}"
    if has_os:
        head += f"  {'mu':>7} {'sigma':>6} {'ordinal':>8}"
    lines.append(f"ratings (Elo anchored: {table['elo_anchor']} = 0):")
    lines.append(head)
    order = sorted(table["agents"].items(), key=lambda kv: -(kv[1]["elo"] or 0.0))
    flat = False
    for name, a in order:
        lo, hi = a["elo_ci95"]
        ci = "-" if lo is None else f"[{lo:.1f}, {hi:.1f}]"
        if lo is not None and lo == hi and name != table["elo_anchor"]:
            ci += " *"
            flat = True
        score = "-" if a["score"] is None else f"{a['score']:.3f}"
        row = f"  {name:<24} {a['elo']:>8.1f}  {ci:<18} {score:>6} {a['games']:>6}"
        if has_os:
            o = a["openskill"]
            row += f"  {o['mu']:>7.2f} {o['sigma']:>6.2f} {o['ordinal']:>8.2f}"
        lines.append(row)
    if flat:
        lines.append("  * every bootstrap resample gives the same results (e.g. a perfect "
                     "score): the interval cannot show the uncertainty; the Elo gap is set by "
                     "the prior of one virtual draw per pair")
    return "\n".join(lines)


def _cmd_tournament(args: argparse.Namespace) -> int:
    from taluva_ai.arena import run_tournament

    if args.games < 1:
        raise _ArgError(f"--games must be >= 1, got {args.games}")
    if args.concurrency < 1:
        raise _ArgError(f"--concurrency must be >= 1, got {args.concurrency}")
    if args.bootstrap < 0:
        raise _ArgError(f"--bootstrap must be >= 0 (0: no intervals), got {args.bootstrap}")
    if not args.out.strip():
        raise _ArgError("--out: empty directory name")
    rules = _rules_from_args(args, args.players_per_game)
    _make_game(rules)  # validates the rule options
    try:
        table = run_tournament(
            args.agents, args.games, args.out, players_per_game=args.players_per_game,
            concurrency=args.concurrency, seed=args.seed, rules=rules,
            bootstrap=args.bootstrap, progress=not args.no_progress,
        )
    except RunConfigError as e:
        raise _ArgError(str(e)) from None
    except IllegalActionError as e:  # an agent failed during a game
        raise _RunError(str(e)) from None
    except (ValueError, ImportError, AttributeError) as e:
        raise _ArgError(str(e)) from None
    except BrokenPipeError:
        raise
    except OSError as e:
        print(f"{e.filename or args.out}: {_os_reason(e, e.filename or args.out)}",
              file=sys.stderr)
        return 1
    print(format_table(table))
    print(f"\nrecords: {Path(args.out) / 'games'}  table: {Path(args.out) / 'results.json'}")
    return 0


# -- bench ------------------------------------------------------------------------------------


def _cmd_bench(args: argparse.Namespace) -> int:
    from taluva_ai.bench import run_bench

    if args.games < 1 or args.repeats < 1 or args.mcts_sims < 1:
        raise _ArgError("--games, --repeats and --mcts-sims must be >= 1")
    if args.out is not None:
        _check_output_path("--out", args.out)
    engine = args.engine or not (args.mcts or args.env or args.solo)
    try:
        res = run_bench(games=args.games, repeats=args.repeats, engine=engine, mcts=args.mcts,
                        mcts_sims=args.mcts_sims, env=args.env, solo=args.solo)
    except ImportError as e:
        raise _ArgError(f"--env needs the envs extra (pip install -e '.[envs]'): {e}") from None
    text = json.dumps(res, indent=2)
    if args.json:
        print(text, flush=True)  # the figures first: a failing --out loses nothing
        return _write_bench(args.out, text)
    if "engine" in res:
        _print_engine_bench(res["engine"])
    if "solo" in res:
        so = res["solo"]
        print(f"solo (median of {so['repeats']} repeats, {so['games']} random games each): "
              f"{so['games_per_s']:.1f} games/s ({so['decisions_per_game']:.1f} "
              "decisions/game, dense mask at each)")
    if "env" in res:
        for b, v in res["env"]["steps_per_s"].items():
            print(f"env: batch {b}: {v:.0f} steps/s (random actions, planes and mask each step)")
    if "mcts" in res:
        mc = res["mcts"]
        print(f"mcts ({mc['spec']}, median of {mc['repeats']} searches from a 2-player "
              f"midgame): {mc['sims_per_s']:.1f} simulations/s")
    v = res["machine"]["versions"]
    print(f"machine: {res['machine']['cpu']}, {res['machine']['threads']} threads; python "
          f"{v['python']}, numpy {v['numpy']}, numba {v['numba']}")
    sys.stdout.flush()
    if args.out is not None:
        if _write_bench(args.out, text):
            return 1
        print(f"written: {args.out}")
    return 0


def _write_bench(out: str | None, text: str) -> int:
    """Write the bench JSON to ``out`` (None: nothing); 1 with a one-line error if it fails."""
    if out is None:
        return 0
    path = Path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as e:
        print(f"{out}: cannot write the figures (printed above): {_os_reason(e, out)}",
              file=sys.stderr)
        return 1
    return 0


def _print_engine_bench(e: dict[str, Any]) -> None:
    print(f"engine (median of {e['repeats']} repeats, {e['games']} random games each):")
    for n, v in e["games_per_s"].items():
        print(f"  {n} players: {v:9.1f} games/s   ({e['decisions_per_game'][n]:.1f} "
              "decisions/game, dense mask at each)")
    print(f"  tile-step legal mask:  {e['tile_mask_us']:8.2f} us  "
          f"(mean over {e['positions']['tile']} positions)")
    print(f"  build-step legal mask: {e['build_mask_us']:8.2f} us  "
          f"(mean over {e['positions']['build']} positions)")


# -- parser -----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``taluva`` argument parser (subcommands play, replay, tournament, bench)."""
    from taluva_ai import __version__

    p = argparse.ArgumentParser(
        prog="taluva",
        description="Taluva engine tools: play a game, check a game record, run a tournament "
        "with ratings, measure the engine's speed.",
        epilog="examples:\n"
        "  taluva play --players greedy random --seed 7 --record game.jsonl\n"
        "  taluva replay game.jsonl\n"
        "  taluva tournament --agents random greedy --games 20 --out runs/demo\n"
        "  taluva bench --json\n\n"
        "Run 'taluva <command> --help' for a command's options.",
        formatter_class=_FORMATTER,
    )
    p.add_argument("--version", action="version", version=f"taluva-ai {__version__}")
    sub = p.add_subparsers(dest="command", metavar="command", required=True)

    agents_help = ("agent specs: 'random', 'greedy', 'greedy:epsilon=0.1' (name:key=value,...) "
                   "or 'module:Class'")

    play = sub.add_parser(
        "play", help="play one game between agents and print the result",
        description="Play one game between 2-4 agents (seat order as given; the number of "
        "--players sets the number of players), print the result: winners, end reason, "
        "returns and the pieces each seat built. The seed fixes the tile order and the agents' "
        "random choices, so the same command plays the same game.",
        epilog="example:\n"
        "  taluva play --players greedy random --seed 7 --record game.jsonl --show\n"
        "  taluva play --players greedy greedy random --ranked --tiles-per-player 12\n"
        "  taluva play --solo --players greedy --show",
        formatter_class=_FORMATTER)
    play.add_argument("--players", nargs="+", required=True, metavar="AGENT",
                      help=agents_help + "; one per seat")
    play.add_argument("--seed", type=_seed, default=None,
                      help="game seed (default: a random one, printed)")
    play.add_argument("--record", default=None, metavar="FILE",
                      help="write the game record (JSON Lines) to FILE")
    play.add_argument("--show", action="store_true",
                      help="print every position and every action (with agent statistics)")
    _rule_options(play)
    play.set_defaults(func=_cmd_play)

    rep = sub.add_parser(
        "replay", help="replay a game record, checking every action and the result",
        description="Replay a game record (JSON Lines, as written by 'taluva play --record' "
        "or a tournament): every action is checked for legality and the seat to move, and the "
        "result line against the replayed end. Prints the result; on a bad record prints "
        "'FILE: line N: ...' on stderr and exits with status 1.",
        epilog="example:\n  taluva replay game.jsonl\n  taluva replay runs/demo/games/"
        "000-0000-0.jsonl --show",
        formatter_class=_FORMATTER)
    rep.add_argument("record", metavar="RECORD", help="the record file (.jsonl)")
    rep.add_argument("--show", action="store_true", help="print every position and action")
    rep.add_argument("--svg", metavar="DIR", default=None,
                     help="write one SVG picture per position into DIR (needs matplotlib)")
    rep.add_argument("--png", metavar="DIR", default=None,
                     help="write one PNG picture per position into DIR (needs matplotlib)")
    rep.set_defaults(func=_cmd_replay)

    tour = sub.add_parser(
        "tournament", help="round robin between agents, with Elo (and openskill) ratings",
        description="Round-robin tournament: every pair of agents (or group of 3 or 4 with "
        "--players-per-game) plays --games games on shared deals, each deal once per seat "
        "rotation (so --games is rounded up to a multiple of the players per game). Writes "
        "OUT/config.json, every record to OUT/games/<id>.jsonl and the table to "
        "OUT/results.json, then prints it: head-to-head results and per-agent Elo with a 95% "
        "bootstrap interval (the first agent anchored at 0), plus openskill ratings for 3-4 "
        "players. Interrupted? Run the same command again: finished games are kept. A "
        "different command with the same OUT is refused.",
        epilog="example:\n"
        "  taluva tournament --agents random greedy --games 20 --out runs/demo\n"
        "  taluva tournament --agents random greedy greedy:epsilon=0.2 --games 200 "
        "--concurrency 2 --seed 1 --players-per-game 3 --out runs/t3",
        formatter_class=_FORMATTER)
    tour.add_argument("--agents", nargs="+", required=True, metavar="AGENT",
                      help=agents_help + "; distinct; the first is the Elo anchor")
    tour.add_argument("--games", type=int, default=20,
                      help="games per pair or group (default 20)")
    tour.add_argument("--players-per-game", type=int, choices=(2, 3, 4), default=2,
                      help="players in each game (default 2)")
    tour.add_argument("--concurrency", type=int, default=1,
                      help="worker processes (default 1); results do not depend on it")
    tour.add_argument("--seed", type=_seed, default=0, help="tournament seed (default 0)")
    tour.add_argument("--out", required=True, metavar="DIR", help="run directory")
    tour.add_argument("--bootstrap", type=int, default=1000,
                      help="bootstrap resamples for the Elo intervals (default 1000)")
    tour.add_argument("--no-progress", action="store_true", help="no progress bar")
    _rule_options(tour)
    tour.set_defaults(func=_cmd_tournament)

    bench = sub.add_parser(
        "bench", help="measure the engine's speed",
        description="Measure the engine: random full games per second for 2, 3 and 4 players "
        "(dense legal mask at every decision) and the mean time of one legal-mask "
        "computation at the tile and at the build step. Each figure is the median of "
        "--repeats runs after a warm-up.",
        epilog="example:\n  taluva bench\n  taluva bench --json --games 500 --out "
        "runs/bench.json",
        formatter_class=_FORMATTER)
    bench.add_argument("--json", action="store_true", help="print the figures as JSON only")
    bench.add_argument("--games", type=int, default=200,
                       help="random games per player count and repeat (default 200)")
    bench.add_argument("--repeats", type=int, default=5, help="repeats (default 5)")
    bench.add_argument("--out", default=None, metavar="FILE", help="also write the JSON here")
    bench.add_argument("--engine", action="store_true",
                       help="engine section (the default when no section is asked for)")
    bench.add_argument("--mcts", action="store_true",
                       help="MCTS simulations per second from a 2-player midgame, random "
                       "rollouts")
    bench.add_argument("--env", action="store_true",
                       help="VectorEnv steps/s at batch 1, 64, 256, 1024 (needs taluva-ai[envs])")
    bench.add_argument("--solo", action="store_true",
                       help="random full solo games per second (docs/solo.md)")
    bench.add_argument("--mcts-sims", type=int, default=2000,
                       help="simulations per timed search (default 2000)")
    bench.set_defaults(func=_cmd_bench)
    return p


def _count(n: int, noun: str) -> str:
    """``"1 temple"``, ``"3 huts"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _seed(text: str) -> int:
    """argparse type of seeds: a non-negative integer."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{v} is negative; seeds are integers >= 0")
    return v


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``taluva`` command; returns the exit status (argparse errors exit with 2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except _ArgError as e:
        _fail(parser, args.command, str(e))
    except _RunError as e:
        parser.exit(1, f"{parser.prog} {args.command}: error: {e}\n")
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly (Python docs, signal)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        hint = " (run the same command again to resume)" if args.command == "tournament" else ""
        print(f"\n{parser.prog} {args.command}: interrupted{hint}", file=sys.stderr)
        return 130


def _fail(parser: argparse.ArgumentParser, command: str, message: str) -> NoReturn:
    """Report a bad argument in one line, argparse style (``taluva <command>: error: ...``),
    and exit with status 2."""
    parser.exit(2, f"{parser.prog} {command}: error: {message}\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
