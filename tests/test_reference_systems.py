"""The papers' reference methods (``--ambig-system=llm:<method>``) end to end, against a real
OpenAI-compatible server on 127.0.0.1 that plays a small scripted model
(``fixtures.servers.scripted_model``) and records every request: what each method asks, in
which order, with which decoding and retrieval depth (held to the method table of
docs/explanation/fidelity.md), how it
meets servers that answer in prose, take only JSON mode or take a JSON schema, and what its
answers and the scorecard record."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pytest_ambigqa.baselines.llm import DECODING, METHODS, POLICIES
from pytest_ambigqa.baselines.llm.planned import kept_nodes, top_queries

from fixtures.network import GUARD
from fixtures.pages import shown
from fixtures.process import ambig_run
from fixtures.servers import SECRET, scripted_model
from pytest_ambigqa.suites import SUITES, LoadOptions

SUITE_NAMES = ("march", "condambigqa", "asqa")
ITEMS = sum(len(SUITES[s].load(None, LoadOptions()).items) for s in SUITE_NAMES)
MARCH_QUESTIONS = [i.question for i in SUITES["march"].load(None, LoadOptions()).items]
FIDELITY = Path(__file__).resolve().parents[1] / "docs" / "explanation" / "fidelity.md"


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
        "-p",
        "no:randomly",
        *args,
    )


def user_prompts(server) -> list[str]:
    return [body["messages"][-1]["content"] for body in server.requests]


def steps_of(item: dict) -> list[str]:
    return [s["step"] for s in item["answer"]["metadata"]["llm"]["steps"]]


# -- the method table of docs/explanation/fidelity.md: steps, top-k, budget and decoding ---------

CELLS = {
    "steps, each with the paper section it follows": "steps",
    "top-k per query": "top_k",
    "budget": "budget",
    "decoding": "decoding",
}


def method_table() -> dict[str, dict[str, str]]:
    """The docs' table of the ``llm:`` methods (a list: one item per method, a sub-item per cell,
    wrapped): per method, its steps, top-k, budget and decoding cells."""
    text = FIDELITY.read_text(encoding="utf-8")
    section = text[text.index("## The methods, step by step") :]
    section = section[: section.index("\n## ")]
    table = {}
    for entry in section.split("\n- ")[1:]:
        names, *cells = entry.split("\n    - ")
        row = {}
        for cell in cells:
            label, value = cell.split(": ", 1)
            row[CELLS[label]] = " ".join(value.split())
        for name in re.findall(r"`llm:([a-z-]+)`", names):
            table[name] = row
    return table


TABLE = method_table()


def step_patterns(cell: str) -> list[re.Pattern]:
    """The cell's steps, in order: each backticked name, ``N``, ``R`` and ``T`` standing for
    numbers."""
    return [
        re.compile(re.sub(r"\b[NRT]\b", r"\\d+", re.escape(name).replace(r"\ ", " ")) + "$")
        for name in re.findall(r"`([^`]+)`", cell)
    ]


def first_number(cell: str) -> int | None:
    found = re.match(r"\D*?(\d+)", cell)
    return int(found.group(1)) if found else None


def passage_blocks(prompt: str) -> list[int]:
    """How many passages each block of search results in a prompt lists (an ReAct
    observation, or the passages one step reads); the per-reading blocks of a final answer
    are unions, not one search's results, and are left out."""
    counts = []
    for block in re.split(r"(?:Observation|Passages):\n", prompt)[1:]:
        counts.append(len(re.findall(r"^\[[^\]]+\] ", block.split("\n\n", 1)[0], re.M)))
    return counts


