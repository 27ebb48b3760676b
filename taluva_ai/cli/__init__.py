"""The ``taluva`` command: play, replay, tournament, pgn, bench, train (``taluva <command>
--help``).

Exit codes: 0 success; 1 a record that fails to replay, a file that cannot be read or written,
or an agent that fails during a game; 2 bad arguments (unknown agent, invalid rule option, a
path that cannot be a file, ...), argparse style; 130 interrupted. Every error is one line on
stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from taluva_ai.errors import (
    BackendError,
    IllegalActionError,
    RecordError,
    RunConfigError,
    RunFileError,
)
from taluva_ai.protocol import CHANCE, GameState
from taluva_ai.records import MoveEvent

_FORMATTER = argparse.RawDescriptionHelpFormatter


class _AgentsHelpParser(argparse.ArgumentParser):
    """A subcommand parser whose help ends with the list of agents and their parameters,
    generated from the agent registry when the help is shown (importing the agents costs a
    second, which other commands need not pay)."""

    agents_help = False

    def format_help(self) -> str:
        text = super().format_help()
        if not self.agents_help:
            return text
        from taluva_ai.agents import describe_agents

        return f"{text.rstrip()}\n\n{describe_agents()}\n"


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


def _fix_hint(e: OSError) -> str:
    """What to do about a run file that could not be written."""
    if e.errno == errno.ENOSPC:
        return "free some disk space"
    if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "make it writable"
    return "fix the cause"


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


def _game_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", default="taluva", metavar="NAME",
                        help="the game: taluva (default) or thurn_und_taxis "
                        "(docs/thurn_und_taxis.md)")


def _rule_options(parser: argparse.ArgumentParser) -> None:
    _game_option(parser)
    t = parser.add_argument_group("Thurn und Taxis options (--game thurn_und_taxis; "
                                  "docs/thurn_und_taxis.md)")
    t.add_argument("--all-provinces-rule", choices=("all", "exclude_baiern"), default=None,
                   help="all_provinces tile: a house in all 9 provinces (all, the rulebook) "
                   "or in the 8 other than Baiern (exclude_baiern)")
    t.add_argument("--no-route-tile-fallback", action="store_true",
                   help="an empty route-length stack gives nothing (no fallback to shorter)")
    t.add_argument("--max-rounds", type=int, default=None, metavar="N",
                   help="engine limit: stop after N rounds without an end trigger "
                   "(default 200)")
    g = parser.add_argument_group("Taluva rule options (docs/rules.md; defaults are the "
                                  "standard rules)")
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


def _rule_default_args() -> argparse.Namespace:
    """The rule options' defaults, as parsed from an empty command line."""
    p = argparse.ArgumentParser(add_help=False)
    _rule_options(p)
    return p.parse_args([])


_TALUVA_FLAGS: dict[str, tuple[str, Any]] = {
    "tiles_per_player": ("--tiles-per-player", None), "ranked": ("--ranked", False),
    "no_new_hut_isolated": ("--no-new-hut-isolated", False),
    "no_lake_building": ("--no-lake-building", False),
    "tiebreak_towers_first": ("--tiebreak-towers-first", False),
    "destroyed_huts_return": ("--destroyed-huts-return", False),
    "early_victory_kinds": ("--early-victory-kinds", 2), "tile_preview": ("--tile-preview", False),
    "board_radius": ("--board-radius", None), "solo": ("--solo", False),
    "solo_option": ("--solo-option", []),
}
_TNT_FLAGS: dict[str, tuple[str, Any]] = {
    "all_provinces_rule": ("--all-provinces-rule", None),
    "no_route_tile_fallback": ("--no-route-tile-fallback", False),
    "max_rounds": ("--max-rounds", None),
}


def _rules_from_args(args: argparse.Namespace, num_players: int) -> dict[str, Any]:
    """The game's keyword options of the parsed rule flags (flags of another game refused)."""
    game = args.game
    foreign = {**(_TALUVA_FLAGS if game != "taluva" else {}),
               **(_TNT_FLAGS if game != "thurn_und_taxis" else {})}
    for dest, (flag, default) in foreign.items():
        if getattr(args, dest) != default:
            raise _ArgError(f"{flag} is not an option of --game {game}")
    if game != "taluva":
        opts_t: dict[str, Any] = {"num_players": num_players}
        if args.all_provinces_rule is not None:
            opts_t["all_provinces_rule"] = args.all_provinces_rule
        if args.no_route_tile_fallback:
            opts_t["route_tile_fallback"] = False
        if args.max_rounds is not None:
            opts_t["max_rounds"] = args.max_rounds
        return opts_t
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
        from taluva_ai.games.taluva.rules import SOLO_DEFAULTS

        if name.strip() not in SOLO_DEFAULTS:
            raise _ArgError(f"--solo-option: {name.strip()!r} is not a solo option; known: "
                            f"{', '.join(sorted(SOLO_DEFAULTS))}")
        low = value.strip().lower()
        opts[name.strip()] = {"true": True, "false": False}.get(low, value.strip())
    return opts


