"""Ratings from game results: Elo with a first-seat advantage term (maximum likelihood, 95%
intervals, likelihood of superiority), optional bootstrap intervals, openskill for 3–4
players, pentanomial counts of paired games, per-seat win rates.

Elo
    Every game gives pairwise results between the agents that played it: the better place wins,
    equal places draw (in a 2-player game this is just the game's result; in 3–4 player games a
    winner beats each loser and the losers draw among themselves). A draw counts as half a win
    each way. The model is Bradley–Terry on the Elo scale with a first-seat advantage ``h``
    (BayesElo's ``advantage`` for White): in a comparison of agent ``i`` against agent ``j``,

        P(i beats j) = 1 / (1 + 10 ** (-(r_i - r_j + h * (f_i - f_j)) / 400))

    where ``f`` is 1 for the agent in seat 0 (the first to play) and 0 otherwise. Ratings and
    ``h`` are the maximum-likelihood fit, found with :func:`scipy.optimize.minimize`
    (``trust-exact``: Newton steps with the exact gradient and Hessian). To keep the fit finite
    when an agent wins every game, each pair that met gets ``prior_draws`` virtual draws, and
    ``h`` one virtual drawn game decided by the seat alone (BayesElo's prior, default 1), which
    pulls the estimates gently towards each other and ``h`` towards 0. The scale is anchored:
    the first agent (``anchor``, index 0 by default) is fixed at 0 Elo.

    Intervals (``elo_ci95``) are Wald intervals of the fit, ``r +- 1.96 se``, with ``se`` from
    the inverse of the Hessian of the negative log-likelihood (the observed Fisher
    information); the anchor's is ``[0, 0]``. The likelihood of superiority of ``i`` over ``j``
    is ``LOS = Phi((r_i - r_j) / se(r_i - r_j))`` from the same covariance (BayesElo's ``los``
    table, here with the normal approximation).

    Optional bootstrap intervals (``elo_ci95_bootstrap``) come from
    :func:`scipy.stats.bootstrap` (percentile method, seeded), resampling whole deals (every
    seat rotation of one tile sequence, so the duplicate games stay together) with replacement
    within each group of agents.

Openskill
    For 3–4 player games, :class:`openskill.models.PlackettLuce` ratings updated game by game
    from the places, in game-id order (the update is sequential, so the order is fixed):
    ``mu``, ``sigma`` (the uncertainty) and ``ordinal = mu - 3 sigma`` (openskill's defaults:
    mu 25, sigma 25/3).

Pentanomial counts
    For 2-player tournaments, every deal played in both seat orders is a pair; its points for
    the first agent of the pair (0, 1/2, 1, 3/2, 2) give the counts ``[LL, LD+DL, LW+DD+WL,
    DW+WD, WW]`` and the paired Elo figures of :func:`taluva_ai.sprt.pentanomial_elo`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, stats

#: Elo points per natural-log unit of odds: ``400 / ln(10)``.
ELO_PER_NAT = 400.0 / math.log(10.0)

_Z95 = float(stats.norm.ppf(0.975))


def pairwise_scores(num_agents: int, agents: Sequence[int], places: Sequence[int]) -> np.ndarray:
    """``float64[n, n]``: the pairwise results of one game, ``W[i, j]`` = score of agent ``i``
    against agent ``j`` (1 a win, 0.5 a draw, 0 a loss or no meeting).

    Args:
        num_agents: ``n``, the number of agents in the tournament.
        agents: agent index per seat.
        places: place per seat (0 best, ties share a place); a game with any place < 0
            (undecided, e.g. truncated) gives all zeros.
    """
    return seat_pairwise_scores(num_agents, agents, places).sum(axis=0)


def seat_pairwise_scores(
    num_agents: int, agents: Sequence[int], places: Sequence[int]
) -> np.ndarray:
    """``float64[3, n, n]``: the pairwise results of one game split by first seat:
    ``W[e + 1, i, j]`` = score of ``i`` against ``j`` in the comparisons where ``f_i - f_j =
    e`` (``f`` = 1 for the agent in seat 0), i.e. ``W[2]`` when ``i`` sat first, ``W[0]`` when
    ``j`` did, ``W[1]`` when neither. Arguments as :func:`pairwise_scores`."""
    w = np.zeros((3, num_agents, num_agents), dtype=np.float64)
    if any(p < 0 for p in places):
        return w
    for s1 in range(len(agents)):
        for s2 in range(len(agents)):
            if s1 == s2:
                continue
            e = int(s1 == 0) - int(s2 == 0)
            i, j = agents[s1], agents[s2]
            if places[s1] < places[s2]:
                w[e + 1, i, j] += 1.0
            elif places[s1] == places[s2]:
                w[e + 1, i, j] += 0.5
    return w


@dataclass(frozen=True)
class EloFit:
    """A maximum-likelihood Elo fit (see the module docstring).

    Attributes:
        elo: ``float64[n]`` ratings in Elo points, the anchor at exactly 0.
        cov: ``float64[n, n]`` covariance of the ratings (Elo squared; the anchor's row and
            column are 0).
        first_seat: the first-seat advantage ``h`` in Elo points (0 when not fitted).
        first_seat_se: its standard error (Elo; 0 when not fitted).
    """

    elo: np.ndarray
    cov: np.ndarray
    first_seat: float
    first_seat_se: float

    @property
    def se(self) -> np.ndarray:
        """``float64[n]`` standard errors of the ratings (Elo)."""
        return np.sqrt(np.clip(np.diag(self.cov), 0.0, None))

    def ci95(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)``, each ``float64[n]``: Wald 95% intervals ``elo -+ 1.96 se``."""
        return self.elo - _Z95 * self.se, self.elo + _Z95 * self.se

    def los(self) -> np.ndarray:
        """``float64[n, n]``: ``LOS[i, j] = Phi((r_i - r_j) / se(r_i - r_j))``, the
        likelihood that ``i`` is stronger than ``j``; NaN on the diagonal."""
        r = self.elo
        v = np.diag(self.cov)
        var = v[:, None] + v[None, :] - 2.0 * self.cov
        diff = r[:, None] - r[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = diff / np.sqrt(np.clip(var, 0.0, None))
        out = np.asarray(stats.norm.cdf(z))
        np.fill_diagonal(out, np.nan)
        return out


def fit_elo(
    scores: np.ndarray,
    anchor: int = 0,
    prior_draws: float = 1.0,
    first_seat: bool = True,
    x0: np.ndarray | None = None,
) -> EloFit:
    """Maximum-likelihood Bradley–Terry ratings with a first-seat advantage term (see the
    module docstring).

    Args:
        scores: ``float64[3, n, n]`` summed :func:`seat_pairwise_scores`, or ``float64[n, n]``
            pairwise scores without seat information (then ``first_seat`` must be False).
        anchor: index of the agent fixed at 0 Elo.
        prior_draws: virtual draws added to every pair with at least one result, and the
            virtual drawn game of the first-seat term (>= 0).
        first_seat: fit the first-seat advantage ``h``.
        x0: optional ``float64[n]`` starting ratings (Elo).

    Returns:
        The :class:`EloFit`. Agents with no result against the anchor's component stay at 0.

    Raises:
        ValueError: ``scores`` of a wrong shape or with negative entries, ``anchor`` out of
            range, a negative ``prior_draws``, or 2-D ``scores`` with ``first_seat``.
    """
    w = np.array(scores, dtype=np.float64)
    if w.ndim == 2:
        if first_seat:
            raise ValueError("first_seat needs scores split by first seat (shape (3, n, n))")
        w = np.stack([np.zeros_like(w), w, np.zeros_like(w)])
    n = w.shape[-1]
    if w.ndim != 3 or w.shape != (3, n, n):
        raise ValueError(f"scores must have shape (3, n, n) or (n, n), got {np.shape(scores)}")
    if (w < 0).any():
        raise ValueError("scores must be non-negative")
    if not 0 <= anchor < n:
        raise ValueError(f"anchor {anchor} out of range for {n} agents")
    if prior_draws < 0:
        raise ValueError(f"prior_draws must be >= 0, got {prior_draws}")
    for e in range(3):
        np.fill_diagonal(w[e], 0.0)
    total = w.sum(axis=0)
    met = (total + total.T) > 0
    w[1] += 0.5 * prior_draws * met
    free = [i for i in range(n) if i != anchor]
    col = {a: c for c, a in enumerate(free)}
    k = len(free) + int(first_seat)
    rows: list[np.ndarray] = []
    weights: list[float] = []
    for e in range(3):
        ii, jj = np.nonzero(w[e])
        for i, j in zip(ii.tolist(), jj.tolist(), strict=True):
            x = np.zeros(k)
            if i in col:
                x[col[i]] += 1.0
            if j in col:
                x[col[j]] -= 1.0
            if first_seat:
                x[-1] = e - 1
            rows.append(x)
            weights.append(float(w[e, i, j]))
    if first_seat and prior_draws > 0:
        for sign in (1.0, -1.0):  # one virtual drawn game decided by the seat alone
            x = np.zeros(k)
            x[-1] = sign
            rows.append(x)
            weights.append(0.5 * prior_draws)
    elo = np.zeros(n)
    cov = np.zeros((n, n))
    if k == 0 or not rows:
        return EloFit(elo, cov, 0.0, 0.0)
    xm = np.array(rows)
    wv = np.array(weights)

    def nll(theta: np.ndarray) -> tuple[float, np.ndarray]:
        d = xm @ theta
        f = float((wv * np.logaddexp(0.0, -d)).sum())
        g = -(xm.T @ (wv * _sigmoid(-d)))
        return f, g

    def hess(theta: np.ndarray) -> np.ndarray:
        p = _sigmoid(xm @ theta)
        return np.asarray((xm.T * (wv * p * (1.0 - p))) @ xm)

    start = np.zeros(k)
    if x0 is not None:
        start[: len(free)] = np.asarray(x0, dtype=np.float64)[free] / ELO_PER_NAT
    res = optimize.minimize(nll, start, jac=True, hess=hess, method="trust-exact",
                            options={"gtol": 1e-9})
    theta = res.x
    elo[free] = theta[: len(free)] * ELO_PER_NAT
    inv = np.linalg.pinv(hess(theta)) * ELO_PER_NAT**2
    idx = np.array(free, dtype=np.int64)
    cov[np.ix_(idx, idx)] = inv[: len(free), : len(free)]
    if first_seat:
        return EloFit(elo, cov, float(theta[-1] * ELO_PER_NAT), float(math.sqrt(max(
            inv[-1, -1], 0.0))))
    return EloFit(elo, cov, 0.0, 0.0)


def bradley_terry_elo(
    wins: np.ndarray, anchor: int = 0, prior_draws: float = 1.0, x0: np.ndarray | None = None
) -> np.ndarray:
    """Maximum-likelihood Bradley–Terry ratings on the Elo scale, without a seat term
    (:func:`fit_elo` with ``first_seat=False``).

    Args:
        wins: ``float64[n, n]``, ``wins[i, j]`` = score of ``i`` against ``j`` (draws as 0.5
            each way); the diagonal is ignored.
        anchor, prior_draws, x0: as in :func:`fit_elo`.

    Returns:
        ``float64[n]`` ratings in Elo points, ``anchor`` at exactly 0.

    Raises:
        ValueError: ``wins`` is not square, has negative entries, or ``anchor`` is out of range.
    """
    w = np.asarray(wins, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"wins must be a square matrix, got shape {w.shape}")
    return fit_elo(w, anchor, prior_draws, first_seat=False, x0=x0).elo


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
    first_seat: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Elo point estimates and percentile bootstrap intervals.

    Args:
        per_game: ``float64[G, n, n]`` (each unit's :func:`pairwise_scores`) or ``float64[G,
            3, n, n]`` (:func:`seat_pairwise_scores`, with ``first_seat``); a unit is one
            game or the sum over the games of one deal, which are then resampled together.
        strata: ``int[G]``, the group (stratum) of each unit; units are resampled within it.
        anchor, prior_draws, first_seat: as in :func:`fit_elo`.
        bootstrap: number of resamples (0 skips the intervals: they are then NaN).
        seed: seeds the resampling (:func:`numpy.random.default_rng`).
        confidence: interval level.

    Returns:
        ``(elo, low, high)``, each ``float64[n]`` in Elo points.
    """
    pg = np.asarray(per_game, dtype=np.float64)
    n = pg.shape[-1]
    point = fit_elo(pg.sum(axis=0), anchor, prior_draws, first_seat)
    elo = point.elo
    low = np.full(n, np.nan)
    high = np.full(n, np.nan)
    st = np.asarray(strata)
    groups = [np.flatnonzero(st == g) for g in sorted(set(st.tolist()))]
    if bootstrap <= 0 or not groups or min(len(g) for g in groups) < 2:
        return elo, low, high
    free = np.array([i for i in range(n) if i != anchor], dtype=np.int64)

    def statistic(*samples: np.ndarray) -> np.ndarray:
        idx = np.concatenate([np.asarray(s, dtype=np.int64) for s in samples])
        return fit_elo(pg[idx].sum(axis=0), anchor, prior_draws, first_seat, x0=elo).elo[free]

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


def pair_points(places: Sequence[int], seat: int) -> float:
    """Points of ``seat`` in a 2-player game from its places: 1 a win, 0.5 a draw, 0 a
    loss."""
    other = places[1 - seat]
    return 1.0 if places[seat] < other else 0.5 if places[seat] == other else 0.0


def tournament_table(
    agent_specs: Sequence[str],
    games: Sequence[dict[str, Any]],
    players_per_game: int,
    bootstrap: int = 0,
    seed: int = 0,
    prior_draws: float = 1.0,
    sprt: Any = None,
    sprt_agents: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """The results table of a tournament (the schema is documented in docs/tournaments.md).

    Args:
        agent_specs: the agents, in tournament order (the first is the Elo anchor).
        games: in game-id order, each ``{"id": str, "group": [specs], "seats": [spec per
            seat], "places": [...], "winners": [...], "end_reason": str}``, optionally
            ``"deal": int`` (the games of one deal and group are one duplicate set: a
            pentanomial pair for 2 players, one bootstrap unit) and ``"forfeit": {"seat",
            "reason", "detail", "ply"}``.
        players_per_game: 2, 3 or 4.
        bootstrap: bootstrap resamples for ``elo_ci95_bootstrap`` (0: none).
        seed: seeds the bootstrap.
        prior_draws: for :func:`fit_elo`.
        sprt: an :class:`taluva_ai.sprt.SPRT`, for a 2-agent, 2-player tournament.
        sprt_agents: ``(baseline, candidate)`` of the SPRT; the counts are the candidate's.

    Returns:
        A JSON-ready dict: ``games``, ``end_reasons``, ``forfeits``, ``pairs`` (head to head;
        with ``pentanomial`` and paired Elo figures for 2 players), ``groups`` (3–4 players),
        ``seats`` (win rate per seat), ``agents`` (``elo``, ``elo_ci95``, ``elo_se``, games,
        wins, draws, losses, ``score``, per-seat win rates, ``openskill`` for 3–4 players),
        ``first_seat``, ``los``, ``score_matrix``, ``elo_anchor``, ``elo_method`` and
        ``sprt`` when asked. Elo values are rounded to 0.1, scores and probabilities to
        1e-4, openskill to 1e-3.

    Raises:
        ValueError: a game that does not fit the tournament (an unknown agent, not
            ``players_per_game`` seats, places or winners that do not match the seats); the
            message names the game (its ``id``, else its index).
    """
    specs = list(agent_specs)
    for gi, g in enumerate(games):
        _check_game(g, gi, specs, players_per_game)
    n = len(specs)
    k = players_per_game
    index = {s: i for i, s in enumerate(specs)}
    per_game = np.zeros((len(games), 3, n, n))
    group_keys: dict[tuple[str, ...], int] = {}
    reasons: dict[str, int] = {}
    os_games: list[tuple[list[int], list[int]]] = []
    pair_stats: dict[tuple[int, int], dict[str, int]] = {}
    group_stats: dict[int, dict[str, Any]] = {}
    seat_games = [0] * k
    seat_wins = [0] * k
    agent_seat = [[[0, 0] for _ in range(k)] for _ in range(n)]  # [decided games, wins]
    agent_games = [0] * n
    agent_wins = [0] * n
    agent_draws = [0] * n
    forfeits = []
    units: dict[tuple[int, Any], list[int]] = {}
    for gi, g in enumerate(games):
        key = tuple(g["group"])
        stratum = group_keys.setdefault(key, len(group_keys))
        units.setdefault((stratum, g.get("deal", ("game", gi))), []).append(gi)
        seats = [index[s] for s in g["seats"]]
        places = [int(p) for p in g["places"]]
        decided = bool(g["winners"]) and all(p >= 0 for p in places)
        reasons[g["end_reason"]] = reasons.get(g["end_reason"], 0) + 1
        if g.get("forfeit"):
            f = g["forfeit"]
            forfeits.append({"id": g.get("id", gi), "agent": g["seats"][f["seat"]], **f})
        if decided:
            per_game[gi] = seat_pairwise_scores(n, seats, places)
        os_games.append((seats, places if decided else [-1] * len(places)))
        gs = group_stats.setdefault(
            stratum, {"agents": list(key), "games": 0, "wins": dict.fromkeys(key, 0),
                      "draws": 0, "truncated": 0})
        gs["games"] += 1
        for a in seats:
            agent_games[a] += 1
        if not decided:
            gs["truncated"] += 1
        else:
            for s in range(k):
                won = s in g["winners"]
                seat_games[s] += 1
                seat_wins[s] += won
                agent_seat[seats[s]][s][0] += 1
                agent_seat[seats[s]][s][1] += won
            for w in g["winners"]:
                gs["wins"][specs[seats[w]]] += 1
                agent_wins[seats[w]] += 1
                if len(g["winners"]) > 1:
                    agent_draws[seats[w]] += 1
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

    pentas = _pentanomials(specs, games, index) if k == 2 else {}
    pairs = []
    for (i, j), ps in sorted(pair_stats.items()):
        dec = ps["games"] - ps["truncated"]
        entry: dict[str, Any] = {
            "agents": [specs[i], specs[j]],
            "games": ps["games"],
            "wins": {specs[i]: ps["wi"], specs[j]: ps["wj"]},
            "draws": ps["draws"],
            "truncated": ps["truncated"],
            "score": {
                specs[i]: _round((ps["wi"] + 0.5 * ps["draws"]) / dec, 4) if dec else None,
                specs[j]: _round((ps["wj"] + 0.5 * ps["draws"]) / dec, 4) if dec else None,
            },
        }
        if k == 2:
            counts, incomplete = pentas.get((i, j), ([0] * 5, 0))
            entry["pentanomial"] = counts
            entry["incomplete_pairs"] = incomplete
            entry["paired"] = _round_dict(_pentanomial_elo(counts))
        pairs.append(entry)

    fit = fit_elo(per_game.sum(axis=0), anchor=0, prior_draws=prior_draws, first_seat=True)
    low, high = fit.ci95()
    se = fit.se
    boot_lo = boot_hi = None
    if bootstrap > 0:
        unit_keys = sorted(units, key=lambda u: units[u][0])
        per_unit = np.stack([per_game[units[u]].sum(axis=0) for u in unit_keys]) \
            if unit_keys else np.zeros((0, 3, n, n))
        _, boot_lo, boot_hi = elo_with_intervals(
            per_unit, [u[0] for u in unit_keys], anchor=0, prior_draws=prior_draws,
            bootstrap=bootstrap, seed=seed, first_seat=True)
    los = fit.los()
    total = per_game.sum(axis=(0, 1))
    agents: dict[str, Any] = {}
    osk = openskill_ratings(n, os_games) if k > 2 else None
    for i, spec in enumerate(specs):
        met = total[i].sum() + total[:, i].sum()
        decided_i = sum(agent_seat[i][t][0] for t in range(k))
        entry = {
            "elo": _round(fit.elo[i], 1),
            "elo_ci95": [_round(low[i], 1), _round(high[i], 1)],
            "elo_se": _round(se[i], 1),
            "games": agent_games[i],
            "wins": agent_wins[i],
            "draws": agent_draws[i],
            "losses": decided_i - agent_wins[i],
            "score": _round(total[i].sum() / met, 4) if met else None,
            "seats": [
                {"games": agent_seat[i][t][0], "wins": agent_seat[i][t][1],
                 "win_rate": _ratio(agent_seat[i][t][1], agent_seat[i][t][0])}
                for t in range(k)
            ],
        }
        if boot_lo is not None and boot_hi is not None:
            entry["elo_ci95_bootstrap"] = [_round(boot_lo[i], 1), _round(boot_hi[i], 1)]
        if osk is not None:
            entry["openskill"] = {key: _round(v, 3) for key, v in osk[i].items()}
        agents[spec] = entry
    table: dict[str, Any] = {
        "games": len(games),
        "end_reasons": dict(sorted(reasons.items())),
        "forfeits": forfeits,
        "pairs": pairs,
    }
    if k > 2:
        table["groups"] = [group_stats[g] for g in sorted(group_stats)]
    table["seats"] = [{"seat": t, "games": seat_games[t], "wins": seat_wins[t],
                       "win_rate": _ratio(seat_wins[t], seat_games[t])} for t in range(k)]
    table["agents"] = agents
    h_lo, h_hi = fit.first_seat - _Z95 * fit.first_seat_se, fit.first_seat + _Z95 * \
        fit.first_seat_se
    table["first_seat"] = {"elo": _round(fit.first_seat, 1), "elo_ci95": [_round(h_lo, 1),
                                                                          _round(h_hi, 1)]}
    table["los"] = {specs[i]: {specs[j]: _round(los[i, j], 4) for j in range(n) if j != i}
                    for i in range(n)}
    scores = [[None if i == j or total[i, j] + total[j, i] == 0 else
               _round(total[i, j] / (total[i, j] + total[j, i]), 4) for j in range(n)]
              for i in range(n)]
    table["score_matrix"] = {"agents": specs, "score": scores}
    table["elo_anchor"] = specs[0]
    method = (
        f"Bradley-Terry maximum likelihood on the Elo scale with a first-seat advantage term, "
        f"{specs[0]} fixed at 0, {prior_draws:g} virtual draw(s) per pair; Wald 95% intervals "
        "and LOS from the observed information"
    )
    if bootstrap > 0:
        method += (f"; elo_ci95_bootstrap: 95% percentile bootstrap over deals within each "
                   f"group ({bootstrap} resamples, seed {seed})")
    table["elo_method"] = method
    if sprt is not None:
        if sprt_agents is None:
            raise ValueError("sprt needs sprt_agents (baseline, candidate)")
        table["sprt"] = sprt_table(sprt, games, *sprt_agents)
    return table


def sprt_table(sprt: Any, games: Sequence[dict[str, Any]], baseline: str, candidate: str
               ) -> dict[str, Any]:
    """The ``sprt`` section of a table: settings, the candidate's pentanomial counts over the
    complete pairs of ``games``, LLR, bounds, and the decision (``"H1"``: the candidate is
    stronger by ``elo1``, ``"H0"``: not by ``elo1``; None: not decided)."""
    counts, incomplete = _pentanomials([baseline, candidate], games,
                                       {baseline: 0, candidate: 1}).get((0, 1), ([0] * 5, 0))
    flipped = counts[::-1]  # the pair is (baseline, candidate): the candidate's points
    llr = sprt.llr(flipped)
    return {
        **sprt.to_json(),
        "baseline": baseline,
        "candidate": candidate,
        "pentanomial": flipped,
        "incomplete_pairs": incomplete,
        "llr": round(llr, 4),
        "lower_bound": round(sprt.lower_bound, 4),
        "upper_bound": round(sprt.upper_bound, 4),
        "decision": sprt.decision(llr),
        "paired": _round_dict(_pentanomial_elo(flipped)),
    }


def _pentanomials(
    specs: Sequence[str], games: Sequence[dict[str, Any]], index: dict[str, int]
) -> dict[tuple[int, int], tuple[list[int], int]]:
    """Per pair ``(i, j)``, ``i < j``: the pentanomial counts of agent ``i`` over the deals
    played in both seat orders with both games decided, and the number of deals with an
    undecided (truncated) game. Games without a ``deal`` are not paired."""
    by_deal: dict[tuple[tuple[str, ...], int], list[dict[str, Any]]] = {}
    for g in games:
        if "deal" in g and all(s in index for s in g["seats"]):
            by_deal.setdefault((tuple(g["group"]), int(g["deal"])), []).append(g)
    out: dict[tuple[int, int], tuple[list[int], int]] = {}
    for (_, _), gs in sorted(by_deal.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        i, j = sorted(index[s] for s in gs[0]["seats"])
        counts, incomplete = out.setdefault((i, j), ([0] * 5, 0))
        if len(gs) != 2 or {tuple(g["seats"]) for g in gs} != {(specs[i], specs[j]),
                                                                (specs[j], specs[i])}:
            continue
        if any(not g["winners"] or any(p < 0 for p in g["places"]) for g in gs):
            out[(i, j)] = (counts, incomplete + 1)
            continue
        pts = sum(pair_points(g["places"], g["seats"].index(specs[i])) for g in gs)
        counts[round(2 * pts)] += 1
    return out


def _pentanomial_elo(counts: Sequence[int]) -> dict[str, Any]:
    from taluva_ai.sprt import pentanomial_elo

    return pentanomial_elo(counts)


def _round_dict(d: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, v in d.items():
        digits = 4 if key in ("score", "los") else 1
        if isinstance(v, list):
            out[key] = [None if x is None else _round(x, digits) for x in v]
        elif isinstance(v, float):
            out[key] = _round(v, digits)
        else:
            out[key] = v
    return out


def _ratio(a: int, b: int) -> float | None:
    return _round(a / b, 4) if b else None


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
    deal = g.get("deal", 0)
    if not isinstance(deal, (int, np.integer)) or isinstance(deal, bool) or deal < 0:
        raise ValueError(f"{name}: deal {deal!r} is not an integer >= 0")
    f = g.get("forfeit")
    if f is not None and (not isinstance(f, dict) or not isinstance(f.get("seat"), int)
                          or not 0 <= f["seat"] < k):
        raise ValueError(f"{name}: forfeit {f!r} does not name a seat 0..{k - 1}")


def _round(x: float | None, digits: int) -> float | None:
    """``round(x, digits)`` as a float; None for None and NaN (JSON has no NaN)."""
    if x is None or not math.isfinite(float(x)):
        return None
    v = round(float(x), digits)
    return 0.0 if v == 0 else v  # no "-0.0" in the table
