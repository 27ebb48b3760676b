"""Whole MCTS simulations in compiled code, for games that offer ``state.search_kernels()``.

Used by :class:`~taluva_ai.agents.mcts.MCTSAgent` with rollout evaluation (the default
evaluator, ``leaf_batch=1``, a PUCT root:
:func:`~taluva_ai.agents.search.run.rollout_search_ok`): UCT, or PUCT with the
priors of the game's one-ply heuristic values (a softmax at ``prior_temperature``) when the
game's kernels include ``values``. Selection, the replay of the path on a copy of the root,
expansion (legal actions in a seeded random order with their priors, or chance outcomes with
their probabilities), the rollout and the backup all run in one Numba loop, calling the game's
kernels (signatures in ``taluva_ai.games.taluva.search_kernels``). The tree is the same
flat-array :class:`~taluva_ai.agents.search.tree.Tree`, so statistics, move choice and tree
reuse are shared with the Python fallback, which other games keep.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from taluva_ai.agents.search.priors import softmax
from taluva_ai.agents.search.puct import select_leaf
from taluva_ai.agents.search.specialize import specialize
from taluva_ai.agents.search.tree import Tree, _add_children, backup
from taluva_ai.games.compiling import njit
from taluva_ai.games.taluva import search_kernels as _tk

# The loop of simulations, a template compiled once per kernel set (specialize()): its body
# calls the game's kernels by these global names, bound to one game's kernels in each compiled
# copy (``_runner``). Passing the kernels as arguments instead makes a loop that Numba cannot
# cache (their types are keyed on the dispatcher objects of the process) and, with a cached
# wrapper around it, compiled twice over.
copy_fn = to_move_fn = legal_fn = chance_fn = apply_fn = rollout_fn = terminal_fn = None
values_fn = None


def run_simulations(parent, action, first_child, n_children, kind, to_move_arr, N, W, prior,
                    vloss, size, root, consts, n_sims, c, sample_chance, greedy, samples, seed,
                    path, legal_buf, outcomes, probs, value, offset, scale, puct, fpu,
                    prior_temperature, vals_buf):
    """Run up to ``n_sims`` simulations; stop early when the tree's arrays could overflow.
    Values are backed up as ``(return - offset) / scale`` (agents/search/run.py). With ``puct``, a
    new decision node's children get the softmax of ``values_fn`` at ``prior_temperature``
    (``vals_buf``: float64 scratch as long as ``legal_buf``) and selection is PUCT with
    first-play urgency ``fpu``; else UCT with uniform priors. A template: compiled for a
    game's kernels by :func:`_runner`.

    Returns:
        ``(simulations run, new tree size)``.
    """
    np.random.seed(seed)
    capacity = parent.shape[0]
    for sim in range(n_sims):
        if capacity - size < legal_buf.shape[0]:
            return sim, size
        depth = select_leaf(first_child, n_children, kind, to_move_arr, N, W, prior, vloss, c,
                            puct, fpu, sample_chance, path)
        s = copy_fn(root)
        for i in range(1, depth):
            apply_fn(s, consts, action[path[i]])
        leaf = path[depth - 1]
        p = to_move_fn(s)
        if p == -4:
            kind[leaf] = 3
            terminal_fn(s, consts, value)
        else:
            if kind[leaf] == 0:
                if p == -1:
                    n = chance_fn(s, outcomes, probs)
                    _add_children(parent, action, first_child, n_children, kind, N, W, prior,
                                  vloss, size, leaf, outcomes[:n], probs[:n], np.bool_(False))
                    kind[leaf] = 2
                else:
                    if puct:
                        n = values_fn(s, consts, legal_buf, vals_buf)
                        pri = softmax(vals_buf[:n], prior_temperature)
                    else:
                        n = legal_fn(s, consts, legal_buf)
                        pri = np.full(n, 1.0 / n)
                    _add_children(parent, action, first_child, n_children, kind, N, W, prior,
                                  vloss, size, leaf, legal_buf[:n], pri, np.bool_(True))
                    kind[leaf] = 1
                    to_move_arr[leaf] = p
                size += n
            rollout_fn(s, consts, greedy, samples, -1, value)  # continues this loop's stream
        if scale != 1.0 or offset != 0.0:
            for q in range(value.shape[0]):
                value[q] = (value[q] - offset) / scale
        backup(N, W, path, depth, value)
    return n_sims, size


@njit(cache=True, inline="always")
def _no_values(s, k, out, vals):
    """The ``values`` kernel of a UCT search, which never calls it."""
    return 0


def _runner(kernels: tuple, puct: bool) -> Any:
    """:func:`run_simulations` compiled for ``kernels`` (the game's ``search_kernels()``);
    without ``puct`` the ``values`` kernel (heuristic priors) is left out. Cached on disk:
    a new process loads it (a tournament worker, ``taluva play``)."""
    (copy_k, to_move_k, legal_k, chance_k, apply_k, rollout_k, terminal_k, values_k) = kernels
    tag = "taluva_solo" if tuple(kernels) == _tk.SOLO_KERNELS else (
        "taluva" if tuple(kernels) == _tk.KERNELS else "game")
    return specialize(run_simulations, tag + ("_puct" if puct else "_uct"), copy_fn=copy_k,
                      to_move_fn=to_move_k, legal_fn=legal_k, chance_fn=chance_k,
                      apply_fn=apply_k, rollout_fn=rollout_k, terminal_fn=terminal_k,
                      values_fn=values_k if puct else _no_values)


def search_compiled(tree: Tree, root_state: object, sims: int, c: float, sample_chance: bool,
                    greedy: bool, samples: int, seed: int, chunk: int = 64,
                    deadline: float | None = None, offset: float = 0.0,
                    scale: float = 1.0, prior_temperature: float | None = None,
                    fpu: float = 0.0) -> int:
    """Run ``sims`` simulations (or until ``deadline``, ``time.perf_counter()`` seconds, checked
    every ``chunk`` simulations) into ``tree``; returns the number run. Values are stored as
    ``(return - offset) / scale``. ``prior_temperature`` set: PUCT with heuristic priors (the
    game's kernels must include ``values``; the root's priors are set by the caller)."""
    import time

    state, consts, kernels = root_state.search_kernels()  # type: ignore[attr-defined]
    buf = np.empty(8 * state[0].shape[0], dtype=np.int64)
    vals = np.empty(buf.shape[0], dtype=np.float64)
    puct = prior_temperature is not None
    outcomes = np.empty(64, dtype=np.int64)
    probs = np.empty(64, dtype=np.float64)
    value = np.zeros(tree.num_players, dtype=np.float64)
    path = np.zeros(4096, dtype=np.int32)
    rng = np.random.default_rng(seed)
    run = _runner(kernels, puct)
    done = 0
    while done < sims:
        if deadline is not None and done > 0 and time.perf_counter() >= deadline:
            break
        tree._grow(tree.size + 2 * buf.shape[0])
        n, size = run(
            tree.parent, tree.action, tree.first_child, tree.n_children, tree.kind,
            tree.to_move, tree.N, tree.W, tree.prior, tree.vloss, tree.size, state, consts,
            min(chunk, sims - done), c, sample_chance, greedy, samples,
            int(rng.integers(2**31 - 1)), path, buf, outcomes, probs, value, float(offset),
            float(scale), puct, float(fpu), float(prior_temperature or 1.0), vals,
        )
        tree.size = int(size)
        done += int(n)
    return done

