"""The judge and the reader through pytest, against a real server on 127.0.0.1."""

from __future__ import annotations

import json

import pytest

from fixtures.network import GUARD
from fixtures.process import ambig_run
from fixtures.servers import SECRET
from pytest_ambigqa.suites import SUITES, LoadOptions

MARCH = SUITES["march"].load(None, LoadOptions()).items


def judged(
    pytester: pytest.Pytester, server, *args: str, report: str = "report"
) -> tuple[pytest.RunResult, dict]:
    pytester.makeconftest(GUARD)  # also in xdist workers: nothing may leave 127.0.0.1
    return ambig_run(
        pytester,
        f"--ambig-judge-base-url={server.url}",
        "--ambig-judge=judge-m",
        "--ambig-judge-timeout=1",
        "--ambig-cache-dir=cache",
        "--junitxml=junit.xml",
        *args,
        report=report,
    )


def suite(card: dict, name: str) -> dict:
    return next(s for s in card["suites"] if s["name"] == name)


def assert_secret_nowhere(pytester: pytest.Pytester, result: pytest.RunResult) -> None:
    for path in pytester.path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in result.stdout.str() + result.stderr.str()


def test_judged_run_then_a_free_rerun(pytester, chat_server):
    args = (
        "--ambig-suite=march,condambigqa",
        "--ambig-system=oracle",
        "--ambig-judge-price=2.5,10",
        "--ambig-limit=3",
    )
    result, card = judged(pytester, chat_server, *args)
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(
        [
            f"judge: judge-m at {chat_server.url}",
            "  templates march *, geval *; system fingerprints: fp_local",
            "  requests * (+0 from cache), retries 0, re-asked 0, tokens * in / * out, cost $0.0*",
            "*LLM judge*4.000*[[]4.000, 4.000[]]*2.084–3.474*",
            "*Judge: correctness*4.000*",
            "*Condition*0.7*",
            "*Combined*0.*",
            "*Balanced*0.*",
        ]
    )
    march, condambigqa = suite(card, "march"), suite(card, "condambigqa")
    assert march["metrics"]["judge"]["mean"] == 4.0 and march["metrics"]["judge"]["n"] == 3
    assert [s["name"] for s in march["slices"]] == ["semantic", "syntactic", "constraint"]
    assert all(condambigqa["metrics"][m]["n"] == 3 for m in ("condition", "answer", "combined", "balanced"))
    usage = card["judge"]["usage"]
    assert usage["requests"] == len(chat_server.requests) > 0 and usage["cost"] > 0
    assert card["judge"]["templates"]["march"] and card["judge"]["model"] == "judge-m"
    requests = len(chat_server.requests)
    again, card2 = judged(pytester, chat_server, *args, report="again")
    again.assert_outcomes(passed=6)
    assert len(chat_server.requests) == requests  # a re-run sends no request
    assert card2["judge"]["usage"]["requests"] == 0 and card2["judge"]["usage"]["cached"] == usage["requests"]
    again.stdout.fnmatch_lines(["  requests 0 (+* from cache), *cost $0.0000"])
    assert suite(card2, "march")["metrics"] == march["metrics"]
    assert_secret_nowhere(pytester, again)
    assert not (pytester.path / ".deepeval").exists()


@pytest.mark.parametrize(
    "fault", ["html", "foo", "empty-choices", "null-choices", "no-message", "list-content"]
)
def test_a_judge_that_never_completes_leaves_only_its_metrics_unscored(pytester, chat_server, fault):
    """STR-EM keeps its value; every judge metric is n/a with the reason; the run fails, saying why."""
    chat_server.faults = [fault] * 1000
    result, card = judged(
        pytester,
        chat_server,
        "--ambig-suite=march,condambigqa",
        "--ambig-system=oracle",
        "--ambig-limit=2",
        "--ambig-judge-retries=1",
    )
    result.assert_outcomes(passed=4)
    assert result.ret == 1 and "Traceback" not in result.stdout.str() + result.stderr.str()
    march, condambigqa = suite(card, "march")["metrics"], suite(card, "condambigqa")["metrics"]
    assert march["str_em"]["mean"] == 100.0 and condambigqa["citation"]["mean"] == 1.0
    for metric in ("judge", "judge_correctness"):
        assert march[metric]["mean"] is None and "not a chat completion" in march[metric]["reason"]
    assert (
        condambigqa["answer"]["mean"] is None and "not a chat completion" in condambigqa["answer"]["reason"]
    )
    result.stdout.fnmatch_lines(
        ["gate FAILED: march judge*: the configured model scored no item: judge unavailable*"]
    )


