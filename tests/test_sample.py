"""Stratified samples (--ambig-sample): the allocation, the seeded draw, the weighted estimate
and its interval (unbiased, checked by simulation and by enumeration), and runs."""

from __future__ import annotations

import itertools
import math
import random
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixtures.process import ambig_run, run_pytest
from pytest_ambigqa.errors import Invalid
from pytest_ambigqa.readback import check_scorecard
from pytest_ambigqa.schema import AmbigItem
from pytest_ambigqa.stats.strata import interval, stratified_bootstrap, stratified_mean, weighted_columns
from pytest_ambigqa.suites.sample import allocate, draw


def _items(sizes: dict[tuple[str, str | None], int]) -> list[AmbigItem]:
    return [
        AmbigItem(suite, f"{kind}-{n}", "q?", (), ambiguity_type=kind)
        for (suite, kind), size in sizes.items()
        for n in range(size)
    ]


@given(st.lists(st.integers(1, 60), min_size=1, max_size=8).flatmap(
    lambda sizes: st.tuples(st.just(sizes), st.integers(len(sizes), sum(sizes)))))  # fmt: skip
def test_allocation_is_proportional_with_one_a_stratum(case):
    sizes, size = case
    counts = allocate(size, sizes)
    assert sum(counts) == size
    assert all(1 <= n <= big for n, big in zip(counts, sizes, strict=True))
    quotas = [size * big / sum(sizes) for big in sizes]
    if all(q >= 1 for q in quotas):  # no stratum needed lifting to one: within one of its quota
        assert all(abs(n - q) < 1 for n, q in zip(counts, quotas, strict=True))


def test_allocation_refuses_what_cannot_be():
    with pytest.raises(ValueError):
        allocate(2, [3, 3, 3])


def test_the_draw_is_seeded_by_key_not_by_order():
    items = _items({("march", "semantic"): 20, ("march", "syntactic"): 7, ("asqa", None): 40})
    chosen, sample = draw(items, 10, seed=3)
    assert sample is not None and sample.size == 10 and sample.population == 67
    assert {(i.suite, i.ambiguity_type) for i in chosen} == {
        ("march", "semantic"),
        ("march", "syntactic"),
        ("asqa", None),
    }
    shuffled = list(items)
    random.Random(0).shuffle(shuffled)
    again, _ = draw(shuffled, 10, seed=3)
    assert {i.key for i in again} == {i.key for i in chosen}  # the file's order does not matter
    assert [i.key for i in chosen] == [i.key for i in items if i.key in {c.key for c in chosen}]  # order kept
    other, _ = draw(items, 10, seed=4)
    assert {i.key for i in other} != {i.key for i in chosen}
    fraction, sampled = draw(items, 0.25, seed=3)
    assert sampled is not None and len(fraction) == sampled.size == 17  # round(0.25 x 67)
    everything, none = draw(items, 67, seed=3)
    assert none is None and everything == items  # a "sample" of every item is the data itself
    with pytest.raises(ValueError, match="cannot hold one of each of the 3 strata"):
        draw(items, 2, seed=0)


# A population of 3 strata with different means and sizes: 80 items near 0.9, 30 near 0.2, 3 near 0.
POPULATION = {("s", "a"): 80, ("s", "b"): 30, ("s", "c"): 3}


def _values(items: list[AmbigItem]) -> dict[str, float]:
    rng = random.Random(7)
    centre = {"a": 0.9, "b": 0.2, "c": 0.0}
    return {i.key: min(1.0, max(0.0, rng.gauss(centre[i.ambiguity_type or ""], 0.2))) for i in items}


def test_the_weighted_estimate_is_unbiased_over_seeds():
    """Over 400 seeds the stratified estimate averages to the population mean, where the plain
    mean of the same samples does not (the minimum of one over-samples the small stratum)."""
    items = _items(POPULATION)
    values = _values(items)
    truth = statistics.fmean(values.values())
    estimates, plain, covered = [], [], 0
    for seed in range(400):
        chosen, sample = draw(items, 6, seed)
        assert sample is not None
        assert {h for h, (_, n) in sample.strata.items() if n} == set(POPULATION)  # every stratum
        picked = [values[i.key] for i in chosen]
        strata = [(i.suite, i.ambiguity_type) for i in chosen]
        mean, var = stratified_mean(picked, strata, sample.counts)
        estimates.append(mean)
        plain.append(statistics.fmean(picked))
        low, high = interval(mean, var, (0, 1)) or (mean, mean)
        covered += low <= truth <= high
    spread = statistics.stdev(estimates) / math.sqrt(len(estimates))
    assert abs(statistics.fmean(estimates) - truth) < 3 * spread
    assert abs(statistics.fmean(plain) - truth) > 3 * spread  # unweighted: biased
    assert covered / 400 >= 0.85  # the interval covers the truth about as often as it says


def test_the_variance_estimate_is_unbiased_by_enumeration():
    """Every stratified sample of a tiny population, enumerated: the mean of v(ȳ_st) is the
    exact variance of ȳ_st (Cochran 1977, theorem 5.4), finite-population correction included."""
    population = {("s", "a"): [0.0, 1.0, 1.0, 0.5], ("s", "b"): [0.2, 0.9, 0.4, 0.4, 1.0]}
    counts = {h: len(v) for h, v in population.items()}
    means, variances = [], []
    for left in itertools.combinations(population["s", "a"], 2):
        for right in itertools.combinations(population["s", "b"], 3):
            values = [*left, *right]
            strata = [("s", "a")] * 2 + [("s", "b")] * 3
            mean, var = stratified_mean(values, strata, counts)
            assert var is not None
            means.append(mean)
            variances.append(var)
    truth = statistics.fmean(v for vs in population.values() for v in vs)
    assert math.isclose(statistics.fmean(means), truth)
    assert math.isclose(statistics.fmean(variances), statistics.pvariance(means))


