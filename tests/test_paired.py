"""Paired comparison statistics: hand-computed cases, a coverage check and hypothesis properties."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ambigqa.stats.paired import (
    EXACT_UP_TO,
    PERMUTATIONS,
    discordant,
    holm,
    mcnemar_exact,
    paired_bootstrap,
    sign_flip_p,
)


def mcnemar_reference(b: int, c: int) -> Fraction:
    """The definition, in exact rationals: min(1, 2 P(X <= min(b, c))), X ~ Bin(b + c, 1/2)."""
    n = b + c
    term = tail = 1  # C(n, 0), then C(n, i + 1) = C(n, i) (n - i) / (i + 1), exactly
    for i in range(min(b, c)):
        term = term * (n - i) // (i + 1)
        tail += term
    assert term == math.comb(n, min(b, c))
    return min(Fraction(1), Fraction(2 * tail, 2**n))


def ratio(means):
    return means[..., 0] / means[..., 1]


def geometric(means):
    return np.sqrt(means[..., 0] * means[..., 1])


# A grid of exactly representable scores (multiples of 1/4), so sums, shifts and swaps are exact
# and hand-made expectations hold to the last bit.
quarter = st.integers(-8, 8).map(lambda k: k / 4)
pairs = st.lists(st.tuples(quarter, quarter), min_size=1, max_size=30)
seeds = st.integers(0, 2**32 - 1)


# --- McNemar ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [
        (0, 0, 1.0),  # no discordant pairs: nothing to test
        # n = 6, k = 1: P(X <= 1) = (1 + 6) / 64 = 7/64, doubled 14/64
        (1, 5, 14 / 64),
        # n = 5, k = 0: P(X <= 0) = 1/32, doubled 1/16
        (0, 5, 0.0625),
        # n = 6, k = 0: 1/64, doubled 1/32
        (0, 6, 0.03125),
        # n = 10, k = 5: P(X <= 5) > 1/2, doubled above 1, capped
        (5, 5, 1.0),
        # n = 13, k = 3: 2 (1 + 13 + 78 + 286) / 8192 = 756 / 8192
        (3, 10, 756 / 8192),
    ],
)
def test_mcnemar_by_hand(b, c, expected):
    assert mcnemar_exact(b, c) == expected
    assert mcnemar_exact(c, b) == expected
    assert mcnemar_exact(b, c) == float(mcnemar_reference(b, c))


def test_mcnemar_large_counts_match_exact_rationals():
    for b, c in [(450, 550), (4_900, 5_100), (2_000, 2_001)]:
        p = mcnemar_exact(b, c)
        assert 0 < p <= 1 and math.isfinite(p)
        assert p == pytest.approx(float(mcnemar_reference(b, c)), rel=1e-12)
        assert mcnemar_exact(c, b) == p


def test_mcnemar_at_a_hundred_thousand_pairs():
    assert mcnemar_exact(50_000, 50_000) == 1.0
    assert 0.9 < mcnemar_exact(49_990, 50_010) < 1.0
    assert 0 < mcnemar_exact(49_000, 51_000) < 1e-9
    assert mcnemar_exact(0, 100_000) == 0.0  # 2**-99_999 is below the smallest float


@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_is_the_binomial_definition(b, c):
    assert mcnemar_exact(b, c) == pytest.approx(float(mcnemar_reference(b, c)), rel=1e-12)
    assert mcnemar_exact(b, c) == mcnemar_exact(c, b)


def test_mcnemar_rejects_negative_counts():
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def test_discordant():
    assert discordant([1, 1, 0, 0, 1], [1, 0, 1, 1, 0]) == (2, 2)
    assert discordant([1, 0, 0], [1, 1, 1]) == (0, 2)
    assert discordant([True, False], [False, False]) == (1, 0)
    assert discordant([], []) == (0, 0)
    with pytest.raises(ValueError):
        discordant([1, 0], [1])
    with pytest.raises(ValueError):
        discordant([0.5], [1])


# --- Holm -------------------------------------------------------------------------------------


def test_holm_by_hand():
    # m = 3 given p's, sorted 0.01, 0.03, 0.04: 3 * 0.01 = 0.03, 2 * 0.03 = 0.06,
    # 1 * 0.04 = 0.04 raised to the running maximum 0.06
    adjusted = holm([0.01, 0.04, 0.03, None])
    assert adjusted[3] is None
    assert adjusted[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert holm([]) == [] and holm([None]) == [None]
    assert holm([0.5, 0.9]) == [1.0, 1.0]  # capped at 1


@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), max_size=12))
def test_holm_properties(pvalues):
    adjusted = holm(pvalues)
    assert len(adjusted) == len(pvalues)
    given_ = [(p, a) for p, a in zip(pvalues, adjusted, strict=True) if p is not None]
    assert all((p is None) == (a is None) for p, a in zip(pvalues, adjusted, strict=True))
    for p, a in given_:
        assert p <= a <= 1
    for (p, a), (q, b) in itertools.product(given_, repeat=2):
        if p <= q:
            assert a <= b
    if len(given_) == 1:
        assert given_[0][1] == given_[0][0]


# --- sign-flip permutation test ---------------------------------------------------------------


def test_sign_flip_by_hand():
    # diffs 1, 2, 3: T = 6/3 = 2; the 8 sign patterns give sums 6, 4, 2, 0, 0, -2, -4, -6 ...
    # precisely: +++ 6, -++ 4, +-+ 2, --+ 0, ++- 0, -+- -2, +-- -4, --- -6; |sum| >= 6 only for
    # +++ and ---: p = 2/8
    assert sign_flip_p([0, 0, 0], [1, 2, 3], seed=0) == 0.25
    # new - base = 1, 1, 2, 0: the last item cannot move T and is left out (keeping it would
    # double every count and the total alike). Sums over the 8 patterns of (1, 1, 2):
    # 4, 2, 2, 0, 0, -2, -2, -4; |sum| >= 4 for two of them: p = 2/8
    assert sign_flip_p([0, 0, 0, 0], [1, 1, 2, 0], seed=0) == 0.25
    # A tie: new - base = 1, -1, 2, 0, observed sum 2; patterns of (1, -1, 2) sum to
    # 2, 4, 0, 2, -2, 0, -4, -2, and |sum| >= 2 holds for six of them, the two other
    # patterns reaching exactly 2 included: p = 6/8
    assert sign_flip_p([0, 0, 0, 0], [1, -1, 2, 0], seed=0) == 0.75
    # base and new rows as the items' two runs, not only their difference: swapping a row pair
    assert sign_flip_p([5, 3, 7], [6, 5, 10], seed=0) == 0.25


def test_sign_flip_edge_cases():
    assert sign_flip_p([1, 0, 1], [1, 0, 1], seed=3) == 1.0  # nothing differs
    assert sign_flip_p([0.0], [1.0], seed=3) == 1.0  # one item: + and - tie in |T|
    with pytest.raises(ValueError):
        sign_flip_p([], [], seed=0)
    with pytest.raises(ValueError):
        sign_flip_p([[1, 2]], [[1, 2]], seed=0)  # columns without a statistic
    with pytest.raises(ValueError):
        sign_flip_p([1, 2], [1], seed=0)


def brute_force_p(base, new) -> Fraction:
    """Every one of the 2**n swap patterns, unchanged items included, counted exactly.

    The scores are quarters, so four times each difference is an integer and so is every sum.
    """
    diffs = np.array([round(4 * (y - x)) for x, y in zip(base, new, strict=True)])
    signs = np.array(list(itertools.product((1, -1), repeat=len(diffs))))
    hits = int(np.count_nonzero(np.abs(signs @ diffs) >= abs(diffs.sum())))
    return Fraction(hits, len(signs))


@given(st.lists(st.tuples(quarter, quarter), min_size=1, max_size=10), seeds)
def test_exact_enumeration_is_the_definition(rows, seed):
    base, new = zip(*rows, strict=True)
    assert sign_flip_p(base, new, seed) == float(brute_force_p(base, new))


def test_monte_carlo_agrees_with_full_enumeration():
    # m = 18 > EXACT_UP_TO: the Monte Carlo p lands near the exact one, within 4 standard errors
    m = EXACT_UP_TO + 2
    diffs = np.array([1, -2, 3, 1, -1, 2, 2, -3, 1, 1, -2, 1, 3, -1, 1, 2, -1, 1], dtype=float)
    assert len(diffs) == m
    signs = 1 - 2 * ((np.arange(2**m)[:, None] >> np.arange(m)) & 1)
    exact = np.mean(np.abs(signs @ diffs) >= abs(diffs.sum()))
    p = sign_flip_p(np.zeros(m), diffs, seed=11)
    assert abs(p - exact) < 4 * math.sqrt(exact * (1 - exact) / PERMUTATIONS)
    assert p * (1 + PERMUTATIONS) == pytest.approx(round(p * (1 + PERMUTATIONS)))  # (1 + count) / 5000


def test_ten_thousand_items_monte_carlo():
    rng = np.random.default_rng(2024)
    n = 10_000
    base = (rng.random(n) < 0.5).astype(float)
    new = (rng.random(n) < 0.5).astype(float)
    p = sign_flip_p(base, new, seed=1)
    assert 0 < p <= 1
    # a ten-point gain over 10,000 items (z about 14) beats every random swap: count 0
    better = np.maximum(base, (rng.random(n) < 0.2).astype(float))
    assert sign_flip_p(base, better, seed=1) == 1 / (1 + PERMUTATIONS)
    # pooled columns (correct, 1) with a ratio statistic run the same way
    ones = np.ones(n)
    p_ratio = sign_flip_p(np.c_[base, ones], np.c_[new, ones], seed=1, statistic=ratio)
    assert p_ratio == p


@settings(deadline=None)
@given(pairs, seeds)
def test_sign_flip_properties(rows, seed):
    base, new = (np.array(column) for column in zip(*rows, strict=True))
    p = sign_flip_p(base, new, seed)
    assert 0 < p <= 1
    assert sign_flip_p(new, base, seed) == p  # which run is "base" does not matter
    assert sign_flip_p(base + 2.5, new + 2.5, seed) == p  # nor the origin of the scores
    assert sign_flip_p(base, new, seed) == p  # deterministic
    # a statistic that is the identity on the mean gives the same p
    assert sign_flip_p(base, new, seed, statistic=lambda means: means) == p


# --- paired bootstrap -------------------------------------------------------------------------


def test_identical_runs_give_a_zero_interval():
    values = [0.1, 0.5, 0.9, 1.0]
    assert paired_bootstrap(values, values, ["a", "b", "a", None], seed=0) == (0.0, 0.0)
    columns = [[1, 2], [0, 1], [3, 3]]
    assert paired_bootstrap(columns, columns, None, seed=0, statistic=ratio) == (0.0, 0.0)
    assert paired_bootstrap(columns, columns, None, seed=0, statistic=geometric) == (0.0, 0.0)


def test_strata_keep_their_sizes():
    # stratum a (3 items) always gains 1, stratum b (7 items) never: any within-stratum resample
    # holds three a's and seven b's, so the mean gain is 3/10 every time
    base = [0.0] * 10
    new = [1.0] * 3 + [0.0] * 7
    strata = ["a"] * 3 + ["b"] * 7
    assert paired_bootstrap(base, new, strata, seed=5) == (0.3, 0.3)
    # shuffled item order changes nothing about that
    order = [4, 0, 9, 1, 5, 2, 8, 3, 7, 6]
    shuffled = [[column[i] for i in order] for column in (base, new, strata)]
    assert paired_bootstrap(*shuffled, seed=5) == (0.3, 0.3)
    # resampling across the strata lets the share of a's vary
    low, high = paired_bootstrap(base, new, None, seed=5)
    assert low < 0.3 < high


def test_coverage_of_a_known_difference():
    # 200 seeded datasets of 80 items, new = base + 0.1 + noise, in two strata of 30 and 50 items
    # whose noise differs: the 95% interval should cover the true 0.1 about 95% of the time
    # (percentile intervals run a little narrow at n = 80)
    covered = 0
    strata = ["short"] * 30 + ["long"] * 50
    for k in range(200):
        rng = np.random.default_rng(k)
        base = rng.random(80)
        noise = np.r_[rng.normal(0, 0.2, 30), rng.normal(0, 0.4, 50)]
        low, high = paired_bootstrap(base, base + 0.1 + noise, strata, seed=k)
        covered += low <= 0.1 <= high
    assert 0.88 * 200 <= covered <= 0.99 * 200


def test_pooled_ratio_statistic():
    # (sum, count) columns: new adds half a unit per counted unit, so the pooled ratio gains
    # exactly 0.5 in every resample, however unequal the counts
    counts = np.array([1, 4, 2, 8, 1, 3], dtype=float)
    sums = np.array([0, 2, 1, 5, 1, 0], dtype=float)
    base = np.c_[sums, counts]
    new = np.c_[sums + 0.5 * counts, counts]
    low, high = paired_bootstrap(base, new, ["x", "y", "x", "y", "x", "y"], seed=1, statistic=ratio)
    assert low == pytest.approx(0.5) and high == pytest.approx(0.5)
    # with every count 1 the pooled ratio is the plain mean, drawn from the same indices
    rng = np.random.default_rng(0)
    a, b = rng.random(50), rng.random(50)
    ones = np.ones(50)
    pooled = paired_bootstrap(np.c_[a, ones], np.c_[b, ones], None, seed=9, statistic=ratio)
    assert pooled == pytest.approx(paired_bootstrap(a, b, None, seed=9), abs=1e-12)


def test_geometric_statistic():
    # two metrics per item combined as sqrt(mean1 * mean2), as DR is
    rng = np.random.default_rng(3)
    base = rng.random((60, 2))
    new = np.clip(base + rng.normal(0.05, 0.1, (60, 2)), 0, 1)
    strata = ["p"] * 20 + ["q"] * 40
    low, high = paired_bootstrap(base, new, strata, seed=2, statistic=geometric)
    point = geometric(new.mean(axis=0)) - geometric(base.mean(axis=0))
    assert low < point < high
    assert paired_bootstrap(base, new, strata, seed=2, statistic=geometric) == (low, high)
    swapped = paired_bootstrap(new, base, strata, seed=2, statistic=geometric)
    assert swapped == pytest.approx((-high, -low), abs=1e-12)


def test_bootstrap_rejects_bad_input():
    with pytest.raises(ValueError):
        paired_bootstrap([], [], [], seed=0)
    with pytest.raises(ValueError):
        paired_bootstrap([1, 2], [1, 2], ["a"], seed=0)
    with pytest.raises(ValueError):
        paired_bootstrap([1, 2], [1, 2, 3], None, seed=0)
    with pytest.raises(ValueError):
        paired_bootstrap([[1, 2]], [[1, 2]], None, seed=0)  # columns without a statistic


strata_labels = st.sampled_from(["a", "b", None])


@settings(deadline=None)
@given(st.lists(st.tuples(quarter, quarter, strata_labels), min_size=1, max_size=30), seeds)
def test_bootstrap_properties(rows, seed):
    base, new, strata = (list(column) for column in zip(*rows, strict=True))
    base, new = np.array(base), np.array(new)
    low, high = paired_bootstrap(base, new, strata, seed)
    assert low <= high
    diffs = new - base
    assert diffs.min() - 1e-12 <= low and high <= diffs.max() + 1e-12
    assert paired_bootstrap(base, new, strata, seed) == (low, high)  # deterministic
    # same seed, same indices: swapping the runs mirrors the interval
    assert paired_bootstrap(new, base, strata, seed) == pytest.approx((-high, -low), abs=1e-12)
    # a common shift of both runs cancels in every paired difference
    assert paired_bootstrap(base - 1.75, new - 1.75, strata, seed) == pytest.approx((low, high), abs=1e-12)


@settings(deadline=None)
@given(st.lists(st.tuples(st.floats(-1, 1), st.floats(-1, 1)), min_size=1, max_size=20), st.floats(-10, 10))
def test_bootstrap_shift_with_any_floats(rows, shift):
    base, new = (np.array(column) for column in zip(*rows, strict=True))
    low, high = paired_bootstrap(base, new, None, seed=4)
    assert paired_bootstrap(base + shift, new + shift, None, seed=4) == pytest.approx((low, high), abs=1e-9)
