"""An agent whose first move in a process compiles a kernel of its own (not cached), for the
warm-up tests (issue 19 A.3): it logs, for every move, whether that call compiled and whether
it ran inside :func:`taluva_ai.warmup.warm_up`, to the file named by ``$TALUVA_WARMUP_LOG``."""

from __future__ import annotations

import inspect
import json
import os

import numpy as np
from numba import njit

from taluva_ai.agents import Agent
from taluva_ai.protocol import GameState


@njit(cache=False)
def probe_kernel(ids):  # compiled anew in every process (no disk cache)
    best = ids[0]
    for a in ids:
        best = max(best, a)
    return best


class CompilingAgent(Agent):
    """Plays the highest legal id, through :func:`probe_kernel`."""

    def __init__(self, seed: int | None = None) -> None:
        pass

    def act(self, state: GameState) -> int:
        compiles = not probe_kernel.signatures
        legal = np.asarray(state.legal_actions(), dtype=np.int64)
        a = int(probe_kernel(legal))
        in_warmup = any(f.function == "warm_up" and f.filename.endswith("warmup.py")
                        for f in inspect.stack())
        path = os.environ.get("TALUVA_WARMUP_LOG")
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"pid": os.getpid(), "compiles": compiles,
                                    "warm_up": in_warmup}) + "\n")
        return a
