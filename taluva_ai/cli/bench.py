"""``taluva bench``: the benchmarks of :mod:`taluva_ai.bench` (and the compile time of
:mod:`taluva_ai.compile_bench`), as text or JSON."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from taluva_ai.cli.core import (
    _add_command,
    _AgentsHelpParser,
    _ArgError,
    _check_output_path,
    _game_option,
    _os_reason,
)


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
    commands = [shlex.split(c) for c in args.compile_command]
    for c in commands:
        if c and c[0] == "taluva":
            c.pop(0)
    try:
        res = run_bench(games=args.games, repeats=args.repeats, engine=engine, mcts=args.mcts,
                        mcts_sims=args.mcts_sims, env=args.env, net=args.net, game=args.game,
                        solo=args.solo, selfplay=args.selfplay, inference=args.inference,
                        max_batch=args.max_batch, say=_progress_line, compiling=args.compile,
                        compile_commands=commands or None)
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
                st = v.get("settings") or sp
                sims = (f"{st['sims']} sims/move" if "fast_sims" not in st else
                        f"{st['sims']} sims on {100 * st['full_search_prob']:.0f}% of the "
                        f"moves, else {st['fast_sims']}")
                sites = ", build-site inputs" if st.get("build_sites") else ""
                print(f"selfplay {preset} ({v['parameters']:,} parameters, view radius "
                      f"{v['view_radius']}{sites}, {v['stem_kernel']}x{v['stem_kernel']} stem, "
                      f"{v['backend']} in chunks of {v['max_batch']}, "
                      f"{st['parallel_games']} games at once, {sims}, leaf "
                      f"batch {st['leaf_batch']}): {v['sims_per_s']:.0f} simulations/s "
                      f"({v['sims_per_cpu_s']:.0f} per CPU second), {v['positions_per_s']:.1f} "
                      f"positions/s, {100 * v['net_share']:.0f}% in the network; "
                      f"{v['ratio']:.2f}x the rollout MCTS ({v['ratio_cpu']:.2f}x per CPU "
                      "second)")
        print(f"rollout MCTS (UCT, random rollouts, same invocation): "
              f"{sp['rollout_mcts_sims_per_s']:.0f} simulations/s "
              f"({sp['rollout_mcts_sims_per_cpu_s']:.0f} per CPU second)")
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


def _progress_line(line: str) -> None:
    """Print a long section's progress line on stderr (the figures go to stdout)."""
    print(line, file=sys.stderr, flush=True)


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


def register(sub: argparse._SubParsersAction[_AgentsHelpParser]) -> None:
    """Add ``taluva bench``, its options and its handler to the subcommands ``sub``."""
    bench = _add_command(
        sub, "bench",
        help="measure the engine's speed",
        description="Measure the engine: random full games per second for 2, 3 and 4 players "
        "(dense legal mask at every decision) and the mean time of one legal-mask "
        "computation at the tile and at the build step. Each figure is the median of "
        "--repeats runs after a warm-up.",
        examples=[
            "taluva bench",
            "taluva bench --json --games 500 --out runs/bench.json",
        ],
        handler=_cmd_bench)
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
                       "with a 1x1 stem, small; then the 2-player recipe's self-play, "
                       "builtin-2p): simulations/s (per wall and per CPU second), "
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
                       "ONNX Runtime) per preset, view radius 13 and 11, batch "
                       "1, 8, 16, 32, 64, 128, 256, positions per wall and per CPU second (needs "
                       "taluva-ai[train])")
