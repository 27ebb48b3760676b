"""Evaluation tournaments (issue 6): statistics against known values, SPRT against the
published fishtest formulas (expected values computed here independently), forfeits and time
limits, resume after a hard kill, determinism across concurrency, config files, reports."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import linalg, optimize, stats

from taluva_ai import make_game
from taluva_ai.agents import make_agent
from taluva_ai.cli import main
from taluva_ai.ratings import fit_elo, seat_pairwise_scores, tournament_table
from taluva_ai.records import replay_record
from taluva_ai.sprt import SPRT, llr_logistic, llr_normalized, parse_sprt, pentanomial_elo
from taluva_ai.tournament import (
    deal_seed,
    play_game,
    read_tournament_file,
    run_tournament,
    schedule,
    time_budget,
)
from tests.helpers import kill_running, spawned_children, still_running

ROOT = Path(__file__).resolve().parents[1]
C = 400 / math.log(10)  # Elo per nat
Z95 = 1.959963984540054


# -- Elo: known values -------------------------------------------------------------------------


def test_a_75_percent_score_is_190_8_elo_with_its_wald_interval_and_los() -> None:
    w = np.zeros((3, 2, 2))
    w[1, 1, 0], w[1, 0, 1] = 75, 25  # agent 1 scores 75 of 100 against agent 0
    fit = fit_elo(w, prior_draws=0.0, first_seat=False)
    assert fit.elo[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert round(fit.elo[1], 1) == 190.8
    se = C / math.sqrt(100 * 0.75 * 0.25)  # inverse Fisher information of the logit
    assert fit.se[1] == pytest.approx(se, rel=1e-6)
    lo, hi = fit.ci95()
    assert (lo[1], hi[1]) == pytest.approx((fit.elo[1] - Z95 * se, fit.elo[1] + Z95 * se))
    assert fit.los()[1, 0] == pytest.approx(stats.norm.cdf(fit.elo[1] / se), rel=1e-9)
    # draws count half: 50 wins and 50 draws are a 75% score too
    d = np.zeros((3, 2, 2))
    d[1, 1, 0], d[1, 0, 1] = 75, 25
    assert fit_elo(d, prior_draws=0.0, first_seat=False).elo[1] == pytest.approx(fit.elo[1])


def test_the_first_seat_term_is_fitted_with_the_ratings() -> None:
    # agent 1 first: wins 45 of 50; agent 0 first: wins 30 of 50. Closed form:
    # r + h = logit(0.9), h - r = logit(0.6)
    w = np.zeros((3, 2, 2))
    w[2, 1, 0], w[0, 0, 1] = 45, 5
    w[2, 0, 1], w[0, 1, 0] = 30, 20
    fit = fit_elo(w, prior_draws=0.0)
    logit = lambda p: C * math.log(p / (1 - p))  # noqa: E731
    assert fit.elo[1] == pytest.approx((logit(0.9) - logit(0.6)) / 2, abs=1e-5)
    assert fit.first_seat == pytest.approx((logit(0.9) + logit(0.6)) / 2, abs=1e-5)
    # standard errors: the inverse of the Fisher information of (r, h) in nats
    v = [50 * 0.9 * 0.1, 50 * 0.6 * 0.4]  # binomial information of each logit
    info = np.array([[v[0] + v[1], v[0] - v[1]], [v[0] - v[1], v[0] + v[1]]])
    cov = np.linalg.inv(info) * C**2
    assert fit.se[1] == pytest.approx(math.sqrt(cov[0, 0]), rel=1e-6)
    assert fit.first_seat_se == pytest.approx(math.sqrt(cov[1, 1]), rel=1e-6)


def test_seat_pairwise_scores_split_comparisons_by_first_seat() -> None:
    # seats hold agents 2, 0, 1; agent 2 (seat 0) wins, agents 0 and 1 share second place
    w = seat_pairwise_scores(3, [2, 0, 1], [0, 1, 1])
    assert w[2].tolist() == [[0, 0, 0], [0, 0, 0], [1, 1, 0]]  # seat 0 against the others
    assert w[1].tolist() == [[0, 0.5, 0], [0.5, 0, 0], [0, 0, 0]]  # neither first
    assert w[0].tolist() == [[0, 0, 0], [0, 0, 0], [0, 0, 0]]  # nobody beat seat 0


def test_pentanomial_elo_of_a_75_percent_score() -> None:
    r = pentanomial_elo([0, 0, 50, 0, 50])  # pairs of 1 and 2 points: 75%
    assert r["pairs"] == 100
    assert r["elo"] == pytest.approx(190.8, abs=0.1)
    # independently: regularized counts, per-game mean, variance of the pair mean
    n = np.array([1e-3, 1e-3, 50, 1e-3, 50])
    a = np.arange(5) / 4
    p = n / n.sum()
    mu = (p * a).sum()
    var = (p * (a - mu) ** 2).sum()
    se = math.sqrt(var / n.sum())
    assert r["score"] == pytest.approx(mu)
    assert r["elo"] == pytest.approx(-400 * math.log10(1 / mu - 1))
    assert r["elo_ci95"][0] == pytest.approx(-400 * math.log10(1 / (mu - Z95 * se) - 1))
    assert r["los"] == pytest.approx(stats.norm.cdf((mu - 0.5) / se))
    assert r["nelo"] == pytest.approx((mu - 0.5) / math.sqrt(2 * var) * 800 / math.log(10))


def _game(gid: str, deal: int, seats: list[str], places: list[int]) -> dict[str, Any]:
    winners = [s for s, p in enumerate(places) if p == 0]
    return {"id": gid, "group": sorted(seats), "seats": seats, "deal": deal,
            "places": places, "winners": winners, "end_reason": "tiles_out"}


def test_table_pentanomial_seats_and_scores_of_hand_made_games() -> None:
    games = [
        _game("0-0", 0, ["a", "b"], [0, 1]), _game("0-1", 0, ["b", "a"], [1, 0]),  # a: WW
        _game("1-0", 1, ["a", "b"], [0, 1]), _game("1-1", 1, ["b", "a"], [0, 1]),  # a: WL
        _game("2-0", 2, ["a", "b"], [0, 0]), _game("2-1", 2, ["b", "a"], [0, 1]),  # a: DL
        _game("3-0", 3, ["a", "b"], [1, 0]), _game("3-1", 3, ["b", "a"], [0, 1]),  # a: LL
        _game("4-0", 4, ["a", "b"], [-1, -1]), _game("4-1", 4, ["b", "a"], [0, 1]),
    ]
    games[8]["winners"], games[8]["end_reason"] = [], "truncated"
    t = tournament_table(["a", "b"], games, 2)
    pair = t["pairs"][0]
    assert pair["pentanomial"] == [1, 1, 1, 0, 1]  # LL, LD, WL, -, WW
    assert pair["incomplete_pairs"] == 1
    assert pair["wins"] == {"a": 3, "b": 5} and pair["draws"] == 1 and pair["truncated"] == 1
    assert pair["score"] == {"a": round(3.5 / 9, 4), "b": round(5.5 / 9, 4)}
    assert t["seats"] == [{"seat": 0, "games": 9, "wins": 7, "win_rate": round(7 / 9, 4)},
                          {"seat": 1, "games": 9, "wins": 3, "win_rate": round(3 / 9, 4)}]
    assert t["agents"]["a"]["seats"] == [{"games": 4, "wins": 3, "win_rate": 0.75},
                                         {"games": 5, "wins": 1, "win_rate": 0.2}]
    assert t["score_matrix"] == {"agents": ["a", "b"], "score": [[None, 0.3889],
                                                                 [0.6111, None]]}
    assert t["los"]["a"]["b"] == pytest.approx(1 - t["los"]["b"]["a"], abs=1e-4)
    assert t["agents"]["a"]["elo_ci95"] == [0.0, 0.0]
    assert t["first_seat"]["elo"] > 0  # seat 0 won 7 of 9
    boot = tournament_table(["a", "b"], games, 2, bootstrap=200, seed=1)
    lo, hi = boot["agents"]["b"]["elo_ci95_bootstrap"]
    assert lo < boot["agents"]["b"]["elo"] < hi
    assert boot["agents"]["a"]["elo_ci95_bootstrap"] == [0.0, 0.0]
    assert boot == tournament_table(["a", "b"], games, 2, bootstrap=200, seed=1)  # seeded


def test_a_sweep_is_marked_in_both_reports_as_having_no_finite_elo() -> None:
    """20-0 over 10 pairs: the paired Elo comes from fishtest's regularisation, not the games;
    the text table and summary.md say so, and a pair that is not a sweep is not marked."""
    from taluva_ai.reports import format_table, markdown_summary
    from taluva_ai.sprt import SWEEP_NOTE, sweep

    assert (sweep([0, 0, 0, 0, 10]), sweep([10, 0, 0, 0, 0]), sweep([1, 0, 0, 0, 9]),
            sweep([0, 0, 0]), sweep([0, 0, 4])) == ("won", "lost", None, None, "won")
    games = [_game(f"{d}-{k}", d, seats, [0, 1] if seats[0] == "a" else [1, 0])
             for d in range(10) for k, seats in enumerate((["a", "b"], ["b", "a"]))]
    t = tournament_table(["a", "b"], games, 2)
    assert t["pairs"][0]["pentanomial"] == [0, 0, 0, 0, 10]
    text = format_table(t)
    assert f"    (a sweep: {SWEEP_NOTE})" in text.splitlines()
    # the pairs' classes named as in summary.md's header (PENTANOMIAL_LABELS)
    assert "    pairs (LL LD+DL LW+DD+WL DW+WD WW, the first's): 0 0 0 0 10; paired Elo" in text
    md = markdown_summary(t, plots=False)
    assert f"(sweep): {SWEEP_NOTE}." in md.splitlines()
    assert "| A | B | games | A wins | draws | B wins | score A |" in md
    assert sum(" (sweep) |" in x for x in md.splitlines()) == 1
    games[-1]["places"], games[-1]["winners"] = [0, 1], [0]  # b wins the last game: no sweep
    t = tournament_table(["a", "b"], games, 2)
    assert SWEEP_NOTE not in format_table(t) and "sweep" not in markdown_summary(t, plots=False)


# -- SPRT: fishtest's formulas, checked against an independent computation ----------------------


def _independent_llr(counts: list[int], model: str, elo0: float, elo1: float) -> float:
    """LLR by direct constrained maximum likelihood (SLSQP), not by the secular equation:
    regularized counts (0 -> 1e-3), scores i / (len - 1); under H the expected score is
    L(elo) (logistic) or the t-value (mu - 1/2) / sigma is nelo / (800 / ln 10), times
    sqrt(2) for pairs (normalized)."""
    n = np.array([c if c else 1e-3 for c in counts], dtype=np.float64)
    a = np.arange(n.size) / (n.size - 1)

    def mle(elo: float) -> np.ndarray:
        if model == "logistic":
            s = 1 / (1 + 10 ** (-elo / 400))

            def cons(q: np.ndarray) -> float:
                return float((q * a).sum() - s)
        else:
            t = elo / (800 / math.log(10)) * (math.sqrt(2) if n.size == 5 else 1.0)

            def cons(q: np.ndarray) -> float:
                mu = (q * a).sum()
                return float(mu - 0.5 - t * math.sqrt((q * (a - mu) ** 2).sum()))

        res = optimize.minimize(
            lambda q: -(n * np.log(q)).sum(), n / n.sum(), method="SLSQP",
            bounds=[(1e-15, 1.0)] * n.size,
            constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1.0},
                         {"type": "eq", "fun": cons}],
            options={"ftol": 1e-15, "maxiter": 500})
        assert res.success, res.message
        return np.asarray(res.x)

    return float((n * (np.log(mle(elo1)) - np.log(mle(elo0)))).sum())


@pytest.mark.parametrize(("counts", "model", "elo0", "elo1"), [
    ([39, 2226, 31451, 2412, 40], "normalized", 0.764, 3.439),  # fishtest's own example
    ([39, 2226, 31451, 2412, 40], "logistic", 0.2, 0.9),
    ([10789, 19328, 33806, 19402, 10543], "logistic", -3.0, 1.0),
    ([3, 10, 21, 14, 2], "normalized", 0.0, 10.0),
    ([0, 4, 9, 12, 5], "logistic", 0.0, 50.0),  # a zero count: regularized
    ([40, 25, 55], "normalized", -5.0, 5.0),  # trinomial L, D, W
])
def test_llr_matches_an_independent_maximum_likelihood(counts: list[int], model: str,
                                                       elo0: float, elo1: float) -> None:
    mine = (llr_logistic if model == "logistic" else llr_normalized)(elo0, elo1, counts)
    assert mine == pytest.approx(_independent_llr(counts, model, elo0, elo1), abs=2e-6)


def test_sprt_bounds_and_parsing() -> None:
    s = parse_sprt(["elo0=0", "elo1=10", "alpha=0.05", "beta=0.1"])
    assert s == SPRT(0.0, 10.0, 0.05, 0.1, "normalized")
    assert s.lower_bound == pytest.approx(math.log(0.1 / 0.95))
    assert s.upper_bound == pytest.approx(math.log(0.9 / 0.05))
    assert s.llr([0, 0, 0, 0, 0]) == 0.0
    for tokens, message in [(["elo0=0"], "elo1 missing"), (["elo0=1", "elo1=1"], "elo0 < elo1"),
                            (["elo0=0", "elo1=5", "alpha=0.7", "beta=0.5"], "alpha + beta"),
                            (["elo0=0", "elo1=5", "model=bayes"], "model must be one of"),
                            (["elo0=0", "elo1=x"], "elo1='x' is not a number"),
                            (["elo0", "elo1=5"], "is not key=value"),
                            (["elo0=0", "elo1=5", "gamma=1"], "unknown key 'gamma'"),
                            (["elo0=0", "elo1=400"], "sprt: normalized Elo bounds must lie "
                             "within +-232 (the largest t-value paired scores can express), "
                             "got elo0=0, elo1=400; for large Elo differences use "
                             "model=logistic"),
                            (["elo0=-232", "elo1=0"], "within +-232")]:
        with pytest.raises(ValueError, match=re.escape(message)):
            parse_sprt(tokens)


def test_sprt_normalized_bounds_up_to_the_limit_give_a_number_for_any_counts() -> None:
    """Bounds just inside NELO_LIMIT give a finite LLR even for one-sided counts (they once
    raised 'math domain error' from the fixed-point iteration); the same bounds in the
    logistic model are accepted, and the iteration's own refusal is one clear line."""
    from taluva_ai.sprt import NELO_LIMIT, NELO_PER_T, mle_t_value, pentanomial_pdf

    assert pytest.approx(231.6237, abs=1e-4) == NELO_LIMIT
    s = SPRT(0.0, 231.0)
    for counts in ([0, 0, 1000, 0, 0], [0, 0, 0, 0, 1000], [1000, 0, 0, 0, 0], [5, 0, 0, 0, 5],
                   [0, 1000, 0], [3, 0, 0]):
        assert math.isfinite(s.llr(counts))
    assert SPRT(0.0, 400.0, model="logistic").llr([0, 0, 0, 0, 10]) > 0
    _, a, p = pentanomial_pdf([1, 1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"^normalized Elo: a t-value of 1\.6\d* is beyond"):
        mle_t_value(a, p, 0.5, 400 / NELO_PER_T * math.sqrt(2))


def _newton_llr_logistic(counts: list[int], elo0: float, elo1: float) -> float:
    """The logistic LLR by damped Newton steps on the primal problem, in the null space of
    its linear constraints (sum q = 1, sum q a = s): a convex problem, solved here without the
    secular equation."""
    n = np.array([c if c else 1e-3 for c in counts], dtype=np.float64)
    a = np.arange(n.size) / (n.size - 1)
    p = n / n.sum()
    basis = linalg.null_space(np.vstack([np.ones(n.size), a]))

    def mle(s: float) -> np.ndarray:
        k = n.size - 1 if s > 0.5 else 0  # a feasible interior start: uniform + one extreme
        w = (s - 0.5) / (a[k] - 0.5)
        q0 = (1 - w) / n.size + w * (np.arange(n.size) == k)

        def f(y: np.ndarray) -> float:
            q = q0 + basis @ y
            return math.inf if (q <= 0).any() else float(-(p * np.log(q)).sum())

        y = np.zeros(basis.shape[1])
        for _ in range(200):
            q = q0 + basis @ y
            g = -basis.T @ (p / q)
            if np.abs(g).max() < 1e-14:
                break
            d = np.linalg.solve(basis.T @ ((p / q**2)[:, None] * basis), -g)
            t = 1.0
            while f(y + t * d) > f(y) + 1e-4 * t * (g @ d) and t > 1e-20:
                t /= 2
            y = y + t * d
        return np.asarray(q0 + basis @ y)

    s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
    return float((n * (np.log(mle(s1)) - np.log(mle(s0)))).sum())


def _first_decision(pairs: list[int], llr_of: Any) -> tuple[int, str, list[float]]:
    lo, hi = math.log(0.05 / 0.95), math.log(0.95 / 0.05)  # Wald's bounds, alpha = beta = 5%
    counts = [0] * 5
    seen = []
    for x in pairs:
        counts[x] += 1
        seen.append(llr_of(counts))
        if seen[-1] >= hi or seen[-1] <= lo:
            return len(seen), "H1" if seen[-1] >= hi else "H0", seen
    raise AssertionError("no decision in the stream")


@pytest.mark.parametrize(("probs", "want"), [
    ([0.05, 0.15, 0.35, 0.3, 0.15], "H1"),
    ([0.1, 0.25, 0.4, 0.2, 0.05], "H0"),
])
def test_sprt_decisions_on_synthetic_streams_match_the_formulas(probs: list[float],
                                                                want: str) -> None:
    sprt = SPRT(0.0, 40.0, 0.05, 0.05, "logistic")
    pairs = [int(x) for x in np.random.default_rng(7).choice(5, size=400, p=probs)]
    n, decision, llrs = _first_decision(pairs, sprt.llr)
    n2, decision2, llrs2 = _first_decision(pairs, lambda c: _newton_llr_logistic(c, 0.0, 40.0))
    assert (n, decision) == (n2, decision2) == (n, want)
    assert llrs == pytest.approx(llrs2, abs=1e-9)  # the same LLR after every pair
    assert sprt.decision(llrs[-1]) == want and sprt.decision(llrs[-2]) is None


def test_sprt_decision_on_a_stream_in_normalized_elo() -> None:
    sprt = SPRT(0.0, 25.0)  # normalized, alpha = beta = 0.05
    probs = [0.05, 0.15, 0.35, 0.3, 0.15]
    pairs = [int(x) for x in np.random.default_rng(3).choice(5, size=400, p=probs)]
    n, decision, llrs = _first_decision(pairs, sprt.llr)
    assert decision == "H1"
    counts = np.bincount(pairs[:n], minlength=5).tolist()
    before = np.bincount(pairs[: n - 1], minlength=5).tolist()
    assert _independent_llr(counts, "normalized", 0.0, 25.0) == pytest.approx(llrs[-1],
                                                                               abs=1e-5)
    assert _independent_llr(before, "normalized", 0.0, 25.0) == pytest.approx(llrs[-2],
                                                                               abs=1e-5)
    assert llrs[-1] >= sprt.upper_bound > llrs[-2]


# -- agents' budgets, forfeits -------------------------------------------------------------------

BAD = "misbehaving_agents:"


def test_time_budget_of_a_spec() -> None:
    assert time_budget("mcts:sims=10,time=0.25") == 0.25
    assert time_budget(f"{BAD}Sleeper:time=2") == 2.0
    assert time_budget("greedy:epsilon=0.1") is None and time_budget("random") is None
    # a first item without key= (the positional parameter of az and openspiel)
    assert time_budget("az:builtin,rollout=greedy,lambda=0.5") is None
    assert time_budget("az:builtin,sims=50,time=1.5") == 1.5
    assert time_budget("openspiel:mcts,sims=400") is None
    with pytest.raises(ValueError, match="time must be a positive number"):
        time_budget("mcts:time=-1")


def test_play_game_forfeits_an_exception_an_illegal_action_and_a_late_move() -> None:
    game = make_game("taluva", tiles_per_player=3)
    res = play_game(game, [make_agent(f"{BAD}Crasher:at=2"), make_agent("random")], 4,
                    forfeits=True)
    assert res.end_reason == "forfeit" and res.winners == (1,) and res.places == (1, 0)
    assert res.returns == (-1.0, 1.0)
    f = res.forfeit
    assert f is not None and (f.seat, f.reason, f.ply) == (0, "exception", 7)
    assert f.detail == "RuntimeError: boom at decision 2"
    assert res.moves == (3, 2) and res.plies == 7

    res = play_game(game, [make_agent("random"), make_agent(f"{BAD}Illegal:at=1")], 4,
                    forfeits=True)
    assert res.forfeit is not None and res.forfeit.reason == "illegal_action"
    assert res.forfeit.seat == 1 and res.forfeit.ply == 5
    assert "agent 'misbehaving_agents:Illegal:at=1' (seat 1) chose" in res.forfeit.detail

    res = play_game(game, [make_agent("random"), make_agent(f"{BAD}BadReset")], 4,
                    forfeits=True)
    assert res.forfeit is not None and res.forfeit.detail == "reset: ValueError: cannot reset"
    assert (res.forfeit.seat, res.forfeit.ply, res.plies) == (1, 0, 0)

    sleeper = f"{BAD}Sleeper:at=1,time=0.05,sleep=3"
    t0 = time.perf_counter()
    res = play_game(game, [make_agent(sleeper), make_agent("random")], 4,
                    time_limits=[0.05, None], time_margin=0.1)
    took = time.perf_counter() - t0
    assert res.forfeit is not None and res.forfeit.reason == "time" and res.forfeit.ply == 2
    assert res.forfeit.detail.startswith("a move was stopped after 0.1")
    assert res.forfeit.detail.endswith("the budget is 0.05 s and the margin 0.1 s")
    assert took < 2.0  # stopped at the limit, not after the 3 s sleep
    assert 0.15 <= res.max_move_s[0] < 1.0
    with pytest.raises(RuntimeError, match="boom"):  # outside tournaments errors propagate
        play_game(game, [make_agent(f"{BAD}Crasher:at=0"), make_agent("random")], 4)


def test_a_rerun_says_what_it_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kw: dict[str, Any] = {"rules": {"tiles_per_player": 3}, "plots": False}
    run_tournament(["random", "greedy"], 4, tmp_path, **kw)
    assert "kept from an earlier run" not in capsys.readouterr().err
    (tmp_path / "games" / "000-0001-1.jsonl").unlink()  # one game to play again
    run_tournament(["random", "greedy"], 4, tmp_path, **kw)
    err = capsys.readouterr().err
    assert f"{tmp_path}: 3 of 4 games kept from an earlier run (their records checked); 1 to " \
        "play\n" in err
    run_tournament(["random", "greedy"], 4, tmp_path, progress=False, **kw)
    assert capsys.readouterr().err == ""  # quiet without progress


@pytest.mark.parametrize("concurrency", [1, 2])
def test_a_file_an_agent_reads_is_pinned_and_a_change_stops_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], concurrency: int) -> None:
    from taluva_ai.errors import RunConfigError

    weights = tmp_path / "net.bin"
    weights.write_text("v1")
    digest = hashlib.sha256(b"v1").hexdigest()
    swapper = f"{BAD}Swapper:at=3,weights={weights}"
    kw: dict[str, Any] = {"rules": {"tiles_per_player": 3}, "seed": 5, "progress": False,
                          "plots": False, "concurrency": concurrency}
    # the same tournament, undisturbed: the reference table
    ref = run_tournament(["random", swapper], 4, tmp_path / "ref", **kw)
    assert ref["games"] == 4
    cfg = json.loads((tmp_path / "ref" / "config.json").read_text())
    assert cfg["agent_files"] == {swapper: {str(weights): digest}}
    run_tournament(["random", "greedy"], 2, tmp_path / "plain", **kw)
    plain = json.loads((tmp_path / "plain" / "config.json").read_text())
    assert "agent_files" not in plain  # agents without files pin nothing

    out = tmp_path / "t"
    Path(f"{weights}.swap").touch()  # the first game replaces the file in its 4th move
    with pytest.raises(RunConfigError) as info:
        run_tournament(["random", swapper], 4, out, **kw)
    assert str(info.value).startswith(
        f"{weights}: changed since the tournament pinned it (SHA-256 {digest[:12]}..., now "
        f"{hashlib.sha256(b'replaced').hexdigest()[:12]}...), so agent {swapper!r} would "
        "play another network; restore that file and resume")
    finished = (out / "results.jsonl").read_text().splitlines()
    if concurrency == 1:  # the game in progress finished; the next one was refused
        assert len(finished) == 1
    else:  # the other worker's check may stop the run before the swapping game ends (a
        # busy machine): it is then replayed on resume, like any game in progress
        assert len(finished) < 4
    # a resume with the file still replaced is refused before any game, in one line
    with pytest.raises(SystemExit) as exc:
        main(["tournament", "--resume", str(out), "--no-progress", "--no-plots"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{weights}: changed since the tournament" in err
    assert (out / "results.jsonl").read_text().splitlines() == finished
    # restored: the resume plays the rest, and the table is the undisturbed run's
    weights.write_text("v1")
    again = run_tournament(["random", swapper], 4, out, **kw)
    assert again == ref


def test_records_name_the_networks_that_played_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A record's header names the files its agents read (``meta.agent_files``), so a rerun
    whose config.json was lost plays again the games of a network since replaced, instead of
    mixing two networks in one table; a record from before records named them is kept."""
    from taluva_ai.records import read_header

    weights = tmp_path / "net.bin"
    weights.write_text("v1")
    swapper = f"{BAD}Swapper:weights={weights}"  # never swaps: no .swap file
    kw: dict[str, Any] = {"rules": {"tiles_per_player": 3}, "seed": 5, "progress": False,
                          "plots": False}
    out = tmp_path / "t"
    run_tournament(["random", swapper], 4, out, **kw)
    records = sorted((out / "games").glob("*.jsonl"))
    assert len(records) == 4
    v1 = {swapper: {str(weights): hashlib.sha256(b"v1").hexdigest()}}
    assert all(read_header(p).meta["agent_files"] == v1 for p in records)
    plain = tmp_path / "plain"
    run_tournament(["random", "greedy"], 1, plain, **kw)
    assert all("agent_files" not in read_header(p).meta for p in plain.glob("games/*.jsonl"))

    # an older record (no agent_files in its header, its results line lost) is kept
    lines = records[0].read_text().splitlines(keepends=True)
    head = json.loads(lines[0])
    del head["meta"]["agent_files"]
    records[0].write_text(json.dumps(head) + "\n" + "".join(lines[1:]))
    log = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(log[1:]))
    # config.json lost and the network replaced: the games it played are played again
    (out / "config.json").unlink()
    weights.write_text("v2")
    run_tournament(["random", swapper], 4, out, **kw)
    err = capsys.readouterr().err
    why = "line 1: field 'meta.agent_files': played by another network than the one this " \
          "run pinned; playing this game again"
    assert err.count(why) == 3 and records[0].name not in err
    v2 = {swapper: {str(weights): hashlib.sha256(b"v2").hexdigest()}}
    assert [read_header(p).meta.get("agent_files") for p in records] == [None, v2, v2, v2]
    head = json.loads(records[1].read_text().split("\n", 1)[0])
    for bad in ("x", {swapper: {str(weights): "XYZ"}}):  # a malformed field: named as such
        head["meta"]["agent_files"] = bad
        records[1].write_text(json.dumps(head) + "\n")
        run_tournament(["random", swapper], 4, out, **kw)
        assert "line 1: field 'meta.agent_files': not a mapping of agent specs to {file: " \
            "SHA-256 (64 hex digits)}; playing this game again" in capsys.readouterr().err

    # a forfeit has no record: its results line names the files, and is checked the same way
    crasher = f"{BAD}PinnedCrasher:at=1,weights={weights}"
    out = tmp_path / "f"
    run_tournament(["random", crasher], 2, out, **kw)
    lines = [json.loads(s) for s in (out / "results.jsonl").read_text().splitlines()]
    assert [(e["forfeit"]["reason"], e["agent_files"]) for e in lines] == [
        ("exception", {crasher: {str(weights): hashlib.sha256(b"v2").hexdigest()}})] * 2
    capsys.readouterr()
    run_tournament(["random", crasher], 2, out, **kw)  # the same network: both kept
    assert "playing this game again" not in capsys.readouterr().err
    (out / "config.json").unlink()
    weights.write_text("v3")
    run_tournament(["random", crasher], 2, out, **kw)
    assert capsys.readouterr().err.count(
        "forfeited by another network than the one this run pinned; playing this game "
        "again") == 2
    lines = [json.loads(s) for s in (out / "results.jsonl").read_text().splitlines()]
    assert [e["agent_files"] for e in lines] == [
        {crasher: {str(weights): hashlib.sha256(b"v3").hexdigest()}}] * 2


def test_forfeits_in_a_tournament_are_recorded_and_it_goes_on(tmp_path: Path) -> None:
    crasher = f"{BAD}Crasher:at=2"
    sleeper = f"{BAD}Sleeper:at=1,time=0.05,sleep=5"
    specs = ["random", crasher, sleeper]
    kw: dict[str, Any] = {"rules": {"tiles_per_player": 3}, "seed": 2, "progress": False,
                          "plots": False, "time_margin": 0.15}
    r = run_tournament(specs, 2, tmp_path, **kw)
    assert r["games"] == 6 and r["end_reasons"] == {"forfeit": 6}
    got = [(f["id"], f["agent"], f["seat"], f["reason"], f["ply"]) for f in r["forfeits"]]
    assert got == [
        ("000-0000-0", crasher, 1, "exception", 10),  # random first: the crasher's 3rd move
        ("000-0000-1", crasher, 0, "exception", 7),
        ("001-0000-0", sleeper, 1, "time", 5),
        ("001-0000-1", sleeper, 0, "time", 2),
        ("002-0000-0", sleeper, 1, "time", 5),  # the sleeper fails before the crasher
        ("002-0000-1", sleeper, 0, "time", 2),
    ]
    assert all(f["detail"] == "RuntimeError: boom at decision 2" for f in r["forfeits"][:2])
    assert r["agents"]["random"]["wins"] == 4 and r["agents"][sleeper]["wins"] == 0
    assert r["pairs"][2]["wins"] == {crasher: 2, sleeper: 0}
    assert sorted(p.name for p in (tmp_path / "games").iterdir()) == []  # no record
    log = (tmp_path / "results.jsonl").read_text()
    assert [json.loads(line)["forfeit"]["reason"] for line in log.splitlines()] == [
        "exception", "exception", "time", "time", "time", "time"]
    timing = json.loads((tmp_path / "timing.json").read_text())
    assert timing["agents"][sleeper]["budget_s"] == 0.05
    assert timing["agents"][sleeper]["limit_s"] == pytest.approx(0.2)
    assert timing["agents"][sleeper]["max_move_s"] >= 0.2
    summary = (tmp_path / "summary.md").read_text()
    assert "## Forfeits" in summary and "| 000-0000-1 | `misbehaving_agents:Crasher:at=2` | 0 " \
        "| exception | 7 | RuntimeError: boom at decision 2 |" in summary
    # resumed: the forfeits are kept from the log, nothing is played again
    again = run_tournament(specs, 2, tmp_path, **kw)
    assert again == r
    assert (tmp_path / "results.jsonl").read_text() == log  # the same times: not played again


# -- whole tournaments: determinism, kill and resume ------------------------------------------

SPECS = ["random", "greedy", "greedy:epsilon=0.3"]
SETTINGS: dict[str, Any] = {"games": 10, "seed": 11, "rules": {"tiles_per_player": 8},
                            "progress": False, "plots": False}
CLI = ["tournament", "--agents", *SPECS, "--games", "10", "--seed", "11", "--tiles-per-player",
       "8", "--no-progress", "--no-plots"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tournament played uninterrupted, in this process."""
    out = tmp_path_factory.mktemp("reference")
    run_tournament(SPECS, out_dir=out, concurrency=1, **SETTINGS)
    return out


def _records(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((d / "games").iterdir())}


def _log_without_time(d: Path) -> list[dict[str, Any]]:
    drop = ("time_s", "max_move_s", "sha256")  # the line's checksum covers its times
    return [{k: v for k, v in json.loads(line).items() if k not in drop}
            for line in (d / "results.jsonl").read_text().splitlines()]


def test_same_seed_same_tournament_with_concurrency_1_and_2(reference: Path,
                                                            tmp_path: Path) -> None:
    run_tournament(SPECS, out_dir=tmp_path, concurrency=2, **SETTINGS)
    assert _records(tmp_path) == _records(reference)
    assert len(_records(reference)) == 30
    assert (tmp_path / "results.json").read_bytes() == (reference / "results.json").read_bytes()
    assert _log_without_time(tmp_path) == _log_without_time(reference)


def test_a_killed_tournament_resumes_with_no_game_lost_or_counted_twice(
    reference: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "taluva_ai.cli", *CLI, "--concurrency", "2",
                             "--out", str(out)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(list(out.glob("games/*.jsonl"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGKILL)  # the power goes: no clean-up at all
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "results.json").exists()  # killed mid-way
    kept = {p.name: (p.stat().st_ino, p.read_bytes()) for p in out.glob("games/*.jsonl")}
    assert 3 <= len(kept) < 30
    assert main(["tournament", "--resume", str(out), "--no-progress", "--no-plots"]) == 0
    for name, (inode, data) in kept.items():  # finished games were kept, not played again
        assert (out / "games" / name).stat().st_ino == inode
        assert (out / "games" / name).read_bytes() == data
    assert _records(out) == _records(reference)
    assert not list(out.glob("games/.*.part"))
    ids = [e["id"] for e in _log_without_time(out)]
    assert ids == sorted(set(ids)) and len(ids) == 30  # every game once
    assert _log_without_time(out) == _log_without_time(reference)
    assert (out / "results.json").read_bytes() == (reference / "results.json").read_bytes()
    for rec in (out / "games").iterdir():
        assert replay_record(rec, seeded_draws=True).is_terminal()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_workers_of_a_killed_tournament_end_with_it_and_the_resume_is_exact(
    reference: Path, tmp_path: Path
) -> None:
    """SIGKILL of the main process alone (not its process group): its worker processes
    notice and end at once, writing nothing more, and the resumed run is the uninterrupted
    one."""
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "taluva_ai.cli", *CLI, "--concurrency", "2",
                             "--out", str(out)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            workers = spawned_children(proc.pid)
            if len(workers) == 2 and len(list(out.glob("games/*.jsonl"))) >= 2:
                break
            time.sleep(0.01)
        assert len(workers) == 2 and proc.poll() is None
        os.kill(proc.pid, signal.SIGKILL)  # the main process only
        proc.wait(timeout=30)
        # a parent-death signal: at once; else 0.5 s polls
        alive = still_running(workers, 10)
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_running(workers)
    assert not alive, "worker processes outlived the killed tournament"
    assert not (out / "results.json").exists()
    assert main(["tournament", "--resume", str(out), "--no-progress", "--no-plots"]) == 0
    assert _records(out) == _records(reference)
    assert _log_without_time(out) == _log_without_time(reference)
    assert (out / "results.json").read_bytes() == (reference / "results.json").read_bytes()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_a_worker_ends_when_its_parent_dies_without_a_parent_death_signal() -> None:
    """Where the system has no parent-death signal, the worker's watch thread notices that
    its parent is gone (it was reparented) and ends it."""
    worker = ("import os, time; from taluva_ai.parallel import orphaned, watch_parent; "
              "assert not orphaned(); watch_parent(os.getppid(), death_signal=False); "
              "print('ready', flush=True); time.sleep(60)")
    parent = ("import os, subprocess, sys; "
              f"p = subprocess.Popen([sys.executable, '-c', {worker!r}], stdout=subprocess.PIPE); "
              "assert p.stdout.readline() == b'ready\\n'; print(p.pid, flush=True); os._exit(0)")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", parent], env=env, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    pid = int(res.stdout)
    alive = still_running([pid], 10)  # it polls every PARENT_POLL_S = 0.5 s
    kill_running(alive)
    assert not alive


def test_sprt_stops_when_decided_the_same_with_concurrency_1_and_2(tmp_path: Path) -> None:
    kw: dict[str, Any] = {"rules": {"tiles_per_player": 4}, "seed": 0, "progress": False,
                          "plots": False, "sprt": SPRT(0.0, 50.0)}
    specs = ["greedy:epsilon=0.5", "greedy"]
    r1 = run_tournament(specs, 400, tmp_path / "c1", concurrency=1, **kw)
    sp = r1["sprt"]
    assert (sp["baseline"], sp["candidate"], sp["decision"]) == (specs[0], specs[1], "H1")
    assert sp["games"] == r1["games"] == 2 * sum(sp["pentanomial"]) < sp["max_games"] == 400
    # the LLR crossed the bound at the last pair counted, not before
    entries = [json.loads(line) for line in (tmp_path / "c1" / "results.jsonl").read_text()
               .splitlines()]
    counts = [0] * 5
    llrs = []
    for d in range(sp["games"] // 2):
        pair = [e for e in entries if e["deal"] == d]
        pts = sum(1.0 if e["places"][e["seats"].index("greedy")] < e["places"][
            1 - e["seats"].index("greedy")] else 0.5 if len(set(e["places"])) == 1 else 0.0
            for e in pair)
        counts[round(2 * pts)] += 1
        llrs.append(SPRT(0.0, 50.0).llr(counts))
    assert counts == sp["pentanomial"]
    assert llrs[-1] == pytest.approx(sp["llr"], abs=1e-4) and llrs[-1] >= sp["upper_bound"]
    assert all(sp["lower_bound"] < v < sp["upper_bound"] for v in llrs[:-1])
    r2 = run_tournament(specs, 400, tmp_path / "c2", concurrency=2, **kw)
    assert r2 == r1
    assert ((tmp_path / "c1" / "results.json").read_bytes()
            == (tmp_path / "c2" / "results.json").read_bytes())
    with pytest.raises(ValueError, match="an SPRT compares two agents"):
        run_tournament(["random", *specs], 4, tmp_path / "x", **kw)


# -- schedules, config files, the command line, reports ----------------------------------------


def test_gauntlet_schedule_plays_only_the_candidates_groups() -> None:
    t = schedule(["a", "b", "c", "d"], 2, 2, seed=1, gauntlet="c")
    assert [x.seats for x in t] == [("a", "c"), ("c", "a"), ("b", "c"), ("c", "b"),
                                    ("c", "d"), ("d", "c")]
    assert {x.seed for x in t} == {deal_seed(1, 0)}
    t3 = schedule(["a", "b", "c", "d"], 3, 3, seed=1, gauntlet="a")
    assert [x.group for x in t3[::3]] == [(0, 1, 2), (0, 1, 3), (0, 2, 3)]
    with pytest.raises(ValueError, match="not one of the agents"):
        schedule(["a", "b"], 2, 2, 0, gauntlet="z")


def test_tournament_file(tmp_path: Path) -> None:
    f = tmp_path / "t.toml"
    f.write_text('games = 4\nplayers_per_game = 3\nagents = ["random", {agent = "greedy", '
                 'epsilon = 0.25}]\ngauntlet = {agent = "mcts", sims = 8, rollout = "random",'
                 ' reuse_tree = true}\n[sprt]\nelo0 = 0\nelo1 = 5\n[rules]\ntiles_per_player '
                 '= 3\n')
    assert read_tournament_file(f) == {
        "games": 4, "players_per_game": 3, "agents": ["random", "greedy:epsilon=0.25"],
        "gauntlet": "mcts:sims=8,rollout=random,reuse_tree=true",
        "sprt": {"elo0": 0, "elo1": 5}, "rules": {"tiles_per_player": 3}}
    f.write_text('defer = ["random", {agent = "greedy", epsilon = 0.25}]\n')
    assert read_tournament_file(f) == {"defer": ["random", "greedy:epsilon=0.25"]}
    for text, message in [("gamez = 3", "unknown key 'gamez'"),
                          ("games = '3'", "games must be an integer, got '3'"),
                          ("agents = [{sims = 3}]", r"agents\[0\]: an agent is"),
                          ("defer = [3]", r"defer\[0\]: an agent is"),
                          ("defer = 'random'", "defer must be an array"),
                          ("games = [", "not valid TOML")]:
        f.write_text(text)
        with pytest.raises(ValueError, match=message):
            read_tournament_file(f)


def test_cli_takes_defer_from_the_config_file_unless_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "t.toml"
    f.write_text(f'agents = ["random", "greedy"]\nout = "{tmp_path / "x"}"\n'
                 'defer = [{agent = "mcts", sims = 4}]\n')
    with pytest.raises(SystemExit) as info:
        main(["tournament", "--config", str(f), "--no-progress"])
    assert info.value.code == 2
    assert f"--config: {f}: defer: 'mcts:sims=4' is not one of the agents" in \
        capsys.readouterr().err
    assert main(["tournament", "--config", str(f), "--defer", "greedy", "--games", "2",
                 "--no-progress", "--no-plots"]) == 0
    assert json.loads((tmp_path / "x" / "results.json").read_text())["games"] == 2


def test_cli_gauntlet_from_a_config_file_with_3_players_writes_the_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "t.toml"
    out = tmp_path / "g"
    f.write_text(f'agents = ["random", "greedy", "greedy:epsilon=0.5"]\ngauntlet = "greedy"\n'
                 f'games = 3\nplayers_per_game = 3\nseed = 4\nout = "{out}"\n[rules]\n'
                 'tiles_per_player = 3\n')
    assert main(["tournament", "--config", str(f), "--games", "6", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    table = json.loads((out / "results.json").read_text())
    assert table["config"]["gauntlet"] == "greedy" and table["config"]["games_per_group"] == 6
    assert table["games"] == 6  # one group of three (the only one), 2 deals x 3 rotations
    assert len(table["seats"]) == 3 and "openskill" in table["agents"]["greedy"]
    log = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for s in range(3):  # the seat win rates are those of the log
        wins = sum(s in e["winners"] for e in log)
        assert table["seats"][s]["wins"] == wins
    assert "ratings (Elo anchored: random = 0):" in printed
    assert "first-seat advantage:" in printed
    assert ("head to head (wins-draws-losses, score of the first; 3-4 players: by place, a draw "
            "is the same place):") in printed
    for name in ("ratings.png", "scores.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "summary.md").read_text()
    for part in ("# Tournament: gauntlet of `greedy`, 3 players per game", "## Ratings",
                 "| mu | sigma | ordinal |", "## Seats", "## Time used", "![ratings]",
                 "| A | B | games | A placed higher | same place | B placed higher | score A |"):
        assert part in md
    assert main(["tournament", "--resume", str(out), "--no-progress", "--no-plots",
                 "--defer", "greedy"]) == 0
    assert json.loads((out / "results.json").read_text()) == table


def test_resume_refuses_a_run_of_another_format(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.json").write_text('{"format": "taluva-ai-tournament/1"}')
    with pytest.raises(SystemExit):
        main(["tournament", "--resume", str(tmp_path), "--no-progress"])
    assert capsys.readouterr().err == (
        f"taluva tournament: error: {tmp_path / 'config.json'}: format "
        "'taluva-ai-tournament/1', not 'taluva-ai-tournament/2'; this version cannot resume "
        "it\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["--resume", "R", "--agents", "random", "greedy"], "--resume DIR takes the settings "
     "from DIR/config.json; with it give only --concurrency, --ray, --bootstrap, "
     "--defer, --no-plots, --no-progress (got --agents)"),
    (["--agents", "random", "greedy", "--out", "x", "--defer", "mcts"], "defer: 'mcts' is not "
     "one of the agents ['random', 'greedy']"),
    (["--resume", "R", "--ranked"], "(got rule options)"),
    (["--resume", "R"], "{R}/config.json: no such file"),
    (["--agents", "random", "greedy", "--out", "x", "--sprt", "elo0=0"], "--sprt: elo1 "
     "missing"),
    (["--out", "x"], "give the agents"),
    (["--agents", "random", "greedy", "--out", "x", "--solo"], "these rules make a game of 1 "
     "player(s), not 2; solo agents are compared by the solo ladder"),
    (["--agents", "random", "greedy"], "give the run directory: --out DIR"),
    (["--agents", "random", "greedy", "--out", "x", "--time-margin", "-1"], "time_margin must "
     "be a number of seconds >= 0, got -1.0"),
    (["--agents", "random", "mcts:time=0", "--out", "x"], "time must be positive"),
    (["--agents", "random", "greedy", "--out", "x", "--config", "nofile.toml"],
     "--config: nofile.toml: No such file or directory"),
    (["--agents", "random", "greedy", "--out", "x", "--config", "T"], "sprt: unknown key "
     "'elo2'; known: elo0, elo1, alpha, beta, model"),
])
def test_tournament_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   argv: list[str], message: str) -> None:
    (tmp_path / "T").write_text("[sprt]\nelo0 = 0\nelo2 = 5\n")
    argv = [str(tmp_path / a) if a in ("R", "x", "T") else a for a in argv]
    with pytest.raises(SystemExit) as info:
        main(["tournament", *argv, "--no-progress"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0]
    assert message.replace("{R}", str(tmp_path / "R")) in err[0]
    assert not (tmp_path / "x").exists()


class _CompileInterrupted:
    """Raises what Numba raises when a Ctrl-C lands in its compiler: a RuntimeError whose
    context is the KeyboardInterrupt."""

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, state: Any) -> int:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("no compiled object yet for <Library 'rollout'>") from None

    def stats(self) -> dict[str, Any]:
        return {}


def test_a_ctrl_c_inside_an_agent_stops_the_game_and_is_no_forfeit() -> None:
    from taluva_ai.tournament import play_game

    game = make_game("taluva", num_players=2)
    with pytest.raises(KeyboardInterrupt):
        play_game(game, [_CompileInterrupted(), make_agent("random")], 1, forfeits=True)


# -- damaged run files (issue 19, B.13) --------------------------------------------------------

PAIR = ["random", "greedy"]
PAIR_KW: dict[str, Any] = {"rules": {"tiles_per_player": 4}, "seed": 7, "progress": False,
                           "plots": False}


def test_a_record_changed_on_disk_is_named_and_its_game_played_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record whose bytes differ from the checksum its results.jsonl line recorded is
    named, with what happens, even when it still replays (here: one space taken out)."""
    table = run_tournament(PAIR, 2, tmp_path, **PAIR_KW)
    rec = tmp_path / "games" / "000-0000-1.jsonl"
    good = rec.read_bytes()
    rec.write_bytes(good.replace(b'{"type": "action"', b'{"type":"action"', 1))
    assert replay_record(rec, seeded_draws=True).is_terminal()  # replaying cannot tell
    capsys.readouterr()
    assert run_tournament(PAIR, 2, tmp_path, **PAIR_KW) == table
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and re.fullmatch(
        rf"{re.escape(str(rec))}: damaged \(its SHA-256 is [0-9a-f]{{12}}\.\.\., not the "
        r"[0-9a-f]{12}\.\.\. recorded in results\.jsonl\); playing this game again", err[0])
    assert rec.read_bytes() == good


def test_a_missing_record_is_named_and_its_game_played_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = run_tournament(PAIR, 2, tmp_path, **PAIR_KW)
    rec = tmp_path / "games" / "000-0000-0.jsonl"
    good = rec.read_bytes()
    rec.unlink()
    capsys.readouterr()
    assert run_tournament(PAIR, 2, tmp_path, **PAIR_KW) == table
    assert capsys.readouterr().err.splitlines() == [
        f"{rec}: missing (results.jsonl lists the game as finished); playing this game again"]
    assert rec.read_bytes() == good


def test_a_changed_line_of_results_jsonl_is_named_and_not_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A forfeited game has no record: its line alone keeps its result. A line changed on
    disk (the places swapped) no longer matches its checksum: it is named and ignored, and
    the game is played again."""
    specs = ["random", f"{BAD}Crasher:at=1"]
    table = run_tournament(specs, 2, tmp_path, **PAIR_KW)
    assert table["end_reasons"] == {"forfeit": 2}
    log = tmp_path / "results.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    swapped = lines[0].replace('"places": [0, 1]', '"places": [1, 0]')
    assert swapped != lines[0]
    log.write_text(swapped + lines[1])
    capsys.readouterr()
    assert run_tournament(specs, 2, tmp_path, **PAIR_KW) == table
    assert capsys.readouterr().err.splitlines() == [
        f"{log}: line 1: damaged (its content does not match its checksum); ignored: its "
        "game's record is checked by replaying it, or the game played again"]


def test_a_changed_config_json_is_refused_by_name(tmp_path: Path) -> None:
    from taluva_ai.errors import RunConfigError
    from taluva_ai.tournament import resume_tournament

    run_tournament(PAIR, 2, tmp_path, **PAIR_KW)
    cfg = tmp_path / "config.json"
    cfg.write_text(cfg.read_text().replace('"seed": 7', '"seed": 8'))
    with pytest.raises(RunConfigError) as info:
        resume_tournament(tmp_path, progress=False, plots=False)
    assert str(info.value) == (
        f"{cfg}: damaged (its settings do not match the checksum written with them); run the "
        "tournament's command again with another --out")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_reported_with_the_file_and_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table's temporary file is /dev/full: writing it fails with ENOSPC, as on a full
    disk; the message names results.json (not the temporary file, not nothing)."""
    run_tournament(PAIR, 2, tmp_path, **PAIR_KW)
    table = (tmp_path / "results.json").read_bytes()
    (tmp_path / ".results.json.part").symlink_to("/dev/full")
    capsys.readouterr()
    assert main(["tournament", "--resume", str(tmp_path), "--no-progress", "--no-plots"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{tmp_path / 'results.json'}: No space left on device; free some disk space, then "
        "run the same command again to resume (finished games are kept)"]
    assert (tmp_path / "results.json").read_bytes() == table  # the old one, whole
    assert not (tmp_path / ".results.json.part").exists()


def test_long_agent_specs_are_wrapped_in_the_plots(tmp_path: Path) -> None:
    """A long spec (a checkpoint path with its settings) is broken after commas (and a long
    path after its slashes) into lines of at most 36 characters, so the plots keep room for
    their axes (matplotlib warned 'Tight layout not applied' on a table of two such specs)."""
    import warnings

    from taluva_ai.reports import plot_ratings, plot_scores, tick_label

    long = ("az:path=runs/strong2/checkpoints/iter_0020.pt,sims=200,rollout=none,lambda=0,"
            "root=gumbel")
    assert tick_label(long) == ("az:path=runs/strong2/checkpoints/\niter_0020.pt,sims=200,"
                                "rollout=none,\nlambda=0,root=gumbel")
    tmp = "az:path=/tmp/pytest-of-root/pytest-12/popen-gw0/test_a0/run/iter_0000.pt,sims=8"
    assert tick_label(tmp) == ("az:path=/tmp/pytest-of-root/\npytest-12/popen-gw0/test_a0/"
                               "run/\niter_0000.pt,sims=8")
    assert tick_label("mcts:sims=400,rollout=greedy,root=gumbel") == \
        "mcts:sims=400,rollout=greedy,\nroot=gumbel"
    assert tick_label("greedy") == "greedy"
    table = {"games": 2, "elo_anchor": long, "config": {"players_per_game": 2},
             "agents": {long: {"elo": 0.0, "elo_ci95": [0.0, 0.0]},
                        "az:builtin": {"elo": 85.0, "elo_ci95": [35.0, 135.0]}},
             "score_matrix": {"agents": [long, "az:builtin"],
                              "score": [[None, 0.38], [0.62, None]]}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plot_ratings(table, tmp_path / "r.png")
        plot_scores(table, tmp_path / "s.png")
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
