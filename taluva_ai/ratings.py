"""Ratings from game results: Elo (Bradley–Terry) with bootstrap intervals, and openskill.

Elo
    Every game gives pairwise results between the agents that played it: the better place wins,
    equal places draw (in a 2-player game this is just the game's result; in 3–4 player games a
    winner beats each loser and the losers draw among themselves). A draw counts as half a win
    each way. The ratings are the maximum-likelihood fit of the Bradley–Terry model on the Elo
    scale, ``P(i beats j) = 1 / (1 + 10 ** ((r_j - r_i) / 400))``, found with
    :func:`scipy.optimize.minimize` (``trust-exact``: Newton steps with the exact gradient and
    Hessian). To keep the fit finite when an agent wins every game, each pair that met gets
    ``prior_draws`` virtual draws (BayesElo's device; default 1), which pulls ratings gently
    towards each other. The scale is anchored:
    the first agent (``anchor``, by default index 0) is fixed at 0 Elo and the others are
    relative to it.

    95% intervals come from :func:`scipy.stats.bootstrap` (percentile method, seeded), resampling
    whole games with replacement within each group of agents (a stratified bootstrap: each
    group keeps its number of games), so correlated pairwise results of one game stay together.
    The anchor's interval is ``[0, 0]`` by construction.

Openskill
    For 3–4 player games, :class:`openskill.models.PlackettLuce` ratings updated game by game
    from the places, in game-id order (the update is sequential, so the order is fixed):
    ``mu``, ``sigma`` and ``ordinal = mu - 3 sigma`` (openskill's defaults: mu 25, sigma 25/3).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import optimize, stats

#: Elo points per natural-log unit of odds: ``400 / ln(10)``.
ELO_PER_NAT = 400.0 / math.log(10.0)


def pairwise_scores(num_agents: int, agents: Sequence[int], places: Sequence[int]) -> np.ndarray:
    """``float64[n, n]``: the pairwise results of one game, ``W[i, j]`` = score of agent ``i``
    against agent ``j`` (1 a win, 0.5 a draw, 0 a loss or no meeting).

    Args:
        num_agents: ``n``, the number of agents in the tournament.
        agents: agent index per seat.
        places: place per seat (0 best, ties share a place); a game with any place < 0
            (undecided, e.g. truncated) gives all zeros.
    """
    w = np.zeros((num_agents, num_agents), dtype=np.float64)
    if any(p < 0 for p in places):
        return w
    for s1 in range(len(agents)):
        for s2 in range(len(agents)):
            if s1 == s2:
                continue
            i, j = agents[s1], agents[s2]
            if places[s1] < places[s2]:
                w[i, j] += 1.0
            elif places[s1] == places[s2]:
                w[i, j] += 0.5
    return w


def bradley_terry_elo(
    wins: np.ndarray, anchor: int = 0, prior_draws: float = 1.0, x0: np.ndarray | None = None
) -> np.ndarray:
    """Maximum-likelihood Bradley–Terry ratings on the Elo scale (see the module docstring).

    Args:
        wins: ``float64[n, n]``, ``wins[i, j]`` = score of ``i`` against ``j`` (draws as 0.5
            each way); the diagonal is ignored.
        anchor: index of the agent fixed at 0 Elo.
        prior_draws: virtual draws added to every pair with at least one result (>= 0).
        x0: optional ``float64[n]`` starting ratings (Elo).

    Returns:
        ``float64[n]`` ratings in Elo points, ``anchor`` at exactly 0. Agents with no result
        against the anchor's component stay at 0.

    Raises:
        ValueError: ``wins`` is not square, has negative entries, or ``anchor`` is out of range.
    """
    w = np.array(wins, dtype=np.float64)
    n = w.shape[0]
    if w.ndim != 2 or w.shape != (n, n):
        raise ValueError(f"wins must be a square matrix, got shape {w.shape}")
    if (w < 0).any():
        raise ValueError("wins must be non-negative")
    if not 0 <= anchor < n:
        raise ValueError(f"anchor {anchor} out of range for {n} agents")
    np.fill_diagonal(w, 0.0)
    met = (w + w.T) > 0
    w = w + 0.5 * prior_draws * met
    free = np.array([i for i in range(n) if i != anchor], dtype=np.int64)
    if free.size == 0:
        return np.zeros(n)

    games = w + w.T

    def nll(x: np.ndarray) -> tuple[float, np.ndarray]:
        s = np.zeros(n)
        s[free] = x
        d = s[:, None] - s[None, :]
        # -sum W_ij log sigmoid(d_ij); log sigmoid(d) = -logaddexp(0, -d)
        f = float((w * np.logaddexp(0.0, -d)).sum())
        m = w * (1.0 - _sigmoid(d))
        g = -m.sum(axis=1) + m.sum(axis=0)
        return f, g[free]

    def hess(x: np.ndarray) -> np.ndarray:
        s = np.zeros(n)
        s[free] = x
        p = _sigmoid(s[:, None] - s[None, :])
        c = games * p * (1.0 - p)  # symmetric; each unordered pair counted once per order
        h = np.diag(c.sum(axis=1)) - c
        return np.asarray(h[np.ix_(free, free)])

    start = np.zeros(free.size) if x0 is None else np.asarray(x0, dtype=np.float64)[free]
    res = optimize.minimize(nll, start / ELO_PER_NAT, jac=True, hess=hess, method="trust-exact",
                            options={"gtol": 1e-9})
    out = np.zeros(n)
    out[free] = res.x * ELO_PER_NAT
    return out


def _sigmoid(d: np.ndarray) -> np.ndarray:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * d)))


def elo_with_intervals(
    per_game: np.ndarray,
    strata: Sequence[int],
    anchor: int = 0,
    prior_draws: float = 1.0,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Elo point estimates and bootstrap intervals.

    Args:
        per_game: ``float64[G, n, n]``, each game's :func:`pairwise_scores`.
        strata: ``int[G]``, the group (stratum) of each game; games are resampled within it.
        anchor, prior_draws: as in :func:`bradley_terry_elo`.
        bootstrap: number of resamples (0 skips the intervals: they are then NaN).
        seed: seeds the resampling (:func:`numpy.random.default_rng`).
        confidence: interval level.

    Returns:
        ``(elo, low, high)``, each ``float64[n]`` in Elo points.
    """
    pg = np.asarray(per_game, dtype=np.float64)
    n = pg.shape[1]
    elo = bradley_terry_elo(pg.sum(axis=0), anchor, prior_draws)
    low = np.full(n, np.nan)
    high = np.full(n, np.nan)
    st = np.asarray(strata)
    groups = [np.flatnonzero(st == g) for g in sorted(set(st.tolist()))]
    if bootstrap <= 0 or not groups or min(len(g) for g in groups) < 2:
        return elo, low, high
    free = np.array([i for i in range(n) if i != anchor], dtype=np.int64)

    def statistic(*samples: np.ndarray) -> np.ndarray:
        idx = np.concatenate([np.asarray(s, dtype=np.int64) for s in samples])
        return bradley_terry_elo(pg[idx].sum(axis=0), anchor, prior_draws, x0=elo)[free]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        res = stats.bootstrap(
            tuple(g.astype(np.float64) for g in groups), statistic, n_resamples=bootstrap,
            vectorized=False, paired=False, confidence_level=confidence,
            method="percentile", rng=np.random.default_rng(seed),
        )
    low[free] = res.confidence_interval.low
    high[free] = res.confidence_interval.high
    low[anchor] = high[anchor] = 0.0
    return elo, low, high


