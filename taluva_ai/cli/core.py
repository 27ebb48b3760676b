"""The shared core of the ``taluva`` command: its errors, argument types and checks, and the
rule options every game-making subcommand takes.

- :class:`_ArgError` (a bad argument found after parsing: exit 2) and :class:`_RunError` (a
  failure while running: exit 1), reported in one line by :func:`taluva_ai.cli.main`
  (:func:`_fail`);
- :class:`_AgentsHelpParser`: a subcommand's parser whose help ends with the agents and their
  parameters, and the help of an option that takes agent specs (:data:`_AGENTS_HELP`);
  :func:`_add_command`, the one maker of a subcommand's parser (its help, description,
  examples and handler), and the options several subcommands share (:func:`_ray_option`,
  :func:`_no_color_option`, :func:`_game_option`, :func:`_rule_options`);
- :func:`_refused`: errors of a call turned into the command's one-line refusal;
- argument types (:func:`_seed`, :func:`_port`, :func:`_iteration`) and the check of an output
  file (:func:`_check_output_path`), the text of OS errors (:func:`_os_reason`,
  :func:`_fix_hint`);
- the rule options (:func:`_rule_options`, :func:`_rules_from_args`) and the game they make
  (:func:`_make_game`).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

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


#: The help of an option that takes agent specs (play's --players, tournament's --agents).
_AGENTS_HELP = ("agent specs: NAME or NAME:KEY=VALUE,..., e.g. 'greedy', "
                "'mcts:sims=400,rollout=greedy', or 'package.module:Class' (every agent and "
                "its parameters: end of this help)")


class _ArgError(Exception):
    """A bad argument found after parsing; reported like an argparse error (exit 2)."""


class _RunError(Exception):
    """A failure while running (e.g. an agent's illegal move): ``taluva <command>: error:
    ...``, exit 1."""


def _add_command(sub: argparse._SubParsersAction[_AgentsHelpParser], name: str, *, help: str,
                 description: str, examples: Sequence[str],
                 handler: Callable[[argparse.Namespace], int],
                 agents_help: bool = False) -> _AgentsHelpParser:
    """The parser of the subcommand ``taluva NAME`` in ``sub``: its one-line ``help`` (in
    ``taluva --help``), its ``description``, its ``examples`` (the epilog, one command a line),
    the raw-text formatter, and its ``handler`` (``args.func``, returning the exit status);
    with ``agents_help``, its help ends with the agents and their parameters."""
    parser = sub.add_parser(name, help=help, description=description,
                            epilog="example:\n" + "\n".join(f"  {e}" for e in examples),
                            formatter_class=_FORMATTER)
    parser.set_defaults(func=handler)
    parser.agents_help = agents_help
    return parser


@contextlib.contextmanager
def _refused(prefix: str, *errors: type[Exception], run: bool = False) -> Iterator[None]:
    """Turn an error of the kinds ``errors`` raised inside into the command's one-line
    refusal, ``prefix`` then the error's text (an :class:`OSError`'s: its ``strerror``): an
    argument error (:class:`_ArgError`, exit 2), or with ``run`` a failure while running
    (:class:`_RunError`, exit 1)."""
    try:
        yield
    except errors as e:
        text = (e.strerror or str(e)) if isinstance(e, OSError) else str(e)
        raise (_RunError if run else _ArgError)(f"{prefix}{text}") from None


def _os_reason(e: OSError, path: str | Path | None = None, name_first: bool = False) -> str:
    """``strerror`` of an OSError, with the file it names when that is not ``path`` itself (a
    parent folder, a file inside the folder ``path``): after the reason, or with
    ``name_first`` before it (``DIR/0003.svg: is a symbolic link``); temporary ``.part``
    files are not named."""
    reason = e.strerror or str(e)
    name = e.filename
    if name is None or str(name) == str(path) or str(name).endswith(".part"):
        return reason
    return f"{name}: {reason}" if name_first else f"{reason}: {name}"


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


def _ray_option(parser: argparse.ArgumentParser, what: str, how: str = "",
                after: str = "") -> None:
    """``--ray [ADDRESS]`` (``taluva tournament``, ``taluva train``): ``what`` on a Ray cluster
    (``how``, then the addresses :func:`taluva_ai.parallel.parse_ray_address` takes, then
    ``after``); ``args.ray`` is None without the flag, ``"auto"`` with it alone."""
    parser.add_argument("--ray", nargs="?", const="auto", default=None, metavar="ADDRESS",
                        help=f"{what} on a Ray cluster (needs taluva-ai[ray]; docs/ray.md){how}; "
                        "ADDRESS: auto (default: the cluster this machine belongs to, else a "
                        f"new local Ray instance), local, or HOST:PORT of the head node{after}")


def _no_color_option(parser: argparse.ArgumentParser) -> None:
    """``--no-color`` (``taluva play``, ``taluva replay``): no colours in ``--show``
    (:func:`taluva_ai.cli.display._color`)."""
    parser.add_argument("--no-color", action="store_true",
                        help="no colours in --show (default: colours when stdout is a terminal "
                        "and the environment variable NO_COLOR is unset)")


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


def _fail(parser: argparse.ArgumentParser, command: str, message: str) -> NoReturn:
    """Report a bad argument in one line, argparse style (``taluva <command>: error: ...``),
    and exit with status 2."""
    parser.exit(2, f"{parser.prog} {command}: error: {message}\n")


def _unrecognized(parser: argparse.ArgumentParser, command: str, unknown: Sequence[str]
                  ) -> NoReturn:
    """Refuse the arguments ``unknown`` that the subcommand ``command`` does not take, with its
    usage (not the top-level one) and, for a mistyped option, the nearest of its options
    (``taluva play: error: unrecognized arguments: --seeed 3; did you mean --seed?``; exit
    2). The nearest by :func:`difflib.get_close_matches`, as Python 3.14's argparse
    (``suggest_on_error``) does for choices."""
    sub: argparse.ArgumentParser = next(a.choices[command] for a in parser._actions
                                        if isinstance(a, argparse._SubParsersAction))
    options = [s for a in sub._actions for s in a.option_strings]
    hints = []
    for arg in unknown:
        if arg.startswith("-"):
            close = difflib.get_close_matches(arg.partition("=")[0], options, n=1)
            hints += [(arg.partition("=")[0], close[0])] if close else []
    message = f"unrecognized arguments: {' '.join(unknown)}"
    if len(hints) == 1:
        message += f"; did you mean {hints[0][1]}?"
    elif hints:
        message += "; did you mean " + ", ".join(f"{s} (for {arg})" for arg, s in hints) + "?"
    sub.error(message)
