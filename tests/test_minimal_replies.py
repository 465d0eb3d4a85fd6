"""A schema-valid reply is never an error (issue 40, part 5): every structured step's schema
states what its check needs, so that the least a server honouring the schema may write (its
minimal instance: first enum value, one array element, smallest numbers, empty strings) passes;
what a schema cannot say is mended with a note. End to end against a real server on 127.0.0.1
that answers every schema with its minimal instance (``ChatServer`` in mode "minimal")."""

from __future__ import annotations

import re

import pytest
from pytest_ambigqa.baselines.llm import METHODS, conditional, methods, planned, policy, prompts

from fixtures.network import GUARD
from fixtures.process import ambig_run
from fixtures.servers import minimal_instance
from pytest_ambigqa.judge import asqa, geval, march
from pytest_ambigqa.models import reader
from pytest_ambigqa.models.chat import ChatClient, ChatSettings
from pytest_ambigqa.models.usage import Usage
from pytest_ambigqa.protocols.interactive import users
from pytest_ambigqa.suites import SUITES, LoadOptions

SUITE_NAMES = ("march", "condambigqa", "asqa")
ITEMS = sum(len(SUITES[s].load(None, LoadOptions()).items) for s in SUITE_NAMES)
ACTIONS = ("clarify", "answer", "multi-answer")

# Every structured step's schema, and the check its reply must pass.
STEPS = {
    "answer": (prompts.ANSWER_FORM, methods.check_answer),
    "text answer": (prompts.TEXT_FORM, methods.check_text),
    "reasoned answer": (prompts.REASONED_TEXT_FORM, methods.check_reasoned),
    "react act": (prompts.act_form(("search", "answer")), methods.check_act(("search", "answer"))),
    "react forced answer": (prompts.act_form(("answer",)), methods.check_act(("answer",))),
    "diversify": (prompts.DIVERSIFY_FORM, planned.check_readings),
    "verify": (prompts.VERIFY_FORM, planned.check_labels),
    "detect": (prompts.DETECT_FORM, planned.check_detection),
    "clarify": (prompts.CLARIFY_FORM, planned.check_clarification),
    "planned act": (prompts.PLANNED_ACT_FORM, planned.check_planned_act),
    "parse": (prompts.PARSE_FORM, planned.check_parse),
    "queries": (prompts.QUERY_FORM, planned.check_queries),
    "summary": (prompts.SUMMARY_FORM, planned.check_summary),
    "conditions": (prompts.CONDITIONS_FORM, conditional.check_conditions),
    "answers": (prompts.ANSWERS_FORM, conditional.check_answers),
    **{
        f"policy {'cot ' * reasoned}{'/'.join(offered)}": (
            prompts.policy_form(offered, reasoned),
            policy._check(offered, reasoned),
        )
        for reasoned in (False, True)
        for offered in (ACTIONS, ("answer",), ("clarify",))
    },
    "judge march": (march.SCHEMA, march.check),
    "judge asqa": (asqa.SCHEMA, asqa.check),
    "judge g-eval": (geval.REASON_SCORE, geval._check_reason_score),
    "llm reader": (reader.LLM_READER_SCHEMA, reader._check_answer),
    "llm user": (users._said_as("reply"), users._text_of("reply")),
}


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("fewest", [False, True], ids=["one-element", "fewest-elements"])
def test_every_least_reply_a_schema_allows_passes_its_check(step, fewest):
    """Each enum value and ``anyOf`` branch in turn (``pick``), with arrays of one element or
    of ``minItems``: what the schema allows (jsonschema says so), the check takes."""
    jsonschema = pytest.importorskip("jsonschema")
    schema, check = STEPS[step]
    for pick in range(4):
        reply = minimal_instance(schema, pick, fewest)
        jsonschema.validate(reply, schema)
        assert check(reply) is None, (step, reply, check(reply))


def test_react_at_its_budget_is_offered_the_answer_alone():
    forced = prompts.act_form(("answer",))
    assert forced["properties"]["action"]["enum"] == ["answer"] and "anyOf" not in forced
    assert forced["properties"]["answer"]["minLength"] == 1
    search = {"thought": "", "action": "search", "query": "more", "answer": ""}
    assert methods.check_act(("answer",))(search) is not None
    assert '"action": "answer"' in prompts.act_prompt("Q?", [], 5, ("answer",))