def openskill_ratings(
    num_agents: int, games: Sequence[tuple[Sequence[int], Sequence[int]]]
) -> list[dict[str, float]]:
    """Plackett–Luce (openskill) ratings from places, games applied in the given order.

    Args:
        num_agents: ``n``.
        games: ``(agent index per seat, place per seat)`` pairs; games with an undecided place
            (< 0) are skipped.

    Returns:
        Per agent ``{"mu", "sigma", "ordinal"}`` (``ordinal = mu - 3 sigma``).
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating() for _ in range(num_agents)]
    for agents, places in games:
        if any(p < 0 for p in places):
            continue
        new = model.rate([[ratings[a]] for a in agents], ranks=[float(p) for p in places])
        for a, team in zip(agents, new, strict=True):
            ratings[a] = team[0]
    return [
        {"mu": float(r.mu), "sigma": float(r.sigma), "ordinal": float(r.ordinal())}
        for r in ratings
    ]


def tournament_table(
    agent_specs: Sequence[str],
    games: Sequence[dict[str, Any]],
    players_per_game: int,
    bootstrap: int = 1000,
    seed: int = 0,
    prior_draws: float = 1.0,
) -> dict[str, Any]:
    """The results table of a tournament.

    Args:
        agent_specs: the agents, in tournament order (the first is the Elo anchor).
        games: in game-id order, each ``{"group": [specs], "seats": [spec per seat],
            "places": [...], "winners": [...], "end_reason": str}``.
        players_per_game: 2, 3 or 4.
        bootstrap, seed, prior_draws: for :func:`elo_with_intervals`.

    Returns:
        A JSON-ready dict::

            {"games": G, "end_reasons": {reason: count},
             "pairs": [{"agents": [a, b], "games": .., "wins": {a: .., b: ..},
                        "draws": .., "truncated": .., "score": {a: .., b: ..}}],
             "groups": [...],             # 3-4 players only: per group of the round robin
             "agents": {a: {"elo": .., "elo_ci95": [lo, hi], "games": .., "wins": ..,
                            "score": .., "openskill": {...}}},   # openskill: 3-4 players
             "elo_anchor": agent_specs[0], "elo_method": "..."}

        ``pairs`` are head-to-head counts (for 3–4 players, from the places of the games both
        played: a better place is a win, an equal place a draw); ``score`` is ``(wins + draws
        / 2) / decided games`` (None when none was decided). ``groups[*].wins`` counts games
        each agent won (a shared win included), ``draws`` the games with a shared win.
        Elo values are rounded to 0.1, scores to 1e-4, openskill to 1e-3.

    Raises:
        ValueError: a game that does not fit the tournament (an unknown agent, not
            ``players_per_game`` seats, places or winners that do not match the seats); the
            message names the game (its ``id``, else its index).
    """
    specs = list(agent_specs)
    for gi, g in enumerate(games):
        _check_game(g, gi, specs, players_per_game)
    n = len(specs)
    index = {s: i for i, s in enumerate(specs)}
    per_game = np.zeros((len(games), n, n))
    strata: list[int] = []
    group_keys: dict[tuple[str, ...], int] = {}
    reasons: dict[str, int] = {}
    os_games: list[tuple[list[int], list[int]]] = []
    pair_stats: dict[tuple[int, int], dict[str, int]] = {}
    group_stats: dict[int, dict[str, Any]] = {}
    agent_games = [0] * n
    agent_wins = [0] * n
    for gi, g in enumerate(games):
        key = tuple(g["group"])
        strata.append(group_keys.setdefault(key, len(group_keys)))
        seats = [index[s] for s in g["seats"]]
        places = [int(p) for p in g["places"]]
        decided = bool(g["winners"]) and all(p >= 0 for p in places)
        reasons[g["end_reason"]] = reasons.get(g["end_reason"], 0) + 1
        if decided:
            per_game[gi] = pairwise_scores(n, seats, places)
        os_games.append((seats, places if decided else [-1] * len(places)))
        gs = group_stats.setdefault(
            strata[-1], {"agents": list(key), "games": 0, "wins": dict.fromkeys(key, 0),
                         "draws": 0, "truncated": 0})
        gs["games"] += 1
        for a in seats:
            agent_games[a] += 1
        if not decided:
            gs["truncated"] += 1
        else:
            for w in g["winners"]:
                gs["wins"][specs[seats[w]]] += 1
                agent_wins[seats[w]] += 1
            if len(g["winners"]) > 1:
                gs["draws"] += 1
        for s1 in range(len(seats)):
            for s2 in range(s1 + 1, len(seats)):
                i, j = sorted((seats[s1], seats[s2]))
                ps = pair_stats.setdefault((i, j), {"games": 0, "wi": 0, "wj": 0, "draws": 0,
                                                    "truncated": 0})
                ps["games"] += 1
                if not decided:
                    ps["truncated"] += 1
                    continue
                pi = places[seats.index(i)]
                pj = places[seats.index(j)]
                if pi < pj:
                    ps["wi"] += 1
                elif pj < pi:
                    ps["wj"] += 1
                else:
                    ps["draws"] += 1

    pairs = []
    for (i, j), ps in sorted(pair_stats.items()):
        dec = ps["games"] - ps["truncated"]
        pairs.append({
            "agents": [specs[i], specs[j]],
            "games": ps["games"],
            "wins": {specs[i]: ps["wi"], specs[j]: ps["wj"]},
            "draws": ps["draws"],
            "truncated": ps["truncated"],
            "score": {
                specs[i]: _round((ps["wi"] + 0.5 * ps["draws"]) / dec, 4) if dec else None,
                specs[j]: _round((ps["wj"] + 0.5 * ps["draws"]) / dec, 4) if dec else None,
            },
        })

    elo, low, high = elo_with_intervals(per_game, strata, anchor=0, prior_draws=prior_draws,
                                        bootstrap=bootstrap, seed=seed)
    total = per_game.sum(axis=0)
    agents: dict[str, Any] = {}
    osk = openskill_ratings(n, os_games) if players_per_game > 2 else None
    for i, s in enumerate(specs):
        met = total[i].sum() + total[:, i].sum()
        entry: dict[str, Any] = {
            "elo": _round(elo[i], 1),
            "elo_ci95": [_round(low[i], 1), _round(high[i], 1)],
            "games": agent_games[i],
            "wins": agent_wins[i],
            "score": _round(total[i].sum() / met, 4) if met else None,
        }
        if osk is not None:
            entry["openskill"] = {k: _round(v, 3) for k, v in osk[i].items()}
        agents[s] = entry
    table: dict[str, Any] = {
        "games": len(games),
        "end_reasons": dict(sorted(reasons.items())),
        "pairs": pairs,
    }
    if players_per_game > 2:
        table["groups"] = [group_stats[k] for k in sorted(group_stats)]
    table["agents"] = agents
    table["elo_anchor"] = specs[0]
    table["elo_method"] = (
        f"Bradley-Terry maximum likelihood on the Elo scale, {specs[0]} fixed at 0, "
        f"{prior_draws:g} virtual draw(s) per pair; 95% percentile bootstrap over games "
        f"within each group ({bootstrap} resamples, seed {seed})"
    )
    return table


def _check_game(g: dict[str, Any], gi: int, specs: Sequence[str], k: int) -> None:
    """Refuse a game entry of :func:`tournament_table` that does not fit (ValueError)."""
    name = f"game {g.get('id', gi)!r}"
    seats, places, winners = g.get("seats"), g.get("places"), g.get("winners")
    if not isinstance(seats, (list, tuple)) or len(seats) != k or any(
        s not in specs for s in seats
    ):
        raise ValueError(f"{name}: seats {seats!r} are not {k} agents of the tournament")
    if not isinstance(g.get("group"), (list, tuple)) or sorted(g["group"]) != sorted(seats):
        raise ValueError(f"{name}: group {g.get('group')!r} does not hold the seated agents")
    if not isinstance(places, (list, tuple)) or len(places) != k or any(
        not isinstance(p, (int, np.integer)) or isinstance(p, bool) or not -1 <= p < k
        for p in places
    ):
        raise ValueError(f"{name}: places {places!r} are not {k} places in -1..{k - 1}")
    if not isinstance(winners, (list, tuple)) or any(
        not isinstance(w, (int, np.integer)) or isinstance(w, bool) or not 0 <= w < k
        for w in winners
    ) or len(set(winners)) != len(winners):
        raise ValueError(f"{name}: winners {winners!r} are not distinct seats 0..{k - 1}")
    if not isinstance(g.get("end_reason"), str):
        raise ValueError(f"{name}: end_reason {g.get('end_reason')!r} is not a string")


def _round(x: float, digits: int) -> float | None:
    """``round(x, digits)`` as a float; None for NaN (JSON has no NaN)."""
    if x is None or not math.isfinite(float(x)):
        return None
    v = round(float(x), digits)
    return 0.0 if v == 0 else v  # no "-0.0" in the table
