"""The papers' reference methods (``--ambig-system=llm:<method>``) end to end, against a real
OpenAI-compatible server on 127.0.0.1 that plays a small scripted model
(``fixtures.servers.scripted_model``): what each method asks, in which order, and what its
answers and the scorecard record."""

from __future__ import annotations

import json

import pytest
from pytest_ambigqa.baselines.llm import METHODS, POLICIES

from fixtures.network import GUARD
from fixtures.process import ambig_run
from fixtures.servers import SECRET, scripted_model
from pytest_ambigqa.suites import SUITES, LoadOptions

SUITE_NAMES = ("march", "condambigqa", "asqa")
ITEMS = sum(len(SUITES[s].load(None, LoadOptions()).items) for s in SUITE_NAMES)


def run(pytester: pytest.Pytester, server, method: str, *args: str, suites: str = ",".join(SUITE_NAMES)):
    pytester.makeconftest(GUARD)  # also in xdist workers: nothing may leave 127.0.0.1
    return ambig_run(
        pytester,
        f"--ambig-suite={suites}",
        f"--ambig-system=llm:{method}",
        "--ambig-llm-model=scripted-m",
        f"--ambig-llm-base-url={server.url}",
        "--ambig-llm-price=1,2",
        "--ambig-cache-dir=cache",
        *args,
    )


def user_prompts(server) -> list[str]:
    return [body["messages"][-1]["content"] for body in server.requests]


@pytest.mark.parametrize("method", [m for m in METHODS if m not in POLICIES])
def test_every_method_answers_every_sample_and_says_what_it_cost(pytester, chat_server, method):
    result, card = run(pytester, chat_server, method)
    result.assert_outcomes(passed=ITEMS)
    answers = [item["answer"] for item in card["items"]]
    assert all(a["metadata"]["method"] == method and a["metadata"]["llm"]["calls"] >= 1 for a in answers)
    assert all(isinstance(a["is_ambiguous"], bool) for a in answers)  # the detection metric is exercised
    assert all(a["metadata"]["llm"]["fingerprints"] == ["fp_local"] for a in answers)
    calls = card["system"]["model_calls"]
    assert calls["method"] == method and calls["model"] == "scripted-m" and calls["items"] == ITEMS
    assert calls["cost"] > 0 and calls["prompt_tokens_per_item"] > 0
    result.stdout.fnmatch_lines(
        [
            f"  model calls (llm:{method}, scripted-m): per item * calls (0.0 from llm.sqlite), * tokens in *, $*"
        ]
    )
    assert card["system"]["label"].startswith(f"llm:{method} (scripted-m at http://127.0.0.1:")
    for path in pytester.path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_the_cost_line_says_per_item_and_in_all_alike(pytester, chat_server):
    """Tokens and dollars per item, then tokens and dollars in all: never a per-item token
    count beside a run-total cost (issue 26, item 8)."""
    result, card = run(pytester, chat_server, "naive-rag", suites="march")
    calls = card["system"]["model_calls"]
    n = calls["items"]
    line = next(x for x in result.stdout.lines if "model calls (llm:naive-rag" in x)
    tokens_in, tokens_out = calls["prompt_tokens_per_item"], calls["completion_tokens_per_item"]
    assert (
        f"per item {calls['calls_per_item']:.1f} calls (0.0 from llm.sqlite), {tokens_in:,.0f} tokens in / "
        f"{tokens_out:,.0f} out, ${calls['cost'] / n:.4f}; in all {calls['calls_per_item'] * n:,.0f} calls, "
        f"{tokens_in * n:,.0f} tokens in / {tokens_out * n:,.0f} out, ${calls['cost']:.4f}; latency "
    ) in line
    assert line.endswith(f"over {n} answered items")
    unpriced, _ = ambig_run(
        pytester, "--ambig-suite=march", "--ambig-system=llm:naive-rag", "--ambig-llm-model=scripted-m",
        f"--ambig-llm-base-url={chat_server.url}", "--ambig-cache-dir=cache", "--ambig-limit=2", report="unpriced",
    )  # fmt: skip
    line = next(x for x in unpriced.stdout.lines if "model calls (llm:naive-rag" in x)
    assert "; cost: no prices given (--ambig-llm-price); latency" in line and "$" not in line


