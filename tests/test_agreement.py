"""stats/agreement.py against textbook examples and the independent implementations
(``krippendorff``, ``ppi_py``, scipy, sklearn), with hypothesis properties and a coverage test."""

from __future__ import annotations

import math
import warnings

import krippendorff
import numpy as np
import ppi_py
import pytest
import scipy.stats
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from pytest_ambigqa.stats.agreement import LEVELS, cohen_kappa, krippendorff_alpha, ppi_mean, spearman_rho

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four observers,
# twelve units, missing values (rows are observers).
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def units_of(raters):
    return [list(unit) for unit in zip(*raters, strict=True)]


def reliability_array(units):
    return np.array([[np.nan if v is None else v for v in unit] for unit in units], dtype=float).T


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_on_krippendorffs_worked_example(level, published):
    """The paper gives nominal .743 and interval .849 (section C, E); ordinal .815 per ``krippendorff``'s README."""
    result = krippendorff_alpha(units_of(KRIPPENDORFF_2011), level)
    assert round(result.value, 3) == published
    assert result.n == 11  # unit 12 has one value: not pairable
    assert result.reason is None


def test_alpha_bootstrap_interval_is_seeded_and_brackets_the_example():
    units = units_of(KRIPPENDORFF_2011)
    first = krippendorff_alpha(units, "interval", seed=7)
    assert first == krippendorff_alpha(units, "interval", seed=7)
    assert first != krippendorff_alpha(units, "interval", seed=8)
    assert first.low < first.value <= first.high <= 1


def test_alpha_na_reasons():
    assert krippendorff_alpha([[1, None], [None, 2]], "nominal").reason == (
        "fewer than two pairable values: no item has two ratings"
    )
    same = krippendorff_alpha([[3, 3], [3, 3, None]], "interval")
    assert same.value is None and same.reason.startswith("no variation")
    with pytest.raises(ValueError, match="level must be one of"):
        krippendorff_alpha([[1, 2]], "ratio")


def test_alpha_interval_na_when_resamples_lack_variation():
    # one varied unit among identical ones: most resamples miss it and have no variation
    units = [[1, 1]] * 9 + [[1, 2]]
    result = krippendorff_alpha(units, "nominal", seed=1)
    assert result.value is not None and result.low is None
    assert result.reason.startswith("interval n/a:") and "had no variation" in result.reason


rating = st.one_of(st.none(), st.integers(1, 5))
units_strategy = st.lists(st.lists(rating, min_size=3, max_size=3), min_size=1, max_size=25)


@given(units_strategy, st.sampled_from(LEVELS))
@settings(max_examples=150, deadline=None)
def test_alpha_equals_the_krippendorff_package(units, level):
    ours = krippendorff_alpha(units, level)
    data = reliability_array(units)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        except ValueError:  # "There has to be more than one value in the domain."
            theirs = math.nan
    if ours.value is None:
        assert math.isnan(theirs) or ours.reason.startswith("no variation")
    else:
        assert ours.value == pytest.approx(theirs, abs=1e-9)
        assert ours.value <= 1 + 1e-12


@given(st.lists(st.integers(1, 5), min_size=2, max_size=20), st.integers(2, 4), st.sampled_from(LEVELS))
def test_alpha_of_identical_raters_is_one(values, raters, level):
    assume(len(set(values)) > 1)
    assert krippendorff_alpha([[v] * raters for v in values], level).value == pytest.approx(1.0)


@given(units_strategy, st.sampled_from(LEVELS), st.randoms(use_true_random=False))
@settings(deadline=None)
def test_alpha_is_invariant_to_the_order_of_units_and_raters(units, level, random):
    shuffled = [random.sample(unit, len(unit)) for unit in units]
    random.shuffle(shuffled)
    first, second = krippendorff_alpha(units, level), krippendorff_alpha(shuffled, level)
    assert first.reason == second.reason
    if first.value is not None:
        assert first.value == pytest.approx(second.value, abs=1e-12)


def test_kappa_on_the_textbook_example():
    """Wikipedia's "Cohen's kappa" example: 50 proposals, 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no:
    p_o = 0.7, p_e = 0.5, kappa = 0.4."""
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    result = cohen_kappa(a, b, seed=3)
    assert result.value == pytest.approx(0.4)
    assert result.n == 50 and result.low < 0.4 < result.high
    assert result == cohen_kappa(a, b, seed=3)


binary_pairs = st.lists(st.tuples(st.sampled_from([0, 1, None]), st.sampled_from([0, 1, None])), max_size=40)


