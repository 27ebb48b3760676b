"""Self-play games of one fixed network at a deeper search: training samples from a stronger
teacher.

A training run's self-play searches few simulations a move (``strong2``: 64 in a full
search, 16 in a fast one; its continuation ``s2-more``: 128 and 32), and its policy targets
are only as good as those searches. The same network searching more, or with greedy rollouts
mixed into its leaf values, is a stronger player (``az:builtin`` wins 83.0% of 200 paired
games against greedy at 200 simulations, 88.0% at 800, 98.0% with rollouts at lambda 0.5),
so its games at that search are samples from a stronger teacher (expert iteration, Anthony
et al. 2017; the deeper search as the improvement operator, as in MuZero's Reanalyse,
Schrittwieser et al. 2021; docs/alphazero.md measures fine-tunes on them). This plays
them with the run's own self-play code (:func:`~taluva_ai.agents.alphazero.selfplay.selfplay_task`:
the compiled batched search, the Gumbel root, the run's sample format) and writes one folder
of sample files per round, ``OUT/round_NNNN/worker_W.npz``, which ``experiments/heldout.py``
and ``experiments/compare_shapes.py`` read like a run's ``selfplay/iter_NNNN``.

Every move is a full search of ``--sims`` simulations (no playout cap randomisation), so
every decision is a sample. Game ``g`` of round ``k`` is dealt from
``game_seeds(seed, k, g)``, so the same arguments (the same checkpoint and config.toml,
checked by their SHA-256 in ``teacher.json``) give the same samples, byte for byte.
Run again after an interruption (Ctrl-C, a killed process), the command skips the finished
rounds and plays the round in progress again from its start: the games of a worker share
search batches and their random stream, so replaying only the missing ones would change them
(the training loop's self-play does keep them; :mod:`~taluva_ai.agents.alphazero.selfplay`).

    python experiments/teacher_games.py --run packs/strong2 \\
        --checkpoint packs/strong2/checkpoints/iter_0040.pt --sims 800 --games 100 \\
        --rounds 2 --workers 2 --out runs/teacher800
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heldout import positive

from taluva_ai.agents.alphazero.config import ConfigError, load_config, make_encoder_for
from taluva_ai.agents.alphazero.net import CheckpointError, load_checkpoint, net_from_checkpoint
from taluva_ai.agents.alphazero.selfplay import run_tasks, selfplay_task, worker_init
from taluva_ai.parallel import LocalBackend
from taluva_ai.runfiles import sha256_file, write_atomic


def teacher_config(run: Path, sims: int, games: int, seed: int, rollout: str = "none",
                   rollout_lambda: float = 0.0) -> Any:
    """The run's config (``run/config.toml``) with its self-play made a teacher's: every move
    a full search of ``sims`` simulations, leaf values mixed with ``rollout`` rollouts at
    ``rollout_lambda`` (``[selfplay] rollout``, ``rollout_lambda``), ``games`` games a
    round, no league opponent, no game records, and ``seed``.

    Raises:
        ConfigError: the result is not a valid run config (e.g. a rollout without a lambda).
    """
    from taluva_ai.agents.alphazero.config import config_from_dict

    cfg = load_config(run / "config.toml")
    sp = dataclasses.replace(cfg.selfplay, sims=sims, fast_sims=sims, full_search_prob=1.0,
                             games=games, opponent="", opponent_share=0.0, records=0,
                             rollout=rollout, rollout_lambda=rollout_lambda)
    cfg = dataclasses.replace(cfg, selfplay=sp, seed=seed)
    return config_from_dict(cfg.to_dict(), "teacher config")  # checked as a run's


#: Upper bounds of --sims and --games (far above any use; they keep a typo from exhausting
#: the memory).
MAX_SIMS, MAX_GAMES = 100_000, 100_000
#: The teacher.json keys that must match for an --out to be continued.
SAME = ("sims", "rollout", "lambda", "games", "workers", "seed", "checkpoint_sha256",
        "config_sha256")


def read_meta(path: Path) -> dict[str, Any]:
    """``teacher.json``.

    Raises:
        ValueError: it is unreadable or not of this script's form (the message says why).
    """
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ValueError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
    rounds = meta.get("rounds") if isinstance(meta, dict) else None
    if not isinstance(rounds, list) or not all(
            isinstance(r, dict) and isinstance(r.get("round"), int) for r in rounds):
        raise ValueError("not a teacher_games.py record (a 'rounds' list of rounds)")
    return meta


def round_done(d: Path, workers: int) -> bool:
    """Whether round folder ``d`` holds every worker's sample file and statistics."""
    return all((d / f"worker_{w}.npz").is_file() and (d / f"worker_{w}.json").is_file()
               for w in range(workers))


