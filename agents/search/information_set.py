"""Information-set MCTS, the search of the ``ismcts`` agent: single-observer ISMCTS, Cowling,
Powley and Whitehouse, "Information Set Monte Carlo Tree Search", IEEE TCIAIG 4(2), 2012
(SO-ISMCTS).

One tree for the information set of the player to move. Every iteration:

1. **Determinize**: ``state.resample(player, rng)`` deals what the player cannot see (for
   Thurn und Taxis the other hands and the supply's make-up) consistently with what it knows.
2. **Select** down the tree with the determinization: at a decision node only the actions
   legal in this determinization compete, with availability counts (a child's exploration term
   uses how often it was *available*, not the parent's visits); the player who acts maximizes
   its own entry of the value vector (max^n, so 3-4 players work). With ``prior=heuristic``
   (default, when the game offers ``heuristic_values()``) the score is PUCT's,
   ``Q + c P sqrt(avail) / (1 + N)`` with ``P`` the softmax of the heuristic values at
   ``prior_temperature`` (progressive bias, Chaslot et al. 2008; unvisited actions score
   ``c P sqrt(avail)``); with ``prior=none`` it is UCB1, ``Q + c sqrt(ln(avail) / N)``,
   after every legal action has been tried once.
3. **Expand** the leaf: under UCB1 one untried legal action (at random), under PUCT the
   selected unvisited action.
4. **Chance** nodes the searching player observes (a card going face up, or into its own hand)
   branch by outcome, sampled from ``chance_outcomes()``; a chance outcome it cannot observe
   (a card dealt to another hand: ``state.chance_visible_to(player)`` False) is applied to the
   determinization without moving in the tree, so the tree never splits on hidden information.
5. **Evaluate** the leaf with a rollout
   (:class:`~taluva_ai.agents.evaluators.RolloutEvaluator`: the game's compiled ``rollout``,
   greedy by default) and back the value vector up the path.

The agent plays the root child with the most visits. Games without hidden information
(``has_hidden_information()`` False) search the state itself, which makes this plain UCT.
The parameters are :class:`~taluva_ai.agents.search.config.ISMCTSConfig`'s.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from taluva_ai.agents.evaluators import Evaluator
from taluva_ai.agents.search.config import ISMCTSConfig
from taluva_ai.protocol import CHANCE, GameState


@dataclass
class Node:
    """A tree node: the action (or chance outcome) that leads to it, who chose it, statistics."""

    mover: int  # seat that chose the action into this node; -1 for chance and the root
    N: int = 0
    avail: int = 0
    W: np.ndarray | None = None  # value sums per seat
    children: dict[int, Node] = field(default_factory=dict)
    chance: dict[int, Node] = field(default_factory=dict)  # visible chance outcomes


def search(state: GameState, player: int, config: ISMCTSConfig, rng: np.random.Generator,
           evaluator: Evaluator) -> tuple[Node, int]:
    """Run ``config.sims`` iterations (or ``config.time`` seconds, at least one) from the
    information set of ``player`` in ``state`` (not modified): each on a fresh
    determinization (``state.resample(player, rng)``; the state itself without hidden
    information).

    Returns:
        ``(root, iterations)``: the root node (its ``children`` by action) and how many
        iterations ran.
    """
    n = len(state.returns())
    root = Node(mover=-1, W=np.zeros(n))
    hidden = bool(getattr(state, "has_hidden_information", lambda: False)())
    deadline = None if config.time is None else time.perf_counter() + config.time
    done = 0
    while (done < config.sims) if deadline is None else (
            done == 0 or time.perf_counter() < deadline):
        det = (state.resample(player, rng)  # type: ignore[attr-defined]
               if hidden else state.clone())
        if hasattr(det, "record_history"):
            det.record_history = False
        iterate(root, det, player, n, config, rng, evaluator)
        done += 1
    return root, done


def iterate(root: Node, det: GameState, player: int, n: int, config: ISMCTSConfig,
            rng: np.random.Generator, evaluator: Evaluator) -> None:
    """One iteration (module docstring, steps 2-5) on the determinization ``det`` (it is
    stepped) for the searching seat ``player`` of ``n`` seats, from ``root``."""
    node = root
    path = [root]
    c = config.c
    step = getattr(det, "apply_unchecked", det.apply)
    visible = getattr(det, "chance_visible_to", None)
    puct = config.prior == "heuristic" and hasattr(det, "heuristic_values")
    while not det.is_terminal():
        p = det.current_player
        if p == CHANCE:
            outcomes = det.chance_outcomes()
            probs = np.array([q for _, q in outcomes])
            o = int(outcomes[int(rng.choice(len(outcomes), p=probs / probs.sum()))][0])
            seen = visible is None or visible(player)
            step(o)
            if seen:
                nxt = node.chance.get(o)
                if nxt is None:
                    nxt = node.chance[o] = Node(mover=-1, W=np.zeros(n))
                node = nxt
                path.append(node)
            continue
        if puct:
            ids, hv = det.heuristic_values()  # type: ignore[attr-defined]
            z = np.exp((hv - hv.max()) / config.prior_temperature)
            prior = z / z.sum()
            best_a, best_v = -1, -math.inf
            for a, pa in zip(ids.tolist(), prior.tolist(), strict=True):
                ch = node.children.get(a)
                if ch is None:
                    v = c * pa  # avail = 1 on first sight, N = 0, Q = 0
                else:
                    ch.avail += 1
                    assert ch.W is not None
                    v = ch.W[p] / max(ch.N, 1) + c * pa * math.sqrt(ch.avail) / (1 + ch.N)
                if v > best_v:
                    best_a, best_v = a, v
            ch = node.children.get(best_a)
            step(best_a)
            if ch is None:
                ch = node.children[best_a] = Node(mover=p, avail=1, W=np.zeros(n))
                path.append(ch)
                break
            node = ch
            path.append(node)
            continue
        legal = det.legal_actions()
        untried = [int(a) for a in legal if int(a) not in node.children]
        for a in legal:
            ch = node.children.get(int(a))
            if ch is not None:
                ch.avail += 1
        if untried:
            a = untried[int(rng.integers(len(untried)))]
            ch = node.children[a] = Node(mover=p, avail=1, W=np.zeros(n))
            step(a)
            path.append(ch)
            break
        best_a, best_v = -1, -math.inf
        for a in legal:
            ch = node.children[int(a)]
            assert ch.W is not None
            v = ch.W[p] / ch.N + c * math.sqrt(math.log(ch.avail) / ch.N)
            if v > best_v:
                best_a, best_v = int(a), v
        step(best_a)
        node = node.children[best_a]
        path.append(node)
    if det.is_terminal():
        value = np.asarray(det.returns(), dtype=np.float64)
    else:
        _, values = evaluator.evaluate([det])
        value = values[0]
    for nd in path:
        nd.N += 1
        assert nd.W is not None
        nd.W += value[:n]
