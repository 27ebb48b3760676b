"""Leaf evaluators for MCTS: the ``Evaluator`` interface, random and greedy rollouts.

An evaluator takes a batch of leaf states and returns, per state, a value vector (one entry per
seat, the final returns' scale) and, when it has one, a prior over the state's legal actions.
Evaluators with priors (``gives_priors = True``, e.g. a network) make MCTS use PUCT; rollout
evaluators make it use UCT.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from taluva_ai.protocol import CHANCE, GameState


class Evaluator(ABC):
    """Evaluate leaf states, in batches (the hook for batched network inference)."""

    gives_priors: bool = False
    #: False: the evaluator values only decision and terminal states, so the search steps
    #: through a new chance node to the outcome its selection rule picks and evaluates the
    #: decision node there (every evaluation then expands a node and sets its priors; a
    #: network evaluator); True: a chance node is a leaf like any other (rollouts).
    values_chance_nodes: bool = True

    @abstractmethod
    def evaluate(
        self, states: Sequence[GameState]
    ) -> tuple[list[np.ndarray | None], np.ndarray]:
        """Return ``(priors, values)``: ``priors[i]`` is ``float64[len(legal_actions)]`` in
        legal-action order or None, ``values`` is ``float64[len(states), num_players]``."""

    def reset(self, seed: int | None = None) -> None:  # noqa: B027  (optional hook)
        """Reseed."""


class RolloutEvaluator(Evaluator):
    """Value = the returns of one rollout to the end of the game.

    Uses the game's compiled ``state.rollout(policy, seed)`` when it has one (Taluva does),
    else plays ``policy`` through the protocol in Python (uniform random only).

    With ``prior_temperature`` set, it also gives priors: a softmax of the game's one-ply
    heuristic values (``state.prior_values()`` when the game has it, else
    ``state.heuristic_values()``) at that temperature, so MCTS runs PUCT and
    spends its simulations on the moves the heuristic likes (progressive bias; Chaslot et al.
    2008). Taluva's tile step has some 300 legal placements, too many for UCT to try each.

    Args:
        policy: ``"random"`` or ``"greedy"`` (Taluva: heuristic builds, best-of-``samples``
            tile placements; see ``taluva_ai.games.taluva.heuristic``).
        seed: seed of the rollouts' random streams.
        samples: tile placements sampled per greedy rollout decision.
        prior_temperature: softmax temperature of the heuristic priors (heuristic units; a
            temple is worth 100, a hut 3), or None for no priors (UCT).

    Raises:
        ValueError: unknown policy or a non-positive temperature.
    """

    def __init__(self, policy: str = "random", seed: int | None = None, samples: int = 8,
                 prior_temperature: float | None = None) -> None:
        if policy not in ("random", "greedy"):
            raise ValueError(f"rollout must be 'random' or 'greedy', got {policy!r}")
        if prior_temperature is not None and prior_temperature <= 0:
            raise ValueError(f"prior temperature must be positive, got {prior_temperature}")
        self.policy = policy
        self.samples = samples
        self.prior_temperature = prior_temperature
        self.gives_priors = prior_temperature is not None
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def evaluate(
        self, states: Sequence[GameState]
    ) -> tuple[list[np.ndarray | None], np.ndarray]:
        values = [self._one(s) for s in states]
        priors: list[np.ndarray | None] = [self._priors(s) for s in states]
        return priors, np.stack(values)

    def _priors(self, state: GameState) -> np.ndarray | None:
        if self.prior_temperature is None or state.current_player == CHANCE:
            return None
        # a game may give its priors' values apart from its greedy heuristic (prior_values)
        heuristic = getattr(state, "prior_values", None) or getattr(state, "heuristic_values",
                                                                     None)
        if heuristic is None:
            raise ValueError("this game has no heuristic_values(); use prior=none")
        _, vals = heuristic()
        z = (vals - vals.max()) / self.prior_temperature
        w = np.exp(z)
        return np.asarray(w / w.sum(), dtype=np.float64)

    def _one(self, state: GameState) -> np.ndarray:
        seed = int(self.rng.integers(2**31 - 1))
        fast = getattr(state, "rollout", None)
        if fast is not None:
            return np.asarray(fast(self.policy, seed, self.samples), dtype=np.float64)
        if self.policy != "random":
            raise ValueError("this game has no compiled rollout; only 'random' is available")
        rng = np.random.default_rng(seed)
        s = state.clone()
        while not s.is_terminal():
            if s.current_player == CHANCE:
                outcomes, probs = zip(*s.chance_outcomes(), strict=True)
                s.apply(int(rng.choice(outcomes, p=np.asarray(probs))))
            else:
                legal = s.legal_actions()
                s.apply(int(legal[rng.integers(legal.size)]))
        return np.asarray(s.returns(), dtype=np.float64)