_RULE_DEFAULTS = _rule_default_args()


def _make_game(opts: dict[str, Any], name: str = "taluva") -> Any:
    from taluva_ai.protocol import make_game

    try:
        return make_game(name, **opts)
    except KeyError as e:
        raise _ArgError(f"--game: {e.args[0] if e.args else e}") from None
    except (ValueError, TypeError) as e:
        raise _ArgError(str(e)) from None


def _seat_line(state: GameState, seat: int, name: str) -> str:
    """``seat 0  greedy   built 3 temples, 2 towers, 14 huts (2 destroyed), active``."""
    parts = [f"seat {seat}  {name:<12}"]
    summary = getattr(state, "seat_summary", None)
    if summary is not None:  # a game's own one-line account of a seat
        return "  ".join([*parts, summary(seat)])
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
    rules = getattr(getattr(state, "game", None), "rules", None)
    if getattr(rules, "solo", False) and breakdown is not None:
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


def _show(players: Sequence[str], color: bool = False) -> Any:
    """An ``on_state`` callback printing every position and action (a game's ``to_text``
    picture when it has one: with ``color``, in colour; the legend with the first position
    only)."""
    first = [True]

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
        to_text = getattr(state, "to_text", None)
        print(state if to_text is None else to_text(color=color, legend=first[0]))
        first[0] = False
        print()

    return show


def _color(args: argparse.Namespace) -> bool:
    """Whether ``--show`` writes colour: stdout a terminal, no ``--no-color``, ``NO_COLOR``
    unset (:func:`taluva_ai.games.taluva.render.use_color`)."""
    from taluva_ai.games.taluva.render import use_color

    return use_color(sys.stdout, no_color=args.no_color)


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

    from taluva_ai.tournament import check_fits, make_agent, play_game

    if args.solo and len(args.players) != 1:
        raise _ArgError(f"--players: the solo variant has one player, got {len(args.players)}")
    if not args.solo and not 2 <= len(args.players) <= 4:
        raise _ArgError(f"--players: give 2 to 4 agents, got {len(args.players)} (one agent "
                        "plays the solo variant with --solo)")
    if args.record is not None:
        _check_output_path("--record", args.record)
    game = _make_game(_rules_from_args(args, len(args.players)), args.game)
    agents = []
    for spec in args.players:
        try:
            agents.append(make_agent(spec))
            check_fits(agents[-1], game)
        except (ValueError, ImportError, AttributeError) as e:
            raise _ArgError(f"--players: {e}") from None
    seed = args.seed
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    print(f"{args.game}: solo, seed {seed}" if args.solo else
          f"{args.game}: {len(agents)} players, seed {seed}")
    from taluva_ai.warmup import warm_up

    warm_up(game, args.players)  # compile (first run) or load the kernels, with a message
    shown: list[GameState] = []
    show = _show(args.players, _color(args)) if args.show else None

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

    for opt in ("svg", "png"):
        out = getattr(args, opt)
        if out is not None and not out.strip():
            raise _ArgError(f"--{opt}: give a directory to write the pictures into")
        if out and Path(out).exists() and not Path(out).is_dir():
            raise _ArgError(f"--{opt} {out}: exists and is not a directory")
    path = Path(args.record)
    try:
        header = read_header(path)
        if args.png and header.game != "taluva":
            raise _ArgError(f"--png: PNG pictures are drawn for taluva records only (--svg draws "
                            f"every game); this record is of {header.game}")
        players = list(header.players)
        show = _show(players, _color(args)) if args.show else None
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
    if args.svg is not None:
        from taluva_ai.pictures import save_svgs

        try:
            files = save_svgs(path, args.svg)
        except OSError as e:
            raise _ArgError(f"--svg {args.svg}: {e.strerror or e}") from None
        print(f"pictures: {len(files)} SVG files in {args.svg}")
    if args.png:
        try:
            from taluva_ai.games.taluva.draw import save_pictures
        except ImportError as e:
            raise _ArgError(f"--png needs matplotlib (pip install -e '.[envs]'): {e}") from None
        try:
            files = save_pictures(path, args.png, "png")
        except OSError as e:
            raise _ArgError(f"--png {args.png}: {e.strerror or e}") from None
        print(f"pictures: {len(files)} PNG files in {args.png}")
    return 0


# -- serve ------------------------------------------------------------------------------------


