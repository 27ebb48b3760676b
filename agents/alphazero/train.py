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

import contextlib
import dataclasses
import json
import math
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from taluva_ai.agents.alphazero.config import (
    ConfigError,
    RunConfig,
    config_to_toml,
    load_config,
    make_encoder_for,
)
from taluva_ai.agents.alphazero.encoder import NetEncoder
from taluva_ai.agents.alphazero.gating import gate, play_match
from taluva_ai.agents.alphazero.net import (
    TRAINING_HEADS,
    CheckpointError,
    NetConfig,
    PolicyValueNet,
    build_net,
    init_from_checkpoint,
    load_checkpoint,
    masked_log_softmax,
    net_from_checkpoint,
    parameter_count,
    resolve_device,
    save_checkpoint,
    save_torch,
)
from taluva_ai.agents.alphazero.replay import Batch, ReplayBuffer, SampleSet
from taluva_ai.errors import RunConfigError, RunFileError
from taluva_ai.parallel import (
    Backend,
    Executor,
    LocalBackend,
    cpu_count,
    make_backend,
)
from taluva_ai.protocol import make_game
from taluva_ai.runfiles import (
    check_file,
    json_sha256,
    naming,
    read_checked,
    read_regular,
    run_lock,
    sha256_bytes,
    sha256_file,
    sigterm_as_interrupt,
    write_atomic,
)

#: ``state.json`` ``format`` field.
RUN_FORMAT = "taluva-ai-az-run/1"

#: The record of the hand edits of a run's ``config.toml`` (JSON Lines: the iteration from
#: which each applied, the keys it changed, the whole config then).
CONFIG_HISTORY = "config_history.jsonl"
#: A run's copy of its ``[warm_start] init`` checkpoint (what ``--redo 0`` starts from).
INIT_NAME = "init.pt"


# -- trainer ----------------------------------------------------------------------------------