def test_faults_end_as_counted_unscored_items(pytester, chat_server):
    chat_server.faults = ["500"] * 3 + ["invalid"] * 3  # item 1: unreachable; item 2: never valid JSON
    result, card = judged(
        pytester,
        chat_server,
        "--ambig-suite=march",
        "--ambig-system=oracle",
        "--ambig-limit=3",
        "--ambig-judge-retries=2",
        "--ambig-max-unscored-rate=0.2",
    )
    result.assert_outcomes(passed=3)  # the system answered every item: no test fails for the judge
    assert result.ret == 1
    judge = suite(card, "march")["metrics"]["judge"]
    assert judge["n"] == 1 and judge["unscored"] == 2 and judge["mean"] == 4.0
    reasons = sorted(r["unscored"]["judge"] for r in card["items"] if "judge" in r["unscored"])
    assert reasons[0].startswith("judge reply still unusable after 3 attempts: it is not JSON")
    assert reasons[1] == "judge unavailable after 3 attempts: HTTP 500: stand-in 500"
    result.stdout.fnmatch_lines(
        [
            "  requests * retries 2, re-asked 2,*",
            "gate FAILED: march judge, judge_relevance, judge_faithfulness, judge_informativeness, judge_correctness:"
            " 2 of 3 items unscored (67%) > 0.2: *",
        ]
    )
    assert card["items"][0]["scores"]["str_em"] == 1.0  # other metrics are unaffected


def test_judge_variance_with_k_samples(pytester, chat_server):
    result, card = judged(
        pytester,
        chat_server,
        "--ambig-suite=march",
        "--ambig-system=oracle",
        "--ambig-limit=2",
        "--ambig-judge-samples=3",
        "--ambig-item-min=judge_correctness=4",
    )
    variance = suite(card, "march")["variance"]["judge_correctness"]
    assert variance["items"] == 2 and variance["mean_spread"] == 1.0 and variance["agreement"] == 0.0
    assert len(variance["straddling"]) == 2  # samples 4, 3, 4 fall on both sides of 4
    assert variance.keys() >= {"mean_spread", "max_spread", "agreement", "straddling"}
    assert suite(card, "march")["variance"]["judge_relevance"]["agreement"] == 1.0
    assert card["items"][0]["samples"]["judge_correctness"] == [4.0, 3.0, 4.0]
    assert card["items"][0]["scores"]["judge_correctness"] == pytest.approx(11 / 3)
    result.stdout.fnmatch_lines(
        [
            "  judge variance, Judge: correctness: mean spread 1.000, max 1.000, all samples agree on 0% of 2 items; "
            "straddling --ambig-item-min: march-*",
        ]
    )
    result.assert_outcomes(failed=2)  # the item-min gate uses the mean of the samples, 3.67 < 4


def test_xdist_judged_run_equals_serial(pytester, chat_server):
    args = ("--ambig-suite=march,condambigqa", "--ambig-system=oracle", "--ambig-limit=2")
    _, serial = judged(pytester, chat_server, *args, report="serial")
    result, parallel = judged(pytester, chat_server, *args, "-n", "2", report="parallel")
    result.assert_outcomes(passed=4)

    def comparable(card):
        card = json.loads(json.dumps(card))
        card.pop("timing")
        card["judge"].pop("usage")  # the second run is served from the cache
        for item in card["items"]:
            item.pop("duration")
            item.pop("usage")
        return card

    assert comparable(serial) == comparable(parallel)


