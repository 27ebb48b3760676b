"""Throughput of the native vector envs: :class:`TaluvaVectorEnv` (``taluva bench --env
--json`` prints it) and, with ``game="thurn_und_taxis"``, :class:`ThurnUndTaxisVectorEnv`
(``taluva bench --game thurn_und_taxis --env --json``).

Each measured step draws a uniformly random legal action per game (compiled
:func:`~taluva_ai.envs.core.sample_masked`), steps every game and produces the observation (the
planes, or the Thurn und Taxis tensor) and the legal mask of every game (``copy=False``: the
env's own buffers, no extra copy). Self-play, 2 players by default; games that end are reset at
the next step (next-step autoreset), as in training.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

import numba

from taluva_ai.envs.tnt_vector import ThurnUndTaxisVectorEnv
from taluva_ai.envs.vector import TaluvaVectorEnv

#: The games with a native vector env.
GAMES = ("taluva", "thurn_und_taxis")


def bench_env(
    batch_sizes: Sequence[int] = (1, 64, 256, 1024),
    seconds: float = 2.0,
    repeats: int = 3,
    num_players: int = 2,
    warmup_steps: int = 20,
    seed: int = 0,
    parallel: bool | None = None,
    game: str = "taluva",
) -> dict[str, Any]:
    """Measure VectorEnv steps per second (one step = one game advanced by one decision).

    Args:
        batch_sizes: numbers of games stepped together.
        seconds: length of one measurement.
        repeats: measurements per batch size; the median is reported.
        num_players: seats per game.
        warmup_steps: steps before measuring (kernels compiled and loaded).
        parallel: passed to the env (None: its default).
        game: ``"taluva"`` or ``"thurn_und_taxis"`` (self-play, ``opponents=None``).

    Returns:
        ``{"game": g, "steps_per_s": {"<batch>": median}, "steps_per_s_runs": {"<batch>":
        [...]}, "view_radius": R, "num_players": n, "seconds": s, "repeats": k, "threads": t}``
        (``threads``: Numba's thread count; ``view_radius`` for Taluva only).

    Raises:
        ValueError: a batch size below 1, non-positive seconds / repeats, or an unknown game.
    """
    if seconds <= 0 or repeats < 1:
        raise ValueError(f"seconds must be > 0 and repeats >= 1, got {seconds}, {repeats}")
    if game not in GAMES:
        raise ValueError(f"no vector env for game {game!r}; known: {', '.join(GAMES)}")
    medians: dict[str, float] = {}
    runs: dict[str, list[float]] = {}
    radius = 0
    for b in batch_sizes:
        if b < 1:
            raise ValueError(f"batch sizes must be >= 1, got {b}")
        env: TaluvaVectorEnv | ThurnUndTaxisVectorEnv
        if game == "taluva":
            env = TaluvaVectorEnv(b, num_players=num_players, copy=False, parallel=parallel)
            radius = env.view.radius
        else:
            env = ThurnUndTaxisVectorEnv(b, opponents=None, num_players=num_players, copy=False,
                                         parallel=parallel)
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
    out: dict[str, Any] = {"game": game, "steps_per_s": medians, "steps_per_s_runs": runs}
    if game == "taluva":
        out["view_radius"] = radius
    out.update(num_players=num_players, seconds=seconds, repeats=repeats,
               threads=numba.get_num_threads())
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(bench_env(), indent=1))