def test_a_resumed_run_says_which_answers_and_costs_it_reused(pytester, chat_server):
    """The answers a resumed run took from the response store are counted, and so is that
    their calls (and cost) were an earlier run's (issue 26, item 8)."""
    args = ("--ambig-resume", "--ambig-limit=4")
    first, _ = run(pytester, chat_server, "naive-rag", *args, suites="march")
    again, card = run(pytester, chat_server, "naive-rag", *args, suites="march")
    assert card["system"]["model_calls"]["reused"] == 4
    again.stdout.fnmatch_lines(
        [
            "  model calls (llm:naive-rag, scripted-m): *; over 4 answered items, all 4 reused from the "
            "response store (their calls made, and paid for, by an earlier run)",
            "  answers: 4 from the response store, 0 asked now",
        ]
    )
    said = [x for x in first.stdout.lines if x.startswith(("  model calls", "  answers:"))]
    assert len(said) == 1 and "reused" not in said[0]


def test_a_dead_model_server_is_one_line_naming_it(pytester):
    """Nobody listens at the model's URL: the items that tried say so, those after the model
    was given up say they made no call (never "after 2 attempts"), and one line of the
    scorecard names the server, its credentials redacted (issue 26, item 8)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket closes
    pytester.makeconftest(GUARD)
    result, card = ambig_run(
        pytester, "--ambig-suite=march", "--ambig-limit=6", "--ambig-system=llm:naive-rag",
        "--ambig-llm-model=m", f"--ambig-llm-base-url=http://user:hunter2secret@127.0.0.1:{port}/v1",
        "--ambig-judge-retries=0", "--ambig-cache-dir=cache",
    )  # fmt: skip
    result.assert_outcomes(errors=6)
    errors = [item["error"] for item in card["items"]]
    assert not any("no call made" in e for e in errors[:3])
    assert all(e == "llm:naive-rag, step answer: no call made: the model was given up earlier in this run "
               "(the scorecard's model calls say why)" for e in errors[3:])  # fmt: skip
    server = f"http://127.0.0.1:{port}/v1"
    given_up = [x for x in result.stdout.lines if "given up" in x and server in x]
    assert len(given_up) == 1 and given_up[0].startswith(
        "  model given up: model unavailable after 1 attempts: "
    )
    assert given_up[0].endswith(
        f"to {server}; no further model calls this run); 3 of the 6 items made no call"
    )
    calls = card["system"]["model_calls"]
    assert (calls["given_up"], calls["calls_per_item"]) == (3, 0.5)  # a step that made no call is no call
    assert "hunter2secret" not in result.stdout.str() + result.stderr.str()


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


def steps_of(item: dict) -> list[str]:
    return [s["step"] for s in item["answer"]["metadata"]["llm"]["steps"]]


def test_clarion_plans_before_it_retrieves_then_acts_per_reading(pytester, chat_server):
    result, card = run(pytester, chat_server, "clarion", suites="march")
    for item in card["items"]:
        meta, answer = item["answer"]["metadata"], item["answer"]
        acts = [f"act {n}.{t}" for n in (1, 2) for t in range(1, 6)]
        assert steps_of(item) == ["plan", *acts, "answer"]  # planning first, nothing searched before it
        assert meta["plan"] == meta["readings"] and len(meta["readings"]) == 2
        assert meta["searches"] == [
            r for r in meta["readings"] for _ in range(5)
        ]  # each reading its own loop
        assert meta["forced_at_budget"] == [True, True]
        assert (
            answer["is_ambiguous"] is True and answer["ambiguity_type"] == "semantic"
        )  # the planner's verdict
    first_prompt = chat_server.requests[0]["messages"][-1]["content"]
    assert "clarified_questions" in first_prompt and "Passages:" not in first_prompt


def test_clarion_ablations_drop_clarification_then_detection(pytester, chat_server):
    result, card = run(pytester, chat_server, "clarion-no-clarification", suites="march")
    for item in card["items"]:
        assert steps_of(item) == ["detect", *[f"act 1.{t}" for t in range(1, 6)], "answer"]
        assert item["answer"]["metadata"]["readings"] == [item["answer"]["metadata"]["plan"][0]]
        assert item["answer"]["ambiguity_type"] == "syntactic"  # the detector's type, no rewriting
    result, card = run(
        pytester, chat_server, "clarion-no-detection", "--ambig-cache-dir=cache2", suites="march"
    )
    for item in card["items"]:
        assert steps_of(item) == [*[f"act 1.{t}" for t in range(1, 6)], "answer"]
        assert "ambiguous" not in item["answer"]["metadata"]


def test_diva_retrieves_once_per_reading_verifies_then_adapts(pytester, chat_server):
    result, card = run(pytester, chat_server, "diva", suites="march")
    for item in card["items"]:
        meta = item["answer"]["metadata"]
        assert steps_of(item) == ["diversify", "verify 1", "verify 2", "adapt and answer"]
        assert meta["searches"] == meta["readings"]  # one search per reading, with that reading
        assert meta["strategy"] == "retrieved evidence"
        kept = {
            pid for labels in meta["labels"].values() for pid, label in labels.items() if label != "useless"
        }
        assert set(meta["retrieved"]) == kept  # only what the verifier kept is read


def test_treerare_searches_each_phrase_bottom_up_then_aggregates(pytester, chat_server):
    result, card = run(pytester, chat_server, "treerare", suites="march")
    for item in card["items"]:
        meta = item["answer"]["metadata"]
        assert steps_of(item) == [
            "parse",
            "queries 0",
            "evidence 0",
            "queries 1",
            "evidence 1",
            "queries 2",
            "evidence 2",
            "aggregate",
        ]
        assert meta["searches"] == meta["phrases"]  # one query per phrase, whole question last
        assert len(meta["notes"]) == 3


def test_condambigqa_pipeline_finds_conditions_then_answers_each_with_citations(pytester, chat_server):
    result, card = run(pytester, chat_server, "condambigqa", suites="condambigqa")
    result.assert_outcomes(passed=len(card["items"]))
    for item in card["items"]:
        assert steps_of(item) == ["find conditions", "answer per condition"]
        assert item["answer"]["metadata"]["setting"] == "main"
        triples = item["answer"]["interpretations"]
        assert triples and all(t["condition"] and t["answer"] and t["citations"] for t in triples)
    gold = run(
        pytester,
        chat_server,
        "condambigqa",
        "--ambig-condambigqa-setting=gold-conditions",
        "--ambig-cache-dir=cache2",
        suites="condambigqa",
    )[1]
    for item in gold["items"]:
        assert (
            steps_of(item) == ["answer per condition"]
            and item["answer"]["metadata"]["setting"] == "gold-conditions"
        )
        assert item["answer"]["metadata"]["conditions"]  # the gold conditions it was handed
    closed = run(
        pytester,
        chat_server,
        "condambigqa",
        "--ambig-condambigqa-setting=closed-book",
        "--ambig-cache-dir=cache3",
        suites="condambigqa",
    )[1]
    assert {i["answer"]["metadata"]["setting"] for i in closed["items"]} == {"closed-book"}


def test_a_search_method_without_a_retriever_is_refused_up_front(pytester, chat_server):
    result, _ = run(pytester, chat_server, "naive-rag", "--ambig-retriever=none", suites="march")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: the system 'llm:naive-rag (*)' needs a retriever, but --ambig-retriever=none"]
    )


def test_odd_text_in_a_reply_is_carried_on_safely(pytester, local_server):
    """A reading with a lone surrogate passes the checks; echoed into the next prompt it
    must not break the request (it is made encodable first)."""

    def reply(path, body):
        data = scripted_model(body["messages"][-1]["content"])
        if "readings" in data:
            data["readings"] = [r + " \ud800" for r in data["readings"]]
        message = {"role": "assistant", "content": json.dumps(data)}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return 200, {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}

    server = local_server(reply)
    server.url += "/v1"
    result, card = run(pytester, server, "diva", suites="march")
    result.assert_outcomes(passed=len(card["items"]))
    assert all(r.endswith(" ?") for item in card["items"] for r in item["answer"]["metadata"]["readings"])


def test_an_errored_item_keeps_its_calls_in_its_record_the_cost_line_and_the_page(pytester, chat_server):
    """What the calls of an item that failed cost is still spent: its record keeps the steps,
    tokens, cost and the last reply; the run's cost counts it; report.html shows it; a rescore
    of the run keeps it (issue 25)."""
    chat_server.faults = ["invalid"] * 10_000  # every step's reply, and each re-ask, unusable
    result, card = run(pytester, chat_server, "clarion", "--ambig-limit=2", suites="march")
    result.assert_outcomes(errors=2)
    costs = []
    for item in card["items"]:
        calls = item["details"]["calls"]
        assert (calls["method"], calls["model"], calls["requests"]) == ("clarion", "scripted-m", 3)
        assert calls["last_reply"] == "this is not JSON" and calls["prompt_tokens"] > 0
        assert len(calls["steps"]) == 1 and calls["cost"] > 0
        costs.append(calls["cost"])
    summary = card["system"]["model_calls"]
    assert (summary["items"], summary["errored"]) == (2, 2)
    assert summary["cost"] == pytest.approx(sum(costs))
    result.stdout.fnmatch_lines(
        ["  model calls (llm:clarion, scripted-m): *over 2 items (0 answered, 2 errored)"]
    )
    page = (pytester.path / "report" / "report.html").read_text(encoding="utf-8")
    assert "calls to scripted-m" in page and "this is not JSON" in page
    rescored, again = ambig_run(pytester, "--ambig-rescore=report/scorecard.json", report="again")
    assert [i["details"]["calls"] for i in again["items"]] == [i["details"]["calls"] for i in card["items"]]