class Trainer:
    """Optimiser steps on replay batches: cross-entropy of the masked policy with the search
    policy plus ``value_weight`` x the mean squared error of the value per player slot
    (Silver et al. 2017), plus, for a network with an auxiliary head, ``aux_weight`` x the
    mean squared error of its predictions over the known auxiliary targets, and for one with
    an ownership head, ``ownership_weight`` x the binary cross-entropy of its logits per board
    pixel and player slot over the samples with ownership targets (KataGo, Wu 2019); weight
    decay on convolution and linear weights only. A batch's ``weight`` (prioritized replay,
    ``[train] elimination_weight``) multiplies each sample's terms of every loss.

    The optimiser's parameter groups are the trunk's and heads' weights (decayed) and the
    rest, then the same two for each training-only head the network has (auxiliary, then
    ownership; :data:`~.net.TRAINING_HEADS`), so a run that adds or drops the last of them
    keeps the optimiser state of everything else (:meth:`load_optimizer_state`).

    Args:
        net: the network (trained in place).
        cfg: the ``[train]`` settings.
        device: where it trains.
    """

    def __init__(self, net: PolicyValueNet, cfg: Any, device: torch.device) -> None:
        self.net = net
        self.cfg = cfg
        self.device = device
        # the training-only heads this network has, by parameter prefix
        self.heads = [prefix for prefix in TRAINING_HEADS.values()
                      if getattr(net, prefix[:-1], None) is not None]
        params: list[list[torch.nn.Parameter]] = [[] for _ in range(2 + 2 * len(self.heads))]
        for name, p in net.named_parameters():
            head = next((1 + j for j, prefix in enumerate(self.heads)
                         if name.startswith(prefix)), 0)
            params[2 * head + (p.ndim <= 1 or "bn" in name)].append(p)
        self._groups = [{"params": ps, "weight_decay": cfg.weight_decay if i % 2 == 0 else 0.0}
                        for i, ps in enumerate(params)]
        self.optimizer = self._optimizer(self._groups)

    def _optimizer(self, groups: list[dict[str, Any]]) -> torch.optim.Optimizer:
        cfg = self.cfg
        if cfg.optimizer == "adamw":
            return torch.optim.AdamW(groups, lr=cfg.lr)
        return torch.optim.SGD(groups, lr=cfg.lr, momentum=cfg.momentum,
                               nesterov=cfg.momentum > 0)

    def load_optimizer_state(self, saved: dict[str, Any]) -> None:
        """Load a saved ``optimizer.state_dict()``. A state saved with the auxiliary head's
        groups loads into a network without one (their state is dropped), and one saved
        without them into a network with one (its parameters start with fresh moments).

        Raises:
            ValueError, KeyError, TypeError: not an optimiser state of this network.
        """
        have, got = len(self._groups), len(saved["param_groups"])
        if got > have:
            keep = saved["param_groups"][:have]
            ids = {i for g in keep for i in g["params"]}
            saved = {"state": {k: v for k, v in saved["state"].items() if k in ids},
                     "param_groups": keep}
        elif got < have:
            self.optimizer = self._optimizer(self._groups[:got])
            self.optimizer.load_state_dict(saved)
            for g in self._groups[got:]:
                self.optimizer.add_param_group(dict(g))
            return
        self.optimizer.load_state_dict(saved)

    def set_lr(self, lr: float) -> None:
        """Set the learning rate (and the config's weight decay) of every parameter group; a
        loaded optimiser state carries the rates it was saved with."""
        for i, group in enumerate(self.optimizer.param_groups):
            group["lr"] = lr
            if i % 2 == 0:
                group["weight_decay"] = self.cfg.weight_decay

    def _losses(self, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The weighted loss of a batch (with its graph, in the network's current mode) and
        its parts (:meth:`step`)."""
        dev = self.device
        net = self.net
        sp = torch.from_numpy(batch.spatial).to(dev)
        gl = torch.from_numpy(batch.globals).to(dev)
        mask = torch.from_numpy(batch.mask).to(dev)
        target = torch.from_numpy(batch.target).to(dev)
        z = torch.from_numpy(batch.value).to(dev)
        w = None if batch.weight is None else torch.from_numpy(batch.weight).to(dev)
        parts: dict[str, torch.Tensor] = {}
        if self.heads:
            logits, v, aux, own = net.forward_train(sp, gl)
        else:
            (logits, v), aux, own = net(sp, gl), None, None
        if aux is not None:
            want = torch.from_numpy(batch.aux).to(dev)
            known = ~torch.isnan(want)
            diff = torch.where(known, aux - torch.nan_to_num(want), torch.zeros_like(aux))
            sq = diff ** 2 if w is None else diff ** 2 * w[:, None, None]
            parts["aux_loss"] = sq.sum() / known.sum().clamp_min(1)
        if own is not None:
            parts["ownership_loss"] = self._ownership_loss(own, batch, w)
        logp = masked_log_softmax(logits, mask)
        cross = -(target * logp).sum(dim=1)
        sq_v = (v - z) ** 2
        if w is not None:  # per sample: prioritized replay's correction, elimination weight
            cross, sq_v = cross * w, sq_v * w[:, None]
        parts["policy_loss"] = cross.mean()
        parts["value_loss"] = sq_v.mean()
        loss = parts["policy_loss"] + self.cfg.value_weight * parts["value_loss"]
        if "aux_loss" in parts:
            loss = loss + self.cfg.aux_weight * parts["aux_loss"]
        if "ownership_loss" in parts:
            loss = loss + self.cfg.ownership_weight * parts["ownership_loss"]
        with torch.no_grad():
            p = logp.exp() * mask
            parts["policy_entropy"] = -(p * logp).sum(dim=1).mean()
            parts["target_entropy"] = -(target * torch.log(target.clamp_min(1e-12))) \
                .sum(dim=1).mean()
        return loss, parts

    def _ownership_loss(self, logits: torch.Tensor, batch: Batch,
                        sample_weight: torch.Tensor | None = None) -> torch.Tensor:
        """Binary cross-entropy of ownership logits ``[B, O, S, S]`` against the batch's
        targets, mean over the board pixels and slots of the samples that have targets (0
        when none has); each sample's terms times ``sample_weight[B]`` when given."""
        valid: torch.Tensor = self.net.valid
        assert batch.ownership is not None and batch.ownership_known is not None
        want = torch.from_numpy(batch.ownership).to(self.device)
        known = torch.from_numpy(batch.ownership_known).to(self.device)
        weight = valid * known[:, None, None, None].to(logits.dtype)
        denom = weight.sum() * logits.shape[1]
        if sample_weight is not None:
            weight = weight * sample_weight[:, None, None, None]
        bce = torch.nn.functional.binary_cross_entropy_with_logits(
            logits, want, weight=weight.expand_as(logits), reduction="sum")
        return bce / denom.clamp_min(1)

    def step(self, batch: Batch) -> dict[str, float]:
        """One optimiser step; returns ``{"loss", "policy_loss", "value_loss",
        "policy_entropy", "target_entropy"}`` (nats; the value loss per slot) and, for a
        network with an auxiliary head, ``"aux_loss"`` (per known target), and with an
        ownership head, ``"ownership_loss"`` (nats per board pixel and slot)."""
        self.net.train()
        loss, parts = self._losses(batch)
        if not torch.isfinite(loss):
            lr = self.optimizer.param_groups[0]["lr"]
            if all(torch.isfinite(v) for v in parts.values()):  # the weights overflow the sum
                cfg = self.cfg
                raise FloatingPointError(
                    f"the training loss is not finite ({loss.item()}) while each part is: "
                    f"value_weight {cfg.value_weight:g}, aux_weight {cfg.aux_weight:g} or "
                    f"ownership_weight {cfg.ownership_weight:g} in [train] is too large; "
                    "nothing of this iteration is kept; lower it in the run's config.toml and "
                    "resume")
            raise FloatingPointError(
                f"the training loss is not finite ({loss.item()}) at learning rate {lr:g}: the "
                "network diverged, so nothing of this iteration is kept; lower [train] lr (or "
                "the lr_schedule) in the run's config.toml and resume")
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.cfg.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.cfg.max_grad_norm)
        self.optimizer.step()
        return {"loss": loss.item(), **{k: v.item() for k, v in parts.items()}}

    def evaluate(self, batch: Batch) -> dict[str, float]:
        """:meth:`step`'s figures for a batch without training on it (the network in eval
        mode: batch norm from its running statistics), e.g. on held-out games."""
        self.net.eval()
        with torch.no_grad():
            loss, parts = self._losses(batch)
        return {"loss": loss.item(), **{k: v.item() for k, v in parts.items()}}

    def train(self, buffer: ReplayBuffer, steps: int, rng: np.random.Generator,
              bar: Any = None) -> dict[str, float]:
        """``steps`` steps on batches from ``buffer``; returns the mean of each figure."""
        sums: dict[str, float] = {}
        for _ in range(steps):
            batch = buffer.sample(self.cfg.batch_size, rng, self.cfg.value_target_mix,
                                  self.cfg.rollout_target_mix, self.cfg.priority_alpha,
                                  self.cfg.priority_beta, self.cfg.elimination_weight)
            for k, v in self.step(batch).items():
                sums[k] = sums.get(k, 0.0) + v
            if bar is not None:
                bar.update(1)
        self.net.eval()
        return {k: v / max(steps, 1) for k, v in sums.items()}


# -- run directory helpers --------------------------------------------------------------------


def _write_atomic(path: Path, text: str) -> str:
    return write_atomic(path, text)


#: Where a run file's iteration number is in its path (relative to the run directory).
_ITERATION_OF = re.compile(r"^(?:checkpoints/(?:iter|trainer)_(\d+)\.pt"
                           r"|(?:selfplay|records|gating|anchors)/iter_(\d+)/.+)$")


def _iteration_of(rel: str) -> int | None:
    """The iteration that wrote a run file (``rel``: its path in the run directory, with
    ``/``), or None (``best.pt``, ``latest.pt``)."""
    m = _ITERATION_OF.match(rel)
    return None if m is None else int(m.group(1) or m.group(2))


def _opponent_stats(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"opponent_games", "opponent_score", "opponent_end_reasons"}`` of the games against
    ``[selfplay] opponent`` (none: ``{}``): how many, the network's mean score in them (1 when
    a seat of the network finished above the opponent's, 1/2 level, 0 below) and how they
    ended."""
    games = [s for s in summaries if s.get("opponent_seat", -1) >= 0]
    if not games:
        return {}
    scores: list[float] = []
    reasons: dict[str, int] = {}
    for s in games:
        r = list(s["returns"])
        mine = max(r[:s["opponent_seat"]] + r[s["opponent_seat"] + 1:])
        theirs = r[s["opponent_seat"]]
        scores.append(1.0 if mine > theirs else 0.5 if mine == theirs else 0.0)
        reasons[s["end_reason"]] = reasons.get(s["end_reason"], 0) + 1
    return {"opponent_games": len(games), "opponent_score": round(float(np.mean(scores)), 4),
            "opponent_end_reasons": dict(sorted(reasons.items()))}


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0]}" if text else type(e).__name__


def _seed(*parts: int) -> int:
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


def _spec_path(path: Path) -> str:
    text = str(path.resolve())
    if "," in text:
        raise RunConfigError(f"{text}: a run directory whose path holds a comma cannot name "
                             "its networks in agent specs; use another --out")
    return text


def _safe_name(spec: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_.=" else "_" for ch in spec)


def _pack_hint(out: Path, state: dict[str, Any], k: int | None) -> str | None:
    """What to do about a missing or damaged file of iteration ``k`` (None: ``state.json``)
    of the run in ``out`` (``state``: its state) that came with a pack (``taluva train
    --pack``), or None where it did not (a run that is not a pack, a later iteration)."""
    pack = state.get("pack")
    if not isinstance(pack, dict) or not isinstance(pack.get("iteration"), int) or \
            (k is not None and k > pack["iteration"]):
        return None
    p, src = pack["iteration"], pack.get("source") or "RUN"
    if state.get("iteration") == p:  # nothing done since it was packed: pack it again
        return f"it came with the pack of iteration {p}: pack the run again: taluva train " \
               f"--pack {src} {out}"
    if k is None:
        return None
    return f"it came with the pack of iteration {p}: copy it from a new pack of the run " \
           f"(taluva train --pack {src} NEWDIR)"


def _remedy(out: Path, state: dict[str, Any] | None, k: int) -> str:
    """What to do about a missing or damaged file of iteration ``k`` of the run in ``out``
    (``state``: its state, if read): redo the run from ``k``, or, for a file that came with a
    pack, pack the run again (:func:`_pack_hint`)."""
    return (state is not None and _pack_hint(out, state, k)) or \
        f"redo the run from iteration {k}: taluva train --resume {out} --redo {k}"


def _state_text(state: dict[str, Any]) -> str:
    """``state.json``'s text: ``state`` with its checksum (``sha256``)."""
    body = {k: v for k, v in state.items() if k != "sha256"}
    return json.dumps({**body, "sha256": json_sha256(body)}, indent=2) + "\n"


def read_state(out: Path) -> dict[str, Any] | None:
    """The ``state.json`` of the run in ``out``, checked against its own checksum and
    without it, or None for a run that has not finished an iteration.

    Raises:
        RunFileError: missing although an iteration finished (``metrics.jsonl`` holds the
            line of iteration 0, or a file of a later iteration exists), unreadable (not a
            regular file: :func:`taluva_ai.runfiles.read_regular`), or damaged (its ``sha256``
            differs, or is missing from a state that records the files' checksums); the
            remedy: start again, ``--redo 0``; for a packed run, pack it again.
        RunConfigError: not the state of a training run.
    """
    path = out / "state.json"
    again = f"start the run again: taluva train --resume {out} --redo 0"
    if not path.exists():
        later = _later_iteration_files(out)
        metrics = out / "metrics.jsonl"
        try:  # its line of iteration 0 is written just before state.json
            if later is None and metrics.exists() and b"\n" in read_regular(metrics):
                later = str(metrics)
        except OSError as e:
            raise RunFileError([f"{metrics}: unreadable ({e.strerror or e}); {again}"]) from None
        if later:  # iteration 0 finished (state.json is written before iteration 1 starts)
            raise RunFileError([f"{path}: missing, although the run has finished iterations "
                                f"({later} exists); restore it, or {again}"])
        return None
    try:
        raw = read_regular(path)
    except OSError as e:
        raise RunFileError([f"{path}: unreadable ({e.strerror or e}); {again}"]) from None
    try:
        state = json.loads(raw)
    except ValueError as e:
        if b'"pack": {' in raw:  # a pack's: it cannot be told whose, so a new pack
            again = f"remove {out} and pack the run again: taluva train --pack RUN {out}"
        raise RunFileError([f"{path}: unreadable ({_first_line(e)}); {again}"]) from None
    digest = state.pop("sha256", None) if isinstance(state, dict) else None
    if isinstance(state, dict):
        again = _pack_hint(out, state, None) or again
    if digest is not None and digest != json_sha256(state):
        raise RunFileError([f"{path}: damaged (its content does not match its checksum); "
                            f"{again}"])
    if digest is None and isinstance(state, dict) and ("files" in state or "metrics" in state):
        # only a state from before the checksums (no files, no metrics) has no sha256
        raise RunFileError([f"{path}: damaged (its sha256 is missing, though it records the "
                            f"checksums of the run's files); {again}"])
    if not isinstance(state, dict) or state.get("format") != RUN_FORMAT:
        raise RunConfigError(f"{path}: not the state of a training run")
    try:
        ok = (isinstance(state["iteration"], int) and state["iteration"] >= 0
              and isinstance(state["best_iteration"], int)
              and isinstance(state["best"], str) and isinstance(state["promotions"], list)
              and isinstance(state.get("files", {}), dict)
              and isinstance(state.get("metrics", []), list)
              and isinstance(state.get("pack", {}), dict))
    except KeyError:
        ok = False
    if not ok:
        raise RunFileError([f"{path}: damaged (a field is missing or of the wrong type); "
                            f"{again}"])
    return state


def _later_iteration_files(out: Path, after: int = 0) -> str | None:
    """A file of an iteration after ``after`` in the run directory ``out`` (its path), or
    None: a sign that iteration ``after`` finished, since an iteration starts only after the
    one before wrote ``state.json``."""
    for sub, pattern in (("checkpoints", "*_[0-9][0-9][0-9][0-9].pt"),
                         ("selfplay", "iter_[0-9][0-9][0-9][0-9]"),
                         ("anchors", "iter_[0-9][0-9][0-9][0-9]")):
        d = out / sub
        if d.is_dir():
            for p in sorted(d.glob(pattern)):
                if int(p.stem.split("_")[-1]) > after:
                    return str(p)
    return None


def read_metrics(out: Path, state: dict[str, Any], upto: int
                 ) -> tuple[list[dict[str, Any]], tuple[int, str] | None]:
    """The lines of ``out/metrics.jsonl`` of iterations ``0..upto``, checked against the
    checksums ``state`` recorded (older runs: parsed only), up to the first that is missing
    or damaged, and ``(its iteration, what is wrong)`` (None if none is)."""
    path = out / "metrics.jsonl"
    try:
        raw = read_regular(path).split(b"\n") if path.exists() else []
    except OSError as e:
        return [], (0, f"{path}: unreadable ({e.strerror or e})")
    digests = state.get("metrics")
    lines: list[dict[str, Any]] = []
    for i in range(upto + 1):
        line = raw[i] if i < len(raw) else b""
        problem = None
        if not line.strip():
            problem = "missing"
        elif digests is not None and (i >= len(digests)
                                      or sha256_bytes(line + b"\n") != digests[i]):
            problem = "damaged (it does not match the checksum state.json recorded)"
        else:
            try:
                entry = json.loads(line)
                if not isinstance(entry, dict) or entry.get("iteration") != i:
                    problem = f"damaged (not the line of iteration {i})"
            except (ValueError, UnicodeDecodeError) as e:
                problem = f"damaged ({_first_line(e)})"
        if problem is not None:
            return lines, (i, f"{path}: line {i + 1} (iteration {i}) {problem}")
        lines.append(entry)
    return lines, None


# -- the run ----------------------------------------------------------------------------------


class TrainingRun:
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

    def _redo_hint(self, k: int) -> str:
        """What to do about a damaged or missing file of iteration ``k`` (:func:`_remedy`)."""
        return _remedy(self.out, self.state, k)

    def _rel(self, path: str | Path) -> str:
        """A file's path in the run directory, with ``/`` (the key of ``state["files"]``)."""
        return Path(os.path.relpath(path, self.out)).as_posix()

    def _load_state(self) -> dict[str, Any] | None:
        """``state.json`` (:func:`read_state`), kept as ``self.state`` (the remedies of a
        packed run's files depend on it)."""
        self.state = read_state(self.out)
        return self.state

    def _write_state(self, state: dict[str, Any]) -> None:
        """Write ``state.json`` with its checksum (it is what makes an iteration finished)."""
        _write_atomic(self.out / "state.json", _state_text(state))

    def _read_metrics(self, state: dict[str, Any], upto: int
                      ) -> tuple[list[dict[str, Any]], tuple[int, str] | None]:
        return read_metrics(self.out, state, upto)

    def _roll_back(self, state: dict[str, Any] | None, k: int) -> dict[str, Any] | None:
        """The state at the end of iteration ``k - 1`` (None for ``k = 0``), for ``--redo
        k``.

        Raises:
            RunConfigError: ``k`` is beyond the finished iterations.
            RunFileError: the metrics line of iteration ``k - 1`` is damaged.
        """
        done = -1 if state is None else int(state["iteration"])
        if k > done + 1:
            have = "no iteration" if done < 0 else f"iterations 0 to {done}"
            raise RunConfigError(f"--redo {k}: {self.out} has finished {have}; give a "
                                 "finished iteration (or resume without --redo)")
        if k > self.cfg.iterations:
            raise RunConfigError(f"--redo {k}: the config runs iterations 0 to "
                                 f"{self.cfg.iterations} ({self.out / 'config.toml'})")
        if state is None or k == 0:
            return None
        if k == done + 1:
            return state
        pack = state.get("pack")
        if pack is not None and k <= int(pack["iteration"]):
            p = int(pack["iteration"])
            raise RunConfigError(f"--redo {k}: {self.out} was packed at iteration {p} and "
                                 f"holds no files of the iterations before; give an iteration "
                                 f"after {p} (or 0 to start the run again)")
        lines, problem = self._read_metrics(state, k - 1)
        if problem is not None:
            raise RunFileError([f"{problem[1]}; {self._redo_hint(problem[0])}"])
        line = lines[-1]
        b = int(line["best_iteration"])
        files = {rel: h for rel, h in state.get("files", {}).items()
                 if (it := _iteration_of(rel)) is not None and it <= k - 1}
        back: dict[str, Any] = {
            "format": RUN_FORMAT, "iteration": k - 1, "best": f"checkpoints/iter_{b:04d}.pt",
            "best_iteration": b, "elapsed_s": line["elapsed_s"],
            "promotions": [p for p in state["promotions"] if p <= k - 1]}
        if "files" in state:
            for name, src in (("latest.pt", f"checkpoints/iter_{k - 1:04d}.pt"),
                              ("best.pt", back["best"])):
                if src in files:
                    files[name] = files[src]
            back["files"] = files
        if "metrics" in state:
            back["metrics"] = state["metrics"][:k]
        if pack is not None:
            back["pack"] = pack
        return back

    def _check_files(self, state: dict[str, Any]) -> None:
        """Check the metrics lines and every file ``state`` records against its checksum
        (see the module docstring): raise for those training reads, name the others on
        stderr.

        Raises:
            RunFileError: a file training reads is missing or damaged, or a metrics line is
                (one line each; the remedy redoes the earliest iteration concerned).
        """
        done, best = int(state["iteration"]), int(state["best_iteration"])
        problems: list[tuple[int, str]] = []
        _, problem = self._read_metrics(state, done)
        if problem is not None:
            problems.append(problem)
        needed = {f"checkpoints/iter_{done:04d}.pt", f"checkpoints/trainer_{done:04d}.pt",
                  f"checkpoints/iter_{best:04d}.pt"}
        notes = []
        for rel, digest in sorted(state.get("files", {}).items()):
            k = _iteration_of(rel)
            if k is None:  # best.pt, latest.pt: see _restore_copies
                continue
            what = check_file(self.out / rel, digest)
            if what is None:
                continue
            if rel in needed or (rel.startswith("selfplay/") and rel.endswith(".npz")):
                problems.append((k, f"{self.out / rel}: {what}"))
            else:
                hint = _pack_hint(self.out, state, k) or \
                    f"to make it again: taluva train --resume {self.out} --redo {k}"
                notes.append(f"{self.out / rel}: {what}; training does not read it and "
                             f"goes on ({hint})")
        if problems:
            k = min(k for k, _ in problems)
            raise RunFileError([f"{text}; {self._redo_hint(k)}" for _, text in problems])
        for line in notes:
            print(line, file=sys.stderr)

    def _restore_copies(self, state: dict[str, Any], quiet: bool) -> None:
        """Make ``best.pt`` and ``latest.pt`` the copies of the networks ``state`` names
        again where they are not (a run stopped between the copies and ``state.json``, a
        redo, a damaged copy), saying so on stderr unless ``quiet``."""
        files = state.get("files")
        if files is None:  # a run from before the checksums
            return
        done, best = int(state["iteration"]), int(state["best_iteration"])
        for name, src in (("latest.pt", f"checkpoints/iter_{done:04d}.pt"),
                          ("best.pt", f"checkpoints/iter_{best:04d}.pt")):
            if src not in files:
                continue
            what = check_file(self.out / name, files[src])
            if what is not None:
                self._copy(src, name, files)
                if not quiet:
                    print(f"{self.out / name}: {what}; restored from {self.out / src}",
                          file=sys.stderr)
            files[name] = files[src]

    def _copy(self, src: str, name: str, files: dict[str, str]) -> None:
        """Copy the run file ``src`` onto ``name`` (``best.pt``, ``latest.pt``), checking the
        source's bytes against their recorded checksum; ``files[name]`` is set.

        Raises:
            RunFileError: the source is damaged.
        """
        data = (self.out / src).read_bytes()
        digest = sha256_bytes(data)
        want = files.get(src)
        if want is not None and digest != want:
            k = _iteration_of(src)
            raise RunFileError([f"{self.out / src}: damaged (its SHA-256 does not match the "
                                f"one recorded when it was written); "
                                f"{self._redo_hint(k or 0)}"])
        files[name] = write_atomic(self.out / name, data)

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

    def _prepare(self) -> dict[str, Any] | None:
        """Write the config of a new run; for a resume, read the state (rolled back for a
        redo), check the run's files, and clear what the interrupted (or redone) iterations
        left."""
        # a refused edit stops the resume before anything changes
        self._edits = self._config_edits() if self.resuming else None
        cfg_text = config_to_toml(self.base_cfg)
        if not self.resuming:
            if self.cfg.warm_start.init:  # the network a --redo 0 starts from again
                write_atomic(self.out / INIT_NAME, Path(self.cfg.warm_start.init).read_bytes())
            _write_atomic(self.out / "config.toml", cfg_text)
            _write_atomic(self.out / "config.json", json.dumps(self.cfg.to_dict(), indent=2)
                          + "\n")
        if self.redo == 0:  # from the start: state.json is not read (it may be damaged)
            state, redone = None, True
        else:
            state, redone = self._load_state(), False
            if self.redo is not None:
                last = -1 if state is None else int(state["iteration"])
                state = self._roll_back(state, self.redo)
                redone = self.redo <= last
        if state is not None and self.redo is None:
            k = int(state["iteration"])
            later = _later_iteration_files(self.out, k + 1)
            if later:  # an iteration after k + 1 started: state.json is older than the run
                raise RunFileError([
                    f"{self.out / 'state.json'}: records iteration {k}, but {later} is of a "
                    f"later iteration than {k + 1} (the one a stop could have left): it is an "
                    f"older state.json than the run's; restore the run's own, or redo the run "
                    f"from iteration {k + 1}, removing the later ones: taluva train --resume "
                    f"{self.out} --redo {k + 1}"])
        if state is not None:
            self._check_files(state)  # before anything is changed
            self._saved_network(int(state["iteration"]))
        done = -1 if state is None else int(state["iteration"])
        if redone:
            print(f"taluva train: redoing iterations {self.redo} to {self.cfg.iterations}: "
                  f"the files of iterations {self.redo} onwards are removed", file=sys.stderr,
                  flush=True)
            if state is None:
                (self.out / "state.json").unlink(missing_ok=True)
                for name in ("best.pt", "latest.pt"):
                    (self.out / name).unlink(missing_ok=True)
            else:
                self._write_state(state)
        for sub in ("selfplay", "records", "gating", "anchors"):
            d = self.out / sub
            if d.is_dir():
                for child in d.iterdir():
                    num = child.name[5:]
                    if child.name.startswith("iter_") and num.isdigit() and int(num) > done:
                        shutil.rmtree(child)
        ck = self.out / "checkpoints"
        if ck.is_dir():
            for f in ck.iterdir():
                stem = f.stem.split("_")[-1]
                if (stem.isdigit() and int(stem) > done) or f.name.endswith(".part"):
                    f.unlink()
        metrics = self.out / "metrics.jsonl"
        if metrics.exists():
            raw = read_regular(metrics)
            keep = b"".join(line + b"\n" for line in raw.split(b"\n")[:done + 1])
            if keep != raw:  # the lines of the interrupted (or redone) iterations
                write_atomic(metrics, keep)
        if state is not None:
            self._restore_copies(state, quiet=redone)
        if self.resuming and not redone and done < self.cfg.iterations:
            print(f"taluva train: {self.out} goes on at iteration {done + 1} of "
                  f"{self.cfg.iterations}" + ("" if done < 0 else f" (iterations 0-{done} are "
                  "kept)") + f": iteration {done + 1} is played from its start, whatever an "
                  "interrupted run had done of it", file=sys.stderr, flush=True)
        self._record_config(done + 1)
        return state

    def _config_edits(self) -> tuple[list[str], dict[str, list[Any]]]:
        """The lines of :data:`CONFIG_HISTORY` and the keys the run's ``config.toml`` changed
        since the config recorded last (:func:`_config_changes`); a history or
        ``config.json`` that cannot be read is named on stderr and the history restarts.

        Raises:
            RunConfigError: the edit changed the seed or the game (its rules, its players):
                the run's games and networks so far were made under the recorded ones."""
        path = self.out / CONFIG_HISTORY
        now = self.base_cfg.to_dict()
        before: Any = None
        lines: list[str] = []
        source = path if path.is_file() else self.out / "config.json"
        try:
            if path.is_file():
                lines = read_regular(path).decode("utf-8").splitlines()
                before = json.loads(lines[-1])["config"] if lines else None
            elif source.is_file():
                before = json.loads(read_regular(source))
            if before is not None and not isinstance(before, dict):
                raise ValueError(f"the config recorded is a {type(before).__name__}, not a "
                                 "table")
        except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
            print(f"taluva train: {source}: unreadable ({_first_line(e)}); the config's "
                  "history restarts from here", file=sys.stderr, flush=True)
            return [], {}
        changed = _config_changes(before or now, now)
        fixed = [k for k in changed if k == "seed" or k.startswith("game.")]
        if fixed:
            k = fixed[0]
            raise RunConfigError(
                f"{self.out / 'config.toml'}: {k} was changed by hand from {changed[k][0]!r} to "
                f"{changed[k][1]!r}; a run keeps its seed and its game (its games and networks "
                f"so far were made under them): put it back, or start a new run from this "
                f"one's network ([warm_start] init)")
        return lines, changed

    def _record_config(self, start: int) -> None:
        """Append to :data:`CONFIG_HISTORY` the config the run goes on with from iteration
        ``start``, when it differs from the one recorded last (``config.json``, the config
        at the start, for the first change): an edit of ``config.toml`` between a stop and a
        resume is kept, with the keys it changed, and said on stderr.
        (``[[schedule]]`` changes are part of the config and need no record.)"""
        path = self.out / CONFIG_HISTORY
        now = self.base_cfg.to_dict()
        lines, changed = self._edits if self._edits is not None else self._config_edits()
        if not changed:
            return
        text = "".join(f"{line}\n" for line in lines)
        text += json.dumps({"iteration": start, "changed": changed, "config": now},
                           sort_keys=True) + "\n"
        write_atomic(path, text.encode("utf-8"))
        shown = ", ".join(f"{k} {v[0]!r} -> {v[1]!r}" for k, v in list(changed.items())[:6])
        more = f" and {len(changed) - 6} more" if len(changed) > 6 else ""
        print(f"taluva train: {self.out} config.toml was changed by hand: from iteration "
              f"{start}, {shown}{more} (recorded in {CONFIG_HISTORY})", file=sys.stderr,
              flush=True)

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
                     "best_iteration": None, "elapsed_s": 0.0, "promotions": []}
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
                t0 = time.perf_counter()
                self.cfg = self.base_cfg.at(k)  # the [[schedule]]'s settings of iteration k
                trainer.cfg = self.cfg.train
                line = self._iteration(k, net, trainer, buffer, state)
                state["elapsed_s"] = round(state["elapsed_s"] + time.perf_counter() - t0, 3)
                line["elapsed_s"] = state["elapsed_s"]
                self._finish_iteration(k, line, state)
                bar.update(1)
        finally:
            bar.close()
            self.tb.close()
        return state

    def _saved_network(self, k: int) -> tuple[PolicyValueNet, dict[str, Any]]:
        """Iteration ``k``'s network (built to the run's ``[net]``) and optimiser state, read
        and checked: before a resume changes anything (:meth:`_prepare`), and to restore them.

        Raises:
            CheckpointError: the network has other sizes or another stem than ``[net]``.
            RunFileError: a file is missing or unreadable, or the optimiser state is another
                optimiser's than ``[train] optimizer`` (naming the file and the remedy).
        """
        path = self.out / "checkpoints" / f"iter_{k:04d}.pt"
        try:
            payload = load_checkpoint(path)
        except CheckpointError as e:
            raise RunFileError([f"{e}; {self._redo_hint(k)}"]) from None
        net, _ = net_from_checkpoint(payload, path, self.encoder, self.net_config)
        tpath = self.out / "checkpoints" / f"trainer_{k:04d}.pt"
        if not tpath.is_file():
            raise RunFileError([f"{tpath}: missing; {self._redo_hint(k)}"])
        try:
            opt = torch.load(tpath, map_location="cpu", weights_only=True)["optimizer"]
            saved = "adamw" if "betas" in opt["param_groups"][0] else "sgd"
        except Exception as e:  # truncated, crafted, not an optimiser state: all the same
            raise RunFileError([f"{tpath}: unreadable ({_first_line(e)}); "
                                f"{self._redo_hint(k)}"]) from None
        if saved != self.cfg.train.optimizer:
            raise RunFileError([f"{tpath}: the optimiser state of iteration {k} is {saved}'s; "
                                f"the run's [train] optimizer is {self.cfg.train.optimizer}, "
                                "which a run may not change"])
        return net, opt

    def _restore(self, state: dict[str, Any], buffer: ReplayBuffer
                 ) -> tuple[PolicyValueNet, Trainer]:
        """The network, its optimiser state and the replay buffer at the end of the state's
        iteration (its files checked by :meth:`_check_files` and :meth:`_saved_network`).

        Raises:
            RunFileError: one of them cannot be read (naming it and the remedy).
            CheckpointError: the network does not fit the config's encoder or network.
        """
        k = int(state["iteration"])
        net, opt = self._saved_network(k)
        net.to(self.device).eval()
        trainer = Trainer(net, self.base_cfg.at(k).train, self.device)
        try:
            trainer.load_optimizer_state(opt)
        except Exception as e:  # crafted: groups that do not fit this network
            tpath = self.out / "checkpoints" / f"trainer_{k:04d}.pt"
            raise RunFileError([f"{tpath}: unreadable ({_first_line(e)}); "
                                f"{self._redo_hint(k)}"]) from None
        for j in range(0, k + 1):
            self._add_samples(j, buffer, state.get("files"))
        return net, trainer

    def _add_samples(self, k: int, buffer: ReplayBuffer, files: dict[str, str] | None
                     ) -> None:
        """Add iteration ``k``'s sample files to the buffer (whose window is set to
        ``[replay]``'s window at ``k`` first): those ``files`` records (run paths to
        checksums), or for a run from before the checksums (``files`` None) those on disk.

        Raises:
            RunFileError: a sample file cannot be read (naming it and the remedy).
        """
        buffer.window_games = self.base_cfg.at(k).replay.window_at(k)
        d = self.out / "selfplay" / f"iter_{k:04d}"
        if files is not None:
            prefix = f"selfplay/iter_{k:04d}/worker_"
            paths = [self.out / rel for rel in files
                     if rel.startswith(prefix) and rel.endswith(".npz")]
        else:
            paths = list(d.glob("worker_*.npz")) if d.is_dir() else []
        paths.sort(key=lambda p: int(p.stem.split("_")[1]))
        sets = []
        for path in paths:
            try:
                sets.append(SampleSet.load(path, self.encoder))
            except (OSError, ValueError) as e:
                what = "missing" if not path.exists() else \
                    f"unreadable ({e.strerror or e})" if isinstance(e, OSError) else \
                    f"unreadable ({str(e).removeprefix(f'{path}: ')})"
                raise RunFileError([f"{path}: {what}; {self._redo_hint(k)}"]) from None
        if sets:
            buffer.add(f"iter_{k:04d}", SampleSet.concatenate(sets))

    def _record_existing(self, state: dict[str, Any]) -> None:
        """Record the checksums of the files of a run made before they were recorded (those
        of its finished iterations, read back now) in its ``state.json``."""
        done = int(state["iteration"])
        files: dict[str, str] = {}
        for sub in ("selfplay", "records", "gating", "anchors", "checkpoints"):
            for f in sorted((self.out / sub).rglob("*")):
                rel = self._rel(f)
                k = _iteration_of(rel)
                if f.is_file() and k is not None and k <= done and not any(
                        part.startswith(".") for part in Path(rel).parts):
                    files[rel] = sha256_file(f)
        state["files"] = files
        self._restore_copies(state, quiet=False)
        raw = read_regular(self.out / "metrics.jsonl").split(b"\n")[:done + 1]
        state["metrics"] = [sha256_bytes(line + b"\n") for line in raw]
        self._write_state(state)
        print(f"taluva train: {self.out / 'state.json'}: now records the checksums of the "
              "run's files (checked from the next resume on)", file=sys.stderr, flush=True)

    def _record_dir(self, d: Path) -> None:
        """Record the checksums of the files under ``d`` (a gating or anchor tournament of
        the iteration in progress; hidden files such as ``.lock`` left out)."""
        for f in sorted(d.rglob("*")):
            if f.is_file() and not any(part.startswith(".")
                                       for part in f.relative_to(d).parts):
                self._written[self._rel(f)] = sha256_file(f)

    def _best(self, state: dict[str, Any]) -> Path:
        """The best network's checkpoint: ``state["best"]`` relative to the run directory
        (older runs stored an absolute path; its file name is looked up in this run's
        ``checkpoints/``, so a copied or moved run uses its own files)."""
        best = Path(state["best"])
        if best.is_absolute():
            best = Path("checkpoints") / best.name
        return self.out / best

    def _checkpoint_path(self, k: int) -> Path:
        return self.out / "checkpoints" / f"iter_{k:04d}.pt"

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
        tb.flush()