# What each method's budget bounds, read from an answered item: (the bounded number, whether
# the scripted model, which searches whenever it may, meets it exactly).
BUDGETS = {
    "closed-book": lambda meta, steps: (len(steps), True),
    "cot": lambda meta, steps: (len(steps), True),
    "naive-rag": lambda meta, steps: (len(steps), True),
    "cot-rag": lambda meta, steps: (len(steps), True),
    "condambigqa": lambda meta, steps: (len(steps), True),
    "condambigqa-no-conditions": lambda meta, steps: (len(steps), True),
    "react": lambda meta, steps: (len(meta["searches"]), True),
    "diva": lambda meta, steps: (len(meta["readings"]), False),
    # one budget of turns for the item, shared by its readings (MARCH App. H)
    "clarion": lambda meta, steps: (sum(s.startswith("act") for s in steps), True),
    "clarion-no-clarification": lambda meta, steps: (sum(s.startswith("act") for s in steps), True),
    "clarion-no-detection": lambda meta, steps: (sum(s.startswith("act") for s in steps), True),
    "treerare": lambda meta, steps: (max(len(q) for q in meta["queries"]), True),
}


def test_the_method_table_has_one_row_per_method():
    assert set(TABLE) == set(METHODS)
    for method, row in TABLE.items():
        assert step_patterns(row["steps"]), method
        assert re.search(r"\((MARCH|TreeRare|CondAmbigQA|Berant)", row["steps"]), method  # a section cited
        sent = DECODING[method].params()
        assert f"temperature {sent['temperature']:g}, " in row["decoding"]
        limit = f"at most {sent['max_tokens']} new tokens" if "max_tokens" in sent else "no token limit"
        assert limit in row["decoding"], method


@pytest.mark.parametrize("method", [m for m in METHODS if m not in POLICIES])
def test_every_method_answers_every_sample_as_the_method_table_says(pytester, chat_server, method):
    result, card = run(pytester, chat_server, method)
    result.assert_outcomes(passed=ITEMS)
    row = TABLE[method]
    answers = [item["answer"] for item in card["items"]]
    assert all(a["metadata"]["method"] == method and a["metadata"]["llm"]["calls"] >= 1 for a in answers)
    assert all(a["metadata"]["llm"]["fingerprints"] == ["fp_local"] for a in answers)
    # the steps: each one of the table's, first met in the table's order
    patterns = step_patterns(row["steps"])
    for item in card["items"]:
        order = []
        for step in steps_of(item):
            matched = [n for n, p in enumerate(patterns) if p.match(step)]
            assert matched, f"{method}: step {step!r} is not in the method table"
            order.append(matched[0])
        first_met = list(dict.fromkeys(order))
        assert first_met == sorted(first_met), (method, steps_of(item))
    # the budget
    budget = first_number(row["budget"])
    for item in card["items"]:
        meta = item["answer"]["metadata"]
        used, exact = BUDGETS[method](meta, steps_of(item))
        assert used == budget if exact else used <= budget, (method, used, budget)
    # the decoding, on every request
    sent = DECODING[method].params()
    for body in chat_server.requests:
        assert body["temperature"] == sent["temperature"] and body.get("max_tokens") == sent.get("max_tokens")
    assert all(a["metadata"]["llm"]["decoding"] == sent for a in answers)
    # the retrieval depth, on MARCH (no passages handed over: every passage block is a search's)
    k = first_number(row["top_k"])
    march = [p for p in user_prompts(chat_server) if any(f"Question: {q}" in p for q in MARCH_QUESTIONS)]
    blocks = [n for p in march for n in passage_blocks(p)]
    if k is None:
        assert blocks == []
    elif method == "treerare":  # a node reads the union of its queries' top 15
        assert blocks and all(k <= n <= 3 * k for n in blocks)
    else:
        assert blocks and set(blocks) == {k}, (method, set(blocks))
    # what the scorecard says of the calls
    calls = card["system"]["model_calls"]
    assert calls["method"] == method and calls["model"] == "scripted-m" and calls["items"] == ITEMS
    assert calls["cost"] > 0 and calls["prompt_tokens_per_item"] > 0
    assert calls["structured_output"] == ["json_schema"] and calls["prose_answers"] == 0
    assert all((b.get("response_format") or {}).get("type") == "json_schema" for b in chat_server.requests)
    result.stdout.fnmatch_lines(
        [
            f"  model calls (llm:{method}, scripted-m): per item * calls (0.0 from llm.sqlite), * tokens in *, $*",
            f"  structured output: json_schema; answers in prose (the long answer alone): 0 of {ITEMS} answered",
        ]
    )
    label = card["system"]["label"]
    assert label.startswith(f"llm:{method} (scripted-m at http://127.0.0.1:")
    assert f"temperature {sent['temperature']:g}, " in label and DECODING[method].source in label
    assert ("Stanza" in label) == (method == "treerare")
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
        "--ambig-no-preflight",  # the server dies mid-run: the preflight would have refused it
        "--ambig-concurrency=1",  # one item at a time: which items tried does not hang on the load
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


