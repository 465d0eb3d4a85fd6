"""Means and seeded percentile-bootstrap intervals for suite scores.

The percentile bootstrap of the mean (Efron and Tibshirani 1993, "An Introduction to the
Bootstrap", chapter 13), the cluster bootstrap (Davison and Hinkley 1997, section 3.8: see
:func:`cluster_interval`), and rouge-score's bootstrap "mid" as ASQA and ALCE report ROUGE-Lsum.
The constants here (resamples, level, the memory bound) are those of every resampling
statistic in this room.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    # column means of resamples (..., k) -> the reported number per resample (...)
    Statistic = Callable[[np.ndarray], np.ndarray]

RESAMPLES = 1000
LEVEL = 0.95
_CHUNK_CELLS = 2_000_000  # bound memory: resample matrices of at most this many cells


def stable_seed(seed: int, *parts: str) -> int:
    """A seed per (run seed, suite, metric, slice), independent of evaluation order."""
    return zlib.crc32("\x1f".join((str(seed), *parts)).encode("utf-8"))


def bootstrap_interval(
    values: Sequence[Any] | np.ndarray, seed: int, statistic: Statistic | None = None
) -> tuple[float, float]:
    """The 95% percentile-bootstrap interval of the mean (1000 resamples).

    ``values`` may have a column per quantity, with ``statistic`` mapping resampled column
    means to the reported number (DR's sqrt of a product); by default, the plain mean.
    Deterministic for a given seed and value order, so serial and xdist runs agree.
    """
    if len(values) == 0:
        raise ValueError("no values")
    if statistic is None:  # every resample of equal values has their mean: no numpy to load
        first = float(values[0])
        if len(values) == 1 or all(float(value) == first for value in values):
            return first, first
    import numpy as np  # only the controller builds a scorecard; workers never need it

    data = np.asarray(values, dtype=float)
    n = len(data)
    rng = np.random.default_rng(seed)
    stats = np.empty(RESAMPLES)
    step = max(1, _CHUNK_CELLS // n)
    for start in range(0, RESAMPLES, step):
        rows = min(step, RESAMPLES - start)
        means = data[rng.integers(0, n, size=(rows, n))].mean(axis=1)
        stats[start : start + rows] = means if statistic is None else statistic(means)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return float(low), float(high)


def cluster_interval(values: Sequence[float], clusters: Sequence[Hashable], seed: int) -> tuple[float, float]:
    """The 95% interval of the mean of ``values`` resampling whole clusters (the cluster
    bootstrap, Davison and Hinkley 1997, "Bootstrap Methods and their Application", section
    3.8): values of one cluster are not independent (an interactive query's readings and cost
    pairs: Berant et al. 2025, "Learning Steerable Clarification Policies with
    Collaborative Self-play", section 3.1), and resampling them one by one
    makes the interval too narrow by the square root of the design effect.

    Each cluster is a row (sum of its values, their count), resampled as
    :func:`bootstrap_interval` resamples rows, the mean of a resample being the ratio of its
    sums: with one value per cluster this is :func:`bootstrap_interval` of ``values``; it is
    scipy's ``stats.bootstrap`` (paired, percentile, same generator) of that ratio.
    """
    if len(values) != len(clusters):
        raise ValueError(f"{len(clusters)} cluster labels for {len(values)} values")
    rows: dict[Hashable, list[float]] = {}
    for value, cluster in zip(values, clusters, strict=True):
        rows.setdefault(cluster, []).append(float(value))
    data = [(math.fsum(v), len(v)) for v in rows.values()]
    if len(set(map(float, values))) <= 1:
        return bootstrap_interval(values, seed)  # every resample has the one value: no numpy to load

    def ratio(means: np.ndarray) -> np.ndarray:
        return means[..., 0] / means[..., 1]

    return bootstrap_interval(data, seed, ratio)


def rouge_bootstrap_mid(values: Sequence[float], seed: int, samples: int = RESAMPLES) -> float:
    """The "mid" of rouge-score's ``BootstrapAggregator``, as ASQA and ALCE report ROUGE-Lsum.

    The median of ``samples`` resampled means, drawn exactly as the aggregator draws them
    (``np.random.choice`` on the legacy generator, one resample after another), here from a
    seeded ``RandomState`` instead of the global one. The aggregator averages its (item,
    precision/recall/F) layout along the item axis, a strided reduction that adds one item
    after another; a running sum in item order (``cumsum``) rounds exactly as it does, over a
    third of the data. With ``np.random.seed(seed)`` the official aggregator returns this
    very number (``tests/test_metrics.py`` checks it against the aggregator).
    """
    import numpy as np

    n = len(values)
    if n == 0:
        raise ValueError("no values")
    data = np.asarray(values, dtype=float)
    rng = np.random.RandomState(seed)
    means = np.empty(samples)
    step = max(1, _CHUNK_CELLS // n)
    for start in range(0, samples, step):
        rows = min(step, samples - start)
        sums = np.cumsum(data[rng.randint(0, n, size=(rows, n))], axis=1)[:, -1]
        means[start : start + rows] = sums / n
    return float(np.percentile(means, 50))
