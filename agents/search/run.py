"""One search of one position: which path runs it (module docstring of
:mod:`taluva_ai.agents.search`, "Which search runs when"), the root's set-up, and the loop
that feeds the leaves to the evaluator."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from taluva_ai.agents.evaluators import RolloutEvaluator
from taluva_ai.agents.search import fallback, root
from taluva_ai.agents.search.fallback import Steps
from taluva_ai.agents.search.tree import UNEXPANDED, Tree, seed_numba
from taluva_ai.protocol import GameState, value_normalization


def run(agent: Any, root_state: GameState, tree: Tree, sims: int | None = None,
        noise: bool = True, progress: Callable[[int], bool] | None = None) -> bool:
    """Search ``root_state`` into ``tree`` for ``agent`` (an
    :class:`~taluva_ai.agents.mcts.MCTSAgent`), evaluating leaves with its evaluator: on the
    compiled batched network search when a fresh tree and
    :func:`~taluva_ai.agents.search.batched.compiled_net_search_ok` allow, else through
    :func:`steps` (the compiled rollout search or the Python fallback).

    Args:
        sims, noise: as :func:`steps`.
        progress: called after each batch of leaves is evaluated and backed up, with the
            simulations run so far in this call; returning False stops the search there (the
            tree is then left part-searched, the virtual losses of the batch being selected
            still on it, fit only to be dropped). The compiled rollout search runs whole and
            reports once, at its end.

    Returns:
        True when the search ran its budget, False when ``progress`` stopped it.
    """
    if tree.size == 1 and tree.kind[0] == UNEXPANDED:
        from taluva_ai.agents.search.batched import compiled_net_search_ok, search_one

        if compiled_net_search_ok(agent, root_state):
            found, whole = search_one(agent, root_state, sims=sims, noise=noise,
                                      progress=progress)
            tree.__dict__.update(found.copy().__dict__)  # the caller's tree: the result
            return whole
    start = float(tree.N[0])
    gen = steps(agent, root_state, tree, sims=sims, noise=noise)
    try:
        leaves = next(gen)
        while True:
            leaves = gen.send(agent.evaluator.evaluate(leaves))
            if progress is not None and not progress(int(tree.N[0] - start)):
                gen.close()
                return False
    except StopIteration:
        pass
    if progress is not None:
        progress(int(tree.N[0] - start))
    return True


def steps(agent: Any, root_state: GameState, tree: Tree, sims: int | None = None,
          noise: bool = True) -> Steps:
    """The search as a generator: it yields lists of leaf states to evaluate and must be sent
    back, for each list, what :meth:`~taluva_ai.agents.evaluators.Evaluator.evaluate` returns
    for it (``(priors, values)``). Seeds Numba's stream from ``agent.rng``, expands and
    evaluates a new root (priors and root value), sets up its exploration
    (:func:`~taluva_ai.agents.search.root.explore`), then runs the simulations: in compiled
    code when :func:`rollout_search_ok` holds (nothing
    more to evaluate), else :func:`~taluva_ai.agents.search.fallback.simulate`.

    Args:
        agent: the :class:`~taluva_ai.agents.mcts.MCTSAgent` searching (its config, random
            generator and evaluator; its root value, Gumbel state and pending child orders
            are set here).
        root_state: the position (not modified).
        tree: the search tree (a fresh ``Tree`` or a reused subtree).
        sims: simulations for this search instead of ``config.sims`` (playout cap
            randomisation changes it move by move); ignored when ``config.time`` is set.
        noise: apply the configured root exploration (Dirichlet noise; with
            ``root=gumbel``, Gumbel noise when the temperature is positive).

    Raises:
        ValueError: ``sims < 1``.
    """
    cfg = agent.config
    seed_numba(int(agent.rng.integers(2**31 - 1)))
    agent._orders = {}
    n_players = tree.num_players
    offset, scale = value_normalization(root_state)
    agent._root_value = np.zeros(n_players)
    if tree.kind[0] == UNEXPANDED:
        fallback.expand(tree, 0, root_state, agent._orders)
        if agent.evaluator.gives_priors:
            priors, values = yield [root_state]
            if priors[0] is not None:
                fallback.set_priors(tree, 0, priors[0], agent._orders)
            agent._root_value = (np.asarray(values[0], dtype=np.float64)[:n_players]
                                 - offset) / scale
    elif tree.N[0] > 0:
        agent._root_value = tree.W[0] / tree.N[0]
    budget_sims = cfg.sims if sims is None else int(sims)
    if budget_sims < 1:
        raise ValueError(f"sims must be at least 1, got {budget_sims}")
    root.explore(agent, tree, budget_sims, noise)
    deadline = None if cfg.time is None else time.perf_counter() + cfg.time
    budget = budget_sims if deadline is None else 1 << 62
    if rollout_search_ok(cfg, agent.evaluator, root_state):
        from taluva_ai.agents.search.compiled import search_compiled

        puct = agent.evaluator.gives_priors
        search_compiled(tree, root_state, budget, cfg.c, cfg.chance == "sample",
                        cfg.rollout == "greedy", cfg.samples,
                        int(agent.rng.integers(2**31 - 1)), deadline=deadline,
                        offset=offset, scale=scale,
                        prior_temperature=cfg.prior_temperature if puct else None,
                        fpu=cfg.fpu)
        return
    yield from fallback.simulate(agent, root_state, tree, budget, deadline, offset, scale)


def rollout_search_ok(config: Any, evaluator: Any, state: Any) -> bool:
    """Whether whole simulations run compiled
    (:func:`~taluva_ai.agents.search.compiled.search_compiled`): ``config.compiled``
    (:class:`~taluva_ai.agents.search.config.MCTSConfig`), the default rollout evaluator
    (exactly a :class:`~taluva_ai.agents.evaluators.RolloutEvaluator`: UCT, or PUCT with its
    heuristic priors), one leaf at a time (``leaf_batch=1``), a PUCT root, and a game that
    offers ``search_kernels()``."""
    return bool(
        config.compiled
        and hasattr(state, "search_kernels")
        and type(evaluator) is RolloutEvaluator
        and config.leaf_batch == 1
        and config.root == "puct"
    )
