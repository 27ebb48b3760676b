"""Where a cold command's compiling goes: kernel by kernel, Numba's Python stages against LLVM's.

Runs ``taluva ARGS`` (default: ``play --players greedy random --seed 1``) in this process with
an empty ``NUMBA_CACHE_DIR`` of its own (so every kernel is compiled) and prints, per kernel
of the package (own CPU seconds, its callees' compiles left out as in ``taluva bench
--compile``):

- ``python_s``: Numba's front end (bytecode, type inference, lowering to LLVM IR, the
  wrapper), the kernel's own CPU less its LLVM time;
- ``llvm_func_s``, ``llvm_module_s``, ``machine_s``: LLVM's function passes, its module passes
  (run on the kernel with every callee's module linked in) and machine code (MCJIT, again the
  whole linked module);
- ``functions``: the functions in its final module (itself, its wrappers and every callee
  linked in and not inlined away: each is optimized and machine-coded again there).

Kernels call their callees of this package rather than link them in
(``taluva_ai.games.compiling.call_not_link``); with ``TALUVA_LINK_KERNELS=1`` in the environment
they link them as Numba does by default, each callee optimized and machine-coded again in every
kernel above it: compare the two.

    python experiments/compile_breakdown.py [--json FILE] [-- taluva args]

The figures are CPU seconds (``time.process_time``) of this one process; docs/benchmarks.md
("Compile time") has a measured table.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from typing import Any

DEFAULT = ["play", "--players", "greedy", "random", "--seed", "1"]


def instrument() -> dict[str, dict[str, float]]:
    """Patch Numba's CPU code library to time LLVM's stages per library; returns the table it
    fills (library name: stage: CPU seconds, and ``functions``)."""
    from numba.core import codegen

    llvm: dict[str, dict[str, float]] = collections.defaultdict(
        lambda: collections.defaultdict(float))
    lib_cls = codegen.CPUCodeLibrary
    jit_cls = codegen.JITCodeLibrary

    def timed(cls: type, method: str, key: str) -> None:
        orig = getattr(cls, method)

        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            t = time.process_time()
            try:
                return orig(self, *args, **kwargs)
            finally:
                llvm[self.name][key] += time.process_time() - t

        setattr(cls, method, run)

    timed(lib_cls, "_optimize_functions", "llvm_func_s")
    timed(lib_cls, "_optimize_final_module", "llvm_module_s")
    timed(jit_cls, "_finalize_specific", "machine_s")
    orig_finalize = lib_cls._finalize_final_module

    def finalize(self: Any) -> Any:
        llvm[self.name]["functions"] = sum(not fn.is_declaration
                                           for fn in self._final_module.functions)
        return orig_finalize(self)

    lib_cls._finalize_final_module = finalize  # type: ignore[method-assign]
    return llvm


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", metavar="FILE", help="also write the table as JSON here")
    p.add_argument("args", nargs="*", help="the taluva command (default: %(default)s)",
                   default=DEFAULT)
    a = p.parse_args(argv)
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="compile-breakdown-")
    os.environ.setdefault("NUMBA_OPT", "1")
    t0 = time.process_time()
    llvm = instrument()
    from taluva_ai.compile_bench import kernel_table, record_compiles

    events = os.path.join(os.environ["NUMBA_CACHE_DIR"], "events.jsonl")
    record_compiles(events)
    from taluva_ai.cli import main as taluva

    t1 = time.process_time()
    rc = taluva(a.args)
    t2 = time.process_time()
    with open(events, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    table = kernel_table(rows)
    for k in table:
        stages = llvm.get(k["kernel"].rsplit(".", 1)[-1], {})
        for key in ("llvm_func_s", "llvm_module_s", "machine_s"):
            k[key] = round(stages.get(key, 0.0), 2)
        k["functions"] = int(stages.get("functions", 0))
        k["python_s"] = round(k["own_cpu_s"] - k["llvm_func_s"] - k["llvm_module_s"]
                              - k["machine_s"], 2)
    totals = {key: round(sum(v.get(key, 0.0) for v in llvm.values()), 2)
              for key in ("llvm_func_s", "llvm_module_s", "machine_s")}
    compile_s = sum(k["own_cpu_s"] for k in table)
    link = os.environ.get("TALUVA_LINK_KERNELS", "0") not in ("", "0")
    out = {"command": a.args, "linked": link, "cpu_s": round(t2 - t0, 2),
           "imports_s": round(t1 - t0, 2), "compile_cpu_s": round(compile_s, 2),
           "llvm": totals, "python_s": round(compile_s - sum(totals.values()), 2),
           "kernels_compiled": sum(k["compiles"] for k in table), "kernels": table,
           "load_avg": [round(x, 2) for x in os.getloadavg()], "rc": rc}
    print(f"{'kernel':52s} {'own':>5s} {'python':>6s} {'func':>5s} {'module':>6s} "
          f"{'machine':>7s} {'fns':>4s}", file=sys.stderr)
    for k in table:
        print(f"{k['kernel'].split('games.')[-1]:52s} {k['own_cpu_s']:5.2f} {k['python_s']:6.2f} "
              f"{k['llvm_func_s']:5.2f} {k['llvm_module_s']:6.2f} {k['machine_s']:7.2f} "
              f"{k['functions']:4d}", file=sys.stderr)
    print(f"process {out['cpu_s']} CPU s, compiling {out['compile_cpu_s']} (Numba's Python "
          f"{out['python_s']}, LLVM {totals}), load {out['load_avg']}", file=sys.stderr)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
    return rc


if __name__ == "__main__":
    sys.exit(main())
