"""``taluva train``: AlphaZero training runs (:mod:`taluva_ai.agents.alphazero.train`): a new
run, its resume, its pack."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

from taluva_ai.cli.core import (
    _add_command,
    _AgentsHelpParser,
    _ArgError,
    _fix_hint,
    _iteration,
    _os_reason,
    _ray_option,
    _refused,
    _RunError,
)
from taluva_ai.errors import BackendError, RunConfigError, RunFileError


def _cmd_train(args: argparse.Namespace) -> int:
    if args.pack is not None:
        return _cmd_train_pack(args)
    if args.resume is not None:
        if args.config is not None or args.out is not None:
            raise _ArgError("--resume DIR continues a run with its own config: give no "
                            "--config or --out")
        if not args.resume.strip():
            raise _ArgError("--resume: empty directory name")
    elif args.redo is not None:
        raise _ArgError("--redo N goes with --resume DIR (it redoes iterations of a run)")
    elif args.config is None or args.out is None:
        raise _ArgError("a new run needs --config TOML and --out DIR (or --resume DIR)")
    elif not args.out.strip():
        raise _ArgError("--out: empty directory name")
    if args.ray is not None:  # Ray and its address are checked before any work
        from taluva_ai.parallel import import_ray, parse_ray_address

        with _refused("", BackendError):
            parse_ray_address(args.ray)
            import_ray()
    config = importlib.import_module("taluva_ai.agents.alphazero.config")  # no torch: fast
    if args.config is not None:
        with _refused("", config.ConfigError):
            config.load_config(args.config)  # a bad config fails before torch is imported
    train = _train_module()
    config_error = config.ConfigError
    checkpoint_error = importlib.import_module("taluva_ai.agents.alphazero.net").CheckpointError
    out = Path(str(args.resume or args.out))
    try:
        state = train.train_main(args.config, args.out, args.resume,
                                 progress=not args.no_progress, ray=args.ray, redo=args.redo)
    except (config_error, RunConfigError, BackendError) as e:
        raise _ArgError(str(e)) from None
    except (checkpoint_error, RunFileError) as e:
        raise _RunError(str(e)) from None
    except FloatingPointError as e:  # a diverged network (Trainer.step)
        raise _RunError(f"{e}: taluva train --resume {out}") from None
    except OSError as e:
        print(f"{e.filename or out}: {_os_reason(e, e.filename or out)}; {_fix_hint(e)}, "
              f"then continue with: taluva train --resume {out}", file=sys.stderr)
        return 1
    print(f"finished iteration {state['iteration']}; best network: iteration "
          f"{state['best_iteration']} ({out / 'best.pt'}); metrics: {out / 'metrics.jsonl'}")
    return 0


def _train_module() -> Any:
    """:mod:`taluva_ai.agents.alphazero.train`, imported when a command needs it (PyTorch).

    Raises:
        _ArgError: PyTorch or TensorBoard is missing (naming the extra).
    """
    try:
        return importlib.import_module("taluva_ai.agents.alphazero.train")
    except ImportError as e:
        raise _ArgError(f"training needs PyTorch and TensorBoard: pip install -e '.[train]' "
                        f"({e})") from None


def _cmd_train_pack(args: argparse.Namespace) -> int:
    """``taluva train --pack RUN OUT``: a run's small state, to continue it elsewhere."""

    others = [name for name, v in (("--config", args.config), ("--out", args.out),
                                   ("--resume", args.resume), ("--redo", args.redo),
                                   ("--ray", args.ray)) if v is not None]
    if others:
        raise _ArgError(f"--pack RUN OUT goes with no {', '.join(others)} (it copies a run's "
                        "state; continue the pack with: taluva train --resume OUT)")
    run, out = args.pack
    if not run.strip() or not out.strip():
        raise _ArgError("--pack RUN OUT: empty directory name")
    train = _train_module()
    try:
        rep = train.pack_run(run, out)
    except RunConfigError as e:
        raise _ArgError(str(e)) from None
    except RunFileError as e:
        raise _RunError(str(e)) from None
    except OSError as e:
        name = e.filename or out
        print(f"{name}: {_os_reason(e, name)}; {_fix_hint(e)}, then pack again",
              file=sys.stderr)
        return 1
    size = train.format_size
    print(f"packed iteration {rep['iteration']} of {run} into {out}:")
    for f in rep["files"]:
        print(f"  {'wrote    ' if f['written'] else 'unchanged'}  {size(f['bytes']):>9}  "
              f"{f['path']}")
    games = rep["replay_games"]
    replay = "the replay data" if games is None else \
        f"the replay data ({games} games, {rep['replay_samples']} samples in the buffer)"
    print(f"{len(rep['files'])} files, {size(rep['bytes'])} in all; left out: "
          f"{rep['left_out_files']} run files, {size(rep['left_out_bytes'])}: {replay}, game "
          f"records, tournament games, older networks, tb/")
    print(f"continue the run (on any machine) with: taluva train --resume {out}")
    return 0


def register(sub: argparse._SubParsersAction[_AgentsHelpParser]) -> None:
    """Add ``taluva train``, its options and its handler to the subcommands ``sub``."""
    train = _add_command(
        sub, "train",
        help="AlphaZero training: self-play, replay, training, gating",
        description="Train a network by self-play (docs/alphazero.md). A new run reads a TOML "
        "config (experiments/configs/*.toml) and writes everything into the run directory "
        "--out: the config, metrics.jsonl, TensorBoard logs (tb/), checkpoints (best.pt, "
        "latest.pt, checkpoints/), self-play samples and sample game records, gating and "
        "anchor tournaments. A killed run continues with --resume DIR, losing at most the "
        "iteration in progress. The trained network plays as 'az:path=DIR/best.pt'. Needs "
        "taluva-ai[train].",
        examples=[
            "taluva train --config experiments/configs/demo.toml --out runs/demo",
            "taluva train --resume runs/demo",
            "taluva train --resume runs/demo --ray 10.0.0.5:6379   (continue on a Ray cluster)",
            "taluva train --pack runs/demo packs/demo   (its small state, to resume elsewhere)",
            "taluva tournament --agents greedy "
            "az:path=runs/demo/best.pt,sims=200,rollout=greedy,lambda=0.5 --games 200 --out "
            "runs/demo_eval",
        ],
        handler=_cmd_train)
    train.add_argument("--config", metavar="TOML", default=None,
                       help="config file of a new run")
    train.add_argument("--out", metavar="DIR", default=None, help="run directory of a new run")
    train.add_argument("--resume", metavar="DIR", default=None,
                       help="continue the run in DIR (its config.toml)")
    _ray_option(train, "run", how=": self-play workers as Ray actors, gating and anchor games "
                "as Ray tasks, the learner here", after=". A run resumes on either backend")
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