def _cmd_serve(args: argparse.Namespace) -> int:
    import re

    from taluva_ai import web

    for d in args.dirs:
        if not Path(d).is_dir():
            raise _ArgError(f"DIRS: {d!r} is not a directory")
    try:
        from taluva_ai.web.app import create_app
    except ImportError as e:
        raise _ArgError(f"taluva serve needs the web extra (pip install -e '.[web]'): {e}") \
            from None
    for name in args.allow_host:
        if not re.fullmatch(r"[A-Za-z0-9.-]+|\[?[0-9A-Fa-f:.]+\]?", name):
            raise _ArgError(f"--allow-host: {name!r} is not a host name or an IP address "
                            "(give it without a port: the server's port is added)")
    for module in args.allow_agent_module:
        if not all(part.isidentifier() for part in module.split(".")):
            raise _ArgError(f"--allow-agent-module: {module!r} is not a module name "
                            "(package.module)")
    host = args.host
    app = create_app(args.dirs, hosts=web.served_hosts(host, args.port, args.allow_host),
                     agent_modules=args.allow_agent_module)
    try:
        sock = web.listen(host, args.port)
    except OSError as e:
        raise _RunError(f"cannot listen on {host}:{args.port}: {e.strerror or e}") from None
    shown = f"[{host}]" if ":" in host else host
    print(f"serving the game records under: {', '.join(str(Path(d)) for d in args.dirs)}")
    print(f"open http://{shown}:{args.port}/  (Ctrl-C stops)", flush=True)
    if host not in web.LOCAL_HOSTS:
        print(f"WARNING: listening on {host}, not 127.0.0.1: other machines that reach this "
              f"one on port {args.port} can read every game record under these directories",
              file=sys.stderr, flush=True)
    if args.allow_agent_module:
        print(f"WARNING: the page may run Python classes of {', '.join(args.allow_agent_module)}"
              " (--allow-agent-module) with any parameters", file=sys.stderr, flush=True)
    try:
        web.run_server(app, sock)
    finally:
        sock.close()
    return 0


# -- tournament -------------------------------------------------------------------------------


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


def _cmd_pgn(args: argparse.Namespace) -> int:
    from taluva_ai.tournament import export_pgn

    try:
        text = export_pgn(args.run_dir)
    except RunConfigError as e:
        raise _ArgError(str(e)) from None
    if args.out is None:
        sys.stdout.write(text)
        return 0
    out = _check_output_path("--out", args.out)
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as e:
        print(f"{out}: {_os_reason(e, out)}", file=sys.stderr)
        return 1
    print(f"{text.count('[Result ')} games written to {out}")
    return 0


# -- bench ------------------------------------------------------------------------------------