# -- moving a run: its small state, without the replay data --------------------------------


def _config_changes(before: dict[str, Any], now: dict[str, Any]) -> dict[str, list[Any]]:
    """The keys (``section.key``, or ``schedule``) whose values differ between two configs
    (:meth:`RunConfig.to_dict`), each as ``[before, now]``."""
    out: dict[str, list[Any]] = {}
    for key in sorted(set(before) | set(now)):
        a, b = before.get(key), now.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            for sub in sorted(set(a) | set(b)):
                # a key the config did not have then came with a later version of taluva-ai
                if sub in a and a.get(sub) != b.get(sub):
                    out[f"{key}.{sub}"] = [a.get(sub), b.get(sub)]
        elif a != b:
            out[key] = [a, b]
    return out


#: A run directory's own top-level names: what a pack replaces or removes in its directory
#: (anything else there is left alone).
_RUN_NAMES = ("config.toml", "config.json", CONFIG_HISTORY, "state.json", "metrics.jsonl",
              "best.pt", "latest.pt", "checkpoints", "selfplay", "records", "gating", "anchors",
              "tb")

#: An anchor tournament's table (small; the Elo curve), carried by a pack.
_ANCHOR_TABLE = re.compile(r"^anchors/iter_\d+/[^/]+/results\.json$")


