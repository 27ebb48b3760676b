"""Kernels that the games' kernels share: the winner-takes-all returns and the uniformly random
pick of a random playout.

Both are inlined into their callers (Numba IR, ``inline="always"``): no kernel of their own to
compile, and the callers' speed unchanged. Compiled without Numba's reference counting
(``_nrt=False``) so that the kernels of :mod:`taluva_ai.games.thurn_und_taxis.kernels`, which
are, may call them; they allocate nothing.
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games import compiling
from taluva_ai.games.compiling import njit

compiling.install()


@njit(cache=True, inline="always", _nrt=False)
def winner_returns(players, place_col, n, out):
    """Final values of a finished game that ranks only its winners (RULES.md, "End of the
    game"; THURN-UND-TAXIS.md §7): each seat with ``players[q, place_col] == 0`` (first place)
    gets ``(n - k) / (k (n - 1))`` for ``k`` such seats, every other seat ``-1 / (n - 1)``; the
    values sum to 0 (a sole winner +1).

    Args:
        players: ``int[>= n, *]`` per-seat rows; ``place_col``: the column of the final place.
        n: number of seats (at least 2).
        out: ``float64[>= n]`` receives the values (its first ``n`` entries).
    """
    k = 0
    for q in range(n):
        if players[q, place_col] == 0:
            k += 1
    for q in range(n):
        if players[q, place_col] == 0:
            out[q] = (n - k) / (k * (n - 1.0))
        else:
            out[q] = -1.0 / (n - 1.0)


@njit(cache=True, inline="always", _nrt=False)
def random_legal(buf, n, mask):
    """A uniformly random one of the ``n`` legal action ids ``buf[:n]`` (numba's
    ``np.random`` stream), checking on the way that the dense legal mask agrees with the list:
    ``mask`` (``bool[A]``) is clean on entry and left clean.

    Raises:
        RuntimeError: the mask does not hold the drawn id (the list and the mask disagree).
    """
    for j in range(n):
        mask[buf[j]] = True
    a = buf[np.random.randint(n)]
    if not mask[a]:
        raise RuntimeError("legal mask inconsistent with the legal list")
    for j in range(n):
        mask[buf[j]] = False
    return a