def _cmd_bench(args: argparse.Namespace) -> int:
    from taluva_ai.bench import bench_problem, run_bench

    if args.games < 1 or args.repeats < 1 or args.mcts_sims < 1:
        raise _ArgError("--games, --repeats and --mcts-sims must be >= 1")
    if args.max_batch is not None and (args.max_batch < 1 or not args.selfplay):
        raise _ArgError("--max-batch goes with --selfplay and must be >= 1")
    if args.out is not None:
        _check_output_path("--out", args.out)
    if args.compile_command and not args.compile:
        raise _ArgError("--compile-command goes with --compile")
    engine = args.engine or not (args.mcts or args.env or args.net or args.solo
                                 or args.selfplay or args.inference or args.compile)
    problem = bench_problem(args.game, solo=args.solo, net=args.net, selfplay=args.selfplay,
                            inference=args.inference)
    if problem:
        raise _ArgError(problem)
    compiled: dict[str, Any] | None = None
    if args.compile:  # first: subprocesses, each with an empty kernel cache of its own
        from taluva_ai.compile_bench import COMMANDS, bench_compile

        commands = [shlex.split(c) for c in args.compile_command] or list(COMMANDS)
        for c in commands:
            if c and c[0] == "taluva":
                c.pop(0)
        compiled = bench_compile(commands)
    try:
        res = run_bench(games=args.games, repeats=args.repeats, engine=engine, mcts=args.mcts,
                        mcts_sims=args.mcts_sims, env=args.env, net=args.net, game=args.game,
                        solo=args.solo, selfplay=args.selfplay, inference=args.inference,
                        max_batch=args.max_batch)
        if compiled is not None:
            res = {"compile": compiled, **res}
    except ImportError as e:
        need = [f"{flag} needs the {extra} extra (pip install -e '.[{extra}]')"
                for flag, extra, given in (("--env", "envs", args.env),
                                           ("--net", "train", args.net),
                                           ("--selfplay", "train", args.selfplay),
                                           ("--inference", "train", args.inference))
                if given]
        raise _ArgError(f"{' and '.join(need) or 'a missing package'}: {e}") from None
    text = json.dumps(res, indent=2)
    if args.json:
        print(text, flush=True)  # the figures first: a failing --out loses nothing
        return _write_bench(args.out, text)
    if "compile" in res:
        for c in res["compile"]["commands"]:
            cold, warm = c["cold"], c["warm"]
            print(f"compile: {c['command']}: cold (empty kernel cache) {cold['cpu_s']:.1f} CPU s "
                  f"({cold['kernels_compiled']} kernels compiled in {cold['compile_cpu_s']:.1f} "
                  f"s), warm {warm['cpu_s']:.1f} CPU s; load average {c['load_avg'][0][0]:.1f} "
                  f"to {c['load_avg'][1][0]:.1f}")
    if "engine" in res and res["engine"].get("game") == "thurn_und_taxis":
        _print_tnt_bench(res["engine"])
    elif "engine" in res:
        _print_engine_bench(res["engine"])
    if "solo" in res:
        so = res["solo"]
        print(f"solo ({_median_of(so['repeats'], 'run')}, {so['games']} random games each): "
              f"{so['games_per_s']:.1f} games/s ({so['decisions_per_game']:.1f} "
              "decisions/game, dense mask at each)")
    if "env" in res:
        for b, v in res["env"]["steps_per_s"].items():
            print(f"env: batch {b}: {v:.0f} steps/s (random actions, observation and mask each "
                  "step)")
    if "net" in res:
        nt = res["net"]
        for preset, v in nt.items():
            if isinstance(v, dict):
                figs = ", ".join(f"batch {b}: {v['latency_ms'][b]:.2f} ms "
                                 f"({v['positions_per_s'][b]:.0f} pos/s)" for b in v["latency_ms"])
                print(f"net {preset} ({v['parameters']:,} parameters, {nt['threads']} threads): "
                      f"{figs}")
    if "inference" in res:
        for r in res["inference"]["results"]:
            print(f"inference {r['preset']} (view radius {r['view_radius']}, {r['backend']}, "
                  f"batch {r['batch']}): {r['positions_per_s']:.0f} positions/s "
                  f"({r['positions_per_cpu_s']:.0f} per CPU second)")
        for key, per_batch in res["inference"]["fastest"].items():
            print(f"fastest for {key}: " + ", ".join(f"batch {b}: {v}"
                                                     for b, v in per_batch.items()))
    if "selfplay" in res:
        sp = res["selfplay"]
        for preset, v in sp.items():
            if isinstance(v, dict):
                print(f"selfplay {preset} ({v['parameters']:,} parameters, view radius "
                      f"{v['view_radius']}, {v['stem_kernel']}x{v['stem_kernel']} stem, "
                      f"{v['backend']} in chunks of {v['max_batch']}, "
                      f"{sp['parallel_games']} games at once, {sp['sims']} sims/move, leaf "
                      f"batch {sp['leaf_batch']}): {v['sims_per_s']:.0f} simulations/s "
                      f"({v['sims_per_cpu_s']:.0f} per CPU second), {v['positions_per_s']:.1f} "
                      f"positions/s, {100 * v['net_share']:.0f}% in the network; "
                      f"{v['ratio']:.2f}x the rollout MCTS")
        print(f"rollout MCTS (UCT, random rollouts, same invocation): "
              f"{sp['rollout_mcts_sims_per_s']:.0f} simulations/s")
    if "mcts" in res:
        mc = res["mcts"]
        searches = _median_of(mc["repeats"], "search", "searches")
        print(f"mcts ({mc['spec']}, {searches} from a 2-player midgame): "
              f"{mc['sims_per_s']:.1f} simulations/s")
        if "ladder" in mc:
            ld = mc["ladder"]
            print(f"mcts ({ld['spec']}, the ladder's agent, same midgame): "
                  f"{ld['sims_per_s']:.1f} simulations/s; one greedy rollout to the end: "
                  f"{ld['greedy_rollout_ms']:.3f} ms")
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


def _median_of(n: int, noun: str, plural: str = "") -> str:
    """How a bench figure was taken: ``"one run"`` or ``"median of 5 runs"``."""
    return f"one {noun}" if n == 1 else f"median of {n} {plural or noun + 's'}"


def _print_tnt_bench(e: dict[str, Any]) -> None:
    print(f"thurn_und_taxis engine ({_median_of(e['repeats'], 'run')}, {e['games']} random "
          "games each):")
    for n, v in e["games_per_s"].items():
        print(f"  {n} players: {v:9.1f} games/s ({e['games_per_cpu_s'][n]:.1f} per CPU second; "
              f"{e['decisions_per_game'][n]:.1f} decisions/game, dense mask at each; "
              f"{100 * e['truncated_share'][n]:.0f}% stopped by max_rounds)")
    print(f"  legal mask: {e['legal_mask_us']:8.3f} us   apply: {e['apply_us']:8.3f} us  "
          f"(mean over {e['positions']} positions)")
    print(f"  greedy vs greedy: {e['greedy_games_per_s']:.1f} games/s")


def _print_engine_bench(e: dict[str, Any]) -> None:
    print(f"engine ({_median_of(e['repeats'], 'run')}, {e['games']} random games each):")
    for n, v in e["games_per_s"].items():
        print(f"  {n} players: {v:9.1f} games/s   ({e['decisions_per_game'][n]:.1f} "
              "decisions/game, dense mask at each)")
    print(f"  tile-step legal mask:  {e['tile_mask_us']:8.2f} us  "
          f"(mean over {e['positions']['tile']} positions)")
    print(f"  build-step legal mask: {e['build_mask_us']:8.2f} us  "
          f"(mean over {e['positions']['build']} positions)")


# -- train ------------------------------------------------------------------------------------


