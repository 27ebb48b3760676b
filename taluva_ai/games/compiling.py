"""What a process says while it compiles the engine's kernels, outside the command line.

The command line announces compiling itself (:mod:`taluva_ai.warmup`: a line, then a progress
bar or lines). Everywhere else (the Python API, the environments, the browser board's server),
:func:`install` makes the first compile of one of this package's kernels in a process log one
line on the ``taluva_ai`` logger: :data:`API_COMPILING`, level WARNING, so it shows without any
logging set up; ``logging.getLogger("taluva_ai").setLevel(logging.ERROR)`` silences it. The
modules that define kernels call :func:`install` when imported.

:func:`compiling_now` tells whether, and for how long, this process is compiling (the browser
board shows it while a first search compiles).

In the games layer (CONTRIBUTING.md) so that the kernels' modules, and the agents and
environments above them, can install it.

:func:`njit` is the decorator of every kernel of the package: Numba's ``njit`` without the C
callback wrapper that Numba otherwise compiles beside each kernel (what ``numba.cfunc`` and
first-class function values call; no kernel here is called that way), which a first run
compiled, optimized and machine-coded for nothing.

Kernels call one another's machine code (:func:`call_not_link`): Numba would otherwise link each
callee's LLVM module into every kernel that calls it, directly or through others, and optimize
and machine-code it again there (the rules' legal-move kernels about six times in a cold game);
each kernel of the package is now compiled once, and a kernel loaded from Numba's cache finds
its callees' machine code (loaded or compiled then) before it is used.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit(*args, **options)`` with ``no_cfunc_wrapper=True`` unless given: the kernel
    is compiled, cached and callable from Python and from other kernels as with Numba's own
    decorator (same options: ``cache``, ``inline``, ``parallel``, ...), but without its C
    callback wrapper (``dispatcher.cfunc``-style callers: none in this package), which saves a
    first run about a twentieth of its compile time (docs/benchmarks.md, "Compile time").
    Used bare (``@njit``) or with options (``@njit(cache=True)``).

    Other kernels call its machine code rather than compile it into their own
    (:func:`call_not_link`); ``linked=True`` (an option of this decorator, not Numba's) links it
    into its callers as Numba does: for code that a caller reaches only in some games (the solo
    variant's, behind a run-time test), which a process then never loads as a kernel of its
    own when it plays no such game."""
    from numba import njit as numba_njit

    options.setdefault("no_cfunc_wrapper", True)
    called = not options.pop("linked", False)
    call_not_link()
    if args and callable(args[0]):  # bare @njit
        kernel = numba_njit(*args, **options)
        if called:
            _KERNELS.append(kernel)
        return kernel
    decorator = numba_njit(*args, **options)

    def made(f: Any) -> Any:
        kernel = decorator(f)
        if called:
            _KERNELS.append(kernel)
        return kernel

    return made


#: The kernels made by :func:`njit` in this process that their callers call rather than link
#: in (:func:`call_not_link`): all but those made with ``linked=True``.
_KERNELS: list[Any] = []

#: Set (to anything but ``0``) in the environment, kernels link their callees as Numba does by
#: default (:func:`call_not_link` off; for comparison, docs/benchmarks.md "Compile time").
LINK_ENV = "TALUVA_LINK_KERNELS"


@dataclass(frozen=True)
class _Callee:
    """A kernel's callee of this package, called by symbol instead of linked in: calling it
    (Numba runs it before loading the caller from its cache) loads or compiles the callee and
    makes ``symbol``, the name the caller was compiled to call, resolve to its machine code."""

    module: str
    qualname: str
    args: tuple[Any, ...]
    symbol: str

    def __call__(self) -> None:
        import llvmlite.binding as ll

        kernel = _importable(self.module, self.qualname)
        if kernel is None:
            raise ImportError(f"kernel {self.module}.{self.qualname} (called by a cached "
                              "kernel) not found: clear Numba's cache (NUMBA_CACHE_DIR)")
        kernel.compile(self.args)
        cres = kernel.overloads[self.args]
        name = cres.fndesc.mangled_name
        ll.add_symbol(self.symbol, cres.library.get_pointer_to_function(name))


def _importable(module: str, qualname: str) -> Any:
    """The kernel ``module.qualname`` when importing the module finds it there, else None."""
    import importlib

    try:
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return obj if obj in _KERNELS else None


#: A callee of at most this many LLVM instructions (optimized, its own callees inlined) is
#: linked as Numba does, so that LLVM can inline it into its callers: called instead, the small
#: kernels of the greedy heuristic's inner loops (``_supply_terms``, ``_cell_builds``) cost the
#: ladder's MCTS-400 about a sixth of its speed. The rules' and the heuristic's large kernels
#: (``tile_actions`` 630, ``build_actions_labeled`` 1,700) are called.
SMALL = 200


def _callee(library: Any) -> _Callee | None:
    """The :class:`_Callee` of the kernel that a Numba code library holds, when it is one of
    :data:`_KERNELS` that a new process can import by name and larger than :data:`SMALL`; else
    None (link it)."""
    for kernel in _KERNELS:
        for args, cres in list(kernel.overloads.items()):
            if cres.library is library:
                f = kernel.py_func
                if _importable(f.__module__, f.__qualname__) is not kernel:
                    return None
                if _size(library, cres.fndesc.mangled_name) <= SMALL:
                    return None  # LLVM may inline it: link it
                return _Callee(f.__module__, f.__qualname__, tuple(args),
                               cres.fndesc.mangled_name)
    return None


