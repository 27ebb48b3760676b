"""Gumbel root selection for MCTS: sequential halving and the completed-Q policy improvement.

Danihelka, Guez, Schrittwieser & Silver, "Policy improvement by planning with Gumbel", ICLR
2022 (Gumbel AlphaZero), as implemented in DeepMind's ``mctx`` (``seq_halving.py``,
``qtransforms.py``, ``policies.py``), for the root of an MCTS search
(:mod:`taluva_ai.agents.search`); nodes below the root keep PUCT.

With ``n`` simulations and ``m`` considered actions, the root samples ``g(a) ~ Gumbel(0, 1)``
and visits the top ``m`` actions by ``g + logits`` in sequential-halving phases; the move is the
survivor of highest ``g + logits + sigma(q)``, and the policy target is the improved policy
``softmax(logits + sigma(completed q))``, which is a policy improvement even when ``n`` is
much smaller than the number of legal moves (Taluva's tile step has ~300).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from taluva_ai.agents.search.priors import pairwise_sum
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
        weighted = (pairwise_sum(pq, np.int64(0), np.int64(m))
                    / pairwise_sum(pp, np.int64(0), np.int64(m)))
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


class GumbelRoot:
    """The Gumbel state of one search's root: the noise ``g``, the root's logits and
    normalised prior, and the sequential-halving schedule (``float64[k]`` each for the root's
    ``k`` children, the schedule ``int64[sims]``); empty until :meth:`setup`."""

    def __init__(self) -> None:
        self.noise = np.zeros(0)
        self.logits = np.zeros(0)
        self.prior = np.zeros(0)
        self.table = np.zeros(0, dtype=np.int64)

    def setup(self, tree: Any, sims: int, max_considered: int,
              rng: np.random.Generator | None) -> None:
        """Fix the root's logits (the log of its children's priors) and the schedule of
        ``sims`` simulations over ``max_considered`` actions; draw the noise from ``rng``
        (zeros without one: no noise, or temperature 0)."""
        k = int(tree.n_children[0])
        f = int(tree.first_child[0])
        self.logits = np.log(np.maximum(tree.prior[f:f + k], 1e-30))
        self.prior = np.zeros(0)
        if k:  # (a root without children is never searched; a driver may still set it up)
            prior = np.exp(self.logits - self.logits.max())
            self.prior = prior / prior.sum()
        self.noise = rng.gumbel(size=k) if rng is not None else np.zeros(k)
        self.table = np.array(considered_visits(min(max_considered, k), sims), dtype=np.int64)

    def sigma(self, tree: Any, root_value: float, c_visit: float, c_scale: float) -> np.ndarray:
        """``sigma(completed q)`` of the root's children (:func:`completed_q`), for the seat
        to move at the root; ``root_value`` is its evaluator value."""
        f, k = int(tree.first_child[0]), int(tree.n_children[0])
        p = int(tree.to_move[0])
        n = tree.N[f:f + k]
        q = np.where(n > 0, tree.W[f:f + k, p] / np.maximum(n, 1.0), 0.0)
        return completed_q(q, n, self.prior, float(root_value), float(c_visit), float(c_scale))

    def child(self, tree: Any, root_value: float, c_visit: float, c_scale: float) -> int:
        """The root child the next simulation visits (:func:`gumbel_child`); pending virtual
        visits count as visits."""
        p = int(tree.to_move[0])
        return int(gumbel_child(tree.N, tree.W, tree.vloss, int(tree.first_child[0]),
                                int(tree.n_children[0]), p, self.table, self.noise,
                                self.logits, self.prior, float(root_value), float(c_visit),
                                float(c_scale)))