def test_hf_reader_gives_disambig_f1_and_dr(pytester, tiny_qa_model):
    pytester.makeconftest(GUARD)
    result = pytester.runpytest(
        "--ambig-suite=march,asqa",
        "--ambig-system=oracle",
        f"--ambig-reader={tiny_qa_model}",
        "--ambig-limit=2",
        "--ambig-report=report",
    )
    result.assert_outcomes(passed=4)
    card = json.loads((pytester.path / "report" / "scorecard.json").read_text())
    asqa = suite(card, "asqa")["metrics"]
    for metric in ("disambig_f1", "disambig_em", "disambig_hit", "dr"):
        assert asqa[metric]["n"] == 2 and 0 <= asqa[metric]["mean"] <= 100, metric
    expected = (asqa["disambig_f1"]["mean"] * asqa["rouge_lsum"]["mean"]) ** 0.5
    assert asqa["dr"]["mean"] == pytest.approx(expected)  # DR from the suite means, as ASQA's scorer does
    assert suite(card, "march")["metrics"]["disambig_f1"]["n"] == 2
    result.stdout.fnmatch_lines(["*Disambig-F1*[[]*[]]*", "*DR*"])
    import torch

    chosen = "cuda" if torch.cuda.is_available() else "cpu"
    assert card["config"]["device"] == "auto" and card["config"]["device_used"] == chosen  # what auto chose
    result.stdout.fnmatch_lines(
        [f"*local models (reader, dense embedder) ran on {chosen} (--ambig-device=auto)"]
    )


def test_an_explicit_accelerator_that_is_not_there_stops_the_run(pytester, tiny_qa_model):
    result = pytester.runpytest(
        "--ambig-suite=asqa", f"--ambig-reader={tiny_qa_model}", "--ambig-device=cuda:99"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --ambig-device: 'cuda:99': torch *CUDA device*, so the reader cannot run there; use auto or cpu"
        ]
    )


def test_llm_reader(pytester, chat_server):
    result, card = judged(
        pytester,
        chat_server,
        "--ambig-suite=march",
        "--ambig-system=oracle",
        "--ambig-reader=llm",
        "--ambig-limit=1",
    )
    result.assert_outcomes(passed=1)
    item = card["items"][0]
    assert "disambig_f1" in item["scores"] and item["scores"]["disambig_f1"] < 1  # the stand-in reads 3 words
    spans = item["details"]["reader"]  # what the reader read: why Disambig-F1 is what it is
    march = {i.id: i for i in MARCH}[item["item_id"]]
    assert [s["question"] for s in spans] == [i.question for i in march.interpretations]
    assert all(s["span"] for s in spans)


def test_gold_conditions_setting(pytester, chat_server):
    pytester.makepyfile(
        mysys="""
        def answer(question, conditions):
            return {"text": " ".join(conditions),
                    "interpretations": [{"condition": c, "answer": c, "citations": []} for c in conditions]}
        """
    )
    result, card = judged(
        pytester,
        chat_server,
        "--ambig-suite=condambigqa",
        "--ambig-system=mysys:answer",
        "--ambig-limit=2",
        "--ambig-condambigqa-setting=gold-conditions",
    )
    result.assert_outcomes(passed=2)
    assert card["system"]["gold_inputs"] == ["conditions"]
    metrics = suite(card, "condambigqa")["metrics"]
    assert metrics["condition"]["reason"] == "not part of the gold-conditions setting"
    assert metrics["answer"]["n"] == 2 and metrics["count_diff"]["mean"] == 0  # one pair per gold condition


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--ambig-reader=/no/such/model"],
            "ERROR: --ambig-reader: '/no/such/model' is neither a model directory*",
        ),
        (
            ["--ambig-reader=llm"],
            "ERROR: --ambig-reader=llm: the LLM reader is the judge model; set --ambig-judge",
        ),
        (["--ambig-device=tpu"], "ERROR: --ambig-device: 'tpu' is not auto, cpu, cuda or cuda:N"),
        (["--ambig-judge=m", "--ambig-judge-price=1"], "ERROR: --ambig-judge-price: expected IN,OUT*"),
        (
            ["--ambig-condambigqa-setting=closed"],
            "ERROR: --ambig-condambigqa-setting: 'closed' is not a CondAmbigQA setting (valid: main, *",
        ),
        (
            ["--ambig-item-min=dr=0.5"],
            "ERROR: --ambig-item-min: dr is computed for a whole suite, not per item",
        ),
    ],
)
def test_model_usage_errors(pytester, args, message):
    result = pytester.runpytest("--ambig-suite=march,asqa", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
