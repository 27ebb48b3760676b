"""``taluva play``: one game between agents, its result (and record)."""

from __future__ import annotations

import argparse
import sys

from taluva_ai.cli.core import (
    _AGENTS_HELP,
    _add_command,
    _AgentsHelpParser,
    _ArgError,
    _check_output_path,
    _make_game,
    _no_color_option,
    _os_reason,
    _refused,
    _rule_options,
    _rules_from_args,
    _RunError,
    _seed,
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
        with _refused("--players: ", ValueError, ImportError, AttributeError):
            agents.append(make_agent(spec))
            check_fits(agents[-1], game)
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


def register(sub: argparse._SubParsersAction[_AgentsHelpParser]) -> None:
    """Add ``taluva play``, its options and its handler to the subcommands ``sub``."""
    play = _add_command(
        sub, "play",
        help="play one game between agents and print the result",
        description="Play one game between 2-4 agents (seat order as given; the number of "
        "--players sets the number of players), print the result: winners, end reason, "
        "returns and the pieces each seat built. The seed fixes the tile order and the agents' "
        "random choices, so the same command plays the same game.",
        examples=[
            "taluva play --players greedy random --seed 7 --record game.jsonl --show",
            "taluva play --players greedy greedy random --ranked --tiles-per-player 12",
            "taluva play --solo --players greedy --show",
        ],
        handler=_cmd_play, agents_help=True)
    play.add_argument("--players", nargs="+", required=True, metavar="AGENT",
                      help=_AGENTS_HELP + "; one per seat")
    play.add_argument("--seed", type=_seed, default=None,
                      help="game seed (default: a random one, printed)")
    play.add_argument("--record", default=None, metavar="FILE",
                      help="write the game record (JSON Lines) to FILE")
    play.add_argument("--show", action="store_true",
                      help="print every position (hex rows offset by half a hex, coordinates "
                      "under each hex, a legend with the first) and every action (with agent "
                      "statistics)")
    _no_color_option(play)
    _rule_options(play)
