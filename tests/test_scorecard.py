"""How suite values are made from items: means, pooled units, totals, the official ROUGE mid, DR."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ambigqa.card.scorecard import summarize
from pytest_ambigqa.schema import ItemResult
from pytest_ambigqa.stats.bootstrap import bootstrap_interval, rouge_bootstrap_mid, stable_seed
from pytest_ambigqa.suites import SUITES, LoadOptions, Scorers

unit = st.floats(min_value=0, max_value=1, allow_nan=False)


def ok(n: int, **scores: float) -> ItemResult:
    return ItemResult("asqa", str(n), "ok", scores=scores)


def error(n: int) -> ItemResult:
    return ItemResult("asqa", str(n), "error", scores={"str_em": 0.0, "answer": 0.0}, error="boom")


@given(st.lists(unit, min_size=1, max_size=30))
def test_mean_of_items_on_the_printed_scale(values):
    s = summarize("str_em", [ok(n, str_em=v) for n, v in enumerate(values)], seed=0)
    assert s.mean == pytest.approx(100 * sum(values) / len(values))
    assert s.low <= s.mean + 1e-9 and s.mean - 1e-9 <= s.high and s.n == len(values)


@given(st.floats(0, 1), st.integers(1, 50), st.integers(0, 2**32 - 1))
def test_equal_values_are_their_own_interval(value, n, seed):
    """Checked before numpy is imported, so that a 1-item run never loads it (issue 27)."""
    assert bootstrap_interval([value] * n, seed) == (value, value)
    assert bootstrap_interval([True] * n, seed) == (1.0, 1.0)


@given(st.lists(st.lists(unit, max_size=4), min_size=1, max_size=20), st.integers(0, 3))
def test_pooled_units(unit_lists, errors):
    """The exact mean of every unit; an answer with no units adds none, an error adds one 0."""
    results = [
        ItemResult(
            "condambigqa",
            str(n),
            "ok",
            scores={"answer": statistics.fmean(u) if u else 0.0},
            units={"answer": u},
        )
        for n, u in enumerate(unit_lists)
    ]
    results += [error(100 + n) for n in range(errors)]
    pooled = [u for us in unit_lists for u in us] + [0.0] * errors
    s = summarize("answer", results, seed=0)
    if not any(unit_lists):  # no item reports units: a plain mean of items
        assert s.mean == pytest.approx(sum(r.scores["answer"] for r in results) / len(results))
        return
    assert s.mean == statistics.mean(pooled)
    assert s.low - 1e-9 <= s.mean <= s.high + 1e-9


def test_zeros_of_errors_alone_make_no_number():
    results = [
        ItemResult("march", str(n), "ok", unscored={"ambiguity_detected": "not reported"}) for n in range(3)
    ]
    results.append(ItemResult("march", "e", "error", scores={"ambiguity_detected": 0.0}))
    s = summarize("ambiguity_detected", results, seed=0)
    assert s.mean is None and s.reason == "not reported"
    every_item_failed = summarize("ambiguity_detected", results[-1:], seed=0)
    assert every_item_failed.mean == 0.0  # nothing was answered: the errors are the result


@given(st.lists(st.integers(0, 5), min_size=1, max_size=10))
def test_totals(counts):
    s = summarize(
        "unofficial_citations",
        [
            ItemResult("c", str(n), "ok", scores={"unofficial_citations": float(c)})
            for n, c in enumerate(counts)
        ],
        seed=0,
    )
    assert s.mean == sum(counts) and s.low is None


@given(st.lists(st.tuples(unit, unit), min_size=1, max_size=25), st.integers(0, 100))
def test_official_rouge_and_dr(pairs, seed):
    results = [ok(n, disambig_f1=f, rouge_lsum=r) for n, (f, r) in enumerate(pairs)]
    mid = summarize("rouge_lsum_mid", results, seed)
    expected_mid = rouge_bootstrap_mid([r for _, r in pairs], stable_seed(seed, "rouge_lsum_mid")) * 100
    assert mid.mean == expected_mid and mid.low is None
    dr = summarize("dr", results, seed)
    f1 = 100 * sum(f for f, _ in pairs) / len(pairs)
    assert dr.mean == pytest.approx(math.sqrt(f1 * mid.mean))


def test_a_setting_outside_metric_is_never_scored_even_for_errors():
    suite = SUITES["condambigqa"]
    item = suite.load(None, LoadOptions()).items[0]
    failed = suite.failed_result(item, Scorers(settings={"condambigqa": "closed-book"}), "error", "boom")
    assert (
        "citation" not in failed.scores
        and failed.unscored["citation"] == "not part of the closed-book setting"
    )
    main = suite.failed_result(item, Scorers(), "error", "boom")
    assert main.scores["citation"] == 0.0


def test_a_scorecard_reads_back_as_it_was_written(pytester):
    """``Scorecard.from_json`` gives back the scorecard ``to_json`` wrote: every suite, slice,
    evidence line, protocol, item and gate (what merge, compare and reports start from)."""
    import json

    from pytest_ambigqa.card.scorecard import Scorecard

    pytester.runpytest(
        "--ambig-suite=march,condambigqa,asqa",
        "--ambig-system=lexical",
        "--ambig-retrieval-report",
        "--ambig-fail-under=march:str_em=99",
        "--ambig-report=out",
    )
    written = json.loads((pytester.path / "out" / "scorecard.json").read_text())
    again = Scorecard.from_json(written).to_json(duration=written["timing"]["duration"])
    assert json.loads(json.dumps(again)) == written
    assert written["gates"]["shortfalls"] and written["suites"][0]["evidence"]
    with pytest.raises(ValueError, match="schema_version 3: written by a newer pytest-ambigqa"):
        Scorecard.from_json({**written, "schema_version": 3})


@given(
    st.lists(
        st.one_of(
            st.none(),
            st.dictionaries(
                st.sampled_from(["llm", "method", "x"]),
                st.one_of(st.none(), st.integers(), st.text(max_size=3)),
            ),
            st.fixed_dictionaries(
                {
                    "method": st.just("react"),
                    "llm": st.fixed_dictionaries(
                        {
                            "model": st.just("m"),
                            "calls": st.integers(1, 9),
                            "cached": st.integers(0, 9),
                            "prompt_tokens": st.integers(0, 10**6),
                            "completion_tokens": st.integers(0, 10**5),
                            "cost": st.floats(0, 10),
                            "latency": st.floats(0, 100),
                        }
                    ),
                }
            ),
        ),
        max_size=12,
    )
)
def test_model_calls_read_only_what_reference_systems_recorded(metadatas):
    """Per item means over the answers that carry a reference system's record; anything
    else a system put in its metadata (or no answer at all) is passed over, never an error."""
    from pytest_ambigqa.card.scorecard import model_calls
    from pytest_ambigqa.schema import Answer

    results = [
        ItemResult(
            "march",
            str(n),
            "ok" if m is not None else "error",
            answer=Answer("t", metadata=m) if m is not None else None,
        )
        for n, m in enumerate(metadatas)
    ]
    valid = [
        m["llm"]
        for m in metadatas
        if m is not None and isinstance(m.get("llm"), dict) and "model" in m["llm"]
    ]
    summary = model_calls(results)
    if not valid:
        assert summary is None
        return
    assert summary["items"] == len(valid)
    assert summary["calls_per_item"] == pytest.approx(sum(v["calls"] for v in valid) / len(valid))
    assert summary["latency_median"] == pytest.approx(statistics.median(v["latency"] for v in valid))


def test_a_slice_of_failed_items_says_n_a_where_its_suite_does():
    """A metric the system does not report (is_ambiguous) is n/a for the suite; a slice whose
    items all errored must not print the errors' zeros as 0.0 there (issue 26, item 6)."""
    from pytest_ambigqa.card.scorecard import build

    loaded = SUITES["march"].load(None, LoadOptions())
    scorers = Scorers(metrics=frozenset({"str_em", "ambiguity_detected"}))
    results = {}
    for item in loaded.items:
        if item.ambiguity_type == "syntactic":
            results[item.key] = SUITES["march"].failed_result(item, scorers, "error", "boom")
        else:
            results[item.key] = ItemResult(
                "march", item.id, "ok", item.ambiguity_type, scores={"str_em": 1.0},
                unscored={"ambiguity_detected": "the system does not report is_ambiguous"},
            )  # fmt: skip
    card = build([loaded], results, None, scorers, 0, system={}, config={}, versions={}).suites[0]
    assert card.metrics["ambiguity_detected"].mean is None
    syntactic = next(s for s in card.slices if s.name == "syntactic")
    assert syntactic.metrics["ambiguity_detected"].mean is None
    assert syntactic.metrics["ambiguity_detected"].reason == "the system does not report is_ambiguous"
    assert syntactic.metrics["str_em"].mean == 0.0  # a correctness metric the system reports: 0
