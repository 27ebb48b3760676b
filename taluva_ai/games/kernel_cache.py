"""Keep Numba's kernel cache fresh across files: a cached kernel is reused only while every
kernel source of the package, and every module they import, is as it was when it was compiled.

Numba keys a cached kernel on its own source file only (``numba/core/caching.py``: the index
of each file holds a hash of that file). A kernel links the machine code of the kernels it
calls and freezes the module constants it reads, which often live in other files: after an
edit of ``island_kernels.py`` (or a ``git checkout`` that changes it), the cached
``kernels.standard_apply_action`` still runs the old placement code, and a changed layout of
the state arrays can make it write out of bounds. :func:`install` puts locators in front of
Numba's own for this package's kernels only; they keep Numba's cache places and file names and
add :func:`source_fingerprint` to the source stamp, so any such change recompiles every kernel
once. Other code's kernels keep Numba's own locators.

Called by :func:`taluva_ai.games.compiling.njit` before it decorates a kernel.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: The package's module prefix and where its subpackages' sources lie, relative to the folder of
#: ``taluva_ai/`` (pyproject.toml's ``package-dir``: in a source tree ``taluva_ai.agents`` is
#: ``agents/``; in an installed wheel it is ``taluva_ai/agents``).
PACKAGE = "taluva_ai"
_MAPPED = {"taluva_ai.agents": "agents", "taluva_ai.envs": "envs"}

_IMPORT = re.compile(rb"^from\s+(taluva_ai[\w.]*)\s+import\s+(\([^)]*\)|[^\n]*)", re.M)

_fingerprint: str | None = None
_installed = False


def package_roots() -> dict[str, Path]:
    """``{module prefix: folder}`` of this package's sources (``taluva_ai`` first)."""
    top = Path(__file__).resolve().parents[1]
    roots = {PACKAGE: top}
    for name, folder in _MAPPED.items():
        installed = top / name.split(".")[-1]
        roots[name] = installed if installed.is_dir() else top.parent / folder
    return roots


def _module_file(module: str, roots: dict[str, Path]) -> Path | None:
    """The source file of ``module`` (a package's ``__init__.py``), or None."""
    for prefix in sorted(roots, key=len, reverse=True):
        if module != prefix and not module.startswith(prefix + "."):
            continue
        parts = module[len(prefix) + 1:].split(".") if module != prefix else []
        base = roots[prefix].joinpath(*parts)
        candidates = ([base.with_suffix(".py")] if parts else []) + [base / "__init__.py"]
        return next((path for path in candidates if path.is_file()), None)
    return None


def kernel_sources(roots: dict[str, Path]) -> list[Path]:
    """The files whose change may leave a cached kernel stale: every ``.py`` file under
    ``roots`` that defines kernels (holds ``njit``), and the package modules those import
    from (their constants are frozen into the kernels; one level). Sorted, without repeats."""
    files: set[Path] = set()
    for root in dict.fromkeys(roots.values()):
        for path in root.rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            text = path.read_bytes()
            if b"njit" not in text:
                continue
            files.add(path)
            for m in _IMPORT.finditer(text):
                module = m.group(1).decode()
                for name in [module] + [f"{module}.{w.decode()}"
                                        for w in re.findall(rb"\w+", m.group(2))]:
                    found = _module_file(name, roots)
                    if found is not None:
                        files.add(found)
    return sorted(files)


def source_fingerprint(files: Iterable[Path], base: Path | None = None) -> str:
    """SHA-256 (hex) of the files' names (relative to ``base``) and contents."""
    h = hashlib.sha256()
    for path in files:
        name = path.relative_to(base) if base is not None else path
        h.update(str(name).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def fingerprint() -> str:
    """This process's :func:`source_fingerprint` of the package's :func:`kernel_sources`
    (computed once, about 10 ms; ``"unknown"`` when the sources cannot be read, which leaves
    Numba's own per-file check)."""
    global _fingerprint
    if _fingerprint is None:
        try:
            roots = package_roots()
            _fingerprint = source_fingerprint(kernel_sources(roots), roots[PACKAGE].parent)
        except (OSError, ValueError):  # the guard never stops the package from loading
            _fingerprint = "unknown"
    return _fingerprint


def _ours(py_func: Any) -> bool:
    return str(getattr(py_func, "__module__", "") or "").startswith(PACKAGE + ".")


def _stamped(base: Any) -> type:
    """A subclass of Numba's locator ``base`` that serves only this package's kernels and adds
    :func:`fingerprint` to the source stamp."""

    def get_source_stamp(self: Any) -> Any:
        return (base.get_source_stamp(self), fingerprint())

    def from_function(cls: Any, py_func: Any, py_file: str) -> Any:
        if not _ours(py_func):
            return None
        return base.from_function.__func__(cls, py_func, py_file)

    return type(f"Package{base.__name__}", (base,), {
        "get_source_stamp": get_source_stamp, "from_function": classmethod(from_function),
        "__doc__": f"Numba's {base.__name__} with the package's source fingerprint."})


def install() -> bool:
    """Put the stamped locators in front of Numba's (once per process); whether they are in
    place (False under a Numba without the locators this wraps: then only Numba's own check)."""
    global _installed
    if _installed:
        return True
    from numba.core import caching

    bases = [getattr(caching, n, None) or getattr(caching, "_" + n, None)
             for n in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")]
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    if impl is None or not all(isinstance(b, type) for b in bases):
        return False
    stamped = [_stamped(b) for b in bases]
    impl._locator_classes = stamped + list(impl._locator_classes)
    _installed = True
    return True
