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
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit(*args, **options)`` with ``no_cfunc_wrapper=True`` unless given: the kernel
    is compiled, cached and callable from Python and from other kernels as with Numba's own
    decorator (same options: ``cache``, ``inline``, ``parallel``, ...), but without its C
    callback wrapper (``dispatcher.cfunc``-style callers: none in this package), which saves a
    first run about a twentieth of its compile time (docs/benchmarks.md, "Compile time").
    Used bare (``@njit``) or with options (``@njit(cache=True)``)."""
    from numba import njit as numba_njit

    from taluva_ai.games import kernel_cache

    kernel_cache.install()  # a cached kernel is fresh only while its callees' files are
    options.setdefault("no_cfunc_wrapper", True)
    return numba_njit(*args, **options)


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
