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


def completed_q(q: np.ndarray, visits: np.ndarray, prior: np.ndarray, raw_value: float,
                c_visit: float, c_scale: float) -> np.ndarray:
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
    """
    seen = visits > 0
    total = float(visits.sum())
    if total > 0:
        p = np.maximum(prior, np.finfo(np.float64).tiny)
        weighted = float((p[seen] * q[seen]).sum() / p[seen].sum())
        mixed = (raw_value + total * weighted) / (total + 1.0)
    else:
        mixed = raw_value
    comp = np.where(seen, q, mixed)
    lo, hi = comp.min(), comp.max()
    comp = (comp - lo) / max(hi - lo, 1e-8)
    return (c_visit + float(visits.max(initial=0.0))) * c_scale * comp


def score_considered(considered: float, gumbel: np.ndarray, logits: np.ndarray,
                     sigma_q: np.ndarray, visits: np.ndarray) -> np.ndarray:
    """``g + logits + sigma(q)`` where an action has exactly ``considered`` visits, ``-inf``
    elsewhere (``mctx.seq_halving.score_considered``)."""
    logits = logits - logits.max()
    score = np.maximum(-1e9, gumbel + logits + sigma_q)
    return np.where(visits == considered, score, -np.inf)


def improved_policy(logits: np.ndarray, sigma_q: np.ndarray) -> np.ndarray:
    """``softmax(logits + sigma(completed q))``, the Gumbel AlphaZero policy target."""
    z = logits + sigma_q
    z = z - z.max()
    w = np.exp(z)
    return w / w.sum()