def format_size(n: int) -> str:
    """``n`` bytes for people: ``"812 B"``, ``"12.3 kB"``, ``"4.5 MB"``, ``"1.2 GB"``."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _earlier_pack(out: Path, run_id: str) -> str | None:
    """Why the non-empty directory ``out`` is not an earlier pack of the run whose first
    metrics line has the checksum ``run_id`` (that a new pack may replace), or None if it
    is one."""
    path = out / "state.json"
    if not path.is_file():
        names = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
        return f"it holds {', '.join(names[:4])}{'...' if len(names) > 4 else ''} and no " \
               "state.json"
    try:
        state = json.loads(read_regular(path))  # its checksum is not needed to tell whose
    except (OSError, ValueError) as e:
        return f"its state.json is unreadable ({_first_line(e)})"
    pack = state.get("pack") if isinstance(state, dict) else None
    if not isinstance(pack, dict):
        return "it holds a training run, not a pack"
    if pack.get("run") != run_id:
        return f"it is a pack of another run (of {pack.get('source')})"
    if state.get("iteration") != pack.get("iteration"):
        return f"it was packed at iteration {pack.get('iteration')} and has been trained " \
               f"on since (to iteration {state.get('iteration')})"
    return None


def pack_run(run: str | Path, out: str | Path) -> dict[str, Any]:
    """Write into ``out`` the small state that the training run in ``run`` needs to continue
    on another machine (``taluva train --pack RUN OUT``; docs/alphazero.md, "Moving a run to
    another machine"), for ``taluva train --resume OUT`` there.

    ``out`` gets ``config.toml``, ``config.json``, ``metrics.jsonl``, the run's copy of its
    ``[warm_start] init`` network (:data:`INIT_NAME`, if it has one), ``best.pt``,
    ``latest.pt``, the last finished iteration ``K``'s network and optimiser state
    (``checkpoints/iter_<K>.pt``, ``trainer_<K>.pt``), the best network's checkpoint if it is
    another, the anchor tournaments' ``results.json`` files, and ``state.json`` rewritten to
    record exactly these files, with a ``pack`` record: ``{"iteration": K, "run": the
    SHA-256 of the first metrics line (which run), "source": run's absolute path,
    "replay_games", "replay_samples": what the replay buffer held after iteration K (None if
    the iteration did not train), "left_out_files", "left_out_bytes": the recorded run files
    not carried}``. Left out: the replay data (``selfplay/``), game records, gating
    tournaments, the anchors' game records, older networks, ``tb/``. Every carried file is
    checked against its recorded checksum first.

    ``out`` may be a new or empty directory, or an earlier pack of the same run not trained
    on since: it is brought up to date (files already right are not rewritten; run files a
    pack does not hold are removed; other files are left alone), so packing twice gives the
    same directory.

    Returns:
        ``{"iteration", "out", "files": [{"path", "bytes", "written"}] (``path`` relative to
        ``out``, ``state.json`` last), "bytes", "left_out_files", "left_out_bytes",
        "replay_games", "replay_samples"}``.

    Raises:
        RunConfigError: ``run`` holds no run with a finished iteration, or no checksums (a run
            from before them), ``out`` is ``run``, or it exists and is not an earlier pack of
            the same run (one line, saying why).
        RunFileError: a file the pack needs (the networks, the optimiser state, a metrics
            line, ``state.json``) is missing or damaged in ``run`` (one line each, naming it
            and the remedy).
        OSError: a file cannot be read or written (naming it).
    """
    if str(run) == "" or str(out) == "":
        raise RunConfigError("--pack RUN OUT: an empty directory name")
    run, out = Path(run), Path(out)
    if not run.is_dir():
        raise RunConfigError(f"{run}: no such directory (the run to pack)")
    state = read_state(run)
    if state is None or not (run / "config.toml").is_file():
        raise RunConfigError(f"{run} holds no training run with a finished iteration (no "
                             "config.toml and state.json); nothing to pack")
    if "files" not in state or not state.get("metrics"):
        raise RunConfigError(f"{run / 'state.json'} records no checksums (a run from before "
                             f"them); resume it once to record them (taluva train --resume "
                             f"{run}), then pack it")
    done, best = int(state["iteration"]), int(state["best_iteration"])
    files: dict[str, str] = state["files"]
    lines, problem = read_metrics(run, state, done)
    problems = [] if problem is None else [problem]
    latest, best_rel = f"checkpoints/iter_{done:04d}.pt", f"checkpoints/iter_{best:04d}.pt"
    needed = sorted({latest, f"checkpoints/trainer_{done:04d}.pt", best_rel})
    data: dict[str, bytes] = {}
    for rel in needed + sorted(r for r in files if _ANCHOR_TABLE.match(r)):
        path = run / rel
        raw, what = read_checked(path, files.get(rel))
        if raw is not None:
            data[rel] = raw
        elif rel in needed:
            problems.append((_iteration_of(rel) or 0, f"{path}: {what}"))
        else:
            print(f"{path}: {what}; left out of the pack (training does not read it)",
                  file=sys.stderr)
    if problems:
        k = min(k for k, _ in problems)
        raise RunFileError([f"{text}; {_remedy(run, state, k)}" for _, text in problems])
    run_id = state["metrics"][0]
    if out.exists():
        if not out.is_dir():
            raise RunConfigError(f"{out}: not a directory")
        if out.resolve() == run.resolve():
            raise RunConfigError(f"{out} is the run itself; pack it into another directory")
        if any(not p.name.startswith(".") for p in out.iterdir()):
            why = _earlier_pack(out, run_id)
            if why is not None:
                raise RunConfigError(f"{out} exists and is not an earlier pack of {run} "
                                     f"({why}); pack into a new or empty directory")

    raw_metrics = read_regular(run / "metrics.jsonl").split(b"\n")[:done + 1]
    plan: dict[str, bytes] = {"config.toml": read_regular(run / "config.toml")}
    if (run / "config.json").is_file():
        plan["config.json"] = read_regular(run / "config.json")
    if (run / CONFIG_HISTORY).is_file():
        plan[CONFIG_HISTORY] = read_regular(run / CONFIG_HISTORY)
    plan["metrics.jsonl"] = b"".join(line + b"\n" for line in raw_metrics)
    if (run / INIT_NAME).is_file():  # the warm start's network: --redo 0 from the pack
        try:
            load_checkpoint(run / INIT_NAME)  # its own checksum: damaged or cut short?
            plan[INIT_NAME] = (run / INIT_NAME).read_bytes()
        except CheckpointError as e:
            print(f"{e}; left out of the pack (only --redo 0 reads it)", file=sys.stderr)
    plan.update(data)
    plan["latest.pt"], plan["best.pt"] = data[latest], data[best_rel]
    kept = {rel: files[rel] for rel in data}
    kept.update({"latest.pt": files[latest], "best.pt": files[best_rel]})
    left = [rel for rel in files if rel not in kept]
    train = lines[done].get("train") or {}
    packed = {k: v for k, v in state.items() if k not in ("files", "pack", "metrics")}
    packed.update({
        "metrics": state["metrics"][:done + 1], "files": dict(sorted(kept.items())),
        "pack": {"iteration": done, "run": run_id, "source": str(run.resolve()),
                 "replay_games": train.get("buffer_games"),
                 "replay_samples": train.get("buffer_samples"),
                 "left_out_files": len(left),
                 "left_out_bytes": sum((run / rel).stat().st_size for rel in left
                                       if (run / rel).is_file())}})
    plan["state.json"] = _state_text(packed).encode("utf-8")  # last: it makes the pack

    out.mkdir(parents=True, exist_ok=True)
    lock = out / ".lock"
    had_lock = lock.exists()
    report: list[dict[str, Any]] = []
    try:
        with run_lock(out, "training run"):
            for rel, raw in plan.items():
                path = out / rel
                same = path.is_file() and path.stat().st_size == len(raw) and \
                    sha256_file(path) == sha256_bytes(raw)
                if not same:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    write_atomic(path, raw)
                report.append({"path": rel, "bytes": len(raw), "written": not same})
            for name in _RUN_NAMES:  # what an earlier pack or an interrupted resume left
                top = out / name
                if top.is_dir():
                    for f in sorted(top.rglob("*"), reverse=True):  # files before folders
                        if f.is_dir():
                            with contextlib.suppress(OSError):
                                f.rmdir()  # once empty
                        elif f.relative_to(out).as_posix() not in plan:
                            f.unlink()
                    with contextlib.suppress(OSError):
                        top.rmdir()
                elif name not in plan and (top.exists() or top.is_symlink()):
                    top.unlink()
    finally:
        if not had_lock:
            lock.unlink(missing_ok=True)
    return {"iteration": done, "out": str(out), "files": report,
            "bytes": sum(r["bytes"] for r in report), **{
                k: packed["pack"][k] for k in ("left_out_files", "left_out_bytes",
                                               "replay_games", "replay_samples")}}


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