@given(st.lists(st.tuples(st.sampled_from("abc"), st.floats(0, 1)), min_size=1, max_size=30))
def test_the_stratified_mean_is_the_weighted_column_mean(rows):
    strata = [("s", h) for h, _ in rows]
    values = [v for _, v in rows]
    counts = {("s", h): 10 + ord(h) for h in "abc"}
    mean, var = stratified_mean(values, strata, counts)
    assert math.isclose(mean, float(weighted_columns(values, strata, counts)), abs_tol=1e-12)
    assert min(values) - 1e-12 <= mean <= max(values) + 1e-12
    assert var is None or var >= 0
    low, high = stratified_bootstrap(values, strata, counts, 0, lambda m: m)
    assert min(values) - 1e-12 <= low <= high <= max(values) + 1e-12


# -- runs ----------------------------------------------------------------------------------------

SYSTEM = """
def answer(question, item):
    return item.long_answers[0] if item.long_answers and hash(item.id) % 2 == 0 else "no idea"
def steady(question, item):
    return item.long_answers[0] if item.long_answers and item.id[-1] in "13579ae" else "no idea"
"""
ARGS = ("--ambig-suite=march,asqa,condambigqa", "--ambig-sample=12", "-p", "no:randomly")


def test_a_sample_run_weighs_back_and_says_so(pytester):
    pytester.makepyfile(samplesys=SYSTEM)
    result, card = ambig_run(pytester, *ARGS, "--ambig-system=samplesys:steady", "--ambig-seed=5")
    result.assert_outcomes(passed=12)
    sample = card["sample"]
    assert sample["items"] == 12 and sample["population"] == 33 and len(card["items"]) == 12
    strata = {(h["suite"], h["type"]): (h["population"], h["sampled"]) for h in sample["strata"]}
    assert set(strata) == {(r["suite"], r["ambiguity_type"]) for r in card["items"]}  # every stratum ran
    march = next(s for s in card["suites"] if s["name"] == "march")
    by_type: dict[str, list[float]] = {}
    for r in card["items"]:
        if r["suite"] == "march":
            by_type.setdefault(r["ambiguity_type"], []).append(r["scores"]["str_em"])
    total = sum(strata["march", t][0] for t in by_type)
    weighted = sum(strata["march", t][0] / total * statistics.fmean(v) for t, v in by_type.items()) * 100
    assert math.isclose(march["metrics"]["str_em"]["mean"], weighted)  # Σ W_h ȳ_h, not the plain mean
    assert card["config"]["sample"] == 12
    said = "a stratified sample: 12 of 33 items (--ambig-sample=12, seed 5)"
    assert said in result.stdout.str()
    assert said in (pytester.path / "report" / "scorecard.md").read_text()
    assert said in (pytester.path / "report" / "report.html").read_text()
    check_scorecard(card)
    card["sample"]["strata"][0]["sampled"] += 1
    with pytest.raises(Invalid, match="field sample.strata"):
        check_scorecard(card)


def test_the_same_items_under_xdist_and_another_hash_seed(pytester):
    pytester.makepyfile(samplesys=SYSTEM)

    def ran(*extra: str, seed: str) -> list[str]:
        done = run_pytest(pytester.path, *ARGS, "--ambig-system=samplesys:steady", "--co", "-q", *extra,
                          env={"PYTHONHASHSEED": seed})  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:]
        return sorted(line for line in done.stdout.splitlines() if "::test_ambig[" in line)

    serial = ran(seed="1")
    assert len(serial) == 12
    assert ran(seed="2") == serial
    result, card = ambig_run(pytester, *ARGS, "--ambig-system=samplesys:steady", "-n", "2")
    result.assert_outcomes(passed=12)
    assert sorted(f"ambigqa::test_ambig[{r['suite']}-{r['item_id']}]" for r in card["items"]) == serial


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--ambig-sample=3",), "3 items cannot hold one of each of the 5 strata"),
        (("--ambig-sample=1.5",), "neither a count of items nor a fraction"),
        (("--ambig-sample=0",), "--ambig-sample: 0 must be between 1"),
        (("--ambig-sample=10", "--ambig-limit=3"), "--ambig-sample: not with --ambig-limit"),
        (("--ambig-sample=10", "--ambig-shard=1/2"), "--ambig-sample: not with --ambig-shard"),
        (
            ("--ambig-sample=10", "--ambig-sequential", "--ambig-fail-under=str_em=10"),
            "--ambig-sample: not with --ambig-sequential",
        ),
    ],
)
def test_usage_errors(pytester, args, message):
    pytester.makepyfile(samplesys=SYSTEM)
    result = pytester.runpytest(
        "--ambig-suite=march,asqa,condambigqa", "--ambig-system=samplesys:steady", *args
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_the_sample_is_recorded_for_comparisons(pytester):
    """A baseline run of another sample is named in the comparison's notes."""
    pytester.makepyfile(samplesys=SYSTEM)
    ambig_run(pytester, "--ambig-suite=march", "--ambig-system=samplesys:steady", report="base")
    result, card = ambig_run(
        pytester,
        "--ambig-suite=march",
        "--ambig-sample=6",
        "--ambig-system=samplesys:steady",
        "--ambig-baseline=base/scorecard.json",
    )
    notes = card["comparison"]["notes"]
    said = "configuration differs: the stratified item sample (--ambig-sample): none in the base run, 6 in this one"
    assert said in notes
