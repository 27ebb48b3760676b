"""Information-set MCTS (``ismcts`` agent) for games with hidden information: a thin user of
:mod:`taluva_ai.agents.search.information_set` (single-observer ISMCTS, Cowling, Powley and
Whitehouse, IEEE TCIAIG 4(2), 2012), which describes the search.

The move is the root child with the most visits. Games without hidden information
(``has_hidden_information()`` False) search the state itself, which makes this plain UCT.
Spec: ``ismcts:sims=400`` (``sims``, ``time``, ``c``, ``rollout``, ``prior``,
``prior_temperature``: :class:`ISMCTSConfig`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from taluva_ai.agents.base import ConfiguredAgent
from taluva_ai.agents.evaluators import RolloutEvaluator
from taluva_ai.agents.search import information_set
from taluva_ai.agents.search.config import ISMCTSConfig
from taluva_ai.protocol import GameState

__all__ = ["ISMCTSAgent", "ISMCTSConfig"]


class ISMCTSAgent(ConfiguredAgent):
    """SO-ISMCTS player (module docstring); ``ismcts:sims=400`` by name.

    Args:
        seed: seeds the determinizations, the tie-breaks and the rollouts.
        **params: :class:`ISMCTSConfig` fields.

    Raises:
        ValueError: an unknown or invalid parameter.
    """

    name = "ismcts"
    config_class = ISMCTSConfig  # the spec's parameters

    def __init__(self, seed: int | None = None, **params: Any) -> None:
        self.config: ISMCTSConfig = self._configure(params)
        self.evaluator = RolloutEvaluator(self.config.rollout, seed)
        self._last: dict[str, Any] = {}
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.evaluator.reset(None if seed is None else seed + 1)

    def act(self, state: GameState) -> int:
        """Search from the information set of ``state.current_player``
        (:func:`taluva_ai.agents.search.information_set.search`) and return the most visited
        action (ties at random).

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
        root, done = information_set.search(state, player, self.config, self.rng,
                                            self.evaluator)
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
                     "value": round(float(c.W[player] / max(c.N, 1)), 3)}
                    for x, c in top],
        }
        self._last["summary"] = (f"{done} sims; top: " + ", ".join(
            f"{t['move']} {t['visits']}v {t['value']:+.2f}" for t in self._last["top"]))
        return int(a)

    def stats(self) -> dict[str, Any]:
        return dict(self._last)
