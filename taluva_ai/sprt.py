"""Paired-game statistics for two agents: pentanomial counts, Elo and normalized Elo with
intervals, and the sequential probability ratio test (SPRT), with Stockfish fishtest's
formulas.

Duplicate play pairs the games of two agents: each deal (one tile sequence) is played twice,
seats swapped. A *pair* scores 0, 1/2, 1, 3/2 or 2 points for the candidate; the
**pentanomial** counts are the number of pairs of each score, low to high::

    [LL, LD+DL, LW+DD+WL, DW+WD, WW]

(fishtest's order, ``LLRcalc.py``). Counting pairs rather than games keeps the correlation of
the two games of a deal (both won by the seat the deal favours, say) out of the variance,
which a trinomial (win/draw/loss) model would overstate.

SPRT (Wald's test, in fishtest's generalized form, GSPRT): H0 says the candidate is ``elo0``
stronger than the baseline, H1 ``elo1``. After each pair the log-likelihood ratio

    LLR = N * sum_i p_i * (log p1_i - log p0_i)

is computed, where ``p`` is the empirical distribution of the pair scores (zero counts
replaced by 1e-3, fishtest's ``regularize``) and ``p0``, ``p1`` the maximum-likelihood
distributions under H0 and H1: with the expected score fixed (``logistic`` Elo, the score is
``1 / (1 + 10 ** (-elo / 400))``) or the normalized t-value fixed (``normalized`` Elo,
``t = (mu - 1/2) / sigma``, ``nelo = t_per_game * 800 / ln 10``). The test stops when LLR
leaves ``[ln(beta / (1 - alpha)), ln((1 - beta) / alpha)]``: below, H0 is accepted (the
candidate is not ``elo1`` stronger); above, H1. No overshoot correction is applied (fishtest
adds one for its batched updates; here the test is updated after every pair).

Sources (the formulas are fishtest's; the code is written anew):

- official-stockfish/fishtest, ``server/fishtest/stats/LLRcalc.py`` (``secular``,
  ``MLE_expected``, ``MLE_t_value``, ``LLR_logistic``, ``LLR_normalized``, ``regularize``) and
  ``stat_util.py`` (``SPRT``: the bounds; ``get_elo``: Elo, interval and LOS).
- M. Van den Bergh, "A generalized sequential probability ratio test"
  (https://www.cantate.be/Fishtest/GSPRT_approximation.pdf), "Maximum likelihood estimation
  of a multinomial distribution with given expectation"
  (https://www.cantate.be/Fishtest/support_MLE_multinomial.pdf, Proposition 1.1) and
  "Normalized Elo, practical" (https://www.cantate.be/Fishtest/normalized_elo_practical.pdf,
  Section 4.1).
- A. Wald, "Sequential tests of statistical hypotheses", Ann. Math. Statist. 16 (1945).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import optimize, stats

#: Normalized Elo per unit of t-value per game: ``800 / ln(10)`` (fishtest's
#: ``nelo_divided_by_nt``).
NELO_PER_T = 800.0 / math.log(10.0)
#: Normalized Elo bounds of an SPRT lie strictly within +-NELO_LIMIT (about 232): beyond it the
#: fixed-point iteration of :func:`mle_t_value` has no first step for pairs (from the uniform
#: pentanomial, the t-value per pair must stay under ``2 sqrt(2) / 3``).
NELO_LIMIT = 2.0 / 3.0 * NELO_PER_T

#: Labels of the pentanomial counts, in order (candidate's points per pair: 0 .. 2).
PENTANOMIAL_LABELS = ("LL", "LD+DL", "LW+DD+WL", "DW+WD", "WW")

#: Elo models of :class:`SPRT`.
ELO_MODELS = ("normalized", "logistic")

_Z95 = float(stats.norm.ppf(0.975))


def logistic_score(elo: float) -> float:
    """Expected score of a player ``elo`` stronger: ``1 / (1 + 10 ** (-elo / 400))``."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def logistic_elo(score: float) -> float:
    """Inverse of :func:`logistic_score`: ``-400 log10(1 / score - 1)``; the score is clamped
    to ``[1e-3, 1 - 1e-3]`` as fishtest's ``stat_util.elo`` does, so 0 and 1 stay finite."""
    s = min(max(score, 1e-3), 1.0 - 1e-3)
    return -400.0 * math.log10(1.0 / s - 1.0)


