"""The interactive protocol's interval resamples queries whole (``stats.cluster_interval``):
equal to scipy's bootstrap of the same ratio, hypothesis properties, and its coverage by
simulation next to the interval that takes a query's cells as independent (Berant et al.
2025, "Learning Steerable Clarification Policies with Collaborative Self-play", section 3.1:
one query, every reading and cost pair of it)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

from pytest_ambigqa.stats.bootstrap import RESAMPLES, bootstrap_interval, cluster_interval

CELLS = st.lists(st.tuples(st.integers(0, 6), st.floats(-100, 100)), min_size=1, max_size=40)


def test_it_is_scipys_paired_percentile_bootstrap_of_the_ratio_of_sums():
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 6, size=25)
    values = [float(v) for size in sizes for v in rng.normal(rng.normal(), 1, size)]
    clusters = [q for q, size in enumerate(sizes) for _ in range(size)]
    sums = np.array([sum(v for v, c in zip(values, clusters, strict=True) if c == q) for q in range(25)])
    reference = scipy.stats.bootstrap(
        (sums, sizes.astype(float)),
        lambda s, n, axis=-1: s.mean(axis=axis) / n.mean(axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=RESAMPLES,
        rng=np.random.default_rng(11),
    ).confidence_interval
    assert cluster_interval(values, clusters, 11) == pytest.approx((reference.low, reference.high), abs=1e-12)


@given(st.lists(st.floats(-100, 100), min_size=1, max_size=30), st.integers(0, 2**32 - 1))
def test_one_value_per_cluster_is_the_plain_bootstrap(values, seed):
    ours = cluster_interval(values, list(range(len(values))), seed)
    assert ours == pytest.approx(bootstrap_interval(values, seed), abs=1e-9)


@given(CELLS, st.integers(0, 2**32 - 1))
def test_it_lies_between_the_lowest_and_highest_cluster_mean(cells, seed):
    values = [v for _, v in cells]
    clusters = [c for c, _ in cells]
    means = [np.mean([v for c, v in cells if c == q]) for q in set(clusters)]
    low, high = cluster_interval(values, clusters, seed)
    assert min(means) - 1e-9 <= low <= high <= max(means) + 1e-9


@given(CELLS, st.integers(0, 2**32 - 1), st.floats(-50, 50))
def test_it_moves_with_a_shift_of_every_value(cells, seed, shift):
    values = [v for _, v in cells]
    clusters = [c for c, _ in cells]
    low, high = cluster_interval(values, clusters, seed)
    moved = cluster_interval([v + shift for v in values], clusters, seed)
    assert moved == pytest.approx((low + shift, high + shift), abs=1e-6)


@given(st.lists(st.floats(-100, 100), min_size=1, max_size=12), st.integers(0, 2**32 - 1))
def test_one_cluster_has_no_spread_to_resample(values, seed):
    mean = float(np.mean(values))
    assert cluster_interval(values, ["q"] * len(values), seed) == pytest.approx((mean, mean), abs=1e-9)


def test_a_cluster_label_for_every_value():
    with pytest.raises(ValueError, match="2 cluster labels for 3 values"):
        cluster_interval([1.0, 2.0, 3.0], ["a", "b"], 0)


def coverage(queries: int, cells: int, correlation: float, simulations: int) -> tuple[float, float, float]:
    """Share of nominal 95% intervals that cover the true mean 0, resampling queries and
    resampling cells, over datasets whose cells of one query correlate at ``correlation``
    (a random query effect), and the mean ratio of the two intervals' widths."""
    rng = np.random.default_rng(20251126)
    clusters = [q for q in range(queries) for _ in range(cells)]
    whole = cells_alone = 0
    ratios = []
    for s in range(simulations):
        effect = rng.normal(0, np.sqrt(correlation), queries)
        values = (
            np.repeat(effect, cells) + rng.normal(0, np.sqrt(1 - correlation), queries * cells)
        ).tolist()
        low, high = cluster_interval(values, clusters, s)
        naive_low, naive_high = bootstrap_interval(values, s)
        whole += low <= 0 <= high
        cells_alone += naive_low <= 0 <= naive_high
        ratios.append((high - low) / (naive_high - naive_low))
    return whole / simulations, cells_alone / simulations, float(np.mean(ratios))


def test_resampling_queries_covers_the_truth_at_95_percent_and_resampling_cells_does_not():
    # 9 cost pairs a query, correlated at 0.75 within it: a design effect of 1 + 8 x 0.75 = 7,
    # cells taken as independent make the interval sqrt(7) = 2.6 times too narrow.
    whole, cells_alone, ratio = coverage(queries=40, cells=9, correlation=0.75, simulations=300)
    assert 0.90 <= whole <= 0.99, whole
    assert cells_alone < 0.75, cells_alone
    assert 2.2 < ratio < 3.0, ratio
