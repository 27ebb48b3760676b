"""The kernel cache stays fresh across files (taluva_ai.games.kernel_cache): a cached kernel is
reused only while the package's kernel sources, and the modules they import, are unchanged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numba

from taluva_ai.games import kernel_cache as KC
from taluva_ai.games.taluva import kernels as K


def _tree(tmp_path: Path) -> dict[str, Path]:
    """A package tree: a kernel module importing a constants module, and an unrelated one."""
    top = tmp_path / "taluva_ai"
    (top / "games").mkdir(parents=True)
    (top / "__init__.py").write_text("")
    (top / "games" / "__init__.py").write_text("")
    (top / "games" / "consts.py").write_text("SIZE = 3\n")
    (top / "games" / "kern.py").write_text(
        "from taluva_ai.games import consts as C\nfrom taluva_ai.games.compiling import njit\n\n"
        "@njit(cache=True)\ndef f(x):\n    return x + C.SIZE\n")
    (top / "cli.py").write_text("print('a command line')\n")
    return {"taluva_ai": top}


def test_kernel_sources_are_the_kernel_modules_and_what_they_import(tmp_path: Path) -> None:
    roots = _tree(tmp_path)
    top = roots["taluva_ai"]
    # taluva_ai/games/__init__.py: the package imported from (its names could be constants)
    assert KC.kernel_sources(roots) == sorted([top / "games" / "__init__.py",
                                               top / "games" / "consts.py",
                                               top / "games" / "kern.py"])


def test_the_fingerprint_changes_with_a_kernel_or_its_constants_only(tmp_path: Path) -> None:
    roots = _tree(tmp_path)
    top = roots["taluva_ai"]

    def fp() -> str:
        return KC.source_fingerprint(KC.kernel_sources(roots), tmp_path)

    first = fp()
    assert fp() == first
    (top / "cli.py").write_text("print('another command line')\n")
    assert fp() == first  # not a kernel's source: the cache stays
    (top / "games" / "consts.py").write_text("SIZE = 4\n")
    second = fp()
    assert second != first
    (top / "games" / "kern.py").write_text((top / "games" / "kern.py").read_text() + "\n# x\n")
    assert fp() not in (first, second)


def test_the_package_kernels_carry_the_fingerprint_and_others_keep_numbas_locator() -> None:
    locator = K.standard_apply_action._cache._impl.locator
    assert type(locator).__name__.startswith("Package")
    stamp = locator.get_source_stamp()
    assert stamp[1] == KC.fingerprint() and len(stamp[1]) == 64

    @numba.njit(cache=True)
    def outside(x):  # pragma: no cover (compiled, not run)
        return x

    assert not type(outside._cache._impl.locator).__name__.startswith("Package")


def test_sources_of_this_checkout_include_the_rules_constants() -> None:
    files = {str(p.relative_to(KC.package_roots()["taluva_ai"].parent))
             for p in KC.kernel_sources(KC.package_roots())}
    assert {"taluva_ai/games/taluva/kernels.py", "taluva_ai/games/taluva/island_kernels.py",
            "taluva_ai/games/taluva/state.py", "taluva_ai/games/taluva/rules.py"} <= files
    assert "taluva_ai/cli/play.py" not in files


_CHILD = """
import importlib.util
import sys
import numpy as np
# the fingerprint of other kernel sources, set before any kernel is decorated (the package's
# import decorates them): the module is loaded first, under its own name
spec = importlib.util.spec_from_file_location("taluva_ai.games.kernel_cache", sys.argv[2])
kernel_cache = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = kernel_cache
spec.loader.exec_module(kernel_cache)
kernel_cache._fingerprint = sys.argv[1]
from taluva_ai.games.choice import argmax_random
argmax_random(np.arange(3), np.array([0.0, 2.0, 1.0]), 3)
stats = argmax_random.stats
print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
"""


def test_a_changed_fingerprint_recompiles_and_an_unchanged_one_loads(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run(fingerprint: str) -> tuple[int, int]:
        out = subprocess.run([sys.executable, "-c", _CHILD, fingerprint, KC.__file__], env=env,
                             check=True, capture_output=True, text=True, timeout=300).stdout
        out = out.split()
        return int(out[-2]), int(out[-1])  # (loaded from the cache, compiled)

    assert run("A") == (0, 1)  # cold: compiled
    assert run("A") == (1, 0)  # the same sources: loaded from the cache
    assert run("B") == (0, 1)  # another kernel source: compiled again, not loaded
    assert run("B") == (1, 0)
