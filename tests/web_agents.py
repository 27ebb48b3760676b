"""Agent classes for the browser board's security tests (tests/test_web_security.py), named
as ``web_agents:Class`` specs: the tests folder is on ``sys.path`` under pytest, and a served
subprocess gets it through ``PYTHONPATH``.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from taluva_ai.agents import Agent
from taluva_ai.protocol import GameState

#: Set when a :class:`Spinner` starts its move and when it leaves it (interrupted).
SPINNING = threading.Event()
STOPPED = threading.Event()


class Quick(Agent):
    """Plays the first legal action (``path``: a file it would read, kept as given)."""

    def __init__(self, seed: int | None = None, sims: int = 1, path: str = "") -> None:
        self.sims = sims
        self.path = path

    def act(self, state: GameState) -> int:
        return int(state.legal_actions()[0])


class Spinner(Agent):
    """A search that never ends on its own: it loops in Python (sleeping a little, so as not
    to take a processor from the other tests) until it is interrupted."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, state: GameState) -> int:
        SPINNING.set()
        try:
            while True:
                time.sleep(0.005)
        finally:
            STOPPED.set()
