"""``taluva pgn``: a 2-player tournament's results as PGN."""

from __future__ import annotations

import argparse
import sys

from taluva_ai.cli.core import (
    _FORMATTER,
    _AgentsHelpParser,
    _ArgError,
    _check_output_path,
    _os_reason,
)
from taluva_ai.errors import RunConfigError


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


def register(sub: argparse._SubParsersAction[_AgentsHelpParser]) -> None:
    """Add ``taluva pgn``, its options and its handler to the subcommands ``sub``."""
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
