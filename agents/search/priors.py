"""Priors of the search: a softmax of a network's logits over the legal actions, and of the
game's heuristic values, compiled once for every path (module docstring of
:mod:`taluva_ai.agents.search`).

:func:`legal_softmax` is the one implementation of a network's priors for the Python fallback
(through :func:`taluva_ai.agents.alphazero.evaluator.legal_priors`) and the compiled batched
search, summing in NumPy's pairwise order (:func:`pairwise_sum`) so that both give the same
bits on every CPU (NumPy's ``exp`` and the one Numba compiles may differ in the last bit).
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games import compiling
from taluva_ai.games.compiling import njit

compiling.install()  # a first compile says so (taluva_ai.games.compiling)


@njit(cache=True)
def softmax(vals, temperature):
    """``exp((v - max v) / temperature)``, normalised (the heuristic priors of
    :class:`~taluva_ai.agents.evaluators.RolloutEvaluator`,
    in the compiled rollout search)."""
    best = vals.max()
    w = np.exp((vals - best) / temperature)
    return w / w.sum()


@njit(cache=True)
def legal_softmax(logits, ids, out):
    """The priors of ``k = ids.size`` legal actions from a network's policy ``logits`` (all
    network ids; float32 or float64), written to ``out`` (``float64[k]``, legal order): a
    softmax over ``logits[ids[i]]``, where an action without a network id (``ids[i] < 0``)
    gets the lowest logit of the others, and all ``1/k`` when none has one. The one
    implementation of the priors for the Python search
    (:func:`taluva_ai.agents.alphazero.evaluator.legal_priors`) and the compiled one
    (agents/search/batched.py), so both give the same bits on every CPU (NumPy's ``exp``
    and the one Numba compiles may differ in the last bit)."""
    k = ids.size
    inside = 0
    zmin = np.inf
    for i in range(k):
        if ids[i] >= 0:
            out[i] = np.float64(logits[ids[i]])
            zmin = min(zmin, out[i])
            inside += 1
    if inside == 0:
        for i in range(k):
            out[i] = 1.0 / max(k, 1)
        return
    zmax = -np.inf
    for i in range(k):
        if ids[i] < 0:
            out[i] = zmin
        zmax = max(zmax, out[i])
    for i in range(k):
        out[i] = np.exp(out[i] - zmax)
    total = pairwise_sum(out, np.int64(0), np.int64(k))
    for i in range(k):
        out[i] = out[i] / total


@njit(cache=True)
def block_sum(a, lo, n):
    """NumPy's pairwise summation of ``a[lo:lo + n]`` for ``n <= 128``: eight running sums."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r = a[lo:lo + 8].copy()
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True)
def pairwise_sum(a, lo, n):
    """NumPy's pairwise summation of ``a[lo:lo + n]`` (the order ``np.sum`` adds a contiguous
    float64 array in: halves, cut at a multiple of 8, down to blocks of at most 128), so
    compiled and NumPy code give the same bits. Iterative: Numba's cache cannot load a
    function that calls a recursive one (the process crashes)."""
    if n <= 128:
        return block_sum(a, lo, n)
    los = np.empty(64, dtype=np.int64)  # the pending halves: depth < log2(n)
    ns = np.empty(64, dtype=np.int64)
    stage = np.empty(64, dtype=np.int64)  # 0: new, 1: left half running, 2: right half running
    left = np.empty(64)
    top = 0
    los[0] = lo
    ns[0] = n
    stage[0] = 0
    while True:
        m = ns[top]
        if m > 128:  # a new node of the tree: run its left half
            half = m // 2 - (m // 2) % 8
            stage[top] = 1
            top += 1
            los[top] = los[top - 1]
            ns[top] = half
            stage[top] = 0
            continue
        v = block_sum(a, los[top], m)
        top -= 1
        while top >= 0 and stage[top] == 2:  # both halves done: add them, go up
            v = left[top] + v
            top -= 1
        if top < 0:
            return v
        left[top] = v  # the left half is done: run the right half
        stage[top] = 2
        half = ns[top] // 2 - (ns[top] // 2) % 8
        top += 1
        los[top] = los[top - 1] + half
        ns[top] = ns[top - 1] - half
        stage[top] = 0
