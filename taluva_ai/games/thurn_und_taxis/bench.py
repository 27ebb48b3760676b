"""Thurn und Taxis throughput figures (``taluva bench --game thurn_und_taxis``).

Measured after a warm-up, repeated, the median reported; one process, one thread.

- ``games_per_s[n]``: uniformly random full games of ``n`` players per second, the dense
  legal mask (``bool[327]``) computed at every decision and chance outcomes drawn from the
  supply (:func:`kernels.random_playout`, game ``i`` seeded ``i``; default options, so
  ``max_rounds`` = 200).
- ``games_per_cpu_s[n]``: the same games per second of this process's CPU time (the figure
  that other processes sharing the machine do not bend; the wall-clock one does).
- ``decisions_per_game[n]``, ``truncated_share[n]``: mean decisions of those games and the
  share that ``max_rounds`` stopped (uniformly random players rarely close a route, §8 asks
  how often the limit binds).
- ``legal_mask_us`` / ``apply_us``: mean microseconds of one legal-mask computation
  (:func:`kernels.legal_mask`) and of one ``apply_action`` (plus the copy of the state it
  works on, timed apart and subtracted), over positions collected along seeded random 2-player
  games, in compiled loops (no Python overhead).
- ``greedy_games_per_s``: 2-player games of the greedy heuristic in both seats (compiled).
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from taluva_ai.games.compiling import njit
from taluva_ai.games.thurn_und_taxis import kernels as K
from taluva_ai.games.thurn_und_taxis.actions import NUM_ACTIONS
from taluva_ai.games.thurn_und_taxis.heuristic import play_greedy_vs
from taluva_ai.games.thurn_und_taxis.rules import TnTRules
from taluva_ai.games.thurn_und_taxis.state import (
    M_END,
    M_STEP,
    S_CHANCE,
    S_TERMINAL,
    EndReason,
    new_arrays,
)


@njit(cache=True)
def _collect(cards, route, houses, players, meta, rules, seed, out_c, out_r, out_h, out_p,
             out_m, start):
    """Record the decision positions of one random game into ``out_*[start:]``; returns the
    new end index (stops when the buffers are full)."""
    np.random.seed(seed)
    buf = np.empty(NUM_ACTIONS, dtype=np.int64)
    i = start
    while meta[M_STEP] != S_TERMINAL and i < out_c.shape[0]:
        if meta[M_STEP] == S_CHANCE:
            K.apply_chance(cards, route, houses, players, meta, rules, K.sample_chance(cards))
            continue
        out_c[i] = cards
        out_r[i] = route
        out_h[i] = houses
        out_p[i] = players
        out_m[i] = meta
        i += 1
        n = K.legal_actions(cards, route, houses, players, meta, rules, buf)
        K.apply_action(cards, route, houses, players, meta, rules, buf[np.random.randint(n)])
    return i


@njit(cache=True)
def _time_masks(C, R, H, P, M, rules, loops):
    mask = np.zeros(NUM_ACTIONS, dtype=np.bool_)
    buf = np.empty(NUM_ACTIONS, dtype=np.int64)
    total = 0
    for _ in range(loops):
        for i in range(C.shape[0]):
            total += K.legal_mask(C[i], R[i], H[i], P[i], M[i], rules, mask, buf)
    return total


@njit(cache=True)
def _time_apply(C, R, H, P, M, A, rules, loops, apply):
    """Copy each position (and, with ``apply``, apply its recorded action ``A[i]``)."""
    total = 0
    for _ in range(loops):
        for i in range(C.shape[0]):
            c = C[i].copy()
            r = R[i].copy()
            h = H[i].copy()
            p = P[i].copy()
            m = M[i].copy()
            if apply:
                K.apply_action(c, r, h, p, m, rules, A[i])
            total += m[0]
    return total


def collect_positions(games: int = 4, limit: int = 20000, seed: int = 0
                      ) -> tuple[np.ndarray, ...]:
    """``(cards, route, houses, players, meta, action)`` stacked over the decision positions
    of ``games`` random 2-player games (at most ``limit``), with a legal action of each."""
    rules = TnTRules().as_array()
    proto = new_arrays(2)
    out = [np.zeros((limit, *x.shape), dtype=x.dtype) for x in proto]
    end = 0
    for g in range(games):
        end = _collect(*new_arrays(2), rules, seed + g, out[0], out[1], out[2], out[3], out[4],
                       end)
    out = [x[:end] for x in out]
    rng = np.random.default_rng(seed)
    buf = np.empty(NUM_ACTIONS, dtype=np.int64)
    acts = np.empty(end, dtype=np.int64)
    for i in range(end):
        n = K.legal_actions(out[0][i], out[1][i], out[2][i], out[3][i], out[4][i], rules, buf)
        acts[i] = buf[rng.integers(n)]
    return (*out, acts)


def _playouts(n: int, games: int) -> tuple[float, float, float, float]:
    """``(wall seconds, CPU seconds of this process, mean decisions, truncated share)``."""
    rules = TnTRules(num_players=n).as_array()
    mask = np.zeros(NUM_ACTIONS, dtype=np.bool_)
    states = [new_arrays(n) for _ in range(games)]
    decisions = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for i, s in enumerate(states):
        decisions += K.random_playout(*s, rules, mask, i)
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    truncated = sum(int(s[4][M_END] == EndReason.TRUNCATED) for s in states)
    return dt, dc, decisions / games, truncated / games


def bench_engine(games: int = 200, repeats: int = 5, mask_games: int = 4) -> dict[str, Any]:
    """The ``engine`` section for Thurn und Taxis (see the module docstring).

    Returns:
        ``{"game": "thurn_und_taxis", "games_per_s": {"2", "3", "4"}, "games_per_cpu_s": {...},
        "decisions_per_game":
        {...}, "truncated_share": {...}, "legal_mask_us", "apply_us", "greedy_games_per_s",
        "positions", "repeats", "games"}``.

    Raises:
        ValueError: an argument below 1.
    """
    for name, v in (("games", games), ("repeats", repeats), ("mask_games", mask_games)):
        if v < 1:
            raise ValueError(f"{name} must be >= 1, got {v}")
    games_per_s: dict[str, float] = {}
    games_per_cpu_s: dict[str, float] = {}
    decisions: dict[str, float] = {}
    truncated: dict[str, float] = {}
    for n in (2, 3, 4):
        _playouts(n, 1)  # warm-up: loads the compiled kernels
        rates, cpu_rates = [], []
        for _ in range(repeats):
            dt, dc, dec, tr = _playouts(n, games)
            rates.append(games / dt)
            cpu_rates.append(games / max(dc, 1e-9))
        games_per_s[str(n)] = round(statistics.median(rates), 1)
        games_per_cpu_s[str(n)] = round(statistics.median(cpu_rates), 1)
        decisions[str(n)] = round(dec, 1)
        truncated[str(n)] = round(tr, 3)
    C, R, H, P, M, A = collect_positions(mask_games)
    rules = TnTRules().as_array()
    _time_masks(C[:1], R[:1], H[:1], P[:1], M[:1], rules, 1)
    _time_apply(C[:1], R[:1], H[:1], P[:1], M[:1], A[:1], rules, 1, True)
    _time_apply(C[:1], R[:1], H[:1], P[:1], M[:1], A[:1], rules, 1, False)
    mask_us, apply_us = [], []
    k = C.shape[0]
    for _ in range(repeats):
        t0 = time.perf_counter()
        _time_masks(C, R, H, P, M, rules, 5)
        mask_us.append((time.perf_counter() - t0) / (5 * k) * 1e6)
        t0 = time.perf_counter()
        _time_apply(C, R, H, P, M, A, rules, 5, True)
        t1 = time.perf_counter()
        _time_apply(C, R, H, P, M, A, rules, 5, False)
        t2 = time.perf_counter()
        apply_us.append(((t1 - t0) - (t2 - t1)) / (5 * k) * 1e6)
    seats = np.ones(4, dtype=np.bool_)
    play_greedy_vs(*new_arrays(2), rules, seats, 0)
    greedy_rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for i in range(games):
            play_greedy_vs(*new_arrays(2), rules, seats, i)
        greedy_rates.append(games / (time.perf_counter() - t0))
    return {
        "game": "thurn_und_taxis",
        "games_per_s": games_per_s,
        "games_per_cpu_s": games_per_cpu_s,
        "decisions_per_game": decisions,
        "truncated_share": truncated,
        "legal_mask_us": round(statistics.median(mask_us), 3),
        "apply_us": round(max(statistics.median(apply_us), 0.0), 3),
        "greedy_games_per_s": round(statistics.median(greedy_rates), 1),
        "positions": int(k),
        "repeats": repeats,
        "games": games,
    }


def midgame_state(seed: int = 3, turns: int = 20) -> Any:
    """The fixed 2-player position the MCTS benchmark searches from: ``turns`` turns of
    seeded greedy play, at the next decision."""
    from taluva_ai.games.thurn_und_taxis.game import ThurnUndTaxisGame

    state = ThurnUndTaxisGame().new_initial_state(seed=seed)
    rng = np.random.default_rng(seed)
    while state.observation(0)["turn"] < turns or state.current_player < 0:
        if state.current_player < 0:
            state.draw()
        else:
            ids, vals = state.heuristic_values()
            best = np.flatnonzero(vals == vals.max())
            state.apply(int(ids[best[rng.integers(best.size)]]))
    return state
