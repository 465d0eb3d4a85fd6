"""Repeated trials (--ambig-repeats): pass@k and pass^k, the trials of each item, resume,
xdist, gates on pass^k, the paired comparison on trial means, and what is read back."""

from __future__ import annotations

import itertools
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixtures.process import ambig_run, run_pytest
from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.errors import Invalid
from pytest_ambigqa.readback import check_scorecard
from pytest_ambigqa.stats.trials import pass_at_k, pass_hat_k, variance
from pytest_ambigqa.suites import SUITES, LoadOptions

MARCH = SUITES["march"].load(None, LoadOptions()).items

# A system whose answer is a coin flip per (item, trial), seeded so that every run and every
# process flips alike; each call is logged with its item and trial. STOP_AT=N stops the run
# (Ctrl-C) at the N-th call of this process.
SYSTEMS = """
import json, os, random
LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.jsonl")
def _log(item, trial):
    with open(LOG, "a") as log:
        log.write(json.dumps({"item": item.id, "trial": trial, "pid": os.getpid()}) + "\\n")
def coin(question, item, trial):
    stop = os.environ.get("STOP_AT")
    if stop and os.path.exists(LOG) and len(open(LOG).readlines()) + 1 >= int(stop):
        raise KeyboardInterrupt
    _log(item, trial)
    if random.Random(f"{item.id}-{trial}").random() < 0.5:
        return item.long_answers[0]
    return "I could not say."
def steady(question, item):
    return item.long_answers[0] if item.id.endswith(("1", "3")) else "I could not say."
"""


def calls(pytester: pytest.Pytester) -> list[dict]:
    log = pytester.path / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def systems(pytester, monkeypatch):
    pytester.makepyfile(trialsys=SYSTEMS)
    monkeypatch.delenv("STOP_AT", raising=False)
    return pytester


def run(pytester: pytest.Pytester, system: str, *args: str, report: str = "report"):
    return ambig_run(
        pytester,
        "--ambig-suite=march",
        f"--ambig-system=trialsys:{system}",
        "--ambig-cache-dir=cache",
        "-p",
        "no:randomly",
        *args,
        report=report,
    )


# -- pass@k and pass^k --------------------------------------------------------------------------


def _subsets(n: int, c: int, k: int) -> list[tuple[int, ...]]:
    """Every k-subset of n trials, the first c of which pass (1)."""
    trials = [1] * c + [0] * (n - c)
    return [tuple(trials[i] for i in chosen) for chosen in itertools.combinations(range(n), k)]