def _cmd_train(args: argparse.Namespace) -> int:
    import importlib

    if args.pack is not None:
        return _cmd_train_pack(args)
    if args.resume is not None:
        if args.config is not None or args.out is not None:
            raise _ArgError("--resume DIR continues a run with its own config: give no "
                            "--config or --out")
        if not args.resume.strip():
            raise _ArgError("--resume: empty directory name")
    elif args.redo is not None:
        raise _ArgError("--redo N goes with --resume DIR (it redoes iterations of a run)")
    elif args.config is None or args.out is None:
        raise _ArgError("a new run needs --config TOML and --out DIR (or --resume DIR)")
    elif not args.out.strip():
        raise _ArgError("--out: empty directory name")
    if args.ray is not None:  # Ray and its address are checked before any work
        from taluva_ai.parallel import import_ray, parse_ray_address

        try:
            parse_ray_address(args.ray)
            import_ray()
        except BackendError as e:
            raise _ArgError(str(e)) from None
    config = importlib.import_module("taluva_ai.agents.alphazero.config")  # no torch: fast
    if args.config is not None:
        try:
            config.load_config(args.config)  # a bad config fails before torch is imported
        except config.ConfigError as e:
            raise _ArgError(str(e)) from None
    try:
        train = importlib.import_module("taluva_ai.agents.alphazero.train")
    except ImportError as e:
        raise _ArgError(f"training needs PyTorch and TensorBoard: pip install -e '.[train]' "
                        f"({e})") from None
    config_error = config.ConfigError
    checkpoint_error = importlib.import_module("taluva_ai.agents.alphazero.net").CheckpointError
    out = Path(str(args.resume or args.out))
    try:
        state = train.train_main(args.config, args.out, args.resume,
                                 progress=not args.no_progress, ray=args.ray, redo=args.redo)
    except (config_error, RunConfigError, BackendError) as e:
        raise _ArgError(str(e)) from None
    except (checkpoint_error, RunFileError) as e:
        raise _RunError(str(e)) from None
    except FloatingPointError as e:  # a diverged network (Trainer.step)
        raise _RunError(f"{e}: taluva train --resume {out}") from None
    except OSError as e:
        print(f"{e.filename or out}: {_os_reason(e, e.filename or out)}; {_fix_hint(e)}, "
              f"then continue with: taluva train --resume {out}", file=sys.stderr)
        return 1
    print(f"finished iteration {state['iteration']}; best network: iteration "
          f"{state['best_iteration']} ({out / 'best.pt'}); metrics: {out / 'metrics.jsonl'}")
    return 0


def _cmd_train_pack(args: argparse.Namespace) -> int:
    """``taluva train --pack RUN OUT``: a run's small state, to continue it elsewhere."""
    import importlib

    others = [name for name, v in (("--config", args.config), ("--out", args.out),
                                   ("--resume", args.resume), ("--redo", args.redo),
                                   ("--ray", args.ray)) if v is not None]
    if others:
        raise _ArgError(f"--pack RUN OUT goes with no {', '.join(others)} (it copies a run's "
                        "state; continue the pack with: taluva train --resume OUT)")
    run, out = args.pack
    if not run.strip() or not out.strip():
        raise _ArgError("--pack RUN OUT: empty directory name")
    try:
        train = importlib.import_module("taluva_ai.agents.alphazero.train")
    except ImportError as e:
        raise _ArgError(f"training needs PyTorch and TensorBoard: pip install -e '.[train]' "
                        f"({e})") from None
    try:
        rep = train.pack_run(run, out)
    except RunConfigError as e:
        raise _ArgError(str(e)) from None
    except RunFileError as e:
        raise _RunError(str(e)) from None
    except OSError as e:
        name = e.filename or out
        print(f"{name}: {_os_reason(e, name)}; {_fix_hint(e)}, then pack again",
              file=sys.stderr)
        return 1
    size = train.format_size
    print(f"packed iteration {rep['iteration']} of {run} into {out}:")
    for f in rep["files"]:
        print(f"  {'wrote    ' if f['written'] else 'unchanged'}  {size(f['bytes']):>9}  "
              f"{f['path']}")
    games = rep["replay_games"]
    replay = "the replay data" if games is None else \
        f"the replay data ({games} games, {rep['replay_samples']} samples in the buffer)"
    print(f"{len(rep['files'])} files, {size(rep['bytes'])} in all; left out: "
          f"{rep['left_out_files']} run files, {size(rep['left_out_bytes'])}: {replay}, game "
          f"records, tournament games, older networks, tb/")
    print(f"continue the run (on any machine) with: taluva train --resume {out}")
    return 0


