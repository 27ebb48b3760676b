"""Throughput of :class:`TaluvaVectorEnv` (``taluva bench --env --json`` prints it).

Each measured step draws a uniformly random legal action per game (compiled
:func:`~taluva_ai.envs.core.sample_masked`), steps every game and produces the observation planes
and the legal mask of every game (``copy=False``: the env's own buffers, no extra copy).
Self-play, 2 players by default; games that end are reset at the next step (next-step
autoreset), as in training.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

import numba

from taluva_ai.envs.vector import TaluvaVectorEnv


def bench_env(
    batch_sizes: Sequence[int] = (1, 64, 256, 1024),
    seconds: float = 2.0,
    repeats: int = 3,
    num_players: int = 2,
    warmup_steps: int = 20,
    seed: int = 0,
    parallel: bool | None = None,
) -> dict[str, Any]:
    """Measure VectorEnv steps per second (one step = one game advanced by one decision).

    Args:
        batch_sizes: numbers of games stepped together.
        seconds: length of one measurement.
        repeats: measurements per batch size; the median is reported.
        num_players: seats per game.
        warmup_steps: steps before measuring (kernels compiled and loaded).
        parallel: passed to :class:`TaluvaVectorEnv` (None: its default).

    Returns:
        ``{"steps_per_s": {"<batch>": median}, "steps_per_s_runs": {"<batch>": [...]},
        "view_radius": R, "num_players": n, "seconds": s, "repeats": k, "threads": t}``
        (``threads``: Numba's thread count).

    Raises:
        ValueError: a batch size below 1 or non-positive seconds / repeats.
    """
    if seconds <= 0 or repeats < 1:
        raise ValueError(f"seconds must be > 0 and repeats >= 1, got {seconds}, {repeats}")
    medians: dict[str, float] = {}
    runs: dict[str, list[float]] = {}
    radius = 0
    for b in batch_sizes:
        if b < 1:
            raise ValueError(f"batch sizes must be >= 1, got {b}")
        env = TaluvaVectorEnv(b, num_players=num_players, copy=False, parallel=parallel)
        radius = env.view.radius
        env.reset(seed=seed)
        for _ in range(warmup_steps):
            env.step(env.sample_legal_actions())
        rates = []
        for _ in range(repeats):
            n = 0
            t0 = time.perf_counter()
            while True:
                env.step(env.sample_legal_actions())
                n += 1
                dt = time.perf_counter() - t0
                if dt >= seconds:
                    break
            rates.append(n * b / dt)
        runs[str(b)] = [round(r, 1) for r in rates]
        medians[str(b)] = round(statistics.median(rates), 1)
        env.close()
    return {"steps_per_s": medians, "steps_per_s_runs": runs, "view_radius": radius,
            "num_players": num_players, "seconds": seconds, "repeats": repeats,
            "threads": numba.get_num_threads()}


if __name__ == "__main__":
    import json

    print(json.dumps(bench_env(), indent=1))