def test_a_parse_whose_children_are_not_earlier_is_mended_with_a_note():
    phrases = [
        {"text": "a", "children": [0]},
        {"text": "b", "children": [0, 1, 3]},
        {"text": "c", "children": []},
    ]
    assert planned.check_parse({"phrases": phrases}) is None
    notes = planned.earlier_children(phrases)
    assert [p["children"] for p in phrases] == [[], [0], []]
    assert notes == [
        "phrase 0: children [0] are not earlier phrases, dropped",
        "phrase 1: children [1, 3] are not earlier phrases, dropped",
    ]
    assert planned.check_parse({"phrases": [{"text": "a", "children": [-1]}]}) is not None


def run(pytester: pytest.Pytester, server, *args: str):
    pytester.makeconftest(GUARD)  # nothing may leave 127.0.0.1
    return ambig_run(
        pytester,
        f"--ambig-suite={','.join(SUITE_NAMES)}",
        "--ambig-cache-dir=cache",
        "-p",
        "no:randomly",
        *args,
    )


@pytest.mark.parametrize("method", METHODS)
def test_every_method_finishes_every_sample_item_on_minimal_replies(pytester, chat_server, method):
    chat_server.mode = "minimal"
    result, card = run(
        pytester,
        chat_server,
        f"--ambig-system=llm:{method}",
        "--ambig-llm-model=minimal-m",
        f"--ambig-llm-base-url={chat_server.url}",
    )
    result.assert_outcomes(passed=ITEMS)
    assert len(card["items"]) == ITEMS and not any(item.get("error") for item in card["items"])
    # every step asked with its schema, so each reply was that schema's minimal instance
    assert chat_server.requests
    assert all(b["response_format"]["type"] == "json_schema" for b in chat_server.requests)
    assert card["system"]["model_calls"]["structured_output"] == ["json_schema"]
    if method == "treerare":  # the parse's one phrase names itself as its child: dropped, noted
        parse = [s for item in card["items"] for s in item["answer"]["metadata"]["llm"]["steps"]]
        notes = [n for s in parse if s["step"] == "parse" for n in s["notes"]]
        assert notes and all(re.fullmatch(r"phrase 0: children \[0\] .*dropped", n) for n in notes)


def test_the_judge_scores_every_sample_item_on_minimal_replies(pytester, chat_server):
    chat_server.mode = "minimal"
    result, card = run(
        pytester,
        chat_server,
        "--ambig-system=oracle",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-judge=judge-m",
    )
    result.assert_outcomes(passed=ITEMS)
    suites = {s["name"]: s["metrics"] for s in card["suites"]}
    items = {name: len(SUITES[name].load(None, LoadOptions()).items) for name in SUITE_NAMES}
    assert suites["march"]["judge"]["n"] == items["march"] and suites["march"]["judge"]["mean"] == 0
    assert suites["asqa"]["judge_utility"]["n"] == items["asqa"]
    assert suites["asqa"]["judge_utility"]["mean"] == 1
    assert suites["condambigqa"]["answer"]["n"] == items["condambigqa"]
    assert all(b["response_format"]["type"] == "json_schema" for b in chat_server.requests)
    assert card["judge"]["usage"]["reasks"] == 0


def test_a_judge_batch_asks_on_the_rung_a_synchronous_call_found(chat_server):
    """A refused line in a batch cannot step down a rung: a batch sends the schema only once a
    synchronous call has found that the server takes it, and the prompt alone before."""
    chat_server.mode = "minimal"
    judge = ChatClient(ChatSettings(model="judge-m", base_url=chat_server.url, timeout=5), None)
    messages = [{"role": "user", "content": "Rate it."}]
    assert "response_format" not in judge._batched(messages, 0, asqa.SCHEMA, {})
    judge.chat_json(messages, asqa.check, Usage(), schema=asqa.SCHEMA)
    sent = judge._batched(messages, 0, asqa.SCHEMA, {})["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == asqa.SCHEMA
    assert "response_format" not in judge._batched(messages, 0, None, {})
