"""``taluva replay``: a game record checked by replaying it; its pictures."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from taluva_ai.cli.core import (
    _add_command,
    _AgentsHelpParser,
    _ArgError,
    _no_color_option,
    _os_reason,
    _refused,
)
from taluva_ai.cli.display import _color, _print_result, _show
from taluva_ai.errors import RecordError, printable
from taluva_ai.protocol import GameState
from taluva_ai.records import MoveEvent


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
        # a record's names are printed: no terminal control sequence of a crafted record
        players = [printable(name) for name in header.players]
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
            reason = _os_reason(e, args.svg, name_first=True)
            raise _ArgError(f"--svg {args.svg}: {reason}") from None
        print(f"pictures: {len(files)} SVG files in {args.svg}")
    if args.png:
        with _refused("--png needs matplotlib (pip install -e '.[envs]'): ", ImportError):
            import matplotlib  # noqa: F401  (the PNG pictures need it)

            from taluva_ai.pictures import save_pictures
        try:
            files = save_pictures(path, args.png, "png")
        except OSError as e:
            reason = _os_reason(e, args.png, name_first=True)
            raise _ArgError(f"--png {args.png}: {reason}") from None
        print(f"pictures: {len(files)} PNG files in {args.png}")
    return 0


def register(sub: argparse._SubParsersAction[_AgentsHelpParser]) -> None:
    """Add ``taluva replay``, its options and its handler to the subcommands ``sub``."""
    rep = _add_command(
        sub, "replay",
        help="replay a game record, checking every action and the result",
        description="Replay a game record (JSON Lines, as written by 'taluva play --record' "
        "or a tournament): every action is checked for legality and the seat to move, and the "
        "result line against the replayed end. Prints the result; on a bad record prints "
        "'FILE: line N: ...' on stderr and exits with status 1.",
        examples=[
            "taluva replay game.jsonl",
            "taluva replay runs/demo/games/000-0000-0.jsonl --show",
        ],
        handler=_cmd_replay)
    rep.add_argument("record", metavar="RECORD", help="the record file (.jsonl)")
    rep.add_argument("--show", action="store_true", help="print every position and action")
    _no_color_option(rep)
    rep.add_argument("--svg", metavar="DIR", default=None,
                     help="write one SVG picture per position into DIR: DIR/0000.svg the initial "
                     "position, then one after each action (the board of 'taluva serve'; "
                     "every game: Taluva's island, Thurn und Taxis's map)")
    rep.add_argument("--png", metavar="DIR", default=None,
                     help="write one PNG picture per position into DIR (Taluva records; needs "
                     "matplotlib)")
