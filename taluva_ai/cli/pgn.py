"""``taluva pgn``: a 2-player tournament's results as PGN."""

from __future__ import annotations

import argparse
import sys

from taluva_ai.cli.core import (
    _add_command,
    _AgentsHelpParser,
    _check_output_path,
    _os_reason,
    _refused,
)
from taluva_ai.errors import RunConfigError


def _cmd_pgn(args: argparse.Namespace) -> int:
    from taluva_ai.tournament import export_pgn

    with _refused("", RunConfigError):
        text = export_pgn(args.run_dir)
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
    pgn = _add_command(
        sub, "pgn",
        help="the results of a 2-player tournament as PGN, for BayesElo or Ordo",
        description="Write the results of the games a 2-player tournament has finished so far "
        "(running, interrupted or done) as PGN: per game the tags White (the first seat's "
        "agent), Black, Result (1-0, 0-1, 1/2-1/2, * for an undecided game), Round (the deal), "
        "GameId and Termination, in game-id order; for BayesElo (readpgn) or Ordo (ordo -p). "
        "A finished tournament also writes OUT/games.pgn (an SPRT run: the counted games).",
        examples=[
            "taluva pgn runs/demo > demo.pgn",
            "taluva pgn runs/demo --out demo.pgn && ordo -p demo.pgn",
        ],
        handler=_cmd_pgn)
    pgn.add_argument("run_dir", metavar="DIR", help="the tournament's run directory")
    pgn.add_argument("--out", default=None, metavar="FILE",
                     help="write to FILE (default: standard output)")