def pentanomial_pdf(counts: Sequence[float]) -> tuple[float, np.ndarray, np.ndarray]:
    """``(N, values, probabilities)`` of pentanomial (or trinomial L, D, W) counts.

    Zero counts are replaced by 1e-3 first (fishtest's ``regularize``), so every value has a
    positive probability. ``values`` are the candidate's scores per game, ``i / (len - 1)``
    (0, 1/4, 1/2, 3/4, 1 for pairs); ``N`` is the regularized total.

    Raises:
        ValueError: not 3 or 5 counts, or a negative one.
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 1 or c.size not in (3, 5):
        raise ValueError(f"expected 3 (L, D, W) or 5 (pentanomial) counts, got {list(counts)}")
    if (c < 0).any() or not np.isfinite(c).all():
        raise ValueError(f"counts must be finite and >= 0, got {list(counts)}")
    c = np.where(c == 0, 1e-3, c)
    n = float(c.sum())
    return n, np.arange(c.size) / (c.size - 1), c / n


def _secular(a: np.ndarray, p: np.ndarray) -> float:
    """The root ``x`` of ``sum_i p_i a_i / (1 + x a_i) = 0`` with ``1 + x a_i > 0`` for all
    ``i`` (fishtest's ``secular``; needs ``min a < 0 < max a``)."""
    lo, hi = -1.0 / a.max(), -1.0 / a.min()
    eps = 1e-9

    def f(x: float) -> float:
        return float((p * a / (1.0 + x * a)).sum())

    return float(optimize.brentq(f, lo + eps, hi - eps))


def mle_expected(values: np.ndarray, probs: np.ndarray, score: float) -> np.ndarray:
    """The distribution on ``values`` of largest likelihood for the empirical ``probs`` among
    those of expectation ``score``: ``probs_i / (1 + x (values_i - score))`` with ``x`` the
    root of the secular equation (Van den Bergh, support_MLE_multinomial.pdf, Proposition
    1.1; fishtest ``MLE_expected``).

    Raises:
        ValueError: ``score`` does not lie strictly between the smallest and largest value.
    """
    if not values.min() < score < values.max():
        raise ValueError(f"score {score} outside ({values.min()}, {values.max()})")
    d = values - score
    x = _secular(d, probs)
    return probs / (1.0 + x * d)


def mle_t_value(values: np.ndarray, probs: np.ndarray, ref: float, t: float) -> np.ndarray:
    """The distribution on ``values`` of largest likelihood for the empirical ``probs`` among
    those whose t-value ``(mu - ref) / sigma`` equals ``t``, by fishtest's fixed-point
    iteration (``MLE_t_value``; Van den Bergh, normalized_elo_practical.pdf, Section 4.1):
    from the uniform distribution, solve the secular equation of the linearized constraint
    ``values - ref - t sigma (1 + ((mu - values) / sigma) ** 2) / 2`` until the
    probabilities move by less than 1e-9 (at most 10 rounds)."""
    q = np.full(values.size, 1.0 / values.size)
    for _ in range(10):
        prev = q
        mu = float((q * values).sum())
        sigma = math.sqrt(float((q * (values - mu) ** 2).sum()))
        d = values - ref - t * sigma * (1.0 + ((mu - values) / sigma) ** 2) / 2.0
        if not d.min() < 0.0 < d.max():  # no distribution near q reaches the t-value
            raise ValueError(f"normalized Elo: a t-value of {t:g} is beyond what the scores "
                             "can express from here (use smaller bounds, or model=logistic)")
        x = _secular(d, probs)
        q = probs / (1.0 + x * d)
        if np.abs(q - prev).max() < 1e-9:
            break
    return np.asarray(q)


def llr_logistic(elo0: float, elo1: float, counts: Sequence[float]) -> float:
    """Generalized log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``), logistic Elo,
    for pentanomial or trinomial ``counts`` (fishtest ``LLRcalc.LLR_logistic``)."""
    n, a, p = pentanomial_pdf(counts)
    p0 = mle_expected(a, p, logistic_score(elo0))
    p1 = mle_expected(a, p, logistic_score(elo1))
    return float(n * (p * (np.log(p1) - np.log(p0))).sum())


def llr_normalized(nelo0: float, nelo1: float, counts: Sequence[float]) -> float:
    """Generalized log-likelihood ratio of H1 (``nelo1``) against H0 (``nelo0``), normalized
    Elo, for pentanomial or trinomial ``counts`` (fishtest ``LLRcalc.LLR_normalized``). For
    pairs the t-value per pair is ``sqrt(2)`` times the t-value per game."""
    n, a, p = pentanomial_pdf(counts)
    scale = math.sqrt(2.0) if len(counts) == 5 else 1.0
    t0, t1 = (nelo / NELO_PER_T * scale for nelo in (nelo0, nelo1))
    p0 = mle_t_value(a, p, 0.5, t0)
    p1 = mle_t_value(a, p, 0.5, t1)
    return float(n * (p * (np.log(p1) - np.log(p0))).sum())


def sweep(counts: Sequence[int]) -> str | None:
    """``"won"`` when every pair (or game, for L, D, W counts) is the candidate's whole win,
    ``"lost"`` when every one is its whole loss, else None. Such a result has no finite Elo:
    :func:`pentanomial_elo` reports the figures of fishtest's regularisation (zero counts as
    1e-3), which depend on that constant rather than on the games, so a report marks them."""
    total = sum(counts)
    if total and counts[-1] == total:
        return "won"
    if total and counts[0] == total:
        return "lost"
    return None


#: How a report marks a sweep's paired Elo (:func:`sweep`).
SWEEP_NOTE = ("every pair went one way, so there is no finite Elo; the paired Elo, its interval "
              "and nElo come from fishtest's regularisation of the empty counts (1e-3), not "
              "from the games, and bound nothing (the ratings' interval is the one to read)")


def pentanomial_elo(counts: Sequence[int]) -> dict[str, Any]:
    """Elo, normalized Elo, their 95% intervals and the likelihood of superiority of the
    candidate from pentanomial counts (fishtest ``stat_util.get_elo``, with the variance of
    pairs; fastchess reports the same figures).

    With ``mu`` the mean score per game and ``var`` the variance of a pair's score divided by
    2 (its mean per game), over ``N`` pairs: Elo ``= logistic_elo(mu)``, its interval
    ``logistic_elo(mu -+ 1.96 sqrt(var / N))``; nElo ``= (mu - 1/2) / sqrt(2 var) * 800 /
    ln 10`` with interval ``+- 1.96 * 800 / ln 10 * sqrt(var / N) / sqrt(2 var)``; LOS ``=
    Phi((mu - 1/2) / sqrt(var / N))``. Zero counts are regularized (1e-3) as in fishtest.

    Returns:
        ``{"pairs", "score", "elo", "elo_ci95", "nelo", "nelo_ci95", "los"}`` (floats;
        ``pairs`` an int); None values when there is no pair.
    """
    total = int(sum(counts))
    if total == 0:
        return {"pairs": 0, "score": None, "elo": None, "elo_ci95": [None, None],
                "nelo": None, "nelo_ci95": [None, None], "los": None}
    n, a, p = pentanomial_pdf(counts)
    mu = float((p * a).sum())
    var = float((p * (a - mu) ** 2).sum())
    se = math.sqrt(var / n)
    sigma_pg = math.sqrt(2.0 * var)
    nelo = (mu - 0.5) / sigma_pg * NELO_PER_T
    nelo_half = _Z95 * NELO_PER_T * se / sigma_pg
    return {
        "pairs": total,
        "score": mu,
        "elo": logistic_elo(mu),
        "elo_ci95": [logistic_elo(mu - _Z95 * se), logistic_elo(mu + _Z95 * se)],
        "nelo": nelo,
        "nelo_ci95": [nelo - nelo_half, nelo + nelo_half],
        "los": float(stats.norm.cdf((mu - 0.5) / se)),
    }


@dataclass(frozen=True)
class SPRT:
    """The settings of a sequential probability ratio test (see the module docstring).

    Attributes:
        elo0: H0, the candidate's Elo advantage under the null hypothesis.
        elo1: H1 (> ``elo0``).
        alpha: largest probability of accepting H1 when H0 holds (false positive).
        beta: largest probability of accepting H0 when H1 holds (false negative).
        model: ``"normalized"`` (fishtest's and fastchess's default) or ``"logistic"``: the
            Elo scale of ``elo0`` and ``elo1``.

    Raises:
        ValueError: ``elo0 >= elo1``, ``alpha`` or ``beta`` outside (0, 1) or summing to 1 or
            more, an unknown model, or a value that is not a finite number.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"sprt {name} must be a finite number, got {v!r}")
            object.__setattr__(self, name, float(v))
        if not self.elo0 < self.elo1:
            raise ValueError(f"sprt needs elo0 < elo1, got elo0={self.elo0:g}, "
                             f"elo1={self.elo1:g}")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise ValueError(f"sprt needs alpha and beta in (0, 1) with alpha + beta < 1, got "
                             f"alpha={self.alpha:g}, beta={self.beta:g}")
        if self.model not in ELO_MODELS:
            raise ValueError(f"sprt model must be one of {', '.join(ELO_MODELS)}, got "
                             f"{self.model!r}")
        worst = max(abs(self.elo0), abs(self.elo1))
        if self.model == "normalized" and worst >= NELO_LIMIT:
            raise ValueError(f"sprt: normalized Elo bounds must lie within +-{NELO_LIMIT:.0f} "
                             f"(the largest t-value paired scores can express), got "
                             f"elo0={self.elo0:g}, elo1={self.elo1:g}; for large Elo "
                             "differences use model=logistic")

    @property
    def lower_bound(self) -> float:
        """``ln(beta / (1 - alpha))``: at or below it, H0 is accepted."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper_bound(self) -> float:
        """``ln((1 - beta) / alpha)``: at or above it, H1 is accepted."""
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, counts: Sequence[float]) -> float:
        """The log-likelihood ratio of pentanomial (or trinomial) ``counts``; 0 without
        data."""
        if sum(counts) == 0:
            return 0.0
        if self.model == "logistic":
            return llr_logistic(self.elo0, self.elo1, counts)
        return llr_normalized(self.elo0, self.elo1, counts)

    def decision(self, llr: float) -> str | None:
        """``"H1"`` when ``llr`` reached the upper bound, ``"H0"`` the lower, else None."""
        if llr >= self.upper_bound:
            return "H1"
        if llr <= self.lower_bound:
            return "H0"
        return None

    def to_json(self) -> dict[str, Any]:
        """``{"elo0", "elo1", "alpha", "beta", "model"}`` (``SPRT(**d)`` rebuilds it)."""
        return asdict(self)