@given(binary_pairs)
def test_kappa_equals_sklearn_and_is_symmetric_and_bounded(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    ours, swapped = cohen_kappa(a, b), cohen_kappa(b, a)
    assert (ours.value is None) == (swapped.value is None) and ours.reason == swapped.reason
    if ours.value is not None:
        assert ours.value == pytest.approx(swapped.value, abs=1e-12)
    both = [(x, y) for x, y in pairs if x is not None and y is not None]
    if ours.value is None:
        assert not both or len({v for pair in both for v in pair}) == 1
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = cohen_kappa_score([x for x, _ in both], [y for _, y in both])
    assert ours.value == pytest.approx(theirs, abs=1e-12)
    assert -1 - 1e-12 <= ours.value <= 1 + 1e-12


def test_kappa_na_reasons():
    assert cohen_kappa([None, 1], [1, None]).reason == "no item is rated by both"
    assert cohen_kappa([1, 1], [1, 1]).reason.startswith("no variation")
    with pytest.raises(ValueError, match="rate 2 and 1 items"):
        cohen_kappa([1, 1], [1])


@given(st.lists(st.tuples(st.integers(1, 5), st.floats(0, 1)), min_size=2, max_size=40))
def test_spearman_equals_scipy_with_ties(pairs):
    x, y = [p[0] for p in pairs], [p[1] for p in pairs]
    ours = spearman_rho(x, y)
    if len(set(x)) == 1 or len(set(y)) == 1:
        assert ours.value is None and ours.reason.startswith("no variation")
        return
    assert ours.value == pytest.approx(scipy.stats.spearmanr(x, y).statistic, abs=1e-12)
    if len(pairs) >= 4:
        assert -1 <= ours.low <= ours.value <= ours.high <= 1
    else:
        assert ours.low is None and "four items" in ours.reason


def test_spearman_interval_is_bonett_wright():
    x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    y = [2, 1, 4, 3, 6, 5, 8, 7, 10, 9]
    ours = spearman_rho(x, y)
    rho = scipy.stats.spearmanr(x, y).statistic
    se = math.sqrt((1 + rho**2 / 2) / (10 - 3))
    z = scipy.stats.norm.ppf(0.975)
    assert (ours.low, ours.high) == pytest.approx(
        (math.tanh(math.atanh(rho) - z * se), math.tanh(math.atanh(rho) + z * se))
    )


@given(
    st.integers(0, 2**32 - 1),
    st.integers(2, 60),
    st.integers(1, 300),
    st.floats(-1, 2),
)
@settings(max_examples=60, deadline=None)
def test_ppi_equals_ppi_py(seed, n, big_n, strength):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, size=n).astype(float)
    judge = np.clip(np.round(strength * human + rng.normal(size=n)), 1, 5)
    unlabelled = rng.integers(1, 6, size=big_n).astype(float)
    assume(np.var(np.concatenate([judge, unlabelled])) > 0)
    ours = ppi_mean(unlabelled, judge, human)
    low, high = ppi_py.ppi_mean_ci(human, judge, unlabelled, alpha=0.05)
    point = ppi_py.ppi_mean_pointestimate(human, judge, unlabelled)
    assert ours.estimate.value == pytest.approx(float(np.squeeze(point)), abs=1e-9)
    assert (ours.estimate.low, ours.estimate.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)
    assert 0 <= ours.lam <= 1 and (ours.labelled, ours.unlabelled) == (n, big_n)


def test_ppi_na_and_constant_judge():
    assert ppi_mean([1.0, 2.0], [1.0], [2.0]).estimate.reason == "fewer than two labelled items"
    assert ppi_mean([], [1.0, 2.0], [2.0, 3.0]).estimate.reason.startswith("no unlabelled item")
    constant = ppi_mean([3.0] * 10, [3.0, 3.0, 3.0], [1.0, 2.0, 3.0])
    assert constant.lam == 0 and constant.estimate.value == pytest.approx(2.0)  # the labels' own mean


def test_ppi_interval_covers_the_true_mean_at_its_nominal_rate():
    """300 simulated runs (a biased, noisy judge; 80 labelled of 1000 items): the 95% interval
    covers the true human mean in 95% of them, within 3 binomial standard errors
    (sqrt(0.95 * 0.05 / 300) = 0.0126, so within 0.038)."""
    runs, covered = 300, 0
    true_mean = 3.0
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        human = true_mean + rng.normal(size=1080)
        judge = 0.8 * human + 1.0 + 0.6 * rng.normal(size=1080)  # biased: the judge's mean is 3.4
        result = ppi_mean(judge[80:], judge[:80], human[:80]).estimate
        covered += result.low <= true_mean <= result.high
    assert abs(covered / runs - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / runs)
