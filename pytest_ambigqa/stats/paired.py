"""Paired statistics for two runs of a system on the same items.

Two runs scored on the same items are compared item by item: a paired bootstrap interval of the
difference, a sign-flip permutation p-value, McNemar's exact test on 0/1 items, and Holm's
adjustment when several metrics are compared at once. Pairing removes the between-item variance
that two independent intervals would count twice.

References: the paired (sign-flip) permutation test of Fisher 1935, "The Design of
Experiments" (Darwin's paired plants), with the Monte Carlo p-value (1 + count) / (1 + draws)
of Phipson and Smyth 2010, "Permutation p-values should never be zero" (SAGMB 9); McNemar
1947, "Note on the sampling error of the difference between correlated proportions or
percentages" (Psychometrika 12); Holm 1979, "A simple sequentially rejective multiple test
procedure" (Scand. J. Statist. 6).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .bootstrap import _CHUNK_CELLS, LEVEL, RESAMPLES

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike

    from .bootstrap import Statistic

PERMUTATIONS = 4999  # Monte Carlo sign flips when exact enumeration is too big
EXACT_UP_TO = 16  # enumerate all 2**m flips when m items differ, m <= this
_TIE = 1e-9  # |T*| within this share of the largest |T| is a tie: such values differ by rounding only
_TAIL_BITS = 64  # McNemar's tail sum stops once what is left is below 2**-64 of it


def _pair(base: ArrayLike, new: ArrayLike, statistic: Statistic | None) -> tuple[np.ndarray, np.ndarray]:
    """Both runs as float arrays of one shape, (n,) or (n, k); columns need a statistic."""
    import numpy as np

    base = np.asarray(base, dtype=float)
    new = np.asarray(new, dtype=float)
    if base.shape != new.shape or base.ndim not in (1, 2):
        raise ValueError(f"base {base.shape} and new {new.shape} must share a shape (n,) or (n, k)")
    if len(base) == 0:
        raise ValueError("no items")
    if statistic is None and base.ndim != 1:
        raise ValueError("columns per item need a statistic")
    return base, new


def paired_bootstrap(
    base: ArrayLike, new: ArrayLike, strata: Sequence | None, seed: int, statistic: Statistic | None = None
) -> tuple[float, float]:
    """The 95% percentile interval of statistic(mean new) - statistic(mean base).

    Items are resampled with replacement within each stratum, so every stratum keeps its size
    (a suite's share of a mixed run is fixed by design, not sampled), and the same indices serve
    both runs: that is the pairing. ``statistic`` maps column means (..., k) to the reported
    number, as in ``stats.bootstrap_interval``; by default the plain mean of 1-D values, whose
    difference is taken as the mean of per-item differences (exact when those are constant).
    ``strata`` holds one hashable label per item (None is a label too); ``strata=None`` means a
    single stratum. RESAMPLES resamples, deterministic for a given seed and item order.
    """
    import numpy as np

    base, new = _pair(base, new, statistic)
    n = len(base)
    labels = [None] * n if strata is None else list(strata)
    if len(labels) != n:
        raise ValueError(f"{len(labels)} strata labels for {n} items")
    groups: dict = {}
    for i, label in enumerate(labels):
        groups.setdefault(label, []).append(i)
    # Positions laid out stratum by stratum, each stratum drawn with its own scalar bound (a
    # draw with one bound per position is several times slower).
    members = [np.array(group, dtype=np.intp) for group in groups.values()]
    diff = new - base if statistic is None else None
    rng = np.random.default_rng(seed)
    stats = np.empty(RESAMPLES)
    step = max(1, _CHUNK_CELLS // base.size)
    for start in range(0, RESAMPLES, step):
        rows = min(step, RESAMPLES - start)
        idx = np.concatenate(
            [group[rng.integers(0, len(group), size=(rows, len(group)))] for group in members], axis=1
        )
        if diff is not None:
            stats[start : start + rows] = diff[idx].mean(axis=1)
        else:
            assert statistic is not None  # one of diff and statistic is given
            stats[start : start + rows] = statistic(_means(new, idx)) - statistic(_means(base, idx))
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return float(low), float(high)


def _means(data: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Column means of each resample: one column at a time, as a 3-D gather reduces slowly."""
    import numpy as np

    if data.ndim == 1:
        return data[idx].mean(axis=1)
    return np.stack([column[idx].mean(axis=1) for column in data.T], axis=-1)


def sign_flip_p(base: ArrayLike, new: ArrayLike, seed: int, statistic: Statistic | None = None) -> float:
    """Two-sided paired permutation p-value of T = statistic(mean new) - statistic(mean base).

    Under H0 the two runs are exchangeable within each item, so each item's pair may be swapped.
    Items with identical rows cannot move T and are left out; with m items left, all 2**m swaps
    are enumerated when m <= EXACT_UP_TO (p is then exact, the identity included), otherwise
    PERMUTATIONS random swaps give p = (1 + count) / (1 + PERMUTATIONS). A swap moves the column
    means by mask @ (new - base) / n, one matrix product per chunk, so 10,000 items stay fast;
    with integer scores (0/1 items) those sums are exact, and |T*| equal to |T| up to rounding
    counts as a tie.
    """
    import numpy as np

    base, new = _pair(base, new, statistic)
    n = len(base)
    delta = new - base
    moved = delta != 0 if delta.ndim == 1 else np.any(delta != 0, axis=1)
    delta = delta[moved]
    m = len(delta)
    if m == 0:
        return 1.0
    base_means, new_means, total_delta = base.mean(axis=0), new.mean(axis=0), delta.sum(axis=0)

    def swapped(masks: np.ndarray) -> np.ndarray:
        """T for each row of 0/1 swap masks (1 = swap that item)."""
        if statistic is None:  # the sum of +-d, exact for integer scores
            return (total_delta - 2 * (masks @ delta)) / n
        shift = (masks @ delta) / n
        return statistic(new_means - shift) - statistic(base_means + shift)

    observed = abs(float(swapped(np.zeros((1, m)))[0]))
    step = max(1, _CHUNK_CELLS // m)
    exact = m <= EXACT_UP_TO
    draws = 2**m if exact else PERMUTATIONS
    values = np.empty(draws)
    rng = np.random.default_rng(seed)
    bits = np.arange(m)
    for start in range(0, draws, step):
        rows = min(step, draws - start)
        masks: np.ndarray
        if exact:
            masks = (np.arange(start, start + rows)[:, None] >> bits) & 1
        else:
            masks = np.unpackbits(rng.integers(0, 256, size=(rows, (m + 7) // 8), dtype=np.uint8), axis=1)
            masks = masks[:, :m]
        values[start : start + rows] = np.abs(swapped(masks.astype(float)))
    tolerance = _TIE * max(observed, float(values.max()))
    count = int(np.count_nonzero(values >= observed - tolerance))
    return count / draws if exact else (1 + count) / (1 + PERMUTATIONS)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p: min(1, 2 * P(X <= min(b, c))) for X ~ Binomial(b + c, 1/2).

    The binomial tail is summed on Python integers, from C(n, k) down (each term from the last
    by an exact division), and divided once by 2**n, which rounds correctly; the sum stops when
    the geometric bound on the terms left is below 2**-64 of it, far under float precision.
    At n = 100,000 that is a fifth of a second at worst (C(n, n/2) itself dominates).
    """
    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise ValueError(f"negative discordant counts ({b}, {c})")
    n, k = b + c, min(b, c)
    if n == 0 or 2 * k == n:
        return 1.0
    term = math.comb(n, k)
    tail = term
    for i in range(k, 0, -1):
        # terms below term_i shrink by at most i / (n - i + 1) each, so they sum to at most
        # term_i * i / (n - 2i + 1), with n - 2i + 1 >= 1 because i <= k < n / 2
        if (term * i) << _TAIL_BITS < tail * (n - 2 * i + 1):
            break
        term = term * i // (n - i + 1)
        tail += term
    return min(1.0, 2 * tail / (1 << n))


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni step-down adjusted p-values, in input order; None passes through.

    Sorted ascending, the j-th of the m given p's is multiplied by m - j + 1, capped at 1, and
    made monotone by a running maximum, so a metric is never more significant than a smaller p.
    """
    given = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m = len(given)
    adjusted: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for j, (p, i) in enumerate(given):
        running = max(running, min(1.0, (m - j) * float(p)))
        adjusted[i] = running
    return adjusted


def discordant(base: ArrayLike, new: ArrayLike) -> tuple[int, int]:
    """(b, c) of two 0/1 item vectors: b = base 1 and new 0, c = base 0 and new 1."""
    import numpy as np

    base = np.asarray(base, dtype=float)
    new = np.asarray(new, dtype=float)
    if base.shape != new.shape or base.ndim != 1:
        raise ValueError(f"base {base.shape} and new {new.shape} must be vectors of one length")
    if not (np.isin(base, (0, 1)).all() and np.isin(new, (0, 1)).all()):
        raise ValueError("discordant counts need 0/1 item scores")
    return int(np.count_nonzero((base == 1) & (new == 0))), int(np.count_nonzero((base == 0) & (new == 1)))