def _size(library: Any, name: str) -> int:
    """LLVM instructions of the function ``name`` of a finalized code library (compiled here,
    or loaded from the cache: then its module for linking holds the code); 0 when not found."""
    module = library._shared_module if library._shared_module is not None \
        else library._final_module
    try:
        fn = module.get_function(name)
    except NameError:
        return 0
    return sum(len(list(b.instructions)) for b in fn.blocks)


_linking_patched = False


def call_not_link() -> None:
    """Make a kernel call its callees of this package (their own machine code, compiled once)
    rather than link their LLVM modules in (Numba's default: each callee optimized and
    machine-coded again in every kernel above it). Installed once per process, by :func:`njit`;
    off when :data:`LINK_ENV` is set.

    How: Numba's CPU code library links a callee's library in ``add_linking_library``; for a
    kernel of :data:`_KERNELS` that library is finalized (added to the JIT, so MCJIT resolves
    the caller's call to it across modules) and not linked, and the caller's ``_reload_init``
    (run by Numba before a cached kernel is loaded, and inherited by the kernels that link this
    one) gets a :class:`_Callee`, which loads the callee and binds the symbol the caller calls
    to its code (a callee compiled by another process has another symbol name). LLVM can no
    longer inline such a call, so a callee of at most :data:`SMALL` instructions is linked as
    before (docs/benchmarks.md, "Compile time")."""
    global _linking_patched
    if _linking_patched:
        return
    _linking_patched = True
    if os.environ.get(LINK_ENV, "0") not in ("", "0"):
        return
    from numba.core import codegen

    link = codegen.CPUCodeLibrary.add_linking_library

    def add_linking_library(self: Any, library: Any) -> None:
        callee = _callee(library)
        if callee is None:
            link(self, library)
            return
        library._ensure_finalized()
        self._reload_init.add(callee)

    codegen.CPUCodeLibrary.add_linking_library = add_linking_library  # type: ignore[method-assign]


#: What the Python API logs (logger ``taluva_ai``, WARNING) on a process's first compile.
API_COMPILING = ("taluva_ai: compiling the engine's kernels (Numba), first use only: from "
                 "seconds to a minute or two, cached afterwards (silence this notice with "
                 "logging.getLogger('taluva_ai').setLevel(logging.ERROR))")

logger = logging.getLogger("taluva_ai")

_announced = False  # the notice was logged, or a command line announced compiling
_printing = 0  # a command line's notice or warm-up is active: the notice stays quiet
_installed = False

#: What this process compiles now (:func:`compiling_now`): nesting depth, the kernel, since
#: when (compiles less than 2 s apart count as one stretch), when the last one ended.
_busy: dict[str, Any] = {"depth": 0, "kernel": None, "since": 0.0, "ended": -1e9}


@contextmanager
def command_line() -> Iterator[None]:
    """While active, a command line's own notice and progress speak for the compiles
    (:mod:`taluva_ai.warmup`): the notice stays quiet."""
    global _printing
    _printing += 1
    try:
        yield
    finally:
        _printing -= 1


def announced() -> None:
    """Record that compiling was announced (by a command line): no notice in this process."""
    global _announced
    _announced = True


def _ours(event: Any) -> bool:
    """Whether a compile event is of one of this package's kernels."""
    f = getattr((event.data or {}).get("dispatcher"), "py_func", None)
    return str(getattr(f, "__module__", None) or "").startswith("taluva_ai")


def install() -> None:
    """Listen to Numba's compile events (once per process; installing twice does nothing):
    log :data:`API_COMPILING` when the first of this package's kernels starts compiling, unless
    a command line speaks for it, and keep :func:`compiling_now`."""
    global _installed
    if _installed:
        return
    _installed = True
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            if _ours(ev):
                _busy_start(ev)
                notice(ev)

        def on_end(self, ev: Any) -> None:
            if _ours(ev):
                _busy["depth"] = max(0, _busy["depth"] - 1)
                _busy["ended"] = time.monotonic()

    event.register("numba:compile", _Listener())


def notice(event: Any) -> bool:
    """The listener's notice for a compile starting: log :data:`API_COMPILING` once per
    process; whether it logged."""
    global _announced
    if _announced or _printing or not _ours(event):
        return False
    _announced = True
    logger.warning(API_COMPILING)
    return True


def _busy_start(event: Any) -> None:
    now = time.monotonic()
    if _busy["depth"] == 0 and now - _busy["ended"] > 2.0:
        _busy["since"] = now
    _busy["depth"] += 1
    f = (event.data or {})["dispatcher"].py_func
    _busy["kernel"] = f"{f.__module__.rsplit('.', 1)[-1]}.{f.__qualname__}"


def compiling_now() -> tuple[str, float] | None:
    """``(kernel, seconds)`` while this process compiles one of this package's kernels: the
    kernel being compiled and how long this stretch of compiling has lasted; None otherwise."""
    if _busy["depth"] <= 0:
        return None
    return str(_busy["kernel"]), time.monotonic() - float(_busy["since"])
