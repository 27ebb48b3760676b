"""Moving a training run: its *pack* (:func:`pack_run`, ``taluva train --pack RUN OUT``;
docs/alphazero.md, "Moving a run to another machine"), the small state a run needs to go on
elsewhere, without the replay data (see :mod:`taluva_ai.agents.alphazero.train`).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from taluva_ai.agents.alphazero.net import (
    CheckpointError,
    load_checkpoint,
)
from taluva_ai.agents.alphazero.rundir import (
    CONFIG_HISTORY,
    INIT_NAME,
    _first_line,
    _iteration_of,
    _remedy,
    _state_text,
    read_metrics,
    read_state,
)
from taluva_ai.errors import RunConfigError, RunFileError
from taluva_ai.runfiles import (
    read_checked,
    read_regular,
    run_lock,
    sha256_bytes,
    sha256_file,
    write_atomic,
)

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


