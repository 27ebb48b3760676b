"""Choices both games' compiled players make: the best of a list with ties broken at random.

One kernel for the Taluva greedy player and its solo rollouts (:mod:`taluva_ai.games.taluva.
heuristic`, :mod:`taluva_ai.games.taluva.solo_kernels`) and the Thurn und Taxis greedy player
(:mod:`taluva_ai.games.thurn_und_taxis.heuristic`). The draws come from numba's ``np.random``
stream, one ``randint`` a choice, so a seeded game draws the same actions wherever it is
played.
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games.compiling import njit


@njit(cache=True)
def pick_equal(ids, keys, n, best):
    """One of ``ids[:n]`` whose ``keys`` equal ``best``, uniformly at random (numba's
    ``np.random`` stream: one ``randint``); ``ids[0]`` when none does.

    Args:
        ids: ``int64[>= n]`` action ids.
        keys: ``[>= n]`` (``float64`` values or ``int64`` costs), compared with ``==``.
    """
    k = 0
    for j in range(n):
        if keys[j] == best:
            k += 1
    pick = np.random.randint(k)
    for j in range(n):
        if keys[j] == best:
            if pick == 0:
                return ids[j]
            pick -= 1
    return ids[0]


@njit(cache=True)
def argmax_random(ids, vals, n):
    """The id of highest value among the first ``n`` (``n >= 1``), ties broken uniformly at
    random (:func:`pick_equal`).

    Args:
        ids: ``int64[>= n]``; vals: ``float64[>= n]``.
    """
    best = vals[0]
    for j in range(1, n):
        best = max(best, vals[j])
    return pick_equal(ids, vals, n, best)
