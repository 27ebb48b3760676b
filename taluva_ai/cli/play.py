"""``taluva play``: one game between agents, its result (and record)."""

from __future__ import annotations

import argparse
import sys

from taluva_ai.cli.core import (
    _ArgError,
    _check_output_path,
    _make_game,
    _os_reason,
    _rules_from_args,
    _RunError,
)
from taluva_ai.cli.display import _color, _print_result, _show
from taluva_ai.errors import IllegalActionError
from taluva_ai.protocol import GameState
from taluva_ai.records import MoveEvent


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
