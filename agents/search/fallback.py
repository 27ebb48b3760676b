"""The Python fallback: simulations stepped through the game protocol, for any game and any
evaluator (module docstring of :mod:`taluva_ai.agents.search`, "Which search runs when").

Selection (:mod:`.puct`, or the Gumbel root), virtual loss and the backup are the compiled
kernels every path shares; what runs in Python is the replay of each path on a copy of the
root (``clone``, ``apply``), the expansion (``legal_actions``, ``chance_outcomes``) and the
leaves' evaluation, which :func:`simulate` hands out as a generator: the caller evaluates the
leaves (one agent's evaluator, or one network call for many games' leaves in self-play) and
sends the results back.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Sequence
from typing import Any

import numpy as np

from taluva_ai.agents.search.puct import descend, select_leaf
from taluva_ai.agents.search.tree import CHANCE as K_CHANCE
from taluva_ai.agents.search.tree import (
    DECISION,
    TERMINAL,
    UNEXPANDED,
    Tree,
    add_virtual_loss,
    backup,
)
from taluva_ai.protocol import CHANCE, GameState

#: What :func:`simulate` yields (leaf states) and is sent back (``(priors, values)``, as
#: :meth:`~taluva_ai.agents.evaluators.Evaluator.evaluate` returns).
Steps = Generator[list[GameState], tuple[Sequence[np.ndarray | None], np.ndarray], None]


def expand(tree: Tree, node: int, state: GameState, orders: dict[int, np.ndarray]) -> None:
    """Expand ``node`` (``state`` is its position): a chance node gets one child per outcome
    of ``chance_outcomes()`` with its probability; a decision node one child per legal action,
    uniform priors until :func:`set_priors`, in a random (seeded) order whose permutation is
    kept in ``orders[node]``.

    Children go in a random order because selection breaks ties by order (the first unvisited
    child under UCT, equal scores under PUCT), and ids are ordered by hex, so id order would
    steer every tie to the northernmost hex.
    """
    if state.current_player == CHANCE:
        outcomes = state.chance_outcomes()
        acts = np.array([o for o, _ in outcomes], dtype=np.int64)
        probs = np.array([p for _, p in outcomes], dtype=np.float64)
        tree.kind[node] = K_CHANCE
        tree.add_children(node, acts, probs)
    else:
        legal = np.asarray(state.legal_actions(), dtype=np.int64)
        tree.kind[node] = DECISION
        tree.to_move[node] = state.current_player
        orders[node] = tree.add_children(
            node, legal, np.full(legal.size, 1.0 / max(legal.size, 1)), shuffle=True
        )


def set_priors(tree: Tree, node: int, priors: np.ndarray, orders: dict[int, np.ndarray]) -> None:
    """Set the priors of ``node``'s children from ``priors`` (``float[k]`` in legal-action
    order), once: a leaf reached twice in one batch keeps the first."""
    if tree.kind[node] == DECISION:
        f = int(tree.first_child[node])
        order = orders.pop(node, None)
        if order is None:
            return
        tree.prior[f:f + int(tree.n_children[node])] = np.asarray(priors)[order]


def simulate(agent: Any, root_state: GameState, tree: Tree, budget: int,
             deadline: float | None, offset: float, scale: float) -> Steps:
    """Run ``budget`` simulations (or until ``deadline``, ``time.perf_counter()`` seconds,
    once one has run) from ``root_state`` into ``tree``, whose root is expanded: per batch of
    ``leaf_batch`` leaves (virtual loss within a batch), yield the leaf states to evaluate and
    back up what is sent back, values stored as ``(value - offset) / scale``.

    Args:
        agent: the :class:`~taluva_ai.agents.mcts.MCTSAgent` searching: its ``config``,
            ``evaluator`` (``values_chance_nodes``: whether a leaf may be a chance node),
            Gumbel state and root value (``root=gumbel``), and the pending child orders
            (``_orders``) of the nodes awaiting priors.
    """
    cfg = agent.config
    n_players = tree.num_players
    path = np.zeros(4096, dtype=np.int32)
    puct = agent.evaluator.gives_priors
    sample_chance = cfg.chance == "sample"
    gumbel_root = cfg.root == "gumbel" and tree.kind[0] == DECISION and \
        int(tree.n_children[0]) > 1
    through_chance = not agent.evaluator.values_chance_nodes
    orders = agent._orders
    done = 0
    while done < budget:
        if deadline is not None and time.perf_counter() >= deadline and done > 0:
            break
        batch = min(cfg.leaf_batch, budget - done)
        leaves: list[tuple[np.ndarray, GameState]] = []
        pending: list[tuple[np.ndarray, np.ndarray]] = []
        for _ in range(batch):
            if gumbel_root:
                path[0] = 0
                path[1] = agent._gumbel.child(tree, agent._root_value[int(tree.to_move[0])],
                                              cfg.gumbel_c_visit, cfg.gumbel_c_scale)
                depth = descend(tree.first_child, tree.n_children, tree.kind, tree.to_move,
                                tree.N, tree.W, tree.prior, tree.vloss, cfg.c, puct,
                                cfg.fpu, sample_chance, path, 2)
            else:
                depth = select_leaf(tree.first_child, tree.n_children, tree.kind,
                                    tree.to_move, tree.N, tree.W, tree.prior, tree.vloss,
                                    cfg.c, puct, cfg.fpu, sample_chance, path)
            s = root_state.clone()
            if hasattr(s, "record_history"):
                s.record_history = False  # a throw-away copy: no undo snapshots
            step = getattr(s, "apply_unchecked", s.apply)  # actions from legal lists
            for node in path[1:depth]:
                step(int(tree.action[node]))
            leaf = int(path[depth - 1])
            while through_chance and s.current_player == CHANCE \
                    and tree.kind[leaf] == UNEXPANDED:
                # step through the new chance node to the outcome selection picks
                expand(tree, leaf, s, orders)
                d0 = depth
                depth = descend(tree.first_child, tree.n_children, tree.kind, tree.to_move,
                                tree.N, tree.W, tree.prior, tree.vloss, cfg.c, puct,
                                cfg.fpu, sample_chance, path, depth)
                for node in path[d0:depth]:
                    step(int(tree.action[node]))
                leaf = int(path[depth - 1])
            p = path[:depth].copy()
            if batch > 1:
                add_virtual_loss(tree.vloss, p, depth, 1.0)
            if s.is_terminal():
                tree.kind[leaf] = TERMINAL
                pending.append((p, np.asarray(s.returns(), dtype=np.float64)))
                continue
            if tree.kind[leaf] == UNEXPANDED:
                expand(tree, leaf, s, orders)
            leaves.append((p, s))
        if leaves:
            priors, values = yield [s for _, s in leaves]
            for (p, _), pr, v in zip(leaves, priors, values, strict=True):
                if pr is not None:
                    set_priors(tree, int(p[-1]), pr, orders)
                pending.append((p, np.asarray(v, dtype=np.float64)))
        for p, v in pending:
            if batch > 1:
                add_virtual_loss(tree.vloss, p, p.size, -1.0)
            value = (np.asarray(v, dtype=np.float64)[:n_players] - offset) / scale
            backup(tree.N, tree.W, p, p.size, value)
        done += batch
