"""Gumbel root selection for MCTS: sequential halving and the completed-Q policy improvement.

Danihelka, Guez, Schrittwieser & Silver, "Policy improvement by planning with Gumbel", ICLR
2022 (Gumbel AlphaZero), as implemented in DeepMind's ``mctx`` (``seq_halving.py``,
``qtransforms.py``, ``policies.py``), for the root of an :class:`~taluva_ai.agents.mcts.MCTSAgent`
search; nodes below the root keep PUCT.

With ``n`` simulations and ``m`` considered actions, the root samples ``g(a) ~ Gumbel(0, 1)``
and visits the top ``m`` actions by ``g + logits`` in sequential-halving phases; the move is the
survivor of highest ``g + logits + sigma(q)``, and the policy target is the improved policy
``softmax(logits + sigma(completed q))``, which is a policy improvement even when ``n`` is
much smaller than the number of legal moves (Taluva's tile step has ~300).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from taluva_ai.games import compiling
from taluva_ai.games.compiling import njit

compiling.install()  # a first compile says so (taluva_ai.games.compiling)


@lru_cache(maxsize=256)
def considered_visits(max_considered: int, num_simulations: int) -> tuple[int, ...]:
    """The visit count that the action chosen at each simulation must have
    (``mctx.seq_halving.get_sequence_of_considered_visits``): sequential halving over
    ``max_considered`` actions with ``num_simulations`` simulations.

    Returns:
        ``num_simulations`` ints; simulation ``i`` visits an action with exactly
        ``result[i]`` visits so far.
    """
    if max_considered <= 1:
        return tuple(range(num_simulations))
    log2max = math.ceil(math.log2(max_considered))
    sequence: list[int] = []
    visits = [0] * max_considered
    num_considered = max_considered
    while len(sequence) < num_simulations:
        extra = max(1, int(num_simulations / (log2max * num_considered)))
        for _ in range(extra):
            sequence.extend(visits[:num_considered])
            for i in range(num_considered):
                visits[i] += 1
        num_considered = max(2, num_considered // 2)
    return tuple(sequence[:num_simulations])


@njit(cache=True)
def legal_softmax(logits, ids, out):
    """The priors of ``k = ids.size`` legal actions from a network's policy ``logits`` (all
    network ids; float32 or float64), written to ``out`` (``float64[k]``, legal order): a
    softmax over ``logits[ids[i]]``, where an action without a network id (``ids[i] < 0``)
    gets the lowest logit of the others, and all ``1/k`` when none has one. The one
    implementation of the priors for the Python search
    (:func:`taluva_ai.agents.alphazero.evaluator.legal_priors`) and the compiled one
    (agents/mcts_batched.py), so both give the same bits on every CPU (NumPy's ``exp`` and
    the one Numba compiles may differ in the last bit)."""
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
    total = _pairwise_sum(out, np.int64(0), np.int64(k))
    for i in range(k):
        out[i] = out[i] / total


@njit(cache=True)
def _block_sum(a, lo, n):
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
def _pairwise_sum(a, lo, n):
    """NumPy's pairwise summation of ``a[lo:lo + n]`` (the order ``np.sum`` adds a contiguous
    float64 array in: halves, cut at a multiple of 8, down to blocks of at most 128), so
    compiled and NumPy code give the same bits. Iterative: Numba's cache cannot load a
    function that calls a recursive one (the process crashes)."""
    if n <= 128:
        return _block_sum(a, lo, n)
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
        v = _block_sum(a, los[top], m)
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


@njit(cache=True)
def completed_q(q, visits, prior, raw_value, c_visit, c_scale):
    """``sigma(completed q)`` of the root's children (``mctx`` ``qtransform_completed_by_mix_
    value``): unvisited children get the mixed value estimate ``(v + sum_b N(b) sum_{a
    visited} pi(a) q(a) / sum_{a visited} pi(a)) / (1 + sum_b N(b))``; the completed values are
    rescaled to [0, 1] by their min and max, then multiplied by ``(c_visit + max_b N(b)) *
    c_scale``.

    Args:
        q: ``float64[k]`` mean values of the children for the player to move (any value where
            unvisited).
        visits: ``float64[k]`` visit counts.
        prior: ``float64[k]`` prior probabilities.
        raw_value: the evaluator's value of the root for the player to move.

    Returns:
        ``float64[k]``.
    """
    k = q.shape[0]
    total = 0.0
    vmax = 0.0
    m = 0
    pq = np.empty(k)
    pp = np.empty(k)
    tiny = np.finfo(np.float64).tiny
    for i in range(k):
        total += visits[i]
        vmax = max(vmax, visits[i])
        if visits[i] > 0:
            pp[m] = max(prior[i], tiny)
            pq[m] = pp[m] * q[i]
            m += 1
    mixed = raw_value
    if total > 0:
        weighted = (_pairwise_sum(pq, np.int64(0), np.int64(m))
                    / _pairwise_sum(pp, np.int64(0), np.int64(m)))
        mixed = (raw_value + total * weighted) / (total + 1.0)
    comp = np.empty(k)
    for i in range(k):
        comp[i] = q[i] if visits[i] > 0 else mixed
    lo = comp.min()
    span = max(comp.max() - lo, 1e-8)
    scale = (c_visit + vmax) * c_scale
    for i in range(k):
        comp[i] = scale * ((comp[i] - lo) / span)
    return comp


@njit(cache=True)
def score_considered(considered, gumbel, logits, sigma_q, visits):
    """``g + logits + sigma(q)`` where an action has exactly ``considered`` visits, ``-inf``
    elsewhere (``mctx.seq_halving.score_considered``); ``float64[k]``."""
    top = logits.max()
    score = np.empty(logits.shape[0])
    for i in range(logits.shape[0]):
        if visits[i] == considered:
            score[i] = max(-1e9, gumbel[i] + (logits[i] - top) + sigma_q[i])
        else:
            score[i] = -np.inf
    return score


@njit(cache=True)
def gumbel_child(N, W, vloss, f, k, p, table, gumbel, logits, prior, raw_value, c_visit,
                 c_scale):
    """The root child (node index) the next simulation visits (``mctx``
    ``gumbel_muzero_root_action_selection``): among the children whose visits (pending
    virtual visits included) equal the schedule's ``table`` entry, the highest
    ``g + logits + sigma(completed q)``; past the schedule, the least visited survivor.

    Args:
        N, W, vloss: the tree's visit counts, value sums (``[nodes, players]``) and virtual
            losses; the root's children are nodes ``f .. f + k - 1``; ``p`` is the seat to
            move at the root.
        table: ``int64[sims]`` from :func:`considered_visits`.
        gumbel, logits, prior: ``float64[k]`` root noise, logits and normalised prior.
    """
    n = N[f:f + k]
    visits = n + vloss[f:f + k]
    q = np.empty(k)
    for i in range(k):
        q[i] = W[f + i, p] / max(n[i], 1.0) if n[i] > 0 else 0.0
    sigma = completed_q(q, n, prior, raw_value, c_visit, c_scale)
    index = int(visits.sum())  # whole numbers: exact in any order
    score = score_considered(np.float64(table[min(index, table.shape[0] - 1)]), gumbel, logits,
                             sigma, visits)
    if not np.isfinite(score).any():
        score = score_considered(visits.min(), gumbel, logits, sigma, visits)
    return f + np.argmax(score)


def improved_policy(logits: np.ndarray, sigma_q: np.ndarray) -> np.ndarray:
    """``softmax(logits + sigma(completed q))``, the Gumbel AlphaZero policy target."""
    z = logits + sigma_q
    z = z - z.max()
    w = np.exp(z)
    return w / w.sum()
