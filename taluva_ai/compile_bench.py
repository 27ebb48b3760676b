"""The first run's cost: CPU seconds of a command with an empty kernel cache (``taluva bench
--compile``).

Each command (:data:`COMMANDS`, or the ones given) runs in a subprocess of its own with
``NUMBA_CACHE_DIR`` set to a new, empty temporary directory, so every Numba kernel it uses is
compiled (cold), then once more with the same directory (warm: the kernels come from the cache).
The figures are the user + system CPU seconds of the whole subprocess (``os.wait4``), Python's
start, imports and the game included, not wall time: on a busy machine the wall time says more
about the neighbours than about the command. The load average is recorded beside them.

Kernel by kernel: the subprocess listens to Numba's ``numba:compile`` events and records the CPU
seconds of each compile; ``own_cpu_s`` leaves out the callees compiled on the way (whose own
compiles are listed as kernels of their own), ``total_cpu_s`` includes them. Numba's own
implementations (of NumPy functions) count towards the kernel that needed them.

The JSON: ``{"commands": [{"command", "cold": {"cpu_s", "user_s", "sys_s", "wall_s",
"compile_cpu_s", "kernels_compiled", "kernels": [...], "rc"}, "warm": {"cpu_s", "wall_s",
"kernels_compiled", "rc"}, "load_avg": [before, after]}], "machine": ...}``.
"""

from __future__ import annotations

import collections
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The commands measured by default (arguments of ``taluva``): the classic players, and the
#: built-in network (its batched compiled search) against greedy.
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("play", "--players", "greedy", "random", "--seed", "1"),
    ("play", "--players", "az:builtin", "greedy", "--seed", "1"),
)

#: The environment variable that makes a process record its compile events (a JSON line per
#: compiled kernel signature) into the file it names.
EVENTS_ENV = "TALUVA_COMPILE_EVENTS"


def record_compiles(path: str) -> None:
    """Append a JSON line per Numba compile (kernel, depth, CPU seconds) to ``path`` from now
    on, in this process."""
    from numba.core import event

    out = open(path, "a", encoding="utf-8")  # noqa: SIM115 (open for the process's life)
    stack: list[float] = []

    class _Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            stack.append(time.process_time())

        def on_end(self, ev: Any) -> None:
            cpu = time.process_time() - stack.pop()
            f = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
            name = f"{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', '?')}"
            args = str((ev.data or {}).get("args"))[:3000]
            out.write(json.dumps({"kernel": name, "cpu_s": cpu, "depth": len(stack),
                                  "args": args}) + "\n")
            out.flush()

    event.register("numba:compile", _Listener())


def kernel_table(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per kernel: ``own_cpu_s`` (its compiles less its callees' compiles), ``total_cpu_s``
    (its outermost compiles, callees included) and ``compiles`` (signatures compiled), largest
    own first. Numba's own kernels are folded into their caller's own time. ``rows`` are the
    recorded events in order (a callee ends before its caller)."""
    own: dict[str, float] = collections.defaultdict(float)
    total: dict[str, float] = collections.defaultdict(float)
    count: collections.Counter[str] = collections.Counter()
    child: dict[int, float] = collections.defaultdict(float)  # callees' time by depth
    for r in rows:
        d = r["depth"]
        inner = child.pop(d + 1, 0.0)
        if r["kernel"].startswith("numba."):
            child[d] += inner  # its callees' compiles are theirs; its own stays the caller's
            continue
        own[r["kernel"]] += r["cpu_s"] - inner
        child[d] += r["cpu_s"]
        count[r["kernel"]] += 1
        if d == 0:
            total[r["kernel"]] += r["cpu_s"]
    return [{"kernel": k, "own_cpu_s": round(v, 2), "total_cpu_s": round(total.get(k, 0.0), 2),
             "compiles": count[k]}
            for k, v in sorted(own.items(), key=lambda kv: -kv[1])]


def run_command(argv: Sequence[str], cache_dir: str, events: str | None = None,
                timeout: float | None = None) -> dict[str, Any]:
    """Run ``taluva argv`` in a subprocess with ``NUMBA_CACHE_DIR=cache_dir``; its CPU seconds
    (user + system, the whole process tree that it waited for), wall seconds and exit status,
    and with ``events`` its compile events recorded there."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    env.pop(EVENTS_ENV, None)
    if events is not None:
        env[EVENTS_ENV] = events
    code = ("import os, sys\n"
            f"p = os.environ.get({EVENTS_ENV!r})\n"
            "if p:\n"
            "    from taluva_ai.compile_bench import record_compiles\n"
            "    record_compiles(p)\n"
            "from taluva_ai.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    with tempfile.TemporaryFile() as err:
        before = os.times()
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", code, *argv], env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        wall = time.monotonic() - t0
        after = os.times()
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    user = after.children_user - before.children_user
    system = after.children_system - before.children_system
    out: dict[str, Any] = {"cpu_s": round(user + system, 2), "user_s": round(user, 2),
                           "sys_s": round(system, 2), "wall_s": round(wall, 2),
                           "rc": proc.returncode}
    if proc.returncode != 0:
        out["stderr_tail"] = stderr[-2000:]
    return out


def measure(argv: Sequence[str], timeout: float | None = None) -> dict[str, Any]:
    """The cold and the warm run of ``taluva argv`` (module docstring)."""
    load_before = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="taluva-compile-bench-") as tmp:
        cache = os.path.join(tmp, "numba_cache")
        os.mkdir(cache)
        events = os.path.join(tmp, "events.jsonl")
        cold = run_command(argv, cache, events, timeout)
        rows = ([json.loads(line) for line in Path(events).read_text().splitlines()]
                if os.path.exists(events) else [])
        table = kernel_table(rows)
        cold["compile_cpu_s"] = round(sum(k["own_cpu_s"] for k in table), 2)
        cold["kernels_compiled"] = sum(k["compiles"] for k in table)
        cold["kernels"] = table
        events2 = os.path.join(tmp, "events2.jsonl")
        warm = run_command(argv, cache, events2, timeout)
        rows2 = ([json.loads(line) for line in Path(events2).read_text().splitlines()]
                 if os.path.exists(events2) else [])
        warm["kernels_compiled"] = sum(k["compiles"] for k in kernel_table(rows2))
    return {"command": "taluva " + shlex.join(argv), "cold": cold, "warm": warm,
            "load_avg": [load_before, [round(x, 2) for x in os.getloadavg()]]}


def bench_compile(commands: Sequence[Sequence[str]] = COMMANDS, timeout: float | None = None,
                  progress: bool = True) -> dict[str, Any]:
    """:func:`measure` for each command (a line on stderr before each when ``progress``)."""
    results = []
    for i, argv in enumerate(commands):
        if progress:
            print(f"compile bench {i + 1}/{len(commands)}: taluva {shlex.join(argv)}, cold "
                  "(empty kernel cache), then warm", file=sys.stderr, flush=True)
        results.append(measure(argv, timeout))
        if progress:
            r = results[-1]
            print(f"  cold {r['cold']['cpu_s']:.1f} CPU s ({r['cold']['kernels_compiled']} "
                  f"kernels compiled, {r['cold']['compile_cpu_s']:.1f} s of it), warm "
                  f"{r['warm']['cpu_s']:.1f} CPU s; load {r['load_avg'][0][0]:.1f}",
                  file=sys.stderr, flush=True)
    return {"commands": results}
