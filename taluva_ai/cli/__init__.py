"""The ``taluva`` command: play, replay, tournament, pgn, serve, bench, train (``taluva
<command> --help``).

Exit codes: 0 success; 1 a record that fails to replay, a file that cannot be read or written,
or an agent that fails during a game; 2 bad arguments (unknown agent, invalid rule option, a
path that cannot be a file, ...), argparse style; 130 interrupted. Every error is one line on
stderr, never a traceback.

The package holds one module per subcommand (its parser, ``register``, and its handler,
``_cmd_<command>``), over a shared
core (:mod:`~taluva_ai.cli.core`: errors, argument types and checks, the rule options) and
:mod:`~taluva_ai.cli.display` (a game as text, for play and replay). :func:`build_parser` and
:func:`main` stand here.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from taluva_ai.cli import bench, pgn, play, replay, serve, tournament, train
from taluva_ai.cli.core import (
    _FORMATTER,
    _AgentsHelpParser,
    _ArgError,
    _fail,
    _RunError,
    _unrecognized,
)
from taluva_ai.cli.display import format_solo_score

__all__ = ["build_parser", "format_solo_score", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``taluva`` argument parser: its subcommands' parsers are made by their modules
    (``register``)."""
    from taluva_ai import __version__

    p = argparse.ArgumentParser(
        prog="taluva",
        description="Taluva engine tools: play a game, check a game record, run a tournament "
        "with ratings, measure the engine's speed, train an AlphaZero network.",
        epilog="examples:\n"
        "  taluva play --players greedy random --seed 7 --record game.jsonl\n"
        "  taluva replay game.jsonl\n"
        "  taluva tournament --agents random greedy --games 20 --out runs/tournament\n"
        "  taluva pgn runs/tournament > tournament.pgn\n"
        "  taluva serve runs/tournament\n"
        "  taluva bench --json\n"
        "  taluva train --config experiments/configs/demo.toml --out runs/demo\n\n"
        "Run 'taluva <command> --help' for a command's options.",
        formatter_class=_FORMATTER,
    )
    p.add_argument("--version", action="version", version=f"taluva-ai {__version__}")
    sub = p.add_subparsers(dest="command", metavar="command", required=True,
                           parser_class=_AgentsHelpParser)
    for command in (play, replay, tournament, pgn, serve, bench, train):
        command.register(sub)  # each subcommand's parser, in this order
    return p


#: LLVM's optimisation level for the kernels the command compiles (``NUMBA_OPT``; Numba's
#: default is 3). Level 1 compiles with about a tenth less CPU, and its kernels run as fast
#: (docs/benchmarks.md, "Compile time"; the test run uses it too, tests/conftest.py). The
#: environment's NUMBA_OPT, when set, wins; Numba's cache does not key on the level, so later
#: processes load these kernels whatever theirs.
NUMBA_OPT = "1"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``taluva`` command; returns the exit status (argparse errors exit with 2)."""
    os.environ.setdefault("NUMBA_OPT", NUMBA_OPT)  # before anything compiles; workers inherit
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # the subcommand's usage, and the option meant when one is near
        _unrecognized(parser, args.command, unknown)
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