# -- parser -----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``taluva`` argument parser (subcommands play, replay, tournament, bench)."""
    from taluva_ai import __version__

    p = argparse.ArgumentParser(
        prog="taluva",
        description="Taluva engine tools: play a game, check a game record, run a tournament "
        "with ratings, measure the engine's speed, train an AlphaZero network.",
        epilog="examples:\n"
        "  taluva play --players greedy random --seed 7 --record game.jsonl\n"
        "  taluva replay game.jsonl\n"
        "  taluva tournament --agents random greedy --games 20 --out runs/demo\n"
        "  taluva pgn runs/demo > demo.pgn\n"
        "  taluva serve runs/demo\n"
        "  taluva bench --json\n"
        "  taluva train --config experiments/configs/demo.toml --out runs/demo\n\n"
        "Run 'taluva <command> --help' for a command's options.",
        formatter_class=_FORMATTER,
    )
    p.add_argument("--version", action="version", version=f"taluva-ai {__version__}")
    sub = p.add_subparsers(dest="command", metavar="command", required=True,
                           parser_class=_AgentsHelpParser)

    agents_help = ("agent specs: NAME or NAME:KEY=VALUE,..., e.g. 'greedy', "
                   "'mcts:sims=400,rollout=greedy', or 'package.module:Class' (every agent and "
                   "its parameters: end of this help)")

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
                      help="print every position (hex rows offset by half a hex, coordinates "
                      "under each hex, a legend with the first) and every action (with agent "
                      "statistics)")
    play.add_argument("--no-color", action="store_true",
                      help="no colours in --show (default: colours when stdout is a terminal "
                      "and the environment variable NO_COLOR is unset)")
    _rule_options(play)
    play.set_defaults(func=_cmd_play)
    play.agents_help = True

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
    rep.add_argument("--no-color", action="store_true",
                     help="no colours in --show (default: colours when stdout is a terminal "
                     "and NO_COLOR is unset)")
    rep.add_argument("--svg", metavar="DIR", default=None,
                     help="write one SVG picture per position into DIR: DIR/0000.svg the initial "
                     "position, then one after each action (the board of 'taluva serve'; "
                     "every game: Taluva's island, Thurn und Taxis's map)")
    rep.add_argument("--png", metavar="DIR", default=None,
                     help="write one PNG picture per position into DIR (Taluva records; needs "
                     "matplotlib)")
    rep.set_defaults(func=_cmd_replay)

    tour = sub.add_parser(
        "tournament", help="round robin or gauntlet between agents, with Elo, SPRT, "
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
        epilog="example:\n"
        "  taluva tournament --agents random greedy --games 20 --out runs/demo\n"
        "  taluva tournament --agents random greedy greedy:epsilon=0.2 --games 200 "
        "--concurrency 2 --seed 1 --players-per-game 3 --out runs/t3\n"
        "  taluva tournament --gauntlet mcts:sims=400,rollout=greedy --agents random greedy "
        "--games 100 --out runs/g1\n"
        "  taluva tournament --agents greedy mcts:sims=100,rollout=greedy --games 2000 "
        "--sprt elo0=0 elo1=50 alpha=0.05 beta=0.05 --out runs/s1\n"
        "  taluva tournament --config tournament.toml\n"
        "  taluva tournament --resume runs/t3 --concurrency 2\n"
        "  taluva tournament --agents random greedy --games 2000 --out runs/t4 --ray auto",
        formatter_class=_FORMATTER)
    tour.add_argument("--agents", nargs="+", default=None, metavar="AGENT",
                      help=agents_help + "; distinct; the first is the Elo anchor (and the "
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
    tour.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                      help="play the games as Ray tasks on a Ray cluster (needs "
                      "taluva-ai[ray]; docs/ray.md): auto (default: the cluster this machine "
                      "belongs to, else a new local Ray instance), local, or HOST:PORT of the "
                      "head node; --concurrency then defaults to the cluster's CPUs")
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
    tour.set_defaults(func=_cmd_tournament)
    tour.agents_help = True

    pgn = sub.add_parser(
        "pgn", help="the results of a 2-player tournament as PGN, for BayesElo or Ordo",
        description="Write the results of the games a 2-player tournament has finished so far "
        "(running, interrupted or done) as PGN: per game the tags White (the first seat's "
        "agent), Black, Result (1-0, 0-1, 1/2-1/2, * for an undecided game), Round (the deal), "
        "GameId and Termination, in game-id order; for BayesElo (readpgn) or Ordo (ordo -p). "
        "A finished tournament also writes OUT/games.pgn (an SPRT run: the counted games).",
        epilog="example:\n  taluva pgn runs/demo > demo.pgn\n"
        "  taluva pgn runs/demo --out demo.pgn && ordo -p demo.pgn",
        formatter_class=_FORMATTER)
    pgn.add_argument("run_dir", metavar="DIR", help="the tournament's run directory")
    pgn.add_argument("--out", default=None, metavar="FILE",
                     help="write to FILE (default: standard output)")
    pgn.set_defaults(func=_cmd_pgn)

    serve = sub.add_parser(
        "serve", help="a browser board: replay and analyse game records, play against agents, "
        "browse tournament runs",
        description="Start a local web app (Starlette and uvicorn: pip install -e '.[web]') "
        "with three views. Replay: the game records (*.jsonl; Taluva and Thurn und Taxis) "
        "under DIRS, stepped with the buttons, the arrow keys or the slider, the move list in "
        "notation, an agent's search of any position (mcts:..., az:builtin: candidate moves, "
        "visits, values, a heat map) and a value graph over the game. Play: a game against "
        "any agent specs, 2-4 seats, people and agents mixed, any rule options. Runs: a "
        "tournament run's table, plots and games. The board is drawn as SVG (as 'taluva "
        "replay --svg'). Only files under DIRS are read. Requests that change anything must "
        "come from the page itself (Content-Type application/json, the server's own Origin "
        "and Host: no other web site can drive it); agents are limited to the registered ones "
        "with bounded searches unless --allow-agent-module says otherwise; a search stops when "
        "its client leaves or the server stops. Prints the address; stop it with Ctrl-C "
        "(docs/web.md, Security).",
        epilog="example:\n  taluva serve runs/t1\n  taluva serve runs --port 8080\n"
        "  taluva serve runs --allow-agent-module mypkg.bots",
        formatter_class=_FORMATTER)
    serve.add_argument("dirs", metavar="DIRS", nargs="*", default=["."],
                       help="directories whose game records (*.jsonl, in subdirectories too) "
                       "the page may open (default: the current directory)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="the address to listen on; anything but 127.0.0.1, localhost or "
                       "::1 lets other machines read the records (a warning is printed)")
    serve.add_argument("--port", type=_port, default=8000,
                       help="the TCP port, 1..65535")
    serve.add_argument("--allow-host", metavar="NAME", action="append", default=[],
                       help="a host name (or address) the page may be opened by besides "
                       "127.0.0.1, localhost, [::1] and --host (repeatable; e.g. the "
                       "machine's name on the network with --host 0.0.0.0). Any other Host "
                       "header is refused (403), which stops DNS rebinding")
    serve.add_argument("--allow-agent-module", metavar="MODULE", action="append", default=[],
                       help="let the page's seats and analyses name classes of this Python "
                       "module (and its submodules) as MODULE:Class[:KEY=VALUE,...] "
                       "(repeatable). Without it only the registered agents play (random, "
                       "greedy, mcts, ismcts, az with builtin or a .pt checkpoint under DIRS "
                       "as path=<dir index>/<file>, openspiel), with bounded search "
                       "parameters; module:Class specs are refused (403)")
    serve.set_defaults(func=_cmd_serve)

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
    _game_option(bench)
    bench.add_argument("--games", type=int, default=200,
                       help="random games per player count and repeat (default 200)")
    bench.add_argument("--repeats", type=int, default=5, help="repeats (default 5)")
    bench.add_argument("--out", default=None, metavar="FILE", help="also write the JSON here")
    bench.add_argument("--engine", action="store_true",
                       help="engine section (the default when no section is asked for)")
    bench.add_argument("--mcts", action="store_true",
                       help="MCTS simulations per second from a 2-player midgame: UCT with "
                       "random rollouts (--mcts-sims per search), and (Taluva) the strength "
                       "ladder's MCTS-400 with greedy rollouts and the time of one greedy rollout")
    bench.add_argument("--env", action="store_true",
                       help="VectorEnv steps/s at batch 1, 64, 256, 1024 (Thurn und Taxis: "
                       "1, 64, 256; needs taluva-ai[envs])")
    bench.add_argument("--solo", action="store_true",
                       help="random full solo games per second (docs/solo.md)")
    bench.add_argument("--mcts-sims", type=int, default=2000,
                       help="simulations per timed UCT search (default 2000; the ladder's "
                       "agent always searches 400)")
    bench.add_argument("--net", action="store_true",
                       help="AlphaZero network presets: parameters, CPU inference latency and "
                       "throughput at batch 1, 16, 64, 256 (needs taluva-ai[train])")
    bench.add_argument("--selfplay", action="store_true",
                       help="network-guided self-play (compiled batched search, Gumbel root, "
                       "no rollouts) per network (tiny, tiny over view radius 11, the same "
                       "with a 1x1 stem, small): simulations/s (per wall and per CPU second), "
                       "recorded positions/s, the network's share of the time, and the rollout "
                       "MCTS's simulations/s in the same run (needs taluva-ai[train])")
    bench.add_argument("--max-batch", type=int, default=None, metavar="N",
                       help="with --selfplay: the largest batch the network evaluates at once "
                       "(default: 16 for ONNX Runtime, 512 for PyTorch; docs/alphazero.md)")
    bench.add_argument("--compile", action="store_true",
                       help="the first run's cost: CPU seconds (user + system) of a cold "
                       "'taluva play --players greedy random --seed 1' and 'taluva play "
                       "--players az:builtin greedy --seed 1', each in a subprocess with an "
                       "empty NUMBA_CACHE_DIR, kernel by kernel, then warm (from that cache); "
                       "a few minutes on 2 cores (docs/benchmarks.md, Compile time)")
    bench.add_argument("--compile-command", action="append", default=[], metavar="ARGS",
                       help="with --compile: measure 'taluva ARGS' instead (repeatable; e.g. "
                       "--compile-command 'play --players mcts random --seed 1')")
    bench.add_argument("--inference", action="store_true",
                       help="network inference backends side by side (PyTorch eager, "
                       "TorchScript, ONNX Runtime) per preset, view radius 13 and 11, batch "
                       "1, 8, 16, 32, 64, 128, 256, positions per wall and per CPU second (needs "
                       "taluva-ai[train])")
    bench.set_defaults(func=_cmd_bench)

    train = sub.add_parser(
        "train", help="AlphaZero training: self-play, replay, training, gating",
        description="Train a network by self-play (docs/alphazero.md). A new run reads a TOML "
        "config (experiments/configs/*.toml) and writes everything into the run directory "
        "--out: the config, metrics.jsonl, TensorBoard logs (tb/), checkpoints (best.pt, "
        "latest.pt, checkpoints/), self-play samples and sample game records, gating and "
        "anchor tournaments. A killed run continues with --resume DIR, losing at most the "
        "iteration in progress. The trained network plays as 'az:path=DIR/best.pt'. Needs "
        "taluva-ai[train].",
        epilog="example:\n"
        "  taluva train --config experiments/configs/demo.toml --out runs/demo\n"
        "  taluva train --resume runs/demo\n"
        "  taluva train --resume runs/demo --ray 10.0.0.5:6379   (continue on a Ray cluster)\n"
        "  taluva train --pack runs/demo packs/demo   (its small state, to resume elsewhere)\n"
        "  taluva tournament --agents greedy az:path=runs/demo/best.pt,sims=200,"
        "rollout=greedy,lambda=0.5 --games 200 --out runs/demo_eval",
        formatter_class=_FORMATTER)
    train.add_argument("--config", metavar="TOML", default=None,
                       help="config file of a new run")
    train.add_argument("--out", metavar="DIR", default=None, help="run directory of a new run")
    train.add_argument("--resume", metavar="DIR", default=None,
                       help="continue the run in DIR (its config.toml)")
    train.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                       help="run on a Ray cluster (needs taluva-ai[ray]; docs/ray.md): "
                       "self-play workers as Ray actors, gating and anchor games as Ray tasks, "
                       "the learner here; ADDRESS is auto (default: the cluster this machine "
                       "belongs to, else a new local Ray instance), local, or HOST:PORT of the "
                       "head node. A run resumes on either backend")
    train.add_argument("--redo", metavar="N", type=_iteration, default=None,
                       help="with --resume: make iterations N onwards again (the run goes back "
                       "to the end of iteration N-1; 0: to its start), the same as before; the "
                       "remedy a resume names for a damaged or missing file")
    train.add_argument("--pack", nargs=2, metavar=("RUN", "OUT"), default=None,
                       help="write into OUT only the small state that the run in RUN needs to "
                       "continue on another machine (config, state, metrics, the last and "
                       "the best networks, the optimiser state, the anchor tables; no replay "
                       "data or game records), to commit or copy; then: taluva train "
                       "--resume OUT (the replay buffer is rebuilt from the next "
                       "iteration's self-play). OUT: new, empty, or an earlier pack of RUN")
    train.add_argument("--no-progress", action="store_true", help="no progress bars")
    train.set_defaults(func=_cmd_train)
    return p


