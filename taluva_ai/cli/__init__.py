"""The ``taluva`` command: play, replay, tournament, pgn, serve, bench, train (``taluva
<command> --help``).

Exit codes: 0 success; 1 a record that fails to replay, a file that cannot be read or written,
or an agent that fails during a game; 2 bad arguments (unknown agent, invalid rule option, a
path that cannot be a file, ...), argparse style; 130 interrupted. Every error is one line on
stderr, never a traceback.

The package holds one module per subcommand (its handler, ``_cmd_<command>``), over a shared
core (:mod:`~taluva_ai.cli.core`: errors, argument types and checks, the rule options) and
:mod:`~taluva_ai.cli.display` (a game as text, for play and replay). :func:`build_parser` and
:func:`main` stand here.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from taluva_ai.cli.bench import _cmd_bench
from taluva_ai.cli.core import (
    _FORMATTER,
    _AgentsHelpParser,
    _ArgError,
    _fail,
    _game_option,
    _iteration,
    _port,
    _rule_options,
    _RunError,
    _seed,
)
from taluva_ai.cli.display import format_solo_score
from taluva_ai.cli.pgn import _cmd_pgn
from taluva_ai.cli.play import _cmd_play
from taluva_ai.cli.replay import _cmd_replay
from taluva_ai.cli.serve import _cmd_serve
from taluva_ai.cli.tournament import _cmd_tournament, format_table
from taluva_ai.cli.train import _cmd_train

__all__ = ["build_parser", "format_solo_score", "format_table", "main"]


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