BASELINES = ("closed-book", "cot", "naive-rag", "cot-rag", "react")
# What would tell a model that the question has several readings, or ask it to flag ambiguity.
READINGS_TALK = re.compile(r"reading|interpretation|ambigu|every|all of them|several|clarif", re.I)


@pytest.mark.parametrize("method", BASELINES)
def test_the_baselines_are_not_told_of_readings_nor_asked_to_flag_ambiguity(pytester, chat_server, method):
    """MARCH's baselines as MIRAGE section 5 and MARCH App. J Fig. 17 prompt them (issue 40,
    part 1): neither the instructions nor the answer's form speak of readings or ask whether
    the question is ambiguous, so the self-report metrics are n/a for them, with the reason."""
    result, card = run(pytester, chat_server, method, suites="march,condambigqa")
    result.assert_outcomes(passed=len(card["items"]))
    for body in chat_server.requests:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        form = user.rpartition("Reply with only a JSON object of this form:")[2]
        assert not READINGS_TALK.search(system + form), (method, system, form)
        schema = body["response_format"]["json_schema"]["schema"]
        assert not {"ambiguous", "ambiguity_type", "interpretations", "clarifying_question"} & set(
            schema["properties"]
        )
    systems = {body["messages"][0]["content"] for body in chat_server.requests}
    wording = {
        "closed-book": "accurately and concisely",  # MIRAGE section 5
        "cot": "step by step",
        "naive-rag": "otherwise answer from your own knowledge",  # MIRAGE section 5
        "cot-rag": "grounding each step in the passages",
        "react": "search the corpus",
    }
    assert all(wording[method] in system for system in systems), systems
    for item in card["items"]:
        answer = item["answer"]
        assert answer["interpretations"] == [] and answer["is_ambiguous"] is None and answer["text"]
        assert set(answer["citations"]) <= set(answer["metadata"].get("retrieved", []))
    for suite in card["suites"]:
        metric = suite["metrics"]["ambiguity_detected"]
        assert metric["n"] == 0 and metric["reason"] == "the system does not report is_ambiguous"
    march = next(s for s in card["suites"] if s["name"] == "march")
    assert march["metrics"]["ambiguity_type_acc"]["reason"] == "the system does not report ambiguity_type"
    assert march["metrics"]["str_em"]["n"] == len(MARCH_QUESTIONS)  # the long answer is still scored


def test_closed_book_and_cot_read_no_passages(pytester, chat_server):
    run(pytester, chat_server, "closed-book", suites="march")
    run(pytester, chat_server, "cot", "--ambig-cache-dir=cache2", suites="march")
    prompts = user_prompts(chat_server)
    assert len(prompts) == 2 * len(MARCH_QUESTIONS)
    assert not any("Passages:" in p for p in prompts)
    assert sum('"reasoning"' in p for p in prompts) == len(prompts) // 2


def test_naive_rag_reads_the_top_10_of_the_original_question(pytester, chat_server):
    result, card = run(pytester, chat_server, "naive-rag", suites="march")
    for item, prompt in zip(card["items"], user_prompts(chat_server), strict=True):
        retrieved = item["answer"]["metadata"]["retrieved"]
        assert item["answer"]["metadata"]["evidence"] == "retrieved" and len(retrieved) == 10
        assert all(f"[{pid}]" in prompt for pid in retrieved)
        cited = set(item["answer"]["citations"])  # the passages its long answer marks
        assert (
            cited and cited <= set(retrieved) and all(f"[{pid}]" in item["answer"]["text"] for pid in cited)
        )


