"""Gating (candidate against the current best) and anchor matches, played as tournaments of
:mod:`taluva_ai.tournament` (paired deals: every tile sequence once per seat rotation; records
kept).

The SPRT is Wald's sequential probability ratio test on the score per game, in the
generalised (normal-approximation) form fishtest uses (Van den Bergh, "GSPRT"):
``LLR = N (s1 - s0)(2 s - s0 - s1) / (2 var)`` with ``s`` the mean score, ``var`` its per-game
variance, and ``s0``, ``s1`` the expected scores of Elo differences ``elo0``, ``elo1``; it stops
for H1 (promote) at ``ln((1 - beta) / alpha)`` and for H0 at ``ln(beta / (1 - alpha))``.

With 3 or 4 players, the seats beyond the two compared agents are filled with fixed players
(``greedy``, ``greedy:epsilon=0.05``, ``greedy:epsilon=0.1``), and the score is the
head-to-head one read off the places (a better place wins).

A one-player game (Taluva solo) has no opponent at the table: both agents play the same
seeded games (:mod:`taluva_ai.solo_ladder`), and a game is won by the agent with the higher
final score on that seed (:func:`taluva_ai.solo_ladder.paired`); the SPRT and the threshold
read these results as they read a two-player match.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from taluva_ai.agents.alphazero.config import GatingSection
from taluva_ai.parallel import Backend

_FILLERS = ("greedy", "greedy:epsilon=0.05", "greedy:epsilon=0.1", "random")


def expected_score(elo: float) -> float:
    """Expected score of an Elo difference: ``1 / (1 + 10^(-elo/400))``."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def sprt_llr(wins: int, draws: int, losses: int, elo0: float, elo1: float) -> float:
    """Log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for the results so far
    (see the module docstring); 0 with no game. A zero variance (every game the same result)
    is replaced by that of one virtual draw, so the ratio stays finite."""
    n = wins + draws + losses
    if n == 0:
        return 0.0
    s = (wins + 0.5 * draws) / n
    var = (wins * (1 - s) ** 2 + draws * (0.5 - s) ** 2 + losses * s ** 2) / n
    if var <= 0:
        var = 0.25 / (n + 1)
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return n * (s1 - s0) * (2 * s - s0 - s1) / (2 * var)


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """``(lower, upper)``: accept H0 at or below ``ln(beta / (1 - alpha))``, H1 at or above
    ``ln((1 - beta) / alpha)``."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def fillers(num_players: int, taken: list[str]) -> list[str]:
    """Fixed players for the seats beyond the compared agents in 3-4 player games."""
    out = [f for f in _FILLERS if f not in taken]
    return out[: max(0, num_players - 2)]


def head_to_head(table: dict[str, Any], a: str, b: str) -> dict[str, Any]:
    """``{"games", "wins", "draws", "losses", "score"}`` of ``a`` against ``b`` from a
    tournament table (:func:`taluva_ai.ratings.tournament_table`)."""
    for pair in table["pairs"]:
        if set(pair["agents"]) == {a, b}:
            w, lo = pair["wins"][a], pair["wins"][b]
            d = pair["draws"]
            dec = w + d + lo
            return {"games": pair["games"], "wins": w, "draws": d, "losses": lo,
                    "score": (w + 0.5 * d) / dec if dec else None}
    raise KeyError(f"no games between {a} and {b}")


def play_match(agent: str, opponent: str, games: int, out: Path, seed: int, concurrency: int,
               game_name: str, num_players: int, rules: dict[str, Any],
               progress: bool, backend: Backend | None = None
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Paired games of ``agent`` against ``opponent`` (a tournament in ``out``, its games
    played through ``backend``: this machine by default, Ray tasks with a Ray backend).

    Returns:
        ``(head-to-head of agent, the tournament table)``; for a one-player game, ``(paired
        head-to-head of agent, the solo ladder table of both)`` (module docstring).
    """
    from taluva_ai.tournament import run_tournament

    if num_players == 1:
        return solo_match(agent, opponent, games, out, seed, concurrency, rules, progress)

    specs = [opponent, agent, *fillers(num_players, [opponent, agent])]
    table = run_tournament(specs, games, out, players_per_game=num_players,
                           concurrency=concurrency, seed=seed, rules=rules,
                           game_name=game_name, bootstrap=200, progress=progress,
                           backend=backend)
    return head_to_head(table, agent, opponent), table


def gate(candidate: str, best: str, cfg: GatingSection, out: Path, seed: int,
         concurrency: int, game_name: str, num_players: int, rules: dict[str, Any],
         progress: bool, backend: Backend | None = None) -> dict[str, Any]:
    """Play ``candidate`` against ``best`` and decide (``cfg.rule``); the games are played
    through ``backend`` (see :func:`play_match`).

    Returns:
        ``{"promoted": bool, "decision": "threshold" | "H1" | "H0" | "undecided", "rounds",
        "games", "wins", "draws", "losses", "score", "llr", "bounds"}`` (``llr`` and
        ``bounds`` with the SPRT).
    """
    import numpy as np

    wins = draws = losses = games = 0
    rounds = 0
    llr = 0.0
    lower, upper = sprt_bounds(cfg.alpha, cfg.beta)
    decision = "undecided"
    max_rounds = cfg.max_rounds if cfg.rule == "sprt" else 1
    while rounds < max_rounds:
        rseed = int(np.random.SeedSequence([seed, rounds]).generate_state(1)[0])
        h2h, _ = play_match(candidate, best, cfg.games, out / f"round_{rounds}", rseed,
                            concurrency, game_name, num_players, rules, progress, backend)
        rounds += 1
        wins += h2h["wins"]
        draws += h2h["draws"]
        losses += h2h["losses"]
        games += h2h["games"]
        if cfg.rule == "sprt":
            llr = sprt_llr(wins, draws, losses, cfg.elo0, cfg.elo1)
            if llr >= upper:
                decision = "H1"
                break
            if llr <= lower:
                decision = "H0"
                break
    dec = wins + draws + losses
    score = (wins + 0.5 * draws) / dec if dec else 0.0
    if cfg.rule == "threshold":
        decision = "threshold"
        promoted = dec > 0 and score >= cfg.threshold
    else:
        promoted = decision == "H1"
    res: dict[str, Any] = {"promoted": bool(promoted), "decision": decision, "rounds": rounds,
                           "games": games, "wins": wins, "draws": draws, "losses": losses,
                           "score": round(score, 4)}
    if cfg.rule == "sprt":
        res["llr"] = round(llr, 4)
        res["bounds"] = [round(lower, 4), round(upper, 4)]
    return res


def solo_match(agent: str, opponent: str, games: int, out: Path, seed: int, concurrency: int,
               rules: dict[str, Any], progress: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both agents play the same ``games`` seeded solo games (seeds ``seed + i``; results in
    ``out``, resumable).

    Returns:
        ``(paired head-to-head of agent, the ladder table)`` (:func:`taluva_ai.solo_ladder.
        summarize`: mean score, interval, bands per agent).
    """
    from taluva_ai.solo_ladder import SoloLadderConfig, paired, play, summarize
    from taluva_ai.warmup import progress_bar

    rules = {k: v for k, v in rules.items() if k != "solo"}
    cfg = SoloLadderConfig(agents=[opponent, agent], games=games, seed=seed % 2**31,
                           rules=rules, concurrency=concurrency, out=str(out))

    with progress_bar(total=2 * games, desc="solo match", unit="game", leave=False,
                      disable=not progress) as bar:
        rows = play(cfg, lambda n: bar.update(n - bar.n))
    return paired(rows[agent], rows[opponent]), summarize(rows)