def _count(n: int, noun: str) -> str:
    """``"1 temple"``, ``"3 huts"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _nonnegative(text: str, what: str, negative: str) -> int:
    """An integer >= 0 from ``text`` for argparse: ``what`` names it when ``text`` is not an
    integer, ``negative`` follows "is negative; " when it is below 0."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{v} is negative; {negative}")
    return v


def _iteration(text: str) -> int:
    """argparse type of iteration numbers: an integer >= 0."""
    return _nonnegative(text, "an iteration number", "iterations are numbered from 0")


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a TCP port is an integer 1..65535, got {text!r}")
    return value


def _seed(text: str) -> int:
    """argparse type of seeds: a non-negative integer."""
    return _nonnegative(text, "an integer", "seeds are integers >= 0")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``taluva`` command; returns the exit status (argparse errors exit with 2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        from taluva_ai.warmup import compile_notice

        with compile_notice():  # a first run says that it compiles, never sits silent
            return int(args.func(args))
    except _ArgError as e:
        _fail(parser, args.command, str(e))
    except _RunError as e:  # one line per problem (e.g. each damaged file of a run)
        parser.exit(1, "".join(f"{parser.prog} {args.command}: error: {line}\n"
                               for line in str(e).splitlines()))
    except BrokenPipeError:  # output piped into e.g. `head`: stop quietly (Python docs, signal)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        hint = " (run the same command again to resume)" if args.command == "tournament" else ""
        if args.command == "train":
            hint = f" (continue with: taluva train --resume {args.resume or args.out})"
        print(f"\n{parser.prog} {args.command}: interrupted{hint}", file=sys.stderr)
        return 130


def _fail(parser: argparse.ArgumentParser, command: str, message: str) -> NoReturn:
    """Report a bad argument in one line, argparse style (``taluva <command>: error: ...``),
    and exit with status 2."""
    parser.exit(2, f"{parser.prog} {command}: error: {message}\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
