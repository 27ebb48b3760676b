"""Where the first run's time goes: the CPU seconds Numba spends compiling each kernel.

A pytest plugin and a report. The plugin listens to Numba's ``numba:compile`` events in every
pytest process (xdist workers included) and appends one JSON line per compiled signature to
``DIR/<pid>.jsonl``: the kernel (``module.qualname``), its argument types, the CPU seconds of the
compile (callees compiled on the way included), the nesting depth, the test that triggered it,
and the process. The report sums them per kernel (``total`` counts a kernel's callees compiled
for it, ``own`` does not), names the kernels compiled in several processes (the same signature
compiled twice) and those compiled for several signatures::

    rm -rf /tmp/nbcache && NUMBA_CACHE_DIR=/tmp/nbcache COMPILE_PROFILE_DIR=/tmp/compile \\
        python -m pytest -p experiments.compile_profile
    python experiments/compile_profile.py /tmp/compile

(an empty ``NUMBA_CACHE_DIR`` makes the run cold without touching the checkout's caches).
Processes that the tests start (``taluva`` commands, tournament workers) are not recorded.
docs/benchmarks.md ("The test suite's first run") gives what it found.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import time
from pathlib import Path
from typing import Any

_state: dict[str, Any] = {"out": None, "test": None, "stack": []}


def _kernel_name(event: Any) -> str:
    f = getattr((event.data or {}).get("dispatcher"), "py_func", None)
    return f"{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', '?')}"


def pytest_configure(config: Any) -> None:
    """Start recording (a pytest hook)."""
    from numba.core import event

    out_dir = Path(os.environ.get("COMPILE_PROFILE_DIR", ".compile_profile"))
    out_dir.mkdir(parents=True, exist_ok=True)
    _state["out"] = open(out_dir / f"{os.getpid()}.jsonl", "a")  # noqa: SIM115 (process-long)
    stack: list[float] = _state["stack"]

    class _Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            stack.append(time.process_time())

        def on_end(self, ev: Any) -> None:
            cpu = time.process_time() - stack.pop()
            row = {"kernel": _kernel_name(ev), "args": str((ev.data or {}).get("args"))[:400],
                   "cpu_s": round(cpu, 4), "depth": len(stack), "test": _state["test"],
                   "pid": os.getpid()}
            _state["out"].write(json.dumps(row) + "\n")
            _state["out"].flush()

    event.register("numba:compile", _Listener())


def pytest_runtest_setup(item: Any) -> None:
    """Remember the test that compiles (a pytest hook)."""
    _state["test"] = item.nodeid


def report(directory: Path, top: int = 25) -> dict[str, Any]:
    """The per-kernel sums of a recorded run (see the module docstring); prints them."""
    rows = [json.loads(line) for f in sorted(directory.glob("*.jsonl"))
            for line in f.read_text().splitlines()]
    rows = [r for r in rows if not r["kernel"].startswith("numba.")]
    own: dict[str, float] = collections.defaultdict(float)
    total: dict[str, float] = collections.defaultdict(float)
    count: collections.Counter[str] = collections.Counter()
    for pid in sorted({r["pid"] for r in rows}):
        child: dict[int, float] = collections.defaultdict(float)  # callees' time by depth
        for r in (r for r in rows if r["pid"] == pid):  # a callee ends before its caller
            d = r["depth"]
            own[r["kernel"]] += r["cpu_s"] - child.pop(d + 1, 0.0)
            child[d] += r["cpu_s"]
            count[r["kernel"]] += 1
            if d == 0:
                total[r["kernel"]] += r["cpu_s"]
    seen: dict[tuple[str, str], set[int]] = collections.defaultdict(set)
    for r in rows:
        seen[(r["kernel"], r["args"])].add(r["pid"])
    twice = {k: len(p) for k, p in seen.items() if len(p) > 1}
    sigs = collections.Counter(k for k, _ in seen)
    out = {
        "compile_cpu_s": round(sum(own.values()), 1),
        "processes": len({r["pid"] for r in rows}),
        "kernels": [{"kernel": k, "own_cpu_s": round(v, 1), "total_cpu_s": round(total[k], 1),
                     "compiles": count[k]}
                    for k, v in sorted(own.items(), key=lambda kv: -kv[1])],
        "compiled_in_several_processes": sorted(f"{k[0]} x{n}" for k, n in twice.items()),
        "several_signatures": {k: n for k, n in sigs.most_common() if n > 1},
    }
    print(f"compile CPU {out['compile_cpu_s']} s in {out['processes']} processes")
    print(f"{'own s':>8} {'total s':>8} {'compiles':>8}  kernel")
    for k in out["kernels"][:top]:
        print(f"{k['own_cpu_s']:8.1f} {k['total_cpu_s']:8.1f} {k['compiles']:8d}  {k['kernel']}")
    print("same signature compiled in several processes:",
          ", ".join(out["compiled_in_several_processes"]) or "none")
    several = out["several_signatures"].items()
    print("several signatures:", ", ".join(f"{k} ({n})" for k, n in several) or "none")
    return out


def main(argv: list[str] | None = None) -> None:
    """``python experiments/compile_profile.py DIR [--top N] [--json FILE]``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", type=Path, help="COMPILE_PROFILE_DIR of a recorded run")
    ap.add_argument("--top", type=int, default=25, help="kernels listed (default 25)")
    ap.add_argument("--json", type=Path, help="also write the sums to this JSON file")
    args = ap.parse_args(argv)
    if not any(args.directory.glob("*.jsonl")):
        ap.error(f"{args.directory}: no recorded compile events (*.jsonl)")
    out = report(args.directory, args.top)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
