"""The sequential gate (issue 29, part 3): an anytime-valid confidence sequence that decides
as items arrive, checked against its authors' package and by simulation, and the run it stops."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tarfile
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures.process import ambig_run
from fixtures.watching import fixed_n_watched
from pytest_ambigqa.readback import Invalid, check_scorecard
from pytest_ambigqa.session.sequential import seeded_order
from pytest_ambigqa.stats.sequential import Bounds, ConfidenceSequence, Trend, decide
from pytest_ambigqa.suites import SUITES, LoadOptions

ALPHA = 0.05
CONFSEQ = "confseq==0.0.11"  # the authors' package (Waudby-Smith, Ramdas, Howard)


@pytest.fixture(scope="module")
def confseq(tmp_path_factory):
    """confseq's ``betting`` module, pure Python, loaded from its source distribution.

    confseq 0.0.11 does not build on Python 3.11 (its pinned pybind11 2.6 predates it), and
    its C++ part is not what we compare with; so the test takes the package's pure-Python
    modules from the sdist on the package index (never into the repository), with the two
    imports used only for plots and parallel maps stood in by empty modules."""
    where = tmp_path_factory.mktemp("confseq")
    got = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", CONFSEQ, "-d", str(where)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    archives = list(where.glob("confseq-*.tar.gz"))
    if got.returncode or not archives:
        pytest.skip(f"{CONFSEQ} could not be downloaded from the package index: {got.stderr[-300:]}")
    with tarfile.open(archives[0]) as tar:
        members = [m for m in tar.getmembers() if m.name.endswith(".py") and "/src/confseq/" in m.name]
        tar.extractall(where, members=members, filter="data")
    source = next(where.glob("confseq-*/src/confseq"))
    package = types.ModuleType("confseq")
    package.__path__ = [str(source)]
    stand_ins = {"confseq": package, "matplotlib": types.ModuleType("matplotlib")}
    stand_ins["matplotlib.pyplot"] = types.ModuleType("matplotlib.pyplot")
    stand_ins["multiprocess"] = types.ModuleType("multiprocess")
    saved = {name: sys.modules.get(name) for name in stand_ins}
    sys.modules.update(stand_ins)
    np.float_ = np.float64  # removed in NumPy 2; confseq's annotations still name it
    try:
        import confseq.betting as betting

        yield betting
    finally:
        del np.float_
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        for name in [n for n in sys.modules if n.startswith("confseq.")]:
            del sys.modules[name]


def populations(seed: int) -> tuple[np.ndarray, int]:
    rng = np.random.default_rng(seed)
    size = int(rng.integers(5, 120))
    kinds = [
        rng.uniform(0, 1, size),
        rng.binomial(1, rng.uniform(), size).astype(float),
        rng.beta(2, 5, size),
        np.round(rng.uniform(0, 1, size) * 5) / 5,  # a 0-5 judge score on 0-1
    ]
    return rng.permutation(kinds[seed % 4])[: int(rng.integers(1, size + 1))], size


@pytest.mark.parametrize("running", [False, True])
def test_the_sequence_is_confseqs_betting_cs(confseq, running):
    """Equal to the last digit, but where confseq's interval at the last item is empty by a
    rounding (its upper end one ulp below its lower), which is the point itself here."""
    for seed in range(12):  # each kind of population three times (confseq's grid search: 1 s each)
        x, size = populations(seed)
        low, high = confseq.betting_cs(x, alpha=ALPHA, N=size, running_intersection=running)
        sequence = ConfidenceSequence(size, ALPHA, running=running)
        ours = np.array([[b.lower, b.upper] for b in (sequence.update(float(v)) for v in x)])
        assert ours[:, 0].tolist() == low.tolist(), seed
        np.testing.assert_allclose(ours[:, 1], np.maximum(high, low), rtol=0, atol=0, err_msg=str(seed))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=40), st.integers(0, 60))
def test_the_sequence_narrows_and_closes_on_the_mean(values, extra):
    size = len(values) + extra
    sequence = ConfidenceSequence(size, ALPHA)
    previous = (0.0, 1.0)
    for v in values:
        b = sequence.update(v)
        assert 0 <= b.lower <= b.upper <= 1
        assert previous[0] <= b.lower and b.upper <= previous[1]  # the running intersection
        previous = (b.lower, b.upper)
    if extra == 0:  # every value seen: the mean itself
        mean = math.fsum(values) / size
        assert b.lower == pytest.approx(mean, abs=1e-12) and b.upper == pytest.approx(mean, abs=1e-12)


@given(
    st.lists(st.integers(0, 5), min_size=1, max_size=80).flatmap(
        lambda v: st.tuples(st.just(v), st.permutations(range(len(v))))
    )
)
def test_the_trend_test_is_scipys_kendall_tau(drawn):
    """Kendall's S of the values against the order they were asked in, and its p-values, equal
    ``scipy.stats.kendalltau``'s (asymptotic, tau-b: the Mann-Kendall test when the order has
    no ties), two-sided and one-sided; where scipy has none (fewer than 3 values: ours 1; all
    values equal: nan), there is no trend."""
    import scipy.stats

    values, order = drawn
    values = [v / 5 for v in values]
    trend = Trend(len(values))
    for place, value in zip(order, values, strict=True):
        trend.add(place, value)
    if len(values) < 3 or len(set(values)) == 1:
        assert trend.p() == 1.0
        return
    both = scipy.stats.kendalltau(order, values, method="asymptotic")
    assert trend.p() == pytest.approx(both.pvalue, abs=1e-9)
    assert trend.tau() == pytest.approx(both.statistic, abs=1e-9)
    for falling, alternative in ((True, "less"), (False, "greater")):
        one = scipy.stats.kendalltau(order, values, method="asymptotic", alternative=alternative)
        assert trend.p_toward(falling) == pytest.approx(one.pvalue, abs=1e-9)


def test_a_value_off_the_scale_or_past_the_population_is_refused():
    sequence = ConfidenceSequence(1, ALPHA)
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        sequence.update(1.5)
    sequence.update(0.5)
    with pytest.raises(ValueError, match="all 1 values"):
        sequence.update(0.5)


@pytest.mark.slow  # 400 simulated runs of 100 items: seconds of CPU
def test_the_gate_keeps_its_error_rate_where_a_fixed_n_interval_watched_does_not():
    """Over 200 seeds, populations of 100 binary scores just under and just over the bound:
    the sequence ever missing the true mean (which bounds every stopping rule's error), and
    the gate's wrong decisions when it stops at its first decision, stay at or below alpha
    (with 2.5 binomial standard errors of slack); the naive rule's false passes exceed it."""
    size, bound, seeds = 100, 0.5, 200
    slack = ALPHA + 2.5 * math.sqrt(ALPHA * (1 - ALPHA) / seeds)
    for share, wrong in ((0.44, "pass"), (0.56, "fail")):
        k = round(share * size)
        population = np.array([1.0] * k + [0.0] * (size - k))
        missed = errors = naive_errors = 0
        used = []
        for seed in range(seeds):
            x = np.random.default_rng(seed).permutation(population)
            sequence, decision, outside = ConfidenceSequence(size, ALPHA), None, False
            for v in x:
                b = sequence.update(float(v))
                outside = outside or not b.lower <= k / size <= b.upper
                decision = decide(b, bound)
                if decision:
                    break
            used.append(sequence.n)
            missed += outside
            errors += decision == wrong
            naive_errors += fixed_n_watched(x, bound)[0] == wrong
        assert missed / seeds <= slack and errors / seeds <= slack, (share, missed, errors)
        if wrong == "pass":
            assert naive_errors / seeds > ALPHA, naive_errors  # optional stopping inflates it
        assert np.mean(used) < size  # it decides before the end on average


def test_the_order_is_the_seeds_alone():
    items = list(SUITES["march"].load(None, LoadOptions()).items)
    first = [i.key for i in seeded_order(items, 7)]
    assert first == [i.key for i in seeded_order(reversed(items), 7)]
    assert first != [i.key for i in seeded_order(items, 8)] and sorted(first) == sorted(i.key for i in items)


BAD = """
def answer(question):
    return "I do not know."
"""


@pytest.fixture
def asqa(shared_data) -> Path:
    return shared_data / "asqa" / "asqa_dev_sample40.jsonl"


def gate_run(pytester, asqa: Path, *args: str, report: str = "report"):
    return ambig_run(
        pytester,
        "--ambig-suite=asqa",
        f"--ambig-data=asqa={asqa}",
        "--ambig-metrics=str_em,str_hit",
        "--ambig-cache-dir=cache",
        "-p",
        "no:randomly",
        *args,
        report=report,
    )


def decided(card: dict) -> dict:
    return card["sequential"]["gates"][0]


def test_a_clearly_worse_system_fails_early_and_a_system_against_itself_passes(pytester, asqa):
    pytester.makepyfile(bad=BAD)
    base, full = gate_run(pytester, asqa, "--ambig-system=oracle", report="base")
    assert base.ret == 0 and len(full["items"]) == 40
    worse = ("--ambig-baseline=base/scorecard.json", "--ambig-fail-if-worse=str_em:10")
    result, card = gate_run(pytester, asqa, "--ambig-system=bad:answer", "--ambig-sequential", *worse)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    gate = decided(card)
    assert (
        gate["decision"] == "fail"
        and gate["after"] < 40
        and card["sequential"]["skipped"] == 40 - gate["after"]
    )
    assert card["suites"][0]["missing"] == 0 and card["suites"][0]["items"] == gate["after"]
    result.stdout.fnmatch_lines(
        [
            "sequential gates (alpha 0.05, items in a seeded random order): decided after * items*",
            "*asqa --ambig-fail-if-worse=str_em:10: FAIL after * of 40 items, 95% confidence sequence*",
            "gate FAILED: asqa str_em (STR-EM) change: its 95% confidence sequence * lies below -10*",
        ]
    )
    # The full run decides the same.
    again, full_bad = gate_run(pytester, asqa, "--ambig-system=bad:answer", *worse, report="full")
    assert again.ret == pytest.ExitCode.TESTS_FAILED and "sequential" not in full_bad
    same, card = gate_run(
        pytester, asqa, "--ambig-system=oracle", "--ambig-sequential", *worse, report="same"
    )
    assert same.ret == 0, same.stdout.str()
    gate = decided(card)
    assert gate["decision"] == "pass" and gate["after"] < 40 and gate["lower"] >= -10
    assert card["gates"]["passed"] and card["gates"]["checks"][0]["statistic"].startswith(
        "STR-EM change, anytime"
    )


def test_under_xdist_and_with_calls_in_flight_the_same_decision(pytester, asqa):
    pytester.makepyfile(bad=BAD)
    args = ("--ambig-system=bad:answer", "--ambig-sequential", "--ambig-fail-under=str_em=30")
    _, one = gate_run(pytester, asqa, *args, report="one")
    _, two = gate_run(pytester, asqa, *args, "-n", "2", report="two")
    _, pooled = gate_run(pytester, asqa, *args, "--ambig-concurrency=4", report="pooled")
    first = decided(one)
    assert first["decision"] == "fail" and first["after"] < 40
    for card in (two, pooled):  # the values are taken in the seeded order, whatever the timing
        gate = decided(card)
        assert (gate["decision"], gate["after"], gate["upper"]) == ("fail", first["after"], first["upper"])
        assert card["suites"][0]["missing"] == 0
        assert card["sequential"]["evaluated"] + card["sequential"]["skipped"] == 40
    assert not list((pytester.path / "cache").glob("ambigqa-stop-*"))  # the signal is cleared


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "*--ambig-sequential: no gate to decide*"),
        (("--ambig-fail-under=length=10",), "*--ambig-sequential: length (*) cannot be gated as items come*"),
        (("--ambig-fail-under=str_em=10", "--ambig-shard=1/2"), "*--ambig-sequential: a shard sees part*"),
        (
            ("--ambig-fail-under=str_em=10", "--ambig-gate=lower-ci"),
            "*--ambig-sequential: its sequence is the interval*",
        ),
        (
            ("--ambig-fail-under=episode_f1=10", "--ambig-protocol=interactive"),
            "*--ambig-sequential: only the single-shot protocol's suite values*",
        ),
        (
            ("--ambig-fail-under=str_em=10", "--ambig-sequential-alpha=0.9"),
            "*--ambig-sequential-alpha: 0.9 must be*",
        ),
    ],
)
def test_a_sequential_gate_that_cannot_work_is_one_usage_error(pytester, args, message):
    result = pytester.runpytest("--ambig-suite=march", "--ambig-system=oracle", "--ambig-sequential", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_damaged_sequential_record_is_refused(pytester):
    result, card = ambig_run(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=oracle",
        "--ambig-sequential",
        "--ambig-fail-under=str_em=50",
    )
    assert result.ret == 0 and card["sequential"]["gates"][0]["decision"] == "pass"
    check_scorecard(card)
    card["sequential"]["evaluated"] = -1
    with pytest.raises(Invalid, match="sequential.evaluated"):
        check_scorecard(card)
    text = json.dumps(card)
    assert "NaN" not in text


class _WholeGrid:
    """The sequence as it was computed before issue 44 (target 6): the whole grid updated at
    every value. The reference the faster one must equal to the last bit."""

    def __init__(self, population: int, alpha: float) -> None:
        self.population, self.alpha = population, alpha
        self.grid = np.arange(0, 1 + 1 / 1000, step=1 / 1000)
        self.up, self.down = np.ones(len(self.grid)), np.ones(len(self.grid))
        self.t, self.sum, self.squares, self.variance = 0, 0.0, 0.25, 0.25
        self.log = math.log(1 / (alpha * 0.5))
        self.lower, self.upper = 0.0, 1.0

    def update(self, x: float) -> tuple[int, float, float]:
        self.t += 1
        t, big_n = self.t, self.population
        bet = math.sqrt(2 * self.log / (t * math.log(1 + t) * self.variance))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            left = (big_n * self.grid - self.sum) / (big_n - (t - 1))
            up = np.maximum(np.minimum(bet, 0.5 / left), -0.5 / (1 - left))
            down = np.maximum(np.minimum(bet, 0.5 / (1 - left)), -0.5 / left)
            self.up *= 1 + up * (x - left)
            self.down *= 1 - down * (x - left)
        capital = np.maximum(0.5 * self.up, 0.5 * self.down)
        capital[np.isnan(capital)] = 0.0
        capital[(left < 0) | (left > 1)] = math.inf
        kept = np.flatnonzero(capital <= 1 / self.alpha)
        lower, upper = (0.0, 1.0) if len(kept) == 0 else (self.grid[kept[0]], self.grid[kept[-1]])
        lower, upper = max(0.0, lower - 1 / 1000), min(1.0, upper + 1 / 1000)
        self.sum += x
        lower, upper = max(lower, self.sum / big_n), min(upper, 1 - (t - self.sum) / big_n)
        upper = max(upper, lower)
        lower, upper = max(lower, self.lower), min(upper, self.upper)
        self.lower, self.upper = float(lower), float(upper)
        mean = min((0.5 + self.sum) / (t + 1), 1.0)
        self.squares += (x - mean) ** 2
        self.variance = self.squares / (t + 1)
        return t, self.lower, self.upper


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from(["binary", "uniform", "few", "constant"]),
    st.integers(1, 400),
    st.floats(-0.05, 0.05),
)
def test_the_faster_sequence_decides_as_the_whole_grid_did(seed, kind, size, offset):
    """Issue 44, target 6: the sequence's update over the candidates not ruled out for good,
    and a gate's looks deferred while provably undecided (``look``), give the bounds of the
    whole grid's update at every value to the last bit, and so the same decision at every look."""
    rng = np.random.default_rng(seed)
    values = {
        "binary": (rng.uniform(size=size) < rng.uniform()).astype(float),
        "uniform": rng.uniform(size=size),
        "few": rng.choice([0.0, 0.25, 0.5, 1.0], size=size),
        "constant": np.full(size, 0.6),
    }[kind]
    _as_the_whole_grid(values, float(np.clip(values.mean() + offset, 0, 1)))