@given(st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_and_pass_hat_k_are_the_shares_of_k_subsets(case):
    """Both are unbiased: over the k-subsets of the n trials, pass@k is the share holding a
    pass (Chen et al. 2021) and pass^k the share of all passes (tau-bench)."""
    n, c, k = case
    subsets = _subsets(n, c, k)
    assert math.isclose(pass_at_k(n, c, k), sum(any(s) for s in subsets) / len(subsets), abs_tol=1e-12)
    assert math.isclose(pass_hat_k(n, c, k), sum(all(s) for s in subsets) / len(subsets), abs_tol=1e-12)


@given(st.integers(1, 30).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_pass_at_k_rises_and_pass_hat_k_falls_in_k(case):
    n, c = case
    at = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    every = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    assert all(0 <= v <= 1 for v in at + every)
    assert math.isclose(at[0], c / n) and math.isclose(every[0], c / n)  # k = 1: the trial mean
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(at))
    assert all(a + 1e-12 >= b for a, b in itertools.pairwise(every))
    assert all(e <= a + 1e-12 for e, a in zip(every, at, strict=True))
    if c in (0, n):  # a system that always answers alike
        assert at == every


def test_pass_at_k_refuses_what_cannot_be():
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_hat_k(3, 1, 4)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_variance_is_the_sample_variance(values):
    assert variance(values) >= 0
    if len(values) > 1:
        mean = sum(values) / len(values)
        expected = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
        assert math.isclose(variance(values), expected, abs_tol=1e-12)
    else:
        assert variance(values) == 0


# -- runs ----------------------------------------------------------------------------------------


def test_a_random_system_varies_and_is_flaky(systems):
    result, card = run(systems, "coin", "--ambig-repeats=3")
    result.assert_outcomes(passed=len(MARCH))
    asked = [(c["item"], c["trial"]) for c in calls(systems)]
    assert sorted(asked) == sorted((i.id, t) for i in MARCH for t in range(3))  # each trial once
    for item in card["items"]:
        trials = item["trials"]
        assert [t.get("trial", 0) for t in trials] == [0, 1, 2]
        hits = [t["scores"]["str_hit"] for t in trials]
        assert math.isclose(item["scores"]["str_hit"], sum(hits) / 3)  # the item's score: the trials' mean
    suite = card["suites"][0]
    trials = suite["repeats"]["metrics"]["str_hit"]
    assert suite["repeats"]["k"] == 3 and suite["repeats"]["trials"] == 3 * len(MARCH)
    assert trials["variance"] > 0
    flaky = [i["suite"] + "-" + i["item_id"] for i in card["items"] if 0 < sum(
        t["scores"]["str_hit"] for t in i["trials"]) < 3]  # fmt: skip
    assert trials["flaky"] == flaky and flaky
    mean = sum(i["scores"]["str_hit"] for i in card["items"]) / len(MARCH) * 100
    assert math.isclose(suite["metrics"]["str_hit"]["mean"], mean)  # the mean over items of trial means
    assert math.isclose(trials["pass_at"][0], mean) and math.isclose(trials["pass_all"][0], mean)
    assert trials["pass_at"] == sorted(trials["pass_at"]) and trials["pass_all"][-1] < trials["pass_at"][-1]
    terminal = result.stdout.str()
    assert "repeated trials: 3 per item" in terminal and "flaky (trials disagree)" in terminal
    assert "repeated trials: 3 per item" in (systems.path / "report" / "scorecard.md").read_text()
    assert "repeated trials: 3 per item" in (systems.path / "report" / "report.html").read_text()


def test_a_steady_system_has_pass_at_k_equal_to_pass_hat_k(systems):
    result, card = run(systems, "steady", "--ambig-repeats=4")
    result.assert_outcomes(passed=len(MARCH))
    trials = card["suites"][0]["repeats"]["metrics"]["str_hit"]
    assert trials["pass_at"] == trials["pass_all"] and trials["flaky"] == [] and trials["variance"] == 0
    assert trials["pass_at_interval"] == trials["pass_all_interval"]


def test_resume_after_an_interrupt_asks_no_trial_twice(systems):
    args = ("--ambig-suite=march", "--ambig-system=trialsys:coin", "--ambig-cache-dir=cache")
    args += ("--ambig-repeats=3", "-p", "no:randomly", "-q")
    stopped = run_pytest(systems.path, *args, env={"STOP_AT": "8"})  # Ctrl-C in the 3rd item's 2nd trial
    assert stopped.returncode == pytest.ExitCode.INTERRUPTED, stopped.stdout[-2000:]
    before = calls(systems)
    assert len(before) == 7
    resumed = run_pytest(systems.path, *args, "--ambig-resume")
    assert resumed.returncode == 0, resumed.stdout[-2000:]
    asked = [(c["item"], c["trial"]) for c in calls(systems)]
    assert len(asked) == len(set(asked)) == 3 * len(MARCH)  # every trial asked once, over both runs


def test_xdist_gives_the_same_scorecard(systems):
    def timeless(card: dict) -> dict:
        def strip(value):
            if isinstance(value, dict):
                drop = ("duration", "timing", "versions", "cached")
                return {k: strip(v) for k, v in value.items() if k not in drop}
            if isinstance(value, list):
                return [strip(v) for v in value]
            return value

        return strip(card)

    _, serial = run(systems, "coin", "--ambig-repeats=3", report="serial")
    result, parallel = run(systems, "coin", "--ambig-repeats=3", "-n", "2", report="parallel")
    result.assert_outcomes(passed=len(MARCH))
    assert timeless(parallel) == timeless(serial)


def test_a_gate_on_pass_hat_k(systems):
    result, card = run(systems, "coin", "--ambig-repeats=3", "--ambig-fail-under=str_hit^k=90")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    check = next(c for c in card["gates"]["checks"] if c["gate"].startswith("--ambig-fail-under"))
    pass_all = card["suites"][0]["repeats"]["metrics"]["str_hit"]["pass_all"][-1]
    assert check["statistic"] == "STR-Hit pass^3 mean" and check["value"] == pass_all and not check["passed"]
    assert card["config"]["fail_under"] == ["str_hit^k=90"]
    result, card = run(systems, "steady", "--ambig-repeats=3", "--ambig-fail-under=str_hit^k=10")
    assert result.ret == pytest.ExitCode.OK
    lower, card = run(
        systems, "coin", "--ambig-repeats=3", "--ambig-gate=lower-ci", "--ambig-fail-under=str_hit=5"
    )
    check = next(c for c in card["gates"]["checks"] if c["gate"].startswith("--ambig-fail-under"))
    assert check["value"] == card["suites"][0]["metrics"]["str_hit"]["low"]  # the trial mean's interval


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--ambig-fail-under=str_hit^k=50",), "pass^k (METRIC^k) needs repeated trials"),
        (("--ambig-repeats=2", "--ambig-fail-under=str_em^k=50"), "pass^k is of a 0/1 metric"),
        (("--ambig-repeats=2", "--ambig-item-min=str_hit^k=1"), "a suite's statistic, not an item's"),
        (("--ambig-repeats=0",), "--ambig-repeats: 0 must be between 1 and 1000"),
        (("--ambig-repeats=2", "--ambig-protocol=interactive"), "only with the single-shot protocol"),
        (
            ("--ambig-repeats=2", "--ambig-sequential", "--ambig-fail-under=str_hit^k=50"),
            "--ambig-sequential: str_hit^k (pass^k) is no mean",
        ),
    ],
)
def test_usage_errors(systems, args, message):
    result = systems.runpytest("--ambig-suite=march", "--ambig-system=trialsys:steady", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_the_comparison_pairs_trial_means(systems):
    run(systems, "coin", "--ambig-repeats=3", report="base")
    result, card = run(systems, "coin", "--ambig-repeats=3", "--ambig-baseline=base/scorecard.json")
    row = next(r for r in card["comparison"]["rows"] if r["metric"] == "str_hit" and r["slice"] == "all")
    assert row["test"] == "permutation"  # trial means are not 0/1: no McNemar
    assert row["diff"] == 0 and row["n"] == len(MARCH)


def test_a_repeated_scorecard_is_read_back_and_damage_is_refused(systems):
    _, card = run(systems, "coin", "--ambig-repeats=2")
    check_scorecard(card)
    card["items"][1]["trials"][1]["scores"]["str_hit"] = 2.0
    with pytest.raises(Invalid, match=r"item march-\S+, field trials.1.scores.str_hit: 2.0 is outside"):
        check_scorecard(card)
    card["items"][1]["trials"][1]["scores"]["str_hit"] = 1.0
    card["suites"][0]["repeats"]["metrics"]["str_hit"]["pass_all"][0] = float("nan")
    with pytest.raises(Invalid, match="is not a finite number"):
        check_scorecard(card)


def test_shards_of_repeated_trials_merge_into_the_whole(systems):
    _, whole = run(systems, "coin", "--ambig-repeats=2", report="whole")
    for n in (1, 2):
        run(systems, "coin", "--ambig-repeats=2", f"--ambig-shard={n}/2", report=f"shard{n}")
    assert cli(["merge", "shard1/scorecard.json", "shard2/scorecard.json", "-o", "merged"]) == 0
    card = json.loads((systems.path / "merged" / "scorecard.json").read_text())
    assert card["suites"][0]["repeats"] == whole["suites"][0]["repeats"]
    assert card["suites"][0]["metrics"] == whole["suites"][0]["metrics"]


def test_a_metric_one_trial_could_not_score_is_unscored_for_the_item():
    from pytest_ambigqa.evaluate import combine_trials
    from pytest_ambigqa.schema import ItemResult

    trials = [
        ItemResult("march", "a", "ok", scores={"str_em": 1.0, "judge": 4.0}),
        ItemResult("march", "a", "ok", scores={"str_em": 0.0}, unscored={"judge": "judge unavailable"}),
        ItemResult("march", "a", "ok", scores={"str_em": 1.0, "judge": 2.0}),
    ]
    item = combine_trials(trials)
    assert item.scores["str_em"] == pytest.approx(2 / 3) and "judge" not in item.scores
    assert item.unscored["judge"] == "trial 2 of 3: judge unavailable"


def test_a_suites_trials_section_from_results():
    """card/trials.py over results made here (no run): pass@k and pass^k per k from each item's
    passes, the flaky items, the variance of trial scores, and an item that never reached its
    system counted as K trials alike."""
    from pytest_ambigqa.card.trials import repeats
    from pytest_ambigqa.schema import ItemResult

    def item(name, *scores):
        trials = tuple(ItemResult("march", name, "ok", scores={"str_hit": s}) for s in scores)
        return ItemResult("march", name, "ok", scores={"str_hit": sum(scores) / 3}, trials=trials)

    missing = ItemResult("march", "m", "missing", unscored={"str_hit": "never reported"})
    section = repeats(
        [item("a", 1, 1, 1), item("b", 1, 0, 0), item("c", 0, 0, 0), missing], ["str_hit"], 3, 0, "march"
    )
    assert (section.k, section.trials, section.errored) == (3, 12, 3)
    hit = section.metrics["str_hit"]
    assert hit.items == 3 and hit.flaky == ["march-b"]
    assert hit.pass_at == pytest.approx([100 * (1 + 1 / 3) / 3, 100 * (1 + 2 / 3) / 3, 100 * 2 / 3])
    assert hit.pass_all == pytest.approx([100 * (1 + 1 / 3) / 3, 100 / 3, 100 / 3])
    assert hit.variance == pytest.approx(variance([1, 0, 0]) / 3) and hit.max_variance == variance([1, 0, 0])
