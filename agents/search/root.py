"""The root of a search: its exploration before the simulations (AlphaZero's Dirichlet noise
or the Gumbel root) and the move chosen after them, shared by every path of
:mod:`taluva_ai.agents.search`.

Dirichlet noise on the root priors is AlphaZero's exploration (Silver et al. 2017, 2018:
``P = (1 - frac) P + frac Dir(alpha)``); ``root=gumbel`` replaces it with Gumbel sequential
halving (Danihelka et al. 2022; :mod:`.gumbel`). The move is a proven win if there is one,
else the Gumbel survivor, else the most visited child (ties to the best mean value, then at
random, as OpenSpiel's ``MCTSBot``), or one sampled by ``visits^(1/temperature)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from taluva_ai.agents.search.gumbel import GumbelRoot, improved_policy, score_considered
from taluva_ai.agents.search.tree import DECISION, TERMINAL, Tree


def dirichlet_noise(tree: Tree, rng: np.random.Generator, alpha: float, frac: float) -> None:
    """Mix ``Dir(alpha)`` noise into the priors of the root's children with weight ``frac``
    (nothing when ``alpha`` is 0, the root is not a decision node or has one child)."""
    k = int(tree.n_children[0])
    if alpha > 0 and tree.kind[0] == DECISION and k > 1:
        f = int(tree.first_child[0])
        noise = rng.dirichlet(np.full(k, alpha))
        tree.prior[f:f + k] = (1 - frac) * tree.prior[f:f + k] + frac * noise


def explore(agent: Any, tree: Tree, sims: int, noise: bool) -> None:
    """The root's exploration once its children have their priors: with ``root=gumbel`` the
    Gumbel state of ``sims`` simulations (``agent._gumbel``; noise drawn when ``noise`` and
    the temperature is positive), else Dirichlet noise when ``noise``.

    Args:
        agent: the :class:`~taluva_ai.agents.mcts.MCTSAgent` searching (its ``config``,
            ``rng`` and Gumbel state).
    """
    cfg = agent.config
    if cfg.root == "gumbel":
        rng = agent.rng if noise and cfg.temperature > 0 else None
        agent._gumbel.setup(tree, sims, cfg.gumbel_m, rng)
    elif noise:
        dirichlet_noise(tree, agent.rng, cfg.dirichlet_alpha, cfg.dirichlet_frac)


def choose(tree: Tree, cfg: Any, rng: np.random.Generator, gumbel: GumbelRoot,
           root_value: np.ndarray, temperature: float
           ) -> tuple[int, tuple[np.ndarray, np.ndarray]]:
    """The root child to play after a search (module docstring) and the search policy.

    Args:
        cfg: the search's :class:`~taluva_ai.agents.search.config.MCTSConfig`.
        rng: draws the tie-breaks and the visit-count samples.
        gumbel: the root's Gumbel state (used when ``cfg.root == "gumbel"`` and it was set
            up for this root).
        root_value: ``float64[players]`` the evaluator's normalised value of the root.
        temperature: 0 for the most visited child, else sampling.

    Returns:
        ``(node, (actions int64[k], policy float64[k]))``: the chosen child's node index, and
        the root's actions with the visit shares (with ``root=gumbel`` the improved policy
        ``softmax(logits + sigma(completed q))``).
    """
    kids = np.array(list(tree.children(0)), dtype=np.int64)
    visits = tree.N[kids]
    p = int(tree.to_move[0])
    use_gumbel = cfg.root == "gumbel" and kids.size > 1 and gumbel.noise.size == kids.size
    if use_gumbel:
        sigma = gumbel.sigma(tree, float(root_value[p]), cfg.gumbel_c_visit, cfg.gumbel_c_scale)
        policy = (tree.action[kids].copy(), improved_policy(gumbel.logits, sigma))
    else:
        total = visits.sum()
        policy = (tree.action[kids].copy(),
                  visits / total if total > 0 else np.full(kids.size, 1 / kids.size))
    won = [int(c) for c in kids
           if tree.num_players > 1 and tree.kind[c] == TERMINAL and tree.N[c] > 0
           and tree.W[c, p] >= tree.N[c]]
    if won:  # a proven win beats any visit count
        return won[0], policy
    if use_gumbel:
        g = gumbel.noise if temperature > 0 else np.zeros(kids.size)
        score = score_considered(visits.max(), g, gumbel.logits, sigma, visits)
        pick = int(kids[int(np.argmax(score))])
    elif temperature == 0:
        best = np.flatnonzero(visits == visits.max())
        if best.size > 1:  # e.g. fewer simulations than moves: the best mean value first
            q = tree.W[kids[best], p] / np.maximum(visits[best], 1)
            best = best[q == q.max()]
        pick = int(kids[best[rng.integers(best.size)]])
    else:
        w = visits ** (1.0 / temperature)
        pick = int(kids[rng.choice(kids.size, p=w / w.sum())])
    return pick, policy