def _as_the_whole_grid(values: np.ndarray, bound: float) -> ConfidenceSequence:
    """Asserts that the sequence, updated at every value and looked at with ``bound``, has the
    whole grid's bounds after every value (a deferred look: a decision of None); returns the
    updated one."""
    size = len(values)
    reference, updated, looked = (
        _WholeGrid(size, ALPHA),
        ConfidenceSequence(size, ALPHA),
        ConfidenceSequence(size, ALPHA),
    )
    for x in map(float, values):
        expected = reference.update(x)
        got = updated.update(x)
        assert (got.n, got.lower, got.upper) == expected
        seen = looked.look(x, bound)
        if seen is None:
            assert decide(Bounds(*expected), bound) is None
        else:
            assert (seen.n, seen.lower, seen.upper) == expected
    final = looked.bounds()
    assert (final.n, final.lower, final.upper) == expected
    return updated


@pytest.mark.parametrize("kind", ["binary", "drift"])
def test_candidates_left_asleep_change_no_bound(kind):
    """Issue 44, target 6: at a size where most candidates sleep (their capital provably over
    the limit, their update left undone) and, where the values drift, wake again, the bounds
    after every value, updated or looked at, are still the whole grid's to the last bit."""
    rng = np.random.default_rng(44)
    size = 2500
    values = {
        "binary": (rng.uniform(size=size) < 0.9).astype(float),
        "drift": np.concatenate([rng.uniform(0.7, 1.0, size // 2), rng.uniform(0.0, 0.4, size - size // 2)]),
    }[kind]
    low, high = _as_the_whole_grid(values, float(values.mean()) - 1e-4)._awake
    assert high - low < 100  # most of the 1,001 candidates were asleep: the path under test ran
