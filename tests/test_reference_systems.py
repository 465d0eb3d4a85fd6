"""The papers' reference methods (``--ambig-system=llm:<method>``) end to end, against a real
OpenAI-compatible server on 127.0.0.1 that plays a small scripted model
(``fixtures.servers.scripted_model``): what each method asks, in which order, and what its
answers and the scorecard record."""

from __future__ import annotations

import json

import pytest

from fixtures.network import GUARD
from fixtures.servers import SECRET
from pytest_ambigqa.suites import SUITES, LoadOptions

METHODS = ("closed-book", "cot", "naive-rag", "cot-rag", "react")
SUITE_NAMES = ("march", "condambigqa", "asqa")
ITEMS = sum(len(SUITES[s].load(None, LoadOptions()).items) for s in SUITE_NAMES)


def run(pytester: pytest.Pytester, server, method: str, *args: str, suites: str = ",".join(SUITE_NAMES)):
    pytester.makeconftest(GUARD)  # also in xdist workers: nothing may leave 127.0.0.1
    result = pytester.runpytest(
        f"--ambig-suite={suites}",
        f"--ambig-system=llm:{method}",
        "--ambig-llm-model=scripted-m",
        f"--ambig-llm-base-url={server.url}",
        "--ambig-llm-price=1,2",
        "--ambig-cache-dir=cache",
        "--ambig-report=report",
        *args,
    )
    path = pytester.path / "report" / "scorecard.json"
    return result, json.loads(path.read_text()) if path.exists() else {}


def user_prompts(server) -> list[str]:
    return [body["messages"][-1]["content"] for body in server.requests]


@pytest.mark.parametrize("method", METHODS)
def test_every_method_answers_every_sample_and_says_what_it_cost(pytester, chat_server, method):
    result, card = run(pytester, chat_server, method)
    result.assert_outcomes(passed=ITEMS)
    answers = [item["answer"] for item in card["items"]]
    assert all(a["metadata"]["method"] == method and a["metadata"]["llm"]["calls"] >= 1 for a in answers)
    assert all(isinstance(a["is_ambiguous"], bool) for a in answers)  # the detection metric is exercised
    calls = card["system"]["model_calls"]
    assert calls["method"] == method and calls["model"] == "scripted-m" and calls["items"] == ITEMS
    assert calls["cost"] > 0 and calls["prompt_tokens_per_item"] > 0
    result.stdout.fnmatch_lines(
        [f"  model calls (llm:{method}, scripted-m): * per item, * tokens in *cost $*"]
    )
    assert card["system"]["label"].startswith(f"llm:{method} (scripted-m at http://127.0.0.1:")
    for path in pytester.path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_closed_book_and_cot_read_no_passages(pytester, chat_server):
    run(pytester, chat_server, "closed-book", suites="march")
    run(pytester, chat_server, "cot", "--ambig-cache-dir=cache2", suites="march")
    prompts = user_prompts(chat_server)
    assert len(prompts) == 2 * len(SUITES["march"].load(None, LoadOptions()).items)
    assert not any("Passages:" in p for p in prompts)
    assert sum('"reasoning"' in p for p in prompts) == len(prompts) // 2


def test_naive_rag_reads_the_top_10_of_the_original_question(pytester, chat_server):
    result, card = run(pytester, chat_server, "naive-rag", suites="march")
    for item, prompt in zip(card["items"], user_prompts(chat_server), strict=True):
        retrieved = item["answer"]["metadata"]["retrieved"]
        assert item["answer"]["metadata"]["evidence"] == "retrieved" and len(retrieved) == 10
        assert all(f"[{pid}]" in prompt for pid in retrieved)
        cited = {c for i in item["answer"]["interpretations"] for c in i["citations"]}
        assert cited and cited <= set(retrieved)


def test_naive_rag_reads_the_fragments_condambigqa_hands_over(pytester, chat_server):
    result, card = run(pytester, chat_server, "naive-rag", suites="condambigqa")
    assert {item["answer"]["metadata"]["evidence"] for item in card["items"]} == {"given"}


def test_react_searches_until_its_budget_then_must_answer(pytester, chat_server):
    result, card = run(pytester, chat_server, "react", suites="march")
    items = len(card["items"])
    for item in card["items"]:
        meta = item["answer"]["metadata"]
        steps = [s["step"] for s in meta["llm"]["steps"]]
        assert steps == ["act 1", "act 2", "act 3", "act 4", "act 5", "answer (forced at the budget)"]
        assert meta["forced_answer"] is True and len(meta["searches"]) == 5
    prompts = user_prompts(chat_server)
    assert len(prompts) == 6 * items
    assert sum("Turns left: 0" in p for p in prompts) == 0  # no sixth turn is offered
    assert sum("Observation:" in p for p in prompts) > 0


def test_a_reply_the_model_cannot_get_right_is_that_items_error_naming_method_and_step(pytester, chat_server):
    chat_server.faults = ["invalid"] * 3  # the first item's answer step, and both re-asks
    result, card = run(pytester, chat_server, "naive-rag", "-p", "no:randomly", suites="march")
    result.assert_outcomes(passed=len(card["items"]) - 1, errors=1)
    (failed,) = [item for item in card["items"] if item["status"] == "error"]
    assert failed["error"].startswith(
        "llm:naive-rag, step answer: model reply still unusable after 3 attempts"
    )


def test_methods_run_under_xdist_and_with_concurrency(pytester, chat_server):
    result, card = run(
        pytester, chat_server, "react", "-n", "2", "--ambig-concurrency=3", suites="march,asqa"
    )
    result.assert_outcomes(passed=len(card["items"]))
    assert card["system"]["model_calls"]["calls_per_item"] == 6.0


def test_llm_systems_need_a_model_and_a_known_method(pytester, chat_server):
    result = pytester.runpytest("--ambig-suite=march", "--ambig-system=llm:naive-rag")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --ambig-system=llm:naive-rag: name the model with --ambig-llm-model*"]
    )
    result = pytester.runpytest("--ambig-suite=march", "--ambig-system=llm:oracle", "--ambig-llm-model=m")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --ambig-system: unknown reference method 'llm:oracle' (valid: llm:closed-book,*"]
    )
