"""The parameters of the searches, as the agent specs set them: :class:`MCTSConfig`
(``mcts:``, ``az:``; some of them select the search path, :mod:`taluva_ai.agents.search`)
and :class:`ISMCTSConfig` (``ismcts:``). Each refuses a bad value when made."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from taluva_ai.agents.base import BUDGET_LIMITS, MAX_SIMS, MAX_TIME


@dataclass(frozen=True)
class MCTSConfig:
    """Search parameters (the ``mcts:key=value,...`` agent spec sets any of them).

    Attributes:
        sims: simulations per move (ignored when ``time`` is set); at most
            :data:`~taluva_ai.agents.base.MAX_SIMS`.
        time: seconds per move, or None; at most :data:`~taluva_ai.agents.base.MAX_TIME`.
        rollout: ``random`` or ``greedy`` rollout evaluator.
        c: exploration constant (UCT's c, or PUCT's c_puct).
        fpu: PUCT value of unvisited children.
        chance: ``expand`` (stratified over all outcomes) or ``sample``.
        temperature: 0 plays the most visited move; > 0 samples by visits^(1/temperature).
        dirichlet_alpha: root noise concentration (0 = none; AlphaZero used 0.3 for chess).
        dirichlet_frac: weight of the noise in the root priors (AlphaZero: 0.25).
        reuse_tree: keep the subtree of the played line for the next move.
        leaf_batch: leaves collected with virtual loss and evaluated together.
        samples: tile placements sampled per greedy-rollout decision.
        prior: ``heuristic`` (PUCT with softmax priors of the game's heuristic values) or
            ``none`` (UCT).
        prior_temperature: softmax temperature of the heuristic priors.
        compiled: run the search in compiled code when the game, the evaluator and the
            other options allow it (the compiled rollout search or the compiled batched
            network search: :mod:`taluva_ai.agents.search`, "Which search runs when");
            False forces the Python fallback.
        root: ``puct`` (the root selects like every node) or ``gumbel`` (Gumbel sequential
            halving at the root, Danihelka et al. 2022; needs priors; replaces Dirichlet
            noise; the move is the best survivor, sampled through the Gumbel noise when
            ``temperature > 0``, and the agent's
            :meth:`~taluva_ai.agents.mcts.MCTSAgent.root_policy` is the improved policy).
        gumbel_m: actions considered at the root by Gumbel sequential halving (paper: 16).
        gumbel_c_visit, gumbel_c_scale: ``sigma(q) = (c_visit + max N) c_scale q`` on values
            rescaled to [0, 1] (mctx defaults 50 and 0.1).
    """

    sims: int = 400
    time: float | None = None
    rollout: str = "random"
    c: float = 1.0
    fpu: float = 0.0
    chance: str = "expand"
    temperature: float = 0.0
    dirichlet_alpha: float = 0.0
    dirichlet_frac: float = 0.25
    reuse_tree: bool = False
    leaf_batch: int = 1
    samples: int = 8
    prior: str = "heuristic"
    prior_temperature: float = 10.0
    compiled: bool = True
    root: str = "puct"
    gumbel_m: int = 16
    gumbel_c_visit: float = 50.0
    gumbel_c_scale: float = 0.1

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            want = _FIELD_TYPES[f.name]
            if v is None and f.name == "time":
                continue
            ok = isinstance(v, want) and not (isinstance(v, bool) and want is not bool)
            if not ok:
                names = " or ".join(t.__name__ for t in (want if isinstance(want, tuple)
                                                          else (want,)))
                raise ValueError(f"parameter {f.name}={v!r} must be {names}")
        for name in ("time", "c", "fpu", "temperature", "dirichlet_alpha", "dirichlet_frac",
                     "prior_temperature", "gumbel_c_visit", "gumbel_c_scale"):
            v = getattr(self, name)
            if v is not None and not math.isfinite(v):
                raise ValueError(f"parameter {name} must be finite, got {v!r}")
        for name in ("sims", "time", "samples", "leaf_batch"):  # finite work per move
            v, most = getattr(self, name), BUDGET_LIMITS[name]
            if v is not None and v > most:
                raise ValueError(f"{name} must be at most {int(most)}, got {v!r}")
        if self.c < 0:
            raise ValueError(f"c must be >= 0, got {self.c}")
        if self.dirichlet_alpha < 0 or not 0 <= self.dirichlet_frac <= 1:
            raise ValueError("dirichlet_alpha must be >= 0 and dirichlet_frac in [0, 1], got "
                             f"{self.dirichlet_alpha}, {self.dirichlet_frac}")
        if self.samples < 1:
            raise ValueError(f"samples must be at least 1, got {self.samples}")
        if self.prior_temperature <= 0:
            raise ValueError(f"prior_temperature must be positive, got {self.prior_temperature}")
        if self.time is None and self.sims < 1:
            raise ValueError(f"sims must be at least 1, got {self.sims}")
        if self.time is not None and self.time <= 0:
            raise ValueError(f"time must be positive, got {self.time}")
        if self.chance not in ("expand", "sample"):
            raise ValueError(f"chance must be 'expand' or 'sample', got {self.chance!r}")
        if self.leaf_batch < 1:
            raise ValueError(f"leaf_batch must be at least 1, got {self.leaf_batch}")
        if self.prior not in ("heuristic", "none"):
            raise ValueError(f"prior must be 'heuristic' or 'none', got {self.prior!r}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.root not in ("puct", "gumbel"):
            raise ValueError(f"root must be 'puct' or 'gumbel', got {self.root!r}")
        if self.gumbel_m < 1:
            raise ValueError(f"gumbel_m must be at least 1, got {self.gumbel_m}")
        if self.gumbel_c_visit < 0 or self.gumbel_c_scale < 0:
            raise ValueError("gumbel_c_visit and gumbel_c_scale must be >= 0")
        if self.root == "gumbel" and self.reuse_tree:
            raise ValueError("root=gumbel plans each move from a fresh root: use reuse_tree=false")


_FIELD_TYPES: dict[str, Any] = {
    "sims": int, "time": (int, float), "rollout": str, "c": (int, float), "fpu": (int, float),
    "chance": str, "temperature": (int, float), "dirichlet_alpha": (int, float),
    "dirichlet_frac": (int, float), "reuse_tree": bool, "leaf_batch": int, "samples": int,
    "prior": str, "prior_temperature": (int, float), "compiled": bool, "root": str,
    "gumbel_m": int, "gumbel_c_visit": (int, float), "gumbel_c_scale": (int, float),
}


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
