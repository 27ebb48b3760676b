"""A training run's directory and its resume (:mod:`taluva_ai.agents.alphazero.train`, whose
module docstring lists the files): ``state.json`` and ``metrics.jsonl`` read and checked
(:func:`read_state`, :func:`read_metrics`), the remedies a damaged or missing file is named
with (``taluva train --resume DIR --redo K``), and :class:`RunDirectory`, the part of
:class:`~taluva_ai.agents.alphazero.train.TrainingRun` that prepares, checks, rolls back and
restores its directory.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from taluva_ai.agents.alphazero.config import (
    RunConfig,
    config_to_toml,
)
from taluva_ai.agents.alphazero.encoder import NetEncoder
from taluva_ai.agents.alphazero.net import (
    CheckpointError,
    NetConfig,
    PolicyValueNet,
    load_checkpoint,
    net_from_checkpoint,
)
from taluva_ai.agents.alphazero.replay import ReplayBuffer, SampleSet
from taluva_ai.agents.alphazero.trainer import Trainer
from taluva_ai.errors import RunConfigError, RunFileError
from taluva_ai.runfiles import (
    check_file,
    json_sha256,
    read_regular,
    sha256_bytes,
    sha256_file,
    write_atomic,
)

#: ``state.json`` ``format`` field.
RUN_FORMAT = "taluva-ai-az-run/1"

#: The record of the hand edits of a run's ``config.toml`` (JSON Lines: the iteration from
#: which each applied, the keys it changed, the whole config then).
CONFIG_HISTORY = "config_history.jsonl"
#: A run's copy of its ``[warm_start] init`` checkpoint (what ``--redo 0`` starts from).
INIT_NAME = "init.pt"


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


class RunDirectory:
    """The run directory's side of a :class:`~taluva_ai.agents.alphazero.train.TrainingRun`
    (a base class of it): a new run's config written, a resume's state read (rolled back for
    ``redo``), its files checked before anything changes, what interrupted or redone
    iterations left cleared, and the network, optimiser state and replay buffer restored."""

    out: Path
    state: dict[str, Any] | None
    base_cfg: RunConfig
    cfg: RunConfig
    redo: int | None
    resuming: bool
    device: torch.device
    encoder: NetEncoder
    net_config: NetConfig
    _edits: tuple[list[str], dict[str, list[Any]]] | None
    _written: dict[str, str]

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
        if "cpu_s" in line:
            back["cpu_s"] = line["cpu_s"]
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