def test_naive_rag_reads_the_fragments_condambigqa_hands_over(pytester, chat_server):
    result, card = run(pytester, chat_server, "naive-rag", suites="condambigqa")
    assert {item["answer"]["metadata"]["evidence"] for item in card["items"]} == {"given"}


def test_react_searches_until_its_budget_then_answers_with_its_own_action(pytester, chat_server):
    result, card = run(pytester, chat_server, "react", suites="march")
    items = len(card["items"])
    for item in card["items"]:
        meta = item["answer"]["metadata"]
        assert steps_of(item) == [
            "act 1",
            "act 2",
            "act 3",
            "act 4",
            "act 5",
            "answer (forced at the budget)",
        ]
        assert meta["forced_answer"] is True and len(meta["searches"]) == 5
        assert item["answer"]["text"].endswith("]")  # the ANSWER action's text, citing passages
        assert item["answer"]["citations"] and set(item["answer"]["citations"]) <= set(meta["retrieved"])
        assert item["answer"]["is_ambiguous"] is None  # an answer in text reports no detection
    prompts = user_prompts(chat_server)
    assert len(prompts) == 6 * items  # no separate read over the passages seen
    forced = [p for p in prompts if "Allowed actions: answer\n" in p]
    assert len(forced) == items and all("Searches left: 0" in p for p in forced)
    detected = card["suites"][0]["metrics"]["ambiguity_detected"]
    assert detected["n"] == 0 and detected["reason"] == "the system does not report is_ambiguous"


def test_react_counts_its_searches_left_when_passages_are_handed_over(pytester, chat_server):
    """Under the given-docs protocol (CondAmbigQA's fragments) the passages handed over are
    ReAct's first observation, and no search: the agent is told it has all 5 searches left,
    then one fewer per search, never fewer than none (issue 40, part 4)."""
    result, card = run(pytester, chat_server, "react", suites="condambigqa")
    items = len(card["items"])
    result.assert_outcomes(passed=items)
    prompts = user_prompts(chat_server)
    assert len(prompts) == 6 * items
    left = [int(re.search(r"^Searches left: (-?\d+)$", p, re.M).group(1)) for p in prompts]
    assert sorted(left) == sorted(list(range(5, -1, -1)) * items)
    assert all("Search: (the passages given)\nObservation:\n[" in p for p in prompts)
    for item in card["items"]:
        meta = item["answer"]["metadata"]
        assert len(meta["searches"]) == 5 and meta["forced_answer"] is True
        assert steps_of(item)[-1] == "answer (forced at the budget)"


def test_an_agent_that_answers_early_answers_with_that_action(pytester, local_server):
    def reply(path, body):
        prompt = body["messages"][-1]["content"]
        data = scripted_model(prompt)
        if "Searches left: 3" in prompt:
            data = {"thought": "enough", "action": "answer", "query": "", "answer": "Early. [x]"}
        return 200, completion(json.dumps(data))

    server = local_server(reply)
    server.url += "/v1"
    result, card = run(pytester, server, "react", suites="march")
    for item in card["items"]:
        assert steps_of(item) == ["act 1", "act 2", "act 3"]
        assert item["answer"]["text"] == "Early. [x]" and item["answer"]["metadata"]["forced_answer"] is False


def test_a_reply_the_model_cannot_get_right_is_that_items_error_naming_method_and_step(pytester, chat_server):
    chat_server.faults = ["invalid"] * 3  # the first item's first action, and both re-asks
    result, card = run(pytester, chat_server, "react", suites="march")
    result.assert_outcomes(passed=len(card["items"]) - 1, errors=1)
    (failed,) = [item for item in card["items"] if item["status"] == "error"]
    assert failed["error"].startswith("llm:react, step act 1: model reply still unusable after 3 attempts")


