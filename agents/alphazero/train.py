"""The AlphaZero training loop (``taluva train``): self-play, replay, training, gating, anchors,
in a resumable run directory.

Iteration 0 makes the first network: a warm start on expert games (``[warm_start]``) or a
random initialisation. Iteration ``k >= 1``:

1. **self-play**: ``[selfplay] games`` games by the current best network, in ``workers``
   workers (:func:`~.selfplay.selfplay_task`; processes on this machine, or Ray actors with
   ``--ray``), each writing its samples to ``selfplay/iter_<k>/worker_<w>.npz``;
2. **replay**: the new samples join the buffer, which keeps the most recent
   ``[replay] window_games`` games;
3. **training**: ``[train] steps`` optimiser steps on batches drawn from the buffer, each
   sample under a random symmetry, continuing from the previous iteration's weights and
   optimiser state; the result is the candidate ``checkpoints/iter_<k>.pt``;
4. **gating**: the candidate plays the best (``[gating]``) and replaces it when it wins;
5. **anchors**: every ``[anchors] every`` iterations and after the last one, the best network
   plays the fixed opponents; win rates and Elo go to the metrics.

Run directory (docs/alphazero.md)::

    config.toml, config.json   the config (config.toml is what --resume reads)
    init.pt                    a copy of the [warm_start] init checkpoint, if any (--redo 0)
    state.json                 the last finished iteration and the best network (written last)
    metrics.jsonl              one line per finished iteration
    best.pt, latest.pt         copies of the best and of the latest network
    checkpoints/iter_<k>.pt    every iteration's network; trainer_<k>.pt its optimiser state
    selfplay/iter_<k>/         sample files (+ .json statistics) of each worker
    records/iter_<k>/          sample self-play game records (JSON Lines)
    gating/iter_<k>/, anchors/iter_<k>/<opponent>/   tournaments (records, results.json)
    tb/                        TensorBoard event files

Everything an iteration writes is keyed by its number and ``state.json`` is replaced last, so
a run killed at any point resumes (``taluva train --resume DIR``) from the last finished
iteration, losing only the one in progress; every random choice derives from the seed and the
iteration number, so the resumed run makes the same networks as an uninterrupted one.

Run files are checked: ``state.json`` records the SHA-256 of every file an iteration wrote
(``files``, by path in the run directory) and of every line of ``metrics.jsonl``
(``metrics``), and carries its own (``sha256``). A resume checks them all before it loads
anything: a missing or damaged file that training reads (the last network and optimiser
state, the best network, the sample files, the metrics) stops it with one line per file
naming it and the remedy, ``taluva train --resume DIR --redo K`` (:class:`TrainingRun`'s
``redo``: the run goes back to the end of iteration ``K - 1`` and makes iterations ``K``
onwards again, the same as before); one that training does not read (a game record, an old
network, a gating table) is named with the same remedy and the run goes on; ``best.pt`` and
``latest.pt``, copies, are restored from ``checkpoints/``.

A run moves to another machine, or into git between sittings, as a *pack* of its small state
(``taluva train --pack RUN OUT``, :func:`pack_run`; docs/alphazero.md, "Moving a run to another
machine"): the config, ``metrics.jsonl``, the last finished iteration's network and optimiser
state, the best network, the anchor tables, and a ``state.json`` that records exactly these
files (and a ``pack`` record: the iteration, the run, what was left out); no replay data, game
records or tournament games. ``taluva train --resume OUT`` continues it with an empty replay
buffer, rebuilt from the self-play of the following iterations (saying so on stderr), so the
continued run is not bit-identical to one that kept its buffer, but it is reproducible from
then on (the same pack makes the same networks). A damaged or missing file of a pack is named
with its remedy, packing the run again; ``--redo`` reaches back only to iterations after it.

Where the work runs is the run's backend (:mod:`taluva_ai.parallel`): worker processes on this
machine, or a Ray cluster (``taluva train --ray``, docs/ray.md: self-play workers as Ray
actors, gating and anchor games as Ray tasks, the learner in this process). The run directory
is the same either way, so a run started on one backend resumes on the other.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from taluva_ai.agents.alphazero.config import (
    ConfigError,
    RunConfig,
    load_config,
    make_encoder_for,
)
from taluva_ai.agents.alphazero.encoder import NetEncoder
from taluva_ai.agents.alphazero.gating import gate, play_match
from taluva_ai.agents.alphazero.net import (
    CheckpointError,
    NetConfig,
    PolicyValueNet,
    build_net,
    init_from_checkpoint,
    load_checkpoint,
    parameter_count,
    resolve_device,
    save_checkpoint,
    save_torch,
)
from taluva_ai.agents.alphazero.pack import format_size, pack_run
from taluva_ai.agents.alphazero.replay import ReplayBuffer
from taluva_ai.agents.alphazero.rundir import (
    CONFIG_HISTORY,
    INIT_NAME,
    RUN_FORMAT,
    RunDirectory,
    _opponent_stats,
    _safe_name,
    _seed,
    _spec_path,
    read_metrics,
    read_state,
)
from taluva_ai.agents.alphazero.trainer import Trainer
from taluva_ai.errors import RunConfigError
from taluva_ai.parallel import (
    Backend,
    Executor,
    LocalBackend,
    cpu_count,
    make_backend,
)
from taluva_ai.protocol import make_game
from taluva_ai.runfiles import (
    naming,
    run_lock,
    sha256_bytes,
    sigterm_as_interrupt,
)

#: The names this module has always offered, now kept in :mod:`.trainer` (the trainer),
#: :mod:`.rundir` (the run directory and its resume) and :mod:`.pack` (moving a run).
__all__ = ["CONFIG_HISTORY", "INIT_NAME", "RUN_FORMAT", "Trainer", "TrainingRun",
           "format_size", "pack_run", "read_metrics", "read_state", "train_main"]


# -- the run ----------------------------------------------------------------------------------


class TrainingRun(RunDirectory):
    """A training run in a run directory (see the module docstring).

    Args:
        out: the run directory.
        config: the config for a new run; None to resume the run in ``out``.
        progress: tqdm progress bars on stderr.
        backend: where self-play, gating and anchor games run (:mod:`taluva_ai.parallel`;
            None: this machine). ``workers = 0`` means one worker per CPU of the backend.
        redo: with a resume, make iterations ``redo`` onwards again: the run goes back to the
            end of iteration ``redo - 1`` (0: to its start), the files of the later iterations
            are removed, and the run goes on from there, making the same networks as before
            (the remedy the run names for a damaged or missing file).

    Raises:
        RunConfigError: a new run into a directory that holds a run (resume it instead), a
            resume of a directory that holds none, a directory in use by another run,
            ``redo`` without a resume or beyond the finished iterations.
        ConfigError: a bad config (checked before any work).
    """

    def __init__(self, out: str | Path, config: RunConfig | None = None,
                 progress: bool = True, backend: Backend | None = None,
                 redo: int | None = None) -> None:
        self.out = Path(out)
        self.progress = progress
        if str(out) == "":
            raise RunConfigError("the run directory is an empty path")
        if self.out.exists() and not self.out.is_dir():
            raise RunConfigError(f"{self.out}: not a directory")
        if redo is not None and (isinstance(redo, bool) or not isinstance(redo, int)
                                 or redo < 0):
            raise RunConfigError(f"--redo: an iteration number >= 0, got {redo!r}")
        cfg_path = self.out / "config.toml"
        if config is None:
            if not cfg_path.is_file():
                raise RunConfigError(f"{self.out} holds no training run (no config.toml) to "
                                     "resume; start one with --config and --out")
            config = load_config(cfg_path)
            self.resuming = True
        else:
            if redo is not None:
                raise RunConfigError("--redo goes with --resume DIR (it redoes iterations of "
                                     "an existing run)")
            if cfg_path.exists() or (self.out / "state.json").exists():
                raise RunConfigError(f"{self.out} already holds a training run; continue it "
                                     f"with 'taluva train --resume {self.out}' or use another "
                                     "--out")
            if self.out.is_dir() and any(self.out.iterdir()):
                raise RunConfigError(f"{self.out} is not empty (it holds "
                                     f"{', '.join(sorted(p.name for p in self.out.iterdir())[:4])}"
                                     "...); a new training run needs a new or empty --out")
            self.resuming = False
        self.redo = redo
        #: the run's whole config (``[[schedule]]`` included), as ``config.toml`` holds it
        self.base_cfg = config
        #: the settings in force: the base config's at the iteration in progress
        #: (:meth:`RunConfig.at`), set before each iteration
        self.cfg = config
        self.backend = backend or LocalBackend()
        self.workers = config.workers or self.backend.cpus()
        try:
            self.device = resolve_device(config.device)
        except ValueError as e:  # e.g. device = "cuda" on a machine without CUDA
            raise ConfigError(f"{cfg_path if self.resuming else 'config'}: {e}; use "
                              "device = \"auto\" or \"cpu\"") from None
        self.game = make_game(config.game.name, num_players=config.game.num_players,
                              **config.game.rules)
        self.encoder: NetEncoder = make_encoder_for(config)
        self.net_config = NetConfig(**dataclasses.asdict(config.net))
        self.executor: Executor | None = None
        self._written: dict[str, str] = {}  # SHA-256 of the files of the iteration in progress
        self.state: dict[str, Any] | None = None  # state.json as read by _load_state
        #: the hand edits of config.toml found when a resume starts (:meth:`_config_edits`)
        self._edits: tuple[list[str], dict[str, list[Any]]] | None = None
        # a new run's (or a --redo 0's) first network, made (and [warm_start] init checked)
        # before any file is written or removed
        self._start_net = self._initial_net() if not self.resuming or redo == 0 else None

    # -- public -------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Run (or continue) the training to ``iterations``; returns the final state
        (``state.json``'s content).

        Raises:
            RunFileError: a file the run needs is missing or damaged (one line each, naming
                it and the ``redo`` that makes it again); nothing was changed.
            OSError: a file cannot be written (naming it, e.g. a full disk).
        """
        self.out.mkdir(parents=True, exist_ok=True)
        with run_lock(self.out, "training run"), sigterm_as_interrupt(), \
                self.backend.reserve(self.workers):
            try:
                return self._run()
            finally:
                self._close_workers()

    # -- setup --------------------------------------------------------------------------------

    def _threads(self) -> int:
        return self.cfg.torch_threads or cpu_count()

    def _initial_net(self) -> PolicyValueNet:
        """Iteration 0's network before its warm start: ``[warm_start] init``'s, widened to
        the run's encoder (:func:`~.net.init_from_checkpoint`), else a seeded random one.

        A resumed run (``--redo 0``) reads the copy the run kept, :data:`INIT_NAME`, so
        that it makes the same network whatever became of ``init`` or the current
        directory (a run from before the copy reads ``init`` itself).

        Raises:
            CheckpointError: ``init`` is missing, damaged, or does not fit the run (one line
                naming ``[warm_start] init``)."""
        init = self.cfg.warm_start.init
        if init:
            kept = self.out / INIT_NAME
            path = kept if self.resuming and kept.is_file() else Path(init)
            try:
                return init_from_checkpoint(load_checkpoint(path), path, self.encoder,
                                            self.net_config)
            except CheckpointError as e:
                where = ("" if path.is_absolute() or path == kept else
                         f" (a relative path, looked up from {Path.cwd()})")
                fix = (f"; put a copy of the network the run started from there ({init})"
                       if path == kept else "")
                raise CheckpointError(f"[warm_start] init{where}: {e}{fix}") from None
        torch.manual_seed(_seed(self.cfg.seed, 0, 1))
        return build_net(self.encoder, self.net_config)

    def _workers(self, n: int) -> Executor:
        """The self-play workers: ``n`` of them, kept from one iteration to the next (on Ray,
        actors in the run's reservation of ``workers`` CPUs, :meth:`Backend.reserve`)."""
        from taluva_ai.agents.alphazero.selfplay import worker_init

        if self.executor is not None and self.executor.slots != n:
            self._close_workers()
        if self.executor is None:
            # one torch thread per worker: self-play batches are small, and several threads
            # per process on a busy machine spin-wait (measured 6x slower with 2 threads)
            self.executor = self.backend.executor(n, stateful=True, initializer=worker_init,
                                                  initargs=(1,))
        return self.executor

    def close(self) -> None:
        """Stop the run's workers (:meth:`run` does when it ends; for :meth:`selfplay`, whose
        caller holds the reservation: ``with run.backend.reserve(run.workers): ...``)."""
        self._close_workers()

    def _close_workers(self, cancel: bool = True) -> None:
        ex, self.executor = self.executor, None
        if ex is not None:
            ex.close(cancel=cancel)

    # -- the loop -----------------------------------------------------------------------------

    def _run(self) -> dict[str, Any]:
        from torch.utils.tensorboard import SummaryWriter

        from taluva_ai.warmup import progress_bar

        state = self._prepare()
        cfg = self.cfg
        start = 0 if state is None else int(state["iteration"]) + 1
        self.tb = SummaryWriter(str(self.out / "tb"), purge_step=start)
        torch.set_num_threads(self._threads())
        buffer = ReplayBuffer(self.encoder, cfg.replay.window_games)
        if state is None:
            net = (self._start_net if self._start_net is not None else
                   self._initial_net()).to(self.device)
            trainer = Trainer(net, cfg.train, self.device)
            state = {"format": RUN_FORMAT, "iteration": -1, "best": None,
                     "best_iteration": None, "elapsed_s": 0.0, "cpu_s": 0.0,
                     "promotions": []}
        else:
            net, trainer = self._restore(state, buffer)
            if "files" not in state:  # a run from before the checksums: record them now
                self._record_existing(state)
            pack = state.get("pack")
            if pack is not None and start == int(pack["iteration"]) + 1 and \
                    start <= cfg.iterations:
                games, samples = pack.get("replay_games"), pack.get("replay_samples")
                what = "the replay buffer's samples" if games is None else \
                    f"the samples of {games} games ({samples} samples) in its replay buffer"
                print(f"taluva train: {self.out} is a pack of iteration {start - 1} without "
                      f"its replay data ({what} were not carried): the buffer starts empty "
                      f"and is rebuilt from the self-play of iteration {start} on",
                      file=sys.stderr, flush=True)
        bar = progress_bar(total=cfg.iterations + 1, initial=start, desc="iterations",
                           unit="it", disable=not self.progress, position=0)
        try:
            for k in range(start, cfg.iterations + 1):
                t0, c0 = time.perf_counter(), process_tree_cpu_s()
                self.cfg = self.base_cfg.at(k)  # the [[schedule]]'s settings of iteration k
                trainer.cfg = self.cfg.train
                line = self._iteration(k, net, trainer, buffer, state)
                state["elapsed_s"] = round(state["elapsed_s"] + time.perf_counter() - t0, 3)
                line["elapsed_s"] = state["elapsed_s"]
                line["iteration_cpu_s"] = round(process_tree_cpu_s() - c0, 1)
                # a run from before this count: its total starts at its resume
                state["cpu_s"] = round(state.get("cpu_s", 0.0) + line["iteration_cpu_s"], 1)
                line["cpu_s"] = state["cpu_s"]
                self._finish_iteration(k, line, state)
                bar.update(1)
        finally:
            bar.close()
            self.tb.close()
        return state

    def _az_spec(self, checkpoint: Path, params: str) -> str:
        spec = f"az:path={_spec_path(checkpoint)}"
        return spec + ("," + params if params else "")

    def _iteration(self, k: int, net: PolicyValueNet, trainer: Trainer, buffer: ReplayBuffer,
                   state: dict[str, Any]) -> dict[str, Any]:
        cfg = self.cfg
        line: dict[str, Any] = {"iteration": k}
        if self.base_cfg.schedule:
            line["schedule"] = self.base_cfg.scheduled_keys(k)
        phases: dict[str, float] = {}
        torch.manual_seed(_seed(cfg.seed, k, 2))
        rng = np.random.default_rng(_seed(cfg.seed, k, 3))
        (self.out / "checkpoints").mkdir(exist_ok=True)

        # 1. self-play (or the expert games of the warm start)
        t = time.perf_counter()
        if k == 0:
            if cfg.warm_start.games:
                line["selfplay"] = self._play(0, None, cfg.warm_start.games, expert=True)
        else:
            line["selfplay"] = self._play(k, self._best(state), cfg.selfplay.games,
                                          expert=False)
        phases["selfplay"] = time.perf_counter() - t
        self._add_samples(k, buffer, self._written)
        steps = cfg.warm_start.steps if k == 0 else cfg.train.steps_for(len(buffer))

        # 2. training
        t = time.perf_counter()
        if steps and len(buffer):
            torch.set_num_threads(self._threads())
            lr = cfg.train.lr_at(k)
            trainer.set_lr(lr)
            from taluva_ai.warmup import progress_bar

            with progress_bar(total=steps, desc=f"train {k}", unit="step", leave=False,
                              disable=not self.progress) as tb:
                res = trainer.train(buffer, steps, rng, tb)
            line["train"] = {"steps": steps, "lr": lr, **{n: round(v, 5) for n, v in res.items()},
                             "buffer_games": buffer.games, "buffer_samples": len(buffer)}
        phases["train"] = time.perf_counter() - t
        ckpt = self.save_network(k, net)
        tpath = self.out / "checkpoints" / f"trainer_{k:04d}.pt"
        self._written[self._rel(tpath)] = save_torch(
            tpath, {"optimizer": trainer.optimizer.state_dict()})

        # 3. gating
        t = time.perf_counter()
        promoted = True
        if k > 0 and cfg.gating.enabled:
            best = self._best(state)
            res = gate(self._az_spec(ckpt, cfg.gating.az), self._az_spec(best, cfg.gating.az),
                       cfg.gating, self.out / "gating" / f"iter_{k:04d}",
                       _seed(cfg.seed, k, 4), self.workers, cfg.game.name,
                       cfg.game.num_players, cfg.game.rules, self.progress, self.backend)
            promoted = res["promoted"]
            line["gating"] = res
            self._record_dir(self.out / "gating" / f"iter_{k:04d}")
        phases["gating"] = time.perf_counter() - t
        if promoted:
            state["best"] = ckpt.relative_to(self.out).as_posix()  # the directory can move
            state["best_iteration"] = k
            state["promotions"].append(k)
        line["best_iteration"] = state["best_iteration"]

        # 4. anchors
        t = time.perf_counter()
        every = cfg.anchors.every
        if (every and k % every == 0) or k == cfg.iterations:
            line["anchors"] = self._anchors(k, self._best(state))
            if (self.out / "anchors" / f"iter_{k:04d}").is_dir():
                self._record_dir(self.out / "anchors" / f"iter_{k:04d}")
        phases["anchors"] = time.perf_counter() - t
        line["phase_seconds"] = {n: round(v, 3) for n, v in phases.items()}
        return line

    def save_network(self, k: int, net: PolicyValueNet) -> Path:
        """Write ``net`` as iteration ``k``'s checkpoint (``checkpoints/iter_<k>.pt``);
        returns its path."""
        cfg = self.cfg
        ckpt = self._checkpoint_path(k)
        ckpt.parent.mkdir(parents=True, exist_ok=True)
        self._written[self._rel(ckpt)] = save_checkpoint(
            ckpt, net, self.encoder, self.net_config,
            {"name": self.game.name, "options": self.game.options()},
            {"iteration": k, "seed": cfg.seed, "parameters": parameter_count(net),
             "leaf": {"rollout": cfg.selfplay.rollout, "lambda": cfg.selfplay.rollout_lambda,
                      "samples": cfg.selfplay.rollout_samples}})
        return ckpt

    def selfplay(self, k: int, checkpoint: Path, games: int) -> dict[str, Any]:
        """Play iteration ``k``'s self-play (``games`` games of the network ``checkpoint``)
        on the run's workers, as a training iteration does (files under ``selfplay/`` and
        ``records/``); returns its statistics (the ``selfplay`` entry of a metrics line:
        ``positions_per_s`` is samples per second of wall-clock time, worker start-up
        included). For measurements (experiments/bench_ray.py)."""
        return self._play(k, checkpoint, games, expert=False)

    def _play(self, k: int, checkpoint: Path | None, games: int, expert: bool
              ) -> dict[str, Any]:
        """Run the self-play (or expert) tasks of iteration ``k`` on the workers; returns the
        iteration's self-play statistics."""
        from taluva_ai.agents.alphazero.selfplay import expert_task, run_tasks, selfplay_task

        d = self.out / "selfplay" / f"iter_{k:04d}"
        rec = self.out / "records" / f"iter_{k:04d}"
        d.mkdir(parents=True, exist_ok=True)
        rec.mkdir(parents=True, exist_ok=True)
        nw = max(1, min(self.workers, games))
        tasks = [{"config": self.cfg.to_dict(), "iteration": k, "worker": w, "workers": nw,
                  "checkpoint": None if checkpoint is None else str(checkpoint),
                  "out": str(d / f"worker_{w}.npz"), "records_dir": str(rec),
                  "device": self.backend.worker_device or str(self.device),
                  "progress": str(d / f".worker_{w}.progress")}
                 for w in range(nw)]
        fn = expert_task if expert else selfplay_task
        t0 = time.perf_counter()
        torch.set_num_threads(1)  # a single worker plays in this process (no start-up)
        ex = self._workers(nw)
        try:
            stats = run_tasks(ex, fn, tasks, games,
                              f"{'expert' if expert else 'self-play'} {k}", self.progress)
        except BaseException:
            self._close_workers()
            raise
        for st in stats:  # the checksums of the files each task wrote
            for path, digest in st.pop("files", {}).items():
                self._written[self._rel(path)] = digest
        wall = time.perf_counter() - t0
        summaries = sorted((s for st in stats for s in st["summaries"]), key=lambda s: s["game"])
        samples = sum(st["samples"] for st in stats)
        sims = sum(st["simulations"] for st in stats)
        decisions = [s["decisions"] for s in summaries]
        reasons: dict[str, int] = {}
        for s in summaries:
            reasons[s["end_reason"]] = reasons.get(s["end_reason"], 0) + 1
        worker_s = sum(st["seconds"] for st in stats)
        return {
            "games": len(summaries), "samples": samples, "workers": nw,
            "wall_s": round(wall, 3),
            "positions_per_s": round(samples / wall, 3) if wall else None,
            "decisions_per_s": round(sum(decisions) / wall, 3) if wall else None,
            "sims_per_s": round(sims / wall, 1) if wall else None,
            "sims_per_s_per_worker": round(sims / worker_s, 1) if worker_s else None,
            "evaluations": sum(st["evaluations"] for st in stats),
            "recovered_games": sum(len(st["recovered_games"]) for st in stats),
            "game_length_mean": round(float(np.mean(decisions)), 3) if decisions else None,
            "plies_mean": round(float(np.mean([s["plies"] for s in summaries])), 3)
            if summaries else None,
            # solo: the mean final score; else seat 0's score (win 1, draw 1/2, loss 0)
            "first_seat_score" if self.cfg.game.num_players > 1 else "mean_score":
            round(float(np.mean([s["returns"][0] if self.cfg.game.num_players == 1 else
                                 (s["returns"][0] + 1) / 2 for s in summaries])), 4)
            if summaries else None,
            "outside_view_dropped": sum(s["outside"] for s in summaries),
            "end_reasons": dict(sorted(reasons.items())),
            **_opponent_stats(summaries),
            **self._opponent_files(summaries),
        }

    def _opponent_files(self, summaries: list[dict[str, Any]]) -> dict[str, Any]:
        """``{"opponent_files": {file: SHA-256}}`` when ``[selfplay] opponent`` played some of
        the games and plays a network (``az:builtin``: which one, as a tournament's
        ``agent_files`` say; a resume after an upgrade of the package may meet another), else
        ``{}``."""
        if not any(s.get("opponent_seat", -1) >= 0 for s in summaries):
            return {}
        from taluva_ai.agents import make_agent
        from taluva_ai.tournament import pinned_files

        files = pinned_files(make_agent(self.cfg.selfplay.opponent, seed=0))
        return {"opponent_files": files} if files else {}

    def _anchors(self, k: int, best: Path) -> dict[str, Any]:
        cfg = self.cfg
        spec = self._az_spec(best, cfg.anchors.az)
        out: dict[str, Any] = {}
        for i, opp in enumerate(cfg.anchors.opponents):
            h2h, table = play_match(
                spec, opp, cfg.anchors.games,
                self.out / "anchors" / f"iter_{k:04d}" / _safe_name(opp),
                _seed(cfg.seed, k, 5, i), self.workers, cfg.game.name, cfg.game.num_players,
                cfg.game.rules, self.progress, self.backend)
            entry = table["agents"][spec]
            out[opp] = {"games": h2h["games"], "wins": h2h["wins"], "draws": h2h["draws"],
                        "losses": h2h["losses"],
                        "win_rate": round(h2h["wins"] / h2h["games"], 4) if h2h["games"]
                        else None,
                        "score": None if h2h["score"] is None else round(h2h["score"], 4)}
            if cfg.game.num_players == 1:  # solo: mean final scores on the same seeds
                out[opp].update({"mean_score": entry["mean"], "mean_score_ci95": entry["ci95"],
                                 "won_share": entry["won"],
                                 "opponent_mean_score": table["agents"][opp]["mean"]})
            else:
                out[opp].update({"elo": entry["elo"], "elo_ci95": entry["elo_ci95"]})
        return out

    def _finish_iteration(self, k: int, line: dict[str, Any], state: dict[str, Any]) -> None:
        """Write the metrics line, TensorBoard scalars, best.pt / latest.pt, then state.json
        with the checksums of the iteration's files and metrics line (last: it is what makes
        the iteration finished)."""
        metrics = self.out / "metrics.jsonl"
        text = json.dumps(line) + "\n"
        with naming(metrics), metrics.open("a", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        state.setdefault("metrics", []).append(sha256_bytes(text))
        files = state.setdefault("files", {})
        files.update(self._written)
        self._written = {}
        self._tensorboard(k, line)
        self._copy(self._rel(self._checkpoint_path(k)), "latest.pt", files)
        self._copy(self._rel(self._best(state)), "best.pt", files)
        state["iteration"] = k
        self._write_state(state)

    def _tensorboard(self, k: int, line: dict[str, Any]) -> None:
        tb = self.tb
        for section in ("selfplay", "train", "gating"):
            for name, v in (line.get(section) or {}).items():
                if isinstance(v, (int, float)) and not isinstance(v, bool) and \
                        math.isfinite(v):
                    tb.add_scalar(f"{section}/{name}", v, k)
        for opp, res in (line.get("anchors") or {}).items():
            for name in ("win_rate", "score", "elo", "mean_score"):
                if res.get(name) is not None:
                    tb.add_scalar(f"anchors/{name}/{opp}", res[name], k)
        if line.get("gating"):
            tb.add_scalar("gating/promoted", float(line["gating"]["promoted"]), k)
        tb.add_scalar("best_iteration", line["best_iteration"], k)
        for name, v in (line.get("phase_seconds") or {}).items():
            tb.add_scalar(f"cost/{name}_s", v, k)
        for name in ("elapsed_s", "iteration_cpu_s", "cpu_s"):
            if name in line:
                tb.add_scalar(f"cost/{name}", line[name], k)
        tb.flush()



def train_main(config: str | None, out: str | None, resume: str | None,
               progress: bool = True, ray: str | None = None,
               redo: int | None = None) -> dict[str, Any]:
    """``taluva train``: a new run (``config`` and ``out``) or a resumed one (``resume``;
    with ``redo``, from iteration ``redo`` on, see :class:`TrainingRun`), on this machine, or
    on a Ray cluster with ``ray`` (a ``--ray`` address,
    :func:`taluva_ai.parallel.parse_ray_address`).

    Raises:
        ConfigError, RunConfigError: see :class:`TrainingRun`.
        RunFileError: a file of the run is missing or damaged (see :meth:`TrainingRun.run`).
        BackendError: ``ray`` given and Ray not installed, a malformed address, no cluster.
    """
    cfg = None if resume is not None else load_config(config or "")
    backend = make_backend(ray)
    try:
        backend.connect()
        if resume is not None:
            run = TrainingRun(resume, None, progress, backend, redo=redo)
        else:
            assert out is not None
            run = TrainingRun(out, cfg, progress, backend, redo=redo)
        print(f"taluva train: {run.out} ({'resuming' if run.resuming else 'new run'}), "
              f"{run.workers} worker(s), device {run.device}, on {backend.describe()}",
              file=sys.stderr, flush=True)
        done = run._load_state() if run.resuming and redo is None else None
        if done is not None and int(done["iteration"]) >= run.cfg.iterations:
            print(f"taluva train: {run.out} has already finished its {run.cfg.iterations} "
                  f"iteration(s) after the warm start; to train on, raise iterations in "
                  f"{run.out / 'config.toml'} and resume", file=sys.stderr, flush=True)
        return run.run()
    finally:
        backend.close()


def process_tree_cpu_s() -> float:
    """CPU seconds (user + system) used so far by this process and its descendants: the
    self-play, anchor and gating workers, live or ended (an ended process counts once its
    parent has waited for it, as a pool does). What a run costs in core-seconds: the
    ``iteration_cpu_s`` and ``cpu_s`` of a metrics line (psutil; a descendant that ends between
    the listing and the reading is left out)."""
    import psutil

    me = psutil.Process()
    t = me.cpu_times()
    total = t.user + t.system + t.children_user + t.children_system
    for child in me.children(recursive=True):
        try:
            c = child.cpu_times()
        except psutil.Error:
            continue
        total += c.user + c.system + c.children_user + c.children_system
    return total