def parse_sprt(tokens: Sequence[str]) -> SPRT:
    """An :class:`SPRT` from ``key=value`` tokens, cutechess/fastchess style:
    ``["elo0=0", "elo1=10", "alpha=0.05", "beta=0.05", "model=normalized"]`` (alpha, beta
    and model optional).

    Raises:
        ValueError: a token that is not ``key=value``, an unknown or repeated key, a value
            that is not a number, a missing ``elo0`` or ``elo1``, or invalid settings.
    """
    known = ("elo0", "elo1", "alpha", "beta", "model")
    got: dict[str, Any] = {}
    for tok in tokens:
        key, eq, val = str(tok).partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(f"sprt: {tok!r} is not key=value (e.g. elo0=0 elo1=10 "
                             "alpha=0.05 beta=0.05)")
        if key not in known:
            raise ValueError(f"sprt: unknown key {key!r}; known: {', '.join(known)}")
        if key in got:
            raise ValueError(f"sprt: {key} given twice")
        if key == "model":
            got[key] = val.strip()
            continue
        try:
            got[key] = float(val)
        except ValueError:
            raise ValueError(f"sprt: {key}={val!r} is not a number") from None
    missing = [k for k in ("elo0", "elo1") if k not in got]
    if missing:
        raise ValueError(f"sprt: {' and '.join(missing)} missing (e.g. elo0=0 elo1=10)")
    return SPRT(**got)
