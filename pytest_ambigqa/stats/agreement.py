"""Agreement between raters and the prediction-powered mean: pure statistics with intervals.

Krippendorff's alpha (between the judges of a panel, or a judge and humans), Cohen's kappa,
Spearman's rho, and the prediction-powered estimate of a human-scale mean from a judge's
scores corrected by a few human labels.

Why our own code and not ``krippendorff`` or ``ppi-python``: the controller already loads
numpy and nothing else of the scientific stack; ``ppi-python`` pulls numba, pandas,
statsmodels and scipy, a heavy runtime dependency for a dozen lines of arithmetic, and
``krippendorff`` has no bootstrap. Each formula below is short and cites its source, and
``tests/test_agreement.py`` checks every one against those packages (and scipy, sklearn) on
the same inputs, so theirs are test dependencies only.

A statistic that is undefined on its data (no pairable values, no variation) is returned as
a :class:`Statistic` whose ``value`` is None and whose ``reason`` says why: n/a with the
reason, never a made-up number. Every function here returns one; none raises for the data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np

from .bootstrap import _CHUNK_CELLS, LEVEL, RESAMPLES

Level = Literal["nominal", "ordinal", "interval"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval")
_MAX_UNDEFINED = 0.05  # the share of bootstrap resamples allowed to be undefined


@dataclass(frozen=True)
class Statistic:
    """A statistic with its interval, or n/a with the reason.

    ``value`` None: the statistic is n/a and ``reason`` says why. ``value`` set but ``low``
    and ``high`` None: only the interval is n/a, and ``reason`` says why. ``n`` counts the
    items (units, pairs) it rests on.
    """

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    reason: str | None = None


def _na(reason: str, n: int = 0) -> Statistic:
    return Statistic(None, n=n, reason=reason)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def level_of(values: Iterable[float]) -> Level:
    """Ordinal for whole-number scores (a 0-5 or 1-5 Likert scale), interval otherwise."""
    values = list(values)
    return "ordinal" if values and all(float(v).is_integer() for v in values) else "interval"


# --- Krippendorff's alpha ---------------------------------------------------------------


def _unit_coincidences(units: Sequence[Sequence], level: Level) -> tuple[np.ndarray, np.ndarray, int]:
    """Each pairable unit's coincidences (U x V x V) over the sorted values present (V).

    Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: a unit
    with m_u >= 2 values adds 1/(m_u - 1) to o_ck for every ordered pair of its values from
    different raters. Units with fewer than two values are not pairable and add nothing.
    """
    kept: list[list] = []
    for unit in units:
        values = [value for value in unit if not _missing(value)]
        if len(values) >= 2:
            kept.append(values)
    if level == "nominal":
        domain = sorted({value for values in kept for value in values}, key=repr)
    else:
        domain = sorted({float(value) for values in kept for value in values})
    index = {value: i for i, value in enumerate(domain)}
    matrices = np.zeros((len(kept), len(domain), len(domain)))
    for u, values in enumerate(kept):
        counts = np.zeros(len(domain))
        for value in values:
            counts[index[value if level == "nominal" else float(value)]] += 1
        # ordered pairs from different raters: counts_c * counts_k, less the pairs of a value with itself
        matrices[u] = (np.outer(counts, counts) - np.diag(counts)) / (len(values) - 1)
    return matrices, np.asarray(domain if level != "nominal" else range(len(domain)), dtype=float), len(kept)


def _delta_squared(level: Level, domain: np.ndarray, marginals: np.ndarray) -> np.ndarray:
    """The difference function (Krippendorff 2011, section E), per resample when ``marginals`` is 2-D.

    nominal: 0 for equal values, 1 otherwise; interval: (c - k)^2; ordinal:
    (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 over the coincidence marginals n_g.
    """
    v = len(domain)
    if level == "nominal":
        return 1.0 - np.eye(v)
    if level == "interval":
        return np.subtract.outer(domain, domain) ** 2
    cumulative = np.cumsum(marginals, axis=-1)
    c = np.arange(v)[:, None]
    k = np.arange(v)[None, :]
    low, high = np.minimum(c, k), np.maximum(c, k)
    # sum_{g=low..high} n_g = cumulative[high] - cumulative[low] + n_low
    between = cumulative[..., high] - cumulative[..., low] + marginals[..., low]
    half = (marginals[..., :, None] + marginals[..., None, :]) / 2
    return (between - half) ** 2


def _alpha_of(coincidences: np.ndarray, level: Level, domain: np.ndarray) -> np.ndarray:
    """alpha = 1 - (n - 1) * sum o_ck d_ck / sum n_c n_k d_ck for one or many matrices (nan: undefined)."""
    marginals = coincidences.sum(axis=-1)
    n = marginals.sum(axis=-1)
    delta = _delta_squared(level, domain, marginals)
    observed = (coincidences * delta).sum(axis=(-2, -1))
    expected = (marginals[..., :, None] * marginals[..., None, :] * delta).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1 - (n - 1) * observed / expected
    return np.where((n >= 2) & (expected > 0), alpha, np.nan)


def krippendorff_alpha(units: Sequence[Sequence], level: Level, seed: int | None = None) -> Statistic:
    """Krippendorff's alpha over ``units`` (one list per item, a value or None/NaN per rater).

    The coincidence-matrix form of Krippendorff (2011), "Computing Krippendorff's
    Alpha-Reliability" (nominal, ordinal and interval metrics as defined there). n/a when
    fewer than two values are pairable or when all pairable values are equal (no variation:
    alpha is 0/0). With a ``seed``, also the 95% percentile-bootstrap interval over units
    (1000 resamples of the items, as ``stats.bootstrap_interval`` resamples a mean;
    deterministic for a seed). Resamples with no variation are left out; when more than 5%
    are, the interval is n/a, as a percentile interval conditioned on variation would
    misstate the uncertainty.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    matrices, domain, pairable = _unit_coincidences(units, level)
    if pairable == 0:
        return _na("fewer than two pairable values: no item has two ratings")
    value = float(_alpha_of(matrices.sum(axis=0), level, domain))
    if math.isnan(value):
        return _na("no variation: every pairable rating is the same value", pairable)
    if seed is None:
        return Statistic(value, n=pairable)
    rng = np.random.default_rng(seed)
    flat = matrices.reshape(pairable, -1)
    alphas = np.empty(RESAMPLES)
    step = max(1, _CHUNK_CELLS // max(pairable, flat.shape[1]))
    for start in range(0, RESAMPLES, step):
        rows = min(step, RESAMPLES - start)
        draws = rng.integers(0, pairable, size=(rows, pairable))
        counts = np.stack([np.bincount(row, minlength=pairable) for row in draws]).astype(float)
        resampled = (counts @ flat).reshape(rows, len(domain), len(domain))
        alphas[start : start + rows] = _alpha_of(resampled, level, domain)
    return _percentile_interval(value, alphas, pairable)


def _percentile_interval(value: float, resampled: np.ndarray, n: int) -> Statistic:
    defined = resampled[~np.isnan(resampled)]
    undefined = len(resampled) - len(defined)
    if undefined > _MAX_UNDEFINED * len(resampled):
        return Statistic(
            value,
            n=n,
            reason=f"interval n/a: {undefined} of {len(resampled)} bootstrap resamples had no variation",
        )
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return Statistic(value, float(low), float(high), n)


# --- Cohen's kappa ----------------------------------------------------------------------


def _paired(first: Sequence, second: Sequence) -> list[tuple]:
    if len(first) != len(second):
        raise ValueError(f"the two raters rate {len(first)} and {len(second)} items")
    return [(a, b) for a, b in zip(first, second, strict=True) if not _missing(a) and not _missing(b)]


def _kappa_of(first: np.ndarray, second: np.ndarray, categories: int) -> np.ndarray:
    """kappa = (p_o - p_e) / (1 - p_e) per row of category codes (nan where p_e = 1)."""
    n = first.shape[-1]
    observed = (first == second).mean(axis=-1)
    expected = np.zeros(first.shape[:-1])
    for c in range(categories):
        expected = expected + (first == c).mean(axis=-1) * (second == c).mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (observed - expected) / (1 - expected)
    return np.where((n > 0) & (expected < 1), kappa, np.nan)


def cohen_kappa(first: Sequence, second: Sequence, seed: int | None = None) -> Statistic:
    """Cohen's kappa between two raters of nominal (e.g. binary) labels, items rated by both.

    Cohen (1960), "A coefficient of agreement for nominal scales": p_e from each rater's
    own marginals (sklearn's ``cohen_kappa_score``, unweighted). n/a when no item is rated by
    both or when both raters always give one and the same label (p_e = 1). With a ``seed``,
    the 95% percentile-bootstrap interval over items (1000 resamples; resamples with p_e = 1
    are left out, and the interval is n/a when more than 5% are).
    """
    pairs = _paired(first, second)
    if not pairs:
        return _na("no item is rated by both")
    labels = sorted({value for pair in pairs for value in pair}, key=repr)
    code = {label: i for i, label in enumerate(labels)}
    a = np.array([code[x] for x, _ in pairs])
    b = np.array([code[y] for _, y in pairs])
    value = float(_kappa_of(a, b, len(labels)))
    if math.isnan(value):
        return _na("no variation: both raters give one and the same label", len(pairs))
    if seed is None:
        return Statistic(value, n=len(pairs))
    rng = np.random.default_rng(seed)
    n = len(pairs)
    kappas = np.empty(RESAMPLES)
    step = max(1, _CHUNK_CELLS // n)
    for start in range(0, RESAMPLES, step):
        rows = min(step, RESAMPLES - start)
        draws = rng.integers(0, n, size=(rows, n))
        kappas[start : start + rows] = _kappa_of(a[draws], b[draws], len(labels))
    return _percentile_interval(value, kappas, n)


# --- Spearman's rho ---------------------------------------------------------------------


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank (scipy's ``rankdata(method="average")``)."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], len(values)]
    for start, end in zip(starts, ends, strict=True):
        ranks[order[start:end]] = (start + end + 1) / 2
    return ranks


def spearman_rho(first: Sequence, second: Sequence, level: float = LEVEL) -> Statistic:
    """Spearman's rho (Pearson's r of average ranks, as ``scipy.stats.spearmanr``) with an interval.

    The interval is Fisher's z with Bonett & Wright's (2000) standard error for Spearman's
    rho, sqrt((1 + rho^2 / 2) / (n - 3)) ("Sample size requirements for estimating Pearson,
    Kendall and Spearman correlations", Psychometrika 65(1)); it needs n >= 4. n/a when
    fewer than two items are rated by both or when either rater gives one value throughout.
    """
    pairs = _paired(first, second)
    n = len(pairs)
    if n < 2:
        return _na("fewer than two items rated by both", n)
    x = _average_ranks(np.array([float(p[0]) for p in pairs]))
    y = _average_ranks(np.array([float(p[1]) for p in pairs]))
    x, y = x - x.mean(), y - y.mean()
    denominator = math.sqrt(float((x * x).sum() * (y * y).sum()))
    if denominator == 0:
        return _na("no variation: one rater gives the same value to every item", n)
    rho = max(-1.0, min(1.0, float((x * y).sum()) / denominator))
    if n < 4:
        return Statistic(rho, n=n, reason="interval n/a: Fisher's z needs at least four items")
    z = math.atanh(rho) if abs(rho) < 1 else math.copysign(math.inf, rho)
    half = NormalDist().inv_cdf(1 - (1 - level) / 2) * math.sqrt((1 + rho * rho / 2) / (n - 3))
    return Statistic(rho, math.tanh(z - half), math.tanh(z + half), n)


# --- prediction-powered mean ------------------------------------------------------------


@dataclass(frozen=True)
class PredictionPowered:
    """The prediction-powered mean: ``estimate`` with its interval, the tuning ``lam`` it used,
    and the counts it rests on (``labelled`` items with a human and a judge score,
    ``unlabelled`` items with a judge score only)."""

    estimate: Statistic
    lam: float
    labelled: int
    unlabelled: int


def ppi_mean(
    judge_unlabelled: Sequence[float],
    judge_labelled: Sequence[float],
    human_labelled: Sequence[float],
    level: float = LEVEL,
) -> PredictionPowered:
    """The prediction-powered estimate of the human-scale mean, with its ``level`` interval.

    Angelopoulos et al. (2023), "Prediction-powered inference", Science 382 (arXiv
    2301.09633), with the power tuning of PPI++ (Angelopoulos, Duchi & Zrnic, arXiv
    2311.01453): theta = lam * mean(judge_unlabelled) + mean(human - lam * judge_labelled),
    lam = cov(human, judge) / ((1 + n/N) var(judge over both sets)) clipped to [0, 1], and the
    normal interval with se^2 = var(lam * judge_unlabelled)/N + var(human - lam *
    judge_labelled)/n, exactly as ``ppi_py.ppi_mean_ci(..., lam=None)`` computes them (same
    variance conventions). The labelled and unlabelled items are disjoint samples. When the
    judge gives one value throughout, lam is 0 (the labels alone: ppi_py divides 0 by 0).
    n/a with fewer than two labelled items or no unlabelled item.
    """
    y = np.asarray(human_labelled, dtype=float)
    yhat = np.asarray(judge_labelled, dtype=float)
    unlabelled = np.asarray(judge_unlabelled, dtype=float)
    n, big_n = len(y), len(unlabelled)
    if len(yhat) != n:
        raise ValueError(f"{n} human labels but {len(yhat)} judge scores on the labelled items")
    if n < 2:
        return PredictionPowered(_na("fewer than two labelled items", n), 0.0, n, big_n)
    if big_n == 0:
        return PredictionPowered(_na("no unlabelled item: every judged item is labelled", n), 0.0, n, big_n)
    # PPI++'s lam for a mean (ppi_py's _calc_lam_glm with the identity Hessian)
    covariance = float(((y - y.mean()) * (yhat - yhat.mean())).mean()) * 2
    variance = float(np.var(np.concatenate([yhat, unlabelled]), ddof=1))
    denominator = 2 * (1 + n / big_n) * variance
    lam = min(1.0, max(0.0, covariance / denominator)) if denominator > 0 else 0.0
    estimate = float((lam * unlabelled).mean() + (y - lam * yhat).mean())
    se = math.sqrt(float(np.var(lam * unlabelled)) / big_n + float(np.var(y - lam * yhat)) / n)
    half = NormalDist().inv_cdf(1 - (1 - level) / 2) * se
    return PredictionPowered(Statistic(estimate, estimate - half, estimate + half, n + big_n), lam, n, big_n)