def test_methods_run_under_xdist_and_with_concurrency(pytester, chat_server):
    result, card = run(
        pytester, chat_server, "react", "-n", "2", "--ambig-concurrency=3", suites="march,asqa"
    )
    result.assert_outcomes(passed=len(card["items"]))
    assert card["system"]["model_calls"]["calls_per_item"] == 6.0
    assert card["system"]["model_calls"]["structured_output"] == ["json_schema"]


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


def test_clarion_plans_with_two_prompts_before_it_retrieves_then_acts_within_one_budget(
    pytester, chat_server
):
    """MARCH App. H sets "the agent's maximum search iteration" to 5: one budget for the item.
    The scripted agent searches whenever it may, so the first reading takes all five turns and
    the second goes to the answer with no evidence of its own (section 4: "as many as possible
    under the iteration budget")."""
    result, card = run(pytester, chat_server, "clarion", suites="march")
    for item in card["items"]:
        meta, answer = item["answer"]["metadata"], item["answer"]
        acts = [f"act 1.{t}" for t in range(1, 6)]
        assert steps_of(item) == [
            "detect",
            "clarify",
            *acts,
            "answer",
        ]  # planning first, nothing searched before it
        assert (
            meta["plan"] == meta["readings"] and len(meta["readings"]) == 2
        )  # exactly two clarified questions
        assert meta["searches"] == [meta["readings"][0]] * 5
        assert meta["turns"] == [5, 0] and meta["forced_at_budget"] == [True, True]
        assert (
            answer["is_ambiguous"] is True and answer["ambiguity_type"] == "semantic"
        )  # the planner's verdict
    prompts = user_prompts(chat_server)
    detect, clarify = prompts[0], prompts[1]
    assert '"clarification_needed"' in detect and "Passages:" not in detect
    assert "Ambiguity analysis: " in clarify and '"clarified_question_2"' in clarify
    acting = [p for p in prompts if "Reading to gather evidence for: " in p]
    told = [
        int(re.search(r"^Turns left, for this reading and the 1 still to come: (\d+)$", p, re.M).group(1))
        for p in acting
    ]
    assert sorted(told) == sorted([5, 4, 3, 2, 1] * len(card["items"]))
    final = [p for p in prompts if p.startswith("Evidence:\nFor: ")]
    second = [r["answer"]["metadata"]["readings"][1] for r in card["items"]]
    assert len(final) == len(second) and all(
        any(f"For: {r}\nNo passages." in p for p in final) for r in second
    )


def test_clarions_acting_agent_reads_the_passages_handed_over(pytester, chat_server):
    """Under the given-docs protocol (CondAmbigQA's fragments) every turn of the acting agent
    sees the passages handed over as its first observation (issue 40, part 4)."""
    result, card = run(pytester, chat_server, "clarion", suites="condambigqa")
    result.assert_outcomes(passed=len(card["items"]))
    acting = [p for p in user_prompts(chat_server) if "Reading to gather evidence for: " in p]
    assert len(acting) == 5 * len(card["items"])
    for prompt in acting:
        given = prompt.split("Search: (the passages given)\nObservation:\n", 1)[1].split("\n\n", 1)[0]
        assert re.match(r"^\[[^\]]+\] ", given)  # the handed-over passages, listed
    for item in card["items"]:
        meta = item["answer"]["metadata"]
        assert meta["turns"][0] == 5 and len(meta["searches"]) == 5  # they take no turn of the budget


def test_clarion_sends_an_unambiguous_question_on_as_it_is(pytester, local_server):
    def reply(path, body):
        data = scripted_model(body["messages"][-1]["content"])
        if "clarification_needed" in data:
            data = {**data, "ambiguous": False, "ambiguity_type": "none"}
        return 200, completion(json.dumps(data))

    server = local_server(reply)
    server.url += "/v1"
    result, card = run(pytester, server, "clarion", suites="march")
    for item in card["items"]:
        assert steps_of(item) == ["detect", *[f"act 1.{t}" for t in range(1, 6)], "answer"]
        assert item["answer"]["is_ambiguous"] is False and item["answer"]["ambiguity_type"] is None


