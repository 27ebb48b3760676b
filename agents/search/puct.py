"""Selection: UCT or PUCT at decision nodes, stratified or sampled outcomes at chance nodes.

Compiled (Numba) and shared by every MCTS path of :mod:`taluva_ai.agents.search` on the
flat-array :class:`~taluva_ai.agents.search.tree.Tree`. PUCT is AlphaZero's rule (Silver et
al., "Mastering the game of Go without human knowledge", Nature 2017; "A general reinforcement
learning algorithm that masters chess, shogi, and Go through self-play", Science 2018), UCT
Kocsis & Szepesvari 2006. Values are vectors, one entry per seat, and every decision node's
player maximizes its own entry (max^n, Luckhart & Irani 1986; Sturtevant 2003 in MCTS).
Pending virtual losses (a leaf batch in flight) count as visits of value -1 (Chaslot, Winands
& van den Herik, "Parallel Monte-Carlo Tree Search", 2008).
"""

from __future__ import annotations

import numpy as np

from taluva_ai.games import compiling
from taluva_ai.games.compiling import njit

compiling.install()  # a first compile says so (taluva_ai.games.compiling)


@njit(cache=True)
def select_leaf(first_child, n_children, kind, to_move, N, W, prior, vloss, c, puct, fpu,
                sample_chance, path):
    """Descend from the root (node 0) to an unexpanded or terminal node.

    Decision nodes pick the child of highest score for the seat to move: UCT
    ``Q + c sqrt(ln N_parent / N_child)`` (unvisited children first, one drawn uniformly at
    random, so that a search with fewer simulations than moves is not biased by the order the
    moves are generated in) when
    ``puct`` is False (Kocsis & Szepesvari 2006), PUCT ``Q + c P sqrt(N_parent) / (1 + N_child)``
    with ``Q = fpu`` for unvisited children when True (Silver et al. 2017). Virtual losses count as
    visits of value -1. Chance nodes pick an outcome: sampled by probability when
    ``sample_chance``, else the outcome furthest below its share of the visits (stratified,
    deterministic). A child already known to end the game with value +1 for the mover (a
    proven win) is always chosen (the simplest case of MCTS-Solver, Winands et al. 2008);
    not in a single-player game, where a value is a score, not a result.

    Args:
        path: ``int32[>= depth]`` receives the nodes from the root to the leaf.

    Returns:
        Path length.
    """
    path[0] = 0
    return descend(first_child, n_children, kind, to_move, N, W, prior, vloss, c, puct, fpu,
                   sample_chance, path, np.int64(1))


@njit(cache=True)
def descend(first_child, n_children, kind, to_move, N, W, prior, vloss, c, puct, fpu,
            sample_chance, path, depth):
    """Continue a selection from ``path[:depth]`` (root first, already chosen, e.g. a root
    child picked by Gumbel sequential halving) down to an unexpanded or terminal node, by the
    rules of :func:`select_leaf`. Returns the path length."""
    node = path[depth - 1]
    while kind[node] == 1 or kind[node] == 2:
        f = first_child[node]
        k = n_children[node]
        best = f
        if kind[node] == 2:
            if sample_chance:
                r = np.random.random()
                acc = 0.0
                best = f + k - 1
                for ch in range(f, f + k):
                    acc += prior[ch]
                    if r < acc:
                        best = ch
                        break
            else:
                total = N[node] + vloss[node] + 1.0
                best_gap = -1e300
                for ch in range(f, f + k):
                    gap = prior[ch] - (N[ch] + vloss[ch]) / total
                    if gap > best_gap:
                        best_gap = gap
                        best = ch
        else:
            p = to_move[node]
            n_parent = N[node] + vloss[node]
            best_score = -1e300
            unvisited = 0
            best_unvisited = f
            for ch in range(f, f + k):
                if W.shape[1] > 1 and kind[ch] == 3 and N[ch] > 0 \
                        and W[ch, p] >= N[ch] * (1.0 - 1e-9):
                    best = ch  # a proven win for the mover (terminal, value +1): take it
                    break
                n = N[ch] + vloss[ch]
                if puct:
                    q = (W[ch, p] - vloss[ch]) / n if n > 0 else fpu
                    score = q + c * prior[ch] * np.sqrt(max(n_parent, 1.0)) / (1.0 + n)
                else:
                    if n == 0:  # reservoir sampling: uniform among the unvisited children
                        unvisited += 1
                        if np.random.random() * unvisited < 1.0:
                            best_unvisited = ch
                        continue
                    q = (W[ch, p] - vloss[ch]) / n
                    score = q + c * np.sqrt(np.log(max(n_parent, 1.0)) / n)
                if score > best_score:
                    best_score = score
                    best = ch
            else:
                if unvisited > 0:
                    best = best_unvisited
        node = best
        path[depth] = node
        depth += 1
    return depth
