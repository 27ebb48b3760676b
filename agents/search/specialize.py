"""Compiled search loops specialised to a game's kernels, each compiled once and cached on disk.

A search loop (``agents/search/compiled.py``, ``agents/search/batched.py``) is written once as a
plain Python function that calls the game's kernels by global names (``apply_fn``,
``legal_fn``, ...). :func:`specialize` makes a Numba dispatcher of a copy of it whose globals
bind those names to one game's kernels: Numba compiles the loop with the kernels called
directly (linked, inlined where small), and caches it like any ``@njit(cache=True)`` kernel,
under a name of its own (the loop's name, a tag and a digest of the kernels' names), so a new
process loads it instead of compiling it.

Why not the kernels as arguments: Numba types a dispatcher argument by the dispatcher object of
the process, so such a loop cannot be cached (a cached entry never matches in another process),
and a cached wrapper around it compiles, optimizes and machine-codes everything twice (the
loop, then the wrapper with the loop linked in).
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Callable
from typing import Any

from taluva_ai.games.compiling import njit

_MADE: dict[tuple[Any, ...], Any] = {}


def kernel_name(kernel: Any) -> str:
    """``module.qualname`` of a Numba dispatcher (or a Python function)."""
    f = getattr(kernel, "py_func", kernel)
    return f"{f.__module__}.{f.__qualname__}"


def specialize(template: Callable[..., Any], tag: str, **kernels: Any) -> Any:
    """The cached Numba dispatcher of ``template`` with the global names ``kernels`` bound to
    those kernels (one per process and binding).

    Args:
        template: a plain Python function whose body calls the kernels by global name.
        tag: a word for the kernel set (``"taluva"``, ``"solo"``), in the compiled function's
            name (the warm-up's progress, the cache's file names).
        kernels: ``name=dispatcher`` for each global name the template calls.

    Returns:
        An ``njit(cache=True)`` dispatcher named ``<template>_<tag>_<digest>``: the digest
        (of the kernels' module and qualified names) keeps the cache files of two bindings
        apart.
    """
    key = (template, tag, tuple(sorted((k, id(v)) for k, v in kernels.items())))
    made = _MADE.get(key)
    if made is None:
        names = ",".join(f"{k}={kernel_name(v)}" for k, v in sorted(kernels.items()))
        digest = hashlib.sha1(names.encode()).hexdigest()[:8]
        env = dict(template.__globals__)
        env.update(kernels)
        f = types.FunctionType(template.__code__, env, template.__name__,
                               template.__defaults__, template.__closure__)
        f.__qualname__ = f"{template.__qualname__}_{tag}_{digest}"
        f.__module__ = template.__module__
        f.__doc__ = template.__doc__
        made = _MADE[key] = njit(cache=True)(f)
    return made
