"""Baseline players: ``random`` (uniform over legal actions) and ``greedy`` (one-ply heuristic)."""

from __future__ import annotations

from typing import Any

import numpy as np

from taluva_ai.agents.base import Agent
from taluva_ai.protocol import GameState


class RandomAgent(Agent):
    """Uniformly random legal action (seeded)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, state: GameState) -> int:
        legal = state.legal_actions()
        if legal.size == 0:
            raise ValueError("no legal action: the state is not a decision node")
        return int(legal[self.rng.integers(legal.size)])


class GreedyAgent(Agent):
    """One-ply heuristic player: the legal action of highest ``state.heuristic_values()``,
    ties broken uniformly at random (seeded). For Taluva the scores are those of
    :mod:`taluva_ai.games.taluva.heuristic` (docs/agents.md): temples and towers first,
    expansions by huts placed, and tile placements by the best build they leave (a placement
    that leaves no build is avoided), eruptions that destroy opponents' huts preferred.

    Args:
        seed: tie-break generator seed.
        epsilon: probability of a uniformly random legal action instead (0 by default).
    """

    name = "greedy"

    def __init__(self, seed: int | None = None, epsilon: float = 0.0) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must lie in [0, 1], got {epsilon}")
        self.epsilon = epsilon
        self.rng = np.random.default_rng(seed)
        self._last: dict[str, Any] = {}

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, state: GameState) -> int:
        ids, values = state.heuristic_values()  # type: ignore[attr-defined]
        if ids.size == 0:
            raise ValueError("no legal action: the state is not a decision node")
        if self.epsilon > 0 and self.rng.random() < self.epsilon:
            return int(ids[self.rng.integers(ids.size)])
        best = np.flatnonzero(values == values.max())
        choice = int(ids[best[self.rng.integers(best.size)]])
        self._last = {"value": float(values.max()), "ties": int(best.size)}
        return choice

    def stats(self) -> dict[str, Any]:
        return dict(self._last)
