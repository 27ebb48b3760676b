"""Information-set MCTS (``ismcts`` agent): single-observer ISMCTS, Cowling, Powley and
Whitehouse, "Information Set Monte Carlo Tree Search", IEEE TCIAIG 4(2), 2012 (SO-ISMCTS).

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
5. **Evaluate** the leaf with a rollout (:class:`RolloutEvaluator`: the game's compiled
   ``rollout``, greedy by default) and back the value vector up the path.

The move is the root child with the most visits. Games without hidden information
(``has_hidden_information()`` False) search the state itself, which makes this plain UCT.
Spec: ``ismcts:sims=400`` (``sims``, ``time``, ``c``, ``rollout``, ``prior``,
``prior_temperature``).
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from taluva_ai.agents.base import MAX_SIMS, MAX_TIME, Agent
from taluva_ai.agents.evaluators import RolloutEvaluator
from taluva_ai.protocol import CHANCE, GameState


@dataclass
class _Node:
    """A tree node: the action (or chance outcome) that leads to it, who chose it, statistics."""

    mover: int  # seat that chose the action into this node; -1 for chance and the root
    N: int = 0
    avail: int = 0
    W: np.ndarray | None = None  # value sums per seat
    children: dict[int, _Node] = field(default_factory=dict)
    chance: dict[int, _Node] = field(default_factory=dict)  # visible chance outcomes


@dataclass(frozen=True)
class ISMCTSConfig:
    """Search parameters (``ismcts:key=value,...`` sets any of them).

    Attributes:
        sims: iterations per move (ignored when ``time`` is set), 1 to
            :data:`~taluva_ai.agents.base.MAX_SIMS`.
        time: seconds per move, or None; at most :data:`~taluva_ai.agents.base.MAX_TIME`.
        c: exploration constant (values are returns, -1..1).
        rollout: ``greedy`` (default) or ``random`` rollout policy.
        prior: ``heuristic`` (PUCT with the game's heuristic values) or ``none`` (UCB1).
        prior_temperature: softmax temperature of the heuristic priors (heuristic units).
    """

    sims: int = 400
    time: float | None = None
    c: float = 0.7
    rollout: str = "greedy"
    prior: str = "heuristic"
    prior_temperature: float = 10.0

    def __post_init__(self) -> None:
        if not isinstance(self.sims, int) or isinstance(self.sims, bool) or \
                not 1 <= self.sims <= MAX_SIMS:
            raise ValueError(f"sims must be an integer in 1..{MAX_SIMS}, got {self.sims!r}")
        if self.time is not None and (
            not isinstance(self.time, (int, float)) or isinstance(self.time, bool)
            or not math.isfinite(self.time) or not 0 < self.time <= MAX_TIME
        ):
            raise ValueError(f"time must be a positive number of seconds (at most "
                             f"{MAX_TIME:g}), got {self.time!r}")
        if not isinstance(self.c, (int, float)) or isinstance(self.c, bool) or not (
            math.isfinite(self.c) and self.c >= 0
        ):
            raise ValueError(f"c must be a number >= 0, got {self.c!r}")
        if self.rollout not in ("greedy", "random"):
            raise ValueError(f"rollout must be 'greedy' or 'random', got {self.rollout!r}")
        if self.prior not in ("heuristic", "none"):
            raise ValueError(f"prior must be 'heuristic' or 'none', got {self.prior!r}")
        if not isinstance(self.prior_temperature, (int, float)) or not (
            math.isfinite(self.prior_temperature) and self.prior_temperature > 0
        ):
            raise ValueError(f"prior_temperature must be positive, got "
                             f"{self.prior_temperature!r}")


class ISMCTSAgent(Agent):
    """SO-ISMCTS player (module docstring); ``ismcts:sims=400`` by name.

    Args:
        seed: seeds the determinizations, the tie-breaks and the rollouts.
        **params: :class:`ISMCTSConfig` fields.

    Raises:
        ValueError: an unknown or invalid parameter.
    """

    name = "ismcts"

    @classmethod
    def spec_parameters(cls) -> dict[str, Any]:
        """The parameters of an ``ismcts:...`` spec and their defaults: the
        :class:`ISMCTSConfig` fields."""
        return {f.name: f.default for f in fields(ISMCTSConfig)}

    def __init__(self, seed: int | None = None, **params: Any) -> None:
        known = {f.name for f in fields(ISMCTSConfig)}
        bad = sorted(set(params) - known)
        if bad:
            raise ValueError(f"unknown ismcts parameter(s) {', '.join(bad)}; known: "
                             f"{', '.join(sorted(known))}")
        self.config = ISMCTSConfig(**params)
        self.evaluator = RolloutEvaluator(self.config.rollout, seed)
        self._last: dict[str, Any] = {}
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.evaluator.reset(None if seed is None else seed + 1)

    def act(self, state: GameState) -> int:
        """Search from the information set of ``state.current_player`` and return an action.

        Raises:
            ValueError: not a decision node.
        """
        player = state.current_player
        if player < 0:
            raise ValueError("ISMCTS acts only at a decision node")
        legal = state.legal_actions()
        if legal.size == 1:  # nothing to search
            self._last = {"simulations": 0, "summary": "forced"}
            return int(legal[0])
        n = len(state.returns())
        root = _Node(mover=-1, W=np.zeros(n))
        hidden = bool(getattr(state, "has_hidden_information", lambda: False)())
        cfg = self.config
        deadline = None if cfg.time is None else _time.perf_counter() + cfg.time
        done = 0
        while (done < cfg.sims) if deadline is None else (
                done == 0 or _time.perf_counter() < deadline):
            det = (state.resample(player, self.rng)  # type: ignore[attr-defined]
                   if hidden else state.clone())
            if hasattr(det, "record_history"):
                det.record_history = False
            self._iterate(root, det, player, n)
            done += 1
        kids = [(a, ch) for a, ch in root.children.items()]
        visits = np.array([ch.N for _, ch in kids])
        best = np.flatnonzero(visits == visits.max())
        a, ch = kids[int(best[self.rng.integers(best.size)])]
        assert ch.W is not None
        top = sorted(kids, key=lambda kv: -kv[1].N)[:5]
        self._last = {
            "simulations": done,
            "value": round(float(ch.W[player] / max(ch.N, 1)), 3),
            "top": [{"move": state.action_to_string(int(x)), "visits": c.N,
                     "value": round(float(c.W[player] / max(c.N, 1)), 3)}  # type: ignore[index]
                    for x, c in top],
        }
        self._last["summary"] = (f"{done} sims; top: " + ", ".join(
            f"{t['move']} {t['visits']}v {t['value']:+.2f}" for t in self._last["top"]))
        return int(a)

    def _iterate(self, root: _Node, det: GameState, player: int, n: int) -> None:
        node = root
        path = [root]
        c = self.config.c
        step = getattr(det, "apply_unchecked", det.apply)
        visible = getattr(det, "chance_visible_to", None)
        puct = self.config.prior == "heuristic" and hasattr(det, "heuristic_values")
        while not det.is_terminal():
            p = det.current_player
            if p == CHANCE:
                outcomes = det.chance_outcomes()
                probs = np.array([q for _, q in outcomes])
                o = int(outcomes[int(self.rng.choice(len(outcomes), p=probs / probs.sum()))][0])
                seen = visible is None or visible(player)
                step(o)
                if seen:
                    nxt = node.chance.get(o)
                    if nxt is None:
                        nxt = node.chance[o] = _Node(mover=-1, W=np.zeros(n))
                    node = nxt
                    path.append(node)
                continue
            if puct:
                ids, hv = det.heuristic_values()  # type: ignore[attr-defined]
                z = np.exp((hv - hv.max()) / self.config.prior_temperature)
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
                    ch = node.children[best_a] = _Node(mover=p, avail=1, W=np.zeros(n))
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
                a = untried[int(self.rng.integers(len(untried)))]
                ch = node.children[a] = _Node(mover=p, avail=1, W=np.zeros(n))
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
            _, values = self.evaluator.evaluate([det])
            value = values[0]
        for nd in path:
            nd.N += 1
            assert nd.W is not None
            nd.W += value[:n]

    def stats(self) -> dict[str, Any]:
        return dict(self._last)