def test_clarion_ablations_drop_clarification_then_detection(pytester, chat_server):
    result, card = run(pytester, chat_server, "clarion-no-clarification", suites="march")
    for item in card["items"]:
        assert steps_of(item) == ["detect", *[f"act 1.{t}" for t in range(1, 6)], "answer"]
        assert item["answer"]["metadata"]["readings"] == [item["answer"]["metadata"]["plan"][0]]
        assert item["answer"]["ambiguity_type"] == "semantic"  # the detector's type, no rewriting
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


def test_treerare_prunes_the_tree_then_searches_each_node_bottom_up_and_aggregates(pytester, chat_server):
    result, card = run(pytester, chat_server, "treerare", suites="march")
    for item in card["items"]:
        meta = item["answer"]["metadata"]
        # the scripted parse: a one-word determiner (pruned), two halves, the whole question
        assert steps_of(item) == [
            "parse",
            "queries 1",
            "evidence 1",
            "queries 2",
            "evidence 2",
            "queries 3",
            "evidence 3",
            "aggregate",
        ]
        assert meta["nodes"] == meta["phrases"][1:] and len(meta["notes"]) == 3
        # three of the four queries per node, the one that covers none of the phrase dropped
        assert len(meta["searches"]) == 9 and "unrelated" not in meta["searches"]
    aggregate = user_prompts(chat_server)[7]
    assert aggregate.startswith("Evidence:\n- ") and aggregate.count("\n- ") == 3  # every node's evidence
    # TreeRare section 3.4: the nodes' evidence, each citing its passages, and no passage itself
    assert "Passages:" not in aggregate and not re.search(r"^\[[^\]]+\] [^:\n]*: ", aggregate, re.M)
    notes = card["items"][0]["answer"]["metadata"]["notes"]
    assert all(f"- {note}\n" in aggregate for note in notes) and all(
        re.search(r" \[[^\]]+\]$", n) for n in notes
    )


def test_treerare_keeps_the_nodes_appendix_a_keeps():
    phrases = [
        {"text": "the", "type": "DT", "children": []},
        {"text": "best-selling pickup truck", "type": "NP", "children": []},
        {"text": "and or but", "type": "CC", "children": []},
        {"text": ", ; .", "type": "PUNCT", "children": []},
        {"text": "Ford", "type": "NNP", "children": []},
        {"text": "What is the best-selling pickup truck sold by Ford?", "type": "SBARQ", "children": [1, 4]},
    ]
    assert kept_nodes(phrases, phrases[-1]["text"]) == [1, 5]
    # a "parse" with more nodes than the question has tokens is no tree: cut to that many
    many = [{"text": f"a b c {n}", "type": "NP", "children": []} for n in range(20)]
    assert len(kept_nodes(many, "one two three four five")) == 5
    assert top_queries(
        ["x y", "pickup truck", "Ford pickup truck sales", "zzz", "pickup", "a b"], "pickup truck"
    ) == [
        "Ford pickup truck sales",
        "pickup truck",
        "pickup",
    ]


