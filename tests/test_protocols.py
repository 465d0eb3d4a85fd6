"""One protocol per published row, through pytest: what systems get, and what they compare with."""

from __future__ import annotations

import json

import pytest

from fixtures.network import GUARD
from fixtures.process import ambig_run

RECORDER = """
def answer(question, passages, retriever=None, conditions=None):
    hits = retriever(question, 3) if retriever is not None else []
    return {
        "text": question,
        "citations": [p.id for p in hits],
        "metadata": {"passages": len(passages), "retrieved": len(hits), "conditions": len(conditions or [])},
    }

def needs_search(question, retriever):
    return question
"""


def scorecard(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    pytester.makepyfile(mysys=RECORDER)
    return ambig_run(pytester, "-p", "no:cacheprovider", *args)


def seen(card: dict) -> list[dict]:
    return [item["answer"]["metadata"] for item in card["items"] if item["answer"]]


def by_source(card: dict, suite: str) -> dict[str, set[bool]]:
    """Per source, whether its rows fit the run's protocol: comparable, or context only for
    the run's data (the bundled sample, a file not identified, a subset) or its search (the
    suites' own files), which these runs on samples all are (tests/test_evidence.py)."""
    card_of = next(s for s in card["suites"] if s["name"] == suite)
    data = {card_of["protocol"].get("unlike"), card_of["protocol"].get("easier")} - {None}
    assert data and not any(row["comparable"] for row in card_of["published"])
    out: dict[str, set[bool]] = {}
    for row in card_of["published"]:
        out.setdefault(row["source"].split("), ")[1], set()).add(row["comparable"] or row["reason"] in data)
    return out


def test_march_defaults_to_open_retrieval(pytester):
    """Systems get a retriever and no gold passages; the papers' rows are of this protocol
    (context here: the bundled sample), and the scorecard says the suite's own passages make
    an easier search than Wikipedia."""
    result, card = scorecard(
        pytester, "--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-limit=3"
    )
    result.assert_outcomes(passed=3)
    assert seen(card) == [{"passages": 0, "retrieved": 3, "conditions": 0}] * 3
    protocol = card["suites"][0]["protocol"]
    assert protocol["name"] == "open-retrieval" and protocol["upper_bound"] is None
    assert any("MARCH's being its gold evidence, not Wikipedia" in note for note in protocol["notes"])
    assert by_source(card, "march") == {"Table 3": {True}, "Table 4": {True}, "Table 13": {True}}
    assert card["suites"][0]["profile"] == "ALCE eval.py"
    result.stdout.fnmatch_lines(
        [
            "*protocol: open retrieval: systems get a retriever, no passages; scorer: ALCE eval.py",
            "*note: the retriever searches the * passages of the selected suites' own files, MARCH's being*",
            "*STR-EM*n/c 15.59–38.73",
            "*n/c: MARCH (Park et al., 2025), Table 3, 27 rows: the bundled sample of 13 items written for*",
        ]
    )


def test_march_oracle_evidence_is_an_upper_bound(pytester):
    result, card = scorecard(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=mysys:answer",
        "--ambig-limit=2",
        "--ambig-march-setting=oracle-evidence",
    )
    result.assert_outcomes(passed=2)
    assert all(s["passages"] > 0 for s in seen(card))
    assert card["suites"][0]["protocol"]["name"] == "oracle-evidence"
    assert by_source(card, "march") == {"Table 3": {False}, "Table 4": {False}, "Table 13": {False}}
    result.stdout.fnmatch_lines(
        [
            "*upper bound: systems get the gold evidence passages (--ambig-march-setting=oracle-evidence)",
            "*STR-EM*n/c 15.59–38.73",
            "*n/c: MARCH (Park et al., 2025), Table 3, 27 rows: this run is an upper bound*",
        ]
    )


@pytest.mark.parametrize(
    "setting, passages, conditions, comparable",
    [
        ("main", 20, 0, {"Table 2": {True}, "section 5.5": {False}, "Table 3": {False}}),
        ("gold-conditions", 20, 1, {"Table 2": {False}, "section 5.5": {False, True}, "Table 3": {False}}),
        ("closed-book", 0, 0, {"Table 2": {False}, "section 5.5": {False}, "Table 3": {False}}),
    ],
)
def test_condambigqa_settings(pytester, shared_data, setting, passages, conditions, comparable):
    data = shared_data / "condambigqa" / "condambigqa_sample20.json"
    result, card = scorecard(
        pytester,
        "--ambig-suite=condambigqa",
        f"--ambig-data={data}",
        "--ambig-system=mysys:answer",
        "--ambig-limit=2",
        f"--ambig-condambigqa-setting={setting}",
    )
    result.assert_outcomes(passed=2)
    for s in seen(card):
        assert s["passages"] == passages and (s["conditions"] > 0) == bool(conditions)
        assert s["retrieved"] == (0 if setting == "closed-book" else 3)  # closed book: no retriever either
    assert card["suites"][0]["protocol"]["name"] == setting
    assert by_source(card, "condambigqa") == comparable
    if setting == "closed-book":
        metrics = card["suites"][0]["metrics"]
        assert metrics["citation"]["reason"] == "not part of the closed-book setting"
        result.stdout.fnmatch_lines(
            ["*n/c: CondAmbigQA (Li et al., 2025), Table 3, 24 rows: not like for like*"]
        )


def test_closed_book_withholds_a_retriever_the_system_requires(pytester):
    result, card = scorecard(
        pytester,
        "--ambig-suite=condambigqa",
        "--ambig-system=mysys:needs_search",
        "--ambig-limit=1",
        "--ambig-condambigqa-setting=closed-book",
    )
    result.assert_outcomes(errors=1)
    assert (
        card["items"][0]["error"] == "the system requires a retriever, and the CondAmbigQA setting gives none"
    )
    metrics = card["suites"][0]["metrics"]
    assert metrics["citation"]["mean"] is None  # not part of the setting: not even the error's 0
    assert metrics["citation"]["reason"] == "not part of the closed-book setting"


def test_unofficial_citation_forms_are_counted_not_credited(pytester):
    pytester.makepyfile(
        cites="""
        def answer(question, passages):
            return {"text": "x", "interpretations": [
                {"answer": "x", "condition": "c", "citations": ["[1]", "Fragment 1", "fragment 2"]}]}
        """
    )
    result, card = scorecard(
        pytester, "--ambig-suite=condambigqa", "--ambig-system=cites:answer", "--ambig-limit=3"
    )
    result.assert_outcomes(passed=3)
    metrics = card["suites"][0]["metrics"]
    assert metrics["unofficial_citations"]["mean"] == 6  # "[1]" and "fragment 2" in each of 3 items
    bare = "def answer(question):\n    return {'text': 'x', 'citations': ['[1]', 'Fragment 1']}\n"
    pytester.makepyfile(bare=bare)  # a bare-text answer is one pair: its citations count once
    _, card = scorecard(
        pytester, "--ambig-suite=condambigqa", "--ambig-system=bare:answer", "--ambig-limit=2"
    )
    assert card["suites"][0]["metrics"]["unofficial_citations"]["mean"] == 2
    result.stdout.fnmatch_lines(["*Citations not in an official form  *6  *3/3*"])


def test_scorer_profile_is_selectable_and_named(pytester):
    """ALCE reads the first line only; ASQA the whole answer."""
    pytester.makepyfile(
        twolines="""
        def answer(question, item):
            golds = [i.short_answers[0] for i in item.interpretations]
            return "Preamble.\\n" + " ".join(golds)
        """
    )
    base = ("--ambig-suite=asqa", "--ambig-system=twolines:answer", "--ambig-limit=2")
    _, alce = scorecard(pytester, *base)
    result, asqa = scorecard(pytester, *base, "--ambig-scorer-profile=asqa")
    assert alce["suites"][0]["metrics"]["str_em"]["mean"] == 0
    assert asqa["suites"][0]["metrics"]["str_em"]["mean"] == 100
    assert asqa["config"]["profile"] == "asqa" and asqa["suites"][0]["profile"] == "ASQA scoring.py"
    result.stdout.fnmatch_lines(["*scorer: ASQA scoring.py"])


def test_closed_book_with_a_judge_pools_answer_pairs(pytester, chat_server):
    pytester.makeconftest(GUARD)
    pytester.makepyfile(
        two="""
        def answer(question, item):
            return {"text": "x", "interpretations": [
                {"answer": item.interpretations[0].short_answers[0]}, {"answer": "an extra guess"}]}
        """
    )
    result = pytester.runpytest(
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-judge=judge-m",
        "--ambig-cache-dir=cache",
        "--ambig-report=report",
        "--ambig-suite=condambigqa",
        "--ambig-system=two:answer",
        "--ambig-limit=3",
        "--ambig-condambigqa-setting=closed-book",
        "--ambig-max-unscored-rate=0",
    )
    result.assert_outcomes(passed=3)
    assert result.ret == 0  # metrics outside the setting are not "unscored" by the judge
    card = json.loads((pytester.path / "report" / "scorecard.json").read_text())
    units = [u for item in card["items"] for u in item["units"]["answer"]]
    matches = card["items"][0]["details"]["matches"]
    assert len(matches) == 2 and matches[0]["gold"] == 0 and matches[0]["answer"] == units[0]
    assert len(units) == 6  # two pairs per item, matched or not
    answer = card["suites"][0]["metrics"]["answer"]
    assert answer["mean"] == pytest.approx(sum(units) / len(units))
    assert card["judge"]["deepeval"]["released_with"] == "1.4.2"
    assert card["judge"]["deepeval"]["geval_templates"]
