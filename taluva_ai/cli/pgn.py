"""``taluva pgn``: a 2-player tournament's results as PGN."""

from __future__ import annotations

import argparse
import sys

from taluva_ai.cli.core import _ArgError, _check_output_path, _os_reason
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