def test_condambigqa_identifies_conditions_answers_and_cites_in_one_call(pytester, chat_server):
    result, card = run(pytester, chat_server, "condambigqa", suites="condambigqa")
    result.assert_outcomes(passed=len(card["items"]))
    for item in card["items"]:
        assert steps_of(item) == ["conditions, answers and citations"]
        assert item["answer"]["metadata"]["setting"] == "main"
        triples = item["answer"]["interpretations"]
        assert 0 < len(triples) <= 5 and all(
            t["condition"] and t["answer"] and t["citations"] for t in triples
        )
        assert item["answer"]["text"].splitlines()[0] == f"{triples[0]['condition']}: {triples[0]['answer']}"
    assert all("up to five" in body["messages"][0]["content"] for body in chat_server.requests)
    gold = run(
        pytester,
        chat_server,
        "condambigqa",
        "--ambig-condambigqa-setting=gold-conditions",
        "--ambig-cache-dir=cache2",
        suites="condambigqa",
    )[1]
    for item in gold["items"]:
        meta = item["answer"]["metadata"]
        assert steps_of(item) == ["answer per condition"] and meta["setting"] == "gold-conditions"
        assert meta["conditions"] and len(item["answer"]["interpretations"]) == len(meta["conditions"])
    closed = run(
        pytester,
        chat_server,
        "condambigqa",
        "--ambig-condambigqa-setting=closed-book",
        "--ambig-cache-dir=cache3",
        suites="condambigqa",
    )[1]
    assert {i["answer"]["metadata"]["setting"] for i in closed["items"]} == {"closed-book"}
    # plain answers from the model's knowledge, as the release's closed-book script asks
    asked = chat_server.requests[-len(closed["items"]) :]
    for body in asked:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        assert "Passages:" not in user and "condition" not in (system + user).lower()
        assert body["response_format"]["json_schema"]["schema"]["properties"]["answers"]["items"][
            "required"
        ] == ["answer"]
    for item in closed["items"]:
        assert steps_of(item) == ["closed-book answers"]
        assert item["answer"]["interpretations"] and all(
            i["condition"] is None and i["citations"] == [] for i in item["answer"]["interpretations"]
        )


def test_condambigqa_on_march_reads_the_retrievers_top_10(pytester, chat_server):
    """MARCH hands over no passages: the methods search rather than run closed-book."""
    for method in ("condambigqa", "condambigqa-no-conditions"):
        result, card = run(pytester, chat_server, method, f"--ambig-cache-dir={method}", suites="march")
        for item in card["items"]:
            meta = item["answer"]["metadata"]
            assert meta["evidence"] == "retrieved" and len(meta["retrieved"]) == 10
            assert meta["setting"] in ("main", "no-conditions")
            assert item["answer"]["citations"]


def test_a_search_method_without_a_retriever_is_refused_up_front(pytester, chat_server):
    result, _ = run(pytester, chat_server, "naive-rag", "--ambig-retriever=none", suites="march")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: MARCH: the system 'llm:naive-rag (*)' reads `retriever` and `passages`, but this run has no "
            "evidence to give it under the open retrieval protocol: *--ambig-retriever=none*"
        ]
    )


def test_odd_text_in_a_reply_is_carried_on_safely(pytester, local_server):
    """A reading with a lone surrogate passes the checks; echoed into the next prompt it
    must not break the request (it is made encodable first)."""

    def reply(path, body):
        data = scripted_model(body["messages"][-1]["content"])
        if "readings" in data:
            data["readings"] = [r + " \ud800" for r in data["readings"]]
        return 200, completion(json.dumps(data))

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
    page = shown(pytester.path / "report" / "report.html")
    assert "calls to scripted-m" in page and "this is not JSON" in page
    rescored, again = ambig_run(pytester, "--ambig-rescore=report/scorecard.json", report="again")
    assert [i["details"]["calls"] for i in again["items"]] == [i["details"]["calls"] for i in card["items"]]


def completion(content: str) -> dict:
    message = {"role": "assistant", "content": content}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}


# -- real servers: prose, JSON mode, JSON schemas, wrappings, decoding -------------------------


@pytest.mark.parametrize("method", ["closed-book", "naive-rag"])
def test_a_server_that_answers_in_prose_gives_long_answers_scored_as_such(pytester, chat_server, method):
    chat_server.mode = "prose"
    result, card = run(pytester, chat_server, method, suites="march")
    items = len(MARCH_QUESTIONS)
    result.assert_outcomes(passed=items)
    suite = card["suites"][0]
    assert suite["metrics"]["str_em"]["n"] == items and suite["metrics"]["str_em"]["mean"] is not None
    assert suite["metrics"]["ambiguity_detected"]["reason"] == "the system does not report is_ambiguous"
    for item in card["items"]:
        answer = item["answer"]
        assert answer["metadata"]["reply"] == "prose" and answer["interpretations"] == []
        if method == "naive-rag":  # the passages the prose marks are its citations
            assert answer["citations"] and set(answer["citations"]) <= set(answer["metadata"]["retrieved"])
    # detected once: the first call is refused a schema, then JSON mode, then goes through alone
    formats = [(b.get("response_format") or {}).get("type") for b in chat_server.requests]
    assert formats == ["json_schema", "json_object", *[None] * items]
    assert card["system"]["model_calls"]["structured_output"] == ["prompt"]
    result.stdout.fnmatch_lines(
        [
            f"  structured output: prompt; answers in prose (the long answer alone): {items} of {items} answered"
        ]
    )


