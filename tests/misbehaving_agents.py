"""Agents that fail on purpose, for the forfeit tests (made by spec, e.g.
``misbehaving_agents:Crasher:at=2``; the tests folder is on ``sys.path`` under pytest, and
spawned worker processes inherit it).

Each plays uniformly at random (seeded) until its decision number ``at`` (0-based, counted over
its own decisions in the game), where it fails.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time as _time
from pathlib import Path

import numpy as np

from taluva_ai.agents import Agent
from taluva_ai.protocol import GameState


class _RandomUntil(Agent):
    def __init__(self, seed: int | None = None, at: int = 0) -> None:
        self.at = at
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.decisions = 0

    def act(self, state: GameState) -> int:
        n = self.decisions
        self.decisions += 1
        if n == self.at:
            return self.fail(state)
        legal = state.legal_actions()
        return int(legal[self.rng.integers(legal.size)])

    def fail(self, state: GameState) -> int:
        raise NotImplementedError


class Crasher(_RandomUntil):
    """Raises ``RuntimeError("boom at decision N")``."""

    def fail(self, state: GameState) -> int:
        raise RuntimeError(f"boom at decision {self.at}")


class Illegal(_RandomUntil):
    """Returns an action id that is not an action (``num_actions + 5``)."""

    def fail(self, state: GameState) -> int:
        return int(state.legal_action_mask().size + 5)


class Sleeper(_RandomUntil):
    """Declares a budget of ``time`` seconds a move, then sleeps ``sleep`` seconds at decision
    ``at``."""

    def __init__(self, seed: int | None = None, at: int = 0, time: float = 0.05,
                 sleep: float = 5.0) -> None:
        self.time = time
        self.sleep = sleep
        super().__init__(seed, at)

    def fail(self, state: GameState) -> int:
        _time.sleep(self.sleep)
        legal = state.legal_actions()
        return int(legal[0])


class BadReset(_RandomUntil):
    """Raises in ``reset`` once a game starts (the constructor's reset passes)."""

    def reset(self, seed: int | None = None) -> None:
        if hasattr(self, "rng"):
            raise ValueError("cannot reset")
        super().reset(seed)


class ExitOnce(_RandomUntil):
    """Kills its own process (``os._exit(1)``) at decision ``at``, once: the first agent to
    get there creates the marker file ``<tempdir>/taluva-exit-once-<token>`` and exits; once
    the marker exists it plays on at random, the same move it would have made (a worker
    killed mid-game, for the retry tests of distributed tournaments)."""

    def __init__(self, seed: int | None = None, at: int = 0, token: str = "default") -> None:
        self.marker = Path(tempfile.gettempdir()) / f"taluva-exit-once-{token}"
        super().__init__(seed, at)

    def fail(self, state: GameState) -> int:
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            legal = state.legal_actions()
            return int(legal[self.rng.integers(legal.size)])
        os.close(fd)
        os._exit(1)


class Swapper(_RandomUntil):
    """Plays at random with a "network" read from the file ``weights`` when it is made
    (``pinned_files``: that file's SHA-256, as an ``az`` agent pins its checkpoint). At
    decision ``at``, when the file ``<weights>.swap`` exists, it deletes that file and
    overwrites ``weights`` with the text ``replaced``: a training run replacing the network
    while a tournament rates it."""

    def __init__(self, seed: int | None = None, at: int = 0, weights: str = "") -> None:
        self.weights = Path(weights)
        self.digest = hashlib.sha256(self.weights.read_bytes()).hexdigest()
        super().__init__(seed, at)

    def pinned_files(self) -> dict[str, str]:
        return {str(self.weights): self.digest}

    def fail(self, state: GameState) -> int:
        swap = Path(f"{self.weights}.swap")
        if swap.exists():
            swap.unlink()
            self.weights.write_text("replaced")
        legal = state.legal_actions()
        return int(legal[self.rng.integers(legal.size)])


class PinnedCrasher(Swapper):
    """A :class:`Swapper` (a "network" file, pinned) that raises at decision ``at``: a
    forfeit by an agent that reads a file."""

    def fail(self, state: GameState) -> int:
        raise RuntimeError(f"boom at decision {self.at}")
