"""Estimates of the whole data's scores from a stratified sample of its items (``--ambig-sample``).

The sample (``suites/sample.py``) draws n_h of the N_h items of each stratum h (a suite's
ambiguity type) at random without replacement. Stratum h weighs W_h = N_h / N, so the
estimate of the mean over all N items is the stratified mean ȳ_st = Σ W_h ȳ_h, unbiased
whatever the allocation, with variance estimated by

    v(ȳ_st) = Σ W_h² (1 − f_h) s_h² / n_h,    f_h = n_h / N_h

(Cochran 1977, "Sampling Techniques", 3rd ed., section 5.3, theorems 5.1 to 5.3, eq. 5.6 and
5.7); the 95% interval is ȳ_st ± 1.96 √v (section 5.4). A stratum whose sample holds one
item has no s_h² of its own: it takes the variance of the whole sample in scope, which holds
the between-strata spread too, so the interval errs wide (Cochran's section 5A.12 collapses
such strata to the same end). Statistics that are not means (a pooled ratio, DR's root of a
product) are estimated from the weighted column means, with a stratified bootstrap interval:
items resampled with replacement within each stratum, as Rao and Wu (1988, "Resampling
inference with complex survey data", JASA 83) describe the naive stratified bootstrap (no
finite-population correction there, so that interval errs wide too).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from .bootstrap import _CHUNK_CELLS, LEVEL, RESAMPLES

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike

    from .bootstrap import Statistic

H = TypeVar("H", bound=Hashable)  # a stratum
Z = 1.959963984540054  # the standard normal's 97.5% quantile: a 95% two-sided interval


def _by_stratum(values: Sequence, strata: Sequence[H]) -> dict[H, list]:
    groups: dict[H, list] = {}
    for value, stratum in zip(values, strata, strict=True):
        groups.setdefault(stratum, []).append(value)
    return groups


def weights(present: Sequence[H], population: Mapping[H, int]) -> dict[H, float]:
    """W_h = N_h / N over the strata ``present`` (those with a value in scope)."""
    total = sum(population[h] for h in present)
    return {h: population[h] / total for h in present}


def stratified_mean(
    values: Sequence[float], strata: Sequence[H], population: Mapping[H, int]
) -> tuple[float, float | None]:
    """(ȳ_st, its estimated variance v(ȳ_st)) of one value per sampled item, by Cochran's 5.6
    and 5.7; the variance is None when no stratum can estimate a spread (a single item in all)."""
    groups = _by_stratum(values, strata)
    w = weights(list(groups), population)
    everything = [v for vs in groups.values() for v in vs]
    overall = _s2(everything)
    mean = math.fsum(w[h] * math.fsum(vs) / len(vs) for h, vs in groups.items())
    var = 0.0
    for h, vs in groups.items():
        n, big_n = len(vs), population[h]
        fpc = max(0.0, 1 - n / big_n)
        if fpc == 0:
            continue  # every item of the stratum is in the sample: no sampling error
        s2 = _s2(vs) if n > 1 else overall
        if s2 is None:
            return mean, None
        var += w[h] ** 2 * fpc * s2 / n
    return mean, var


def _s2(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = math.fsum(values) / len(values)
    return math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)


def interval(mean: float, var: float | None, span: tuple[float, float] | None) -> tuple[float, float] | None:
    """ȳ_st ± z √v, kept within the statistic's range ``span`` (a score cannot leave its scale)."""
    if var is None:
        return None
    half = Z * math.sqrt(var)
    low, high = mean - half, mean + half
    if span is not None:
        low, high = max(low, span[0]), min(high, span[1])
    return low, high


def weighted_columns(data: ArrayLike, strata: Sequence[H], population: Mapping[H, int]) -> np.ndarray:
    """Σ W_h (column means of stratum h), for an (n,) or (n, k) array of the sampled items."""
    import numpy as np

    data = np.asarray(data, dtype=float)
    index = _by_stratum(range(len(data)), strata)
    w = weights(list(index), population)
    return sum(w[h] * data[rows].mean(axis=0) for h, rows in index.items())


def stratified_bootstrap(
    data: ArrayLike, strata: Sequence[H], population: Mapping[H, int], seed: int, statistic: Statistic
) -> tuple[float, float]:
    """The 95% percentile interval of ``statistic`` of the weighted column means, items
    resampled with replacement within each stratum (RESAMPLES resamples, seeded)."""
    import numpy as np

    data = np.asarray(data, dtype=float)
    index = _by_stratum(range(len(data)), strata)
    w = weights(list(index), population)
    members = [(w[h], np.array(rows, dtype=np.intp)) for h, rows in index.items()]
    rng = np.random.default_rng(seed)
    stats = np.empty(RESAMPLES)
    step = max(1, _CHUNK_CELLS // max(1, data.size))
    for start in range(0, RESAMPLES, step):
        rows = min(step, RESAMPLES - start)
        means = sum(
            weight * data[group[rng.integers(0, len(group), size=(rows, len(group)))]].mean(axis=1)
            for weight, group in members
        )
        stats[start : start + rows] = statistic(means)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return float(low), float(high)