def test_a_server_that_answers_in_prose_fails_a_step_that_needs_structure_by_name(pytester, chat_server):
    chat_server.mode = "prose"
    result, card = run(pytester, chat_server, "clarion", suites="march")
    assert all(i["status"] == "error" for i in card["items"])
    assert all(
        i["error"].startswith("llm:clarion, step detect: model reply still unusable") for i in card["items"]
    )


def test_clarion_keeps_its_planners_verdict_when_the_final_answer_is_prose(pytester, local_server):
    def reply(path, body):
        data = scripted_model(body["messages"][-1]["content"])
        return 200, completion(data["long_answer"] if "long_answer" in data else json.dumps(data))

    server = local_server(reply)
    server.url += "/v1"
    result, card = run(pytester, server, "clarion", suites="march")
    result.assert_outcomes(passed=len(MARCH_QUESTIONS))
    for item in card["items"]:
        answer = item["answer"]
        assert answer["metadata"]["reply"] == "prose" and answer["interpretations"] == []
        assert answer["is_ambiguous"] is True and answer["ambiguity_type"] == "semantic"
        assert answer["citations"] and set(answer["citations"]) <= set(answer["metadata"]["retrieved"])


def test_a_json_mode_server_gets_json_mode_after_one_refused_schema(pytester, chat_server):
    chat_server.mode = "json-mode"
    result, card = run(pytester, chat_server, "clarion", suites="march")
    result.assert_outcomes(passed=len(MARCH_QUESTIONS))
    formats = [(b.get("response_format") or {}).get("type") for b in chat_server.requests]
    assert formats[:2] == ["json_schema", "json_object"] and set(formats[2:]) == {"json_object"}
    assert card["system"]["model_calls"]["structured_output"] == ["json_object"]


def test_a_json_schema_server_gets_each_steps_schema(pytester, chat_server):
    result, card = run(pytester, chat_server, "clarion", suites="march")
    result.assert_outcomes(passed=len(MARCH_QUESTIONS))
    names = [b["response_format"]["json_schema"]["name"] for b in chat_server.requests[:8]]
    assert names == ["detection", "clarification", *["planned_act"] * 5, "answer"]
    schema = chat_server.requests[1]["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["reasoning", "clarified_question_1", "clarified_question_2"]


@pytest.mark.parametrize("wrap", ["fence", "chatty", "lead", "think"])
def test_replies_wrapped_in_fences_chatter_or_thinking_are_read(pytester, chat_server, wrap):
    chat_server.wrap = wrap
    result, card = run(pytester, chat_server, "diva", suites="march")
    result.assert_outcomes(passed=len(MARCH_QUESTIONS))
    assert card["system"]["model_calls"]["prose_answers"] == 0  # the JSON was found, not taken as prose
    assert all(item["answer"]["interpretations"] for item in card["items"])


def test_decoding_options_override_the_papers(pytester, chat_server):
    result, card = run(
        pytester,
        chat_server,
        "naive-rag",
        "--ambig-llm-temperature=0.3",
        "--ambig-llm-max-tokens=0",
        suites="march",
    )
    assert {b["temperature"] for b in chat_server.requests} == {0.3}
    assert not any("max_tokens" in b for b in chat_server.requests)
    assert "temperature 0.3, no token limit (--ambig-llm-* over MARCH appendix H)" in card["system"]["label"]
    assert card["config"]["llm_temperature"] == 0.3 and card["config"]["llm_max_tokens"] == 0
    result = pytester.runpytest("--ambig-suite=march", "--ambig-llm-temperature=hot")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --ambig-llm-temperature: 'hot' is not a number"])