def play_round(ex: Any, cfg: Any, k: int, checkpoint: Path, d: Path, workers: int
               ) -> dict[str, Any]:
    """Round ``k``'s games on the workers of ``ex``; returns its figures."""
    d.mkdir(parents=True, exist_ok=True)
    tasks = [{"config": cfg.to_dict(), "iteration": k, "worker": w, "workers": workers,
              "checkpoint": str(checkpoint), "out": str(d / f"worker_{w}.npz"),
              "records_dir": str(d), "device": "cpu",
              "progress": str(d / f".worker_{w}.progress"),
              "keep_finished": False}  # an interrupted round is played again whole
             for w in range(workers)]
    t0 = time.perf_counter()
    stats = run_tasks(ex, selfplay_task, tasks, cfg.selfplay.games, f"round {k}")
    for t in tasks:
        Path(t["progress"]).unlink(missing_ok=True)
    return {"round": k, "games": sum(s["games"] for s in stats),
            "samples": sum(s["samples"] for s in stats),
            "simulations": sum(s["simulations"] for s in stats),
            "wall_s": round(time.perf_counter() - t0, 1),
            "worker_s": round(sum(s["seconds"] for s in stats), 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=Path, required=True,
                    help="the training run (or pack) whose config.toml gives the game, the "
                         "encoding and the self-play settings")
    ap.add_argument("--checkpoint", type=Path, required=True,
                    help="the network that plays (a .pt checkpoint of that run)")
    ap.add_argument("--sims", type=positive, default=800,
                    help="simulations of every move's search (800)")
    ap.add_argument("--rollout", choices=["none", "greedy", "random"], default="none",
                    help="rollouts mixed into the leaf values (none)")
    ap.add_argument("--lambda", dest="rollout_lambda", type=float, default=0.0,
                    help="weight of the rollouts' result in a leaf value (0; > 0 with "
                         "--rollout)")
    ap.add_argument("--games", type=positive, default=100, help="games a round (100)")
    ap.add_argument("--rounds", type=positive, default=1, help="rounds to play (1)")
    ap.add_argument("--workers", type=positive, default=2, help="worker processes (2)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the deals and searches (0)")
    ap.add_argument("--out", type=Path, required=True,
                    help="folder of the rounds (OUT/round_NNNN/worker_W.npz) and of "
                         "teacher.json; an existing one is continued")
    args = ap.parse_args(argv)
    if args.sims > MAX_SIMS or args.games > MAX_GAMES:
        ap.error(f"--sims and --games go up to {MAX_SIMS:,} and {MAX_GAMES:,}, got "
                 f"{args.sims} and {args.games}")
    if args.workers > args.games:
        ap.error(f"--workers ({args.workers}) must not exceed --games ({args.games}): a "
                 "worker without games would write an empty sample file")
    if not 0 <= args.rollout_lambda <= 1:
        ap.error(f"--lambda must lie in [0, 1], got {args.rollout_lambda:g}")
    if (args.rollout != "none") != (args.rollout_lambda > 0):
        ap.error(f"--rollout and --lambda go together: --rollout {args.rollout} with "
                 f"--lambda {args.rollout_lambda:g} (give both, or neither)")
    if str(args.out) in ("", "."):
        ap.error("--out: give a folder of its own for the rounds")
    for p, what in ((args.run / "config.toml", "--run"), (args.checkpoint, "--checkpoint")):
        if not p.is_file():
            ap.error(f"{what}: {p} is not a file")
    try:
        cfg = teacher_config(args.run, args.sims, args.games, args.seed, args.rollout,
                             args.rollout_lambda)
    except ConfigError as e:  # a bad value, or a config this version refuses: one line
        ap.error(str(e).splitlines()[0])
    try:  # here, not in the workers: a network that does not load is refused in one line
        net_from_checkpoint(load_checkpoint(args.checkpoint), args.checkpoint,
                            make_encoder_for(cfg))
    except CheckpointError as e:
        ap.error(str(e).splitlines()[0])
    meta_path = args.out / "teacher.json"
    meta = {"run": str(args.run), "checkpoint": str(args.checkpoint), "sims": args.sims,
            "rollout": args.rollout, "lambda": args.rollout_lambda, "games": args.games,
            "workers": args.workers, "seed": args.seed,
            "checkpoint_sha256": sha256_file(args.checkpoint),
            "config_sha256": sha256_file(args.run / "config.toml")}
    rounds: list[dict[str, Any]] = []
    if meta_path.exists():
        try:
            old = read_meta(meta_path)
        except ValueError as e:
            ap.error(f"--out: {meta_path} is damaged ({e}); use another --out")
        differ = [k for k in SAME if old.get(k) != meta[k]]
        if differ:
            ap.error(f"--out: {args.out} holds games of other arguments (they differ in "
                     f"{', '.join(differ)}); use another --out")
        rounds = old["rounds"]
    elif args.out.is_dir() and any(args.out.glob("round_*")):
        ap.error(f"--out: {args.out} holds rounds but no teacher.json saying how they were "
                 "played; use another --out")
    ex = None
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        write_atomic(meta_path, json.dumps({**meta, "rounds": rounds}, indent=1) + "\n")
        ex = LocalBackend().executor(args.workers, stateful=True, initializer=worker_init,
                                     initargs=(1,))
        for k in range(args.rounds):
            d = args.out / f"round_{k:04d}"
            if round_done(d, args.workers):
                continue
            fig = play_round(ex, cfg, k, args.checkpoint, d, args.workers)
            rounds = [r for r in rounds if r["round"] != k] + [fig]
            write_atomic(meta_path, json.dumps({**meta, "rounds": rounds}, indent=1) + "\n")
            print(f"round {k}: {fig['games']} games, {fig['samples']} samples in "
                  f"{fig['wall_s']} s", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print(f"interrupted; the same command continues from {args.out} (finished rounds are "
              "kept, the round in progress is played again)", file=sys.stderr)
        return 130
    except OSError as e:  # the folder cannot be made or written (full disk, read-only...)
        name = e.filename or args.out
        ap.exit(2, f"{ap.prog}: error: --out: {name}: {e.strerror or e}; the same command "
                   "continues once it can write\n")
    finally:
        if ex is not None:
            ex.close(cancel=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
