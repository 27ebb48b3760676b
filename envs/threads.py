"""Run a compiled batch kernel over its games on several threads.

The vector envs' kernels take a batch of games with a leading game axis and loop over it on
one thread; they are compiled with ``nogil=True``, so :func:`over_games` runs them on
contiguous slices of the batch on a pool of Python threads at once, each game on one thread,
the same work as Numba's ``prange`` without compiling a parallel kernel (a ``parallel=True``
kernel compiles the whole env step a second and third time: about 40 s of CPU on a fresh
install, for the Taluva and the Thurn und Taxis envs together). Each game draws from its own
generator, so the results do not depend on the number of threads or their schedule.

The number of threads is Numba's (``NUMBA_NUM_THREADS``: the CPUs by default).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

_pool: dict[str, Any] = {"executor": None, "pid": None}
_lock = threading.Lock()


def num_threads() -> int:
    """Numba's thread count (``numba.config.NUMBA_NUM_THREADS``), at least 1."""
    from numba import config

    return max(1, int(getattr(config, "NUMBA_NUM_THREADS", 1)))


def _executor() -> ThreadPoolExecutor:
    """The process's pool (made again in a forked child, whose copy has no threads)."""
    with _lock:
        if _pool["executor"] is None or _pool["pid"] != os.getpid():
            _pool["executor"] = ThreadPoolExecutor(max_workers=num_threads(),
                                                   thread_name_prefix="taluva-envs")
            _pool["pid"] = os.getpid()
        return _pool["executor"]


def over_games(kernel: Callable[..., Any], args: Sequence[Any], per_game: Sequence[int],
               threads: int | None = None) -> None:
    """``kernel(*args)``, with the games split over ``threads`` threads (default
    :func:`num_threads`): the arguments at the positions ``per_game`` (arrays with the game
    axis first) are cut into contiguous slices of games (views: the kernel writes its outputs
    in place), the others are passed whole to every call. One slice runs on the calling
    thread. ``kernel`` must release the GIL (``nogil=True``) for the threads to overlap.

    Raises:
        Whatever the kernel raises (the first slice's error that the calling thread sees).
    """
    games = len(args[per_game[0]])
    k = min(threads or num_threads(), games)
    if k <= 1:
        kernel(*args)
        return
    bounds = [games * j // k for j in range(k + 1)]
    calls = []
    for j in range(k):
        lo, hi = bounds[j], bounds[j + 1]
        calls.append([a[lo:hi] if i in per_game else a for i, a in enumerate(args)])
    futures = [_executor().submit(kernel, *c) for c in calls[1:]]
    try:
        kernel(*calls[0])
    finally:
        for f in futures:
            f.result()
