"""The judge client against a real local server: cache, retries, re-asks, cost, secrets."""

from __future__ import annotations

import json
import math

import pytest

from fixtures.servers import MALFORMED, SECRET
from pytest_ambigqa.errors import ModelGivenUp, ModelUnavailable
from pytest_ambigqa.judge import Judge, Usage
from pytest_ambigqa.judge import asqa as asqa_judge
from pytest_ambigqa.judge import march as march_judge
from pytest_ambigqa.judge.condambigqa import judgement as judge_pairs
from pytest_ambigqa.metrics.conditional import SETTINGS, balanced, generated_pairs
from pytest_ambigqa.models.cache import CallCache
from pytest_ambigqa.models.chat import DEAD_AFTER, ChatClient, ChatSettings, parse_json
from pytest_ambigqa.models.reader import LLMReader
from pytest_ambigqa.schema import Answer, GeneratedInterpretation
from pytest_ambigqa.suites import SUITES, LoadOptions

MARCH = SUITES["march"].load(None, LoadOptions()).items
CONDAMBIGQA = SUITES["condambigqa"].load(None, LoadOptions()).items
ASQA = SUITES["asqa"].load(None, LoadOptions()).items


def client(server, tmp_path, **overrides) -> ChatClient:
    settings = ChatSettings(model="judge-m", base_url=server.url, timeout=0.5, **overrides)
    return ChatClient(settings, CallCache(tmp_path / "judge.sqlite"))


def ask(c: ChatClient, usage: Usage, text: str = "Score this."):
    return c.chat_json(
        [{"role": "system", "content": march_judge.SYSTEM}, {"role": "user", "content": text}],
        march_judge.check,
        usage,
    )


def test_reply_is_parsed_checked_and_cached(chat_server, tmp_path):
    c, usage = client(chat_server, tmp_path), Usage()
    data, raw = ask(c, usage)
    assert data == {"relevance": 4, "faithfulness": 5, "informativeness": 3, "correctness": 4}
    assert raw["system_fingerprint"] == "fp_local" and usage.requests == 1
    body = chat_server.requests[0]
    assert body["temperature"] == 0 and body["seed"] == 0 and body["model"] == "judge-m"
    assert chat_server.headers[0]["authorization"] == f"Bearer {SECRET}"  # the key is used...
    again = Usage()
    assert ask(client(chat_server, tmp_path), again)[0] == data  # a new client, the same cache file
    assert len(chat_server.requests) == 1 and again.cached == 1 and again.requests == 0
    assert SECRET.encode() not in (tmp_path / "judge.sqlite").read_bytes()  # ...and never stored


def test_transient_failures_are_retried(chat_server, tmp_path):
    chat_server.faults = ["429", "500", "hang"]
    usage = Usage()
    data, _ = ask(client(chat_server, tmp_path), usage)
    assert data["relevance"] == 4
    assert usage.retries == 3 and len(chat_server.requests) == 4


def test_persistent_failure_is_unavailable_not_a_crash(chat_server, tmp_path):
    chat_server.faults = ["500"] * 10
    with pytest.raises(ModelUnavailable, match=r"judge unavailable after 3 attempts: HTTP 500"):
        ask(client(chat_server, tmp_path, max_retries=2), Usage())
    chat_server.faults = ["400"]
    with pytest.raises(ModelUnavailable, match=r"judge refused the request: HTTP 400"):
        ask(client(chat_server, tmp_path), Usage(), "another prompt")


def test_retry_budget_bounds_the_waiting(chat_server, tmp_path):
    chat_server.faults = ["hang"] * 10
    with pytest.raises(ModelUnavailable, match="APITimeoutError"):
        ask(client(chat_server, tmp_path, max_retries=10, retry_budget=0.0), Usage())
    assert len(chat_server.requests) == 1  # no budget left to wait for a retry


def test_invalid_json_is_asked_again(chat_server, tmp_path):
    chat_server.faults = ["invalid"]
    usage = Usage()
    data, _ = ask(client(chat_server, tmp_path), usage)
    assert data["correctness"] == 4 and usage.reasks == 1
    reask = chat_server.requests[1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": "this is not JSON"}
    assert "could not be used: it is not JSON" in reask[-1]["content"]
    chat_server.faults = ["invalid"] * 3
    with pytest.raises(ModelUnavailable, match="still unusable after 3 attempts: it is not JSON"):
        ask(client(chat_server, tmp_path), Usage(), "a new question")


@pytest.mark.parametrize("fault", [*MALFORMED, "string-usage"])
def test_a_reply_that_is_no_chat_completion_is_retried(chat_server, tmp_path, fault):
    chat_server.faults = [fault]
    usage = Usage()
    data, _ = ask(client(chat_server, tmp_path), usage)
    assert data["relevance"] == 4
    if fault == "string-usage":  # the answer is good; its token counts are not: they count 0
        assert usage.retries == 0 and usage.prompt_tokens == 0
    else:
        assert usage.retries == 1 and len(chat_server.requests) == 2


def test_persistently_malformed_replies_are_unavailable_and_never_cached(chat_server, tmp_path):
    chat_server.faults = ["foo"] * 3
    with pytest.raises(
        ModelUnavailable, match="after 3 attempts: not a chat completion: the reply has no choices"
    ):
        ask(client(chat_server, tmp_path, max_retries=2), Usage())
    chat_server.faults = ["invalid"] * 3  # a completion whose content fails the check
    with pytest.raises(ModelUnavailable, match="still unusable"):
        ask(client(chat_server, tmp_path), Usage(), "q2")
    before = len(chat_server.requests)
    usage = Usage()
    assert (
        ask(client(chat_server, tmp_path), usage, "q2")[0]["relevance"] == 4
    )  # asked, not read from the cache
    assert len(chat_server.requests) == before + 1 and usage.cached == 0
    again = Usage()
    ask(client(chat_server, tmp_path), again, "q2")
    assert again.cached == 1 and len(chat_server.requests) == before + 1  # the usable answer is cached


@pytest.mark.parametrize("header", ["-5", "nan", "inf", "soon", "1e400"])
def test_odd_retry_after_values_are_ignored(chat_server, tmp_path, header):
    chat_server.faults = [f"retry-after={header}"]
    usage = Usage()
    assert ask(client(chat_server, tmp_path), usage)[0]["relevance"] == 4
    assert usage.retries == 1


def test_an_authentication_failure_stops_every_later_call(chat_server, tmp_path):
    c = client(chat_server, tmp_path)
    chat_server.faults = ["401-echo"]
    with pytest.raises(ModelUnavailable, match="judge authentication failed: HTTP 401") as first:
        ask(c, Usage())
    with pytest.raises(ModelUnavailable) as later:
        ask(c, Usage(), "another question")
    assert str(later.value) == str(first.value) and len(chat_server.requests) == 1  # no second request


def test_a_dead_server_is_tried_once_then_given_up(tmp_path):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket closes
    settings = ChatSettings(model="m", base_url=f"http://127.0.0.1:{port}/v1", timeout=0.5, max_retries=1)
    c = ChatClient(settings, None)
    for n in range(DEAD_AFTER - 1):  # a passing outage leaves later calls their chance
        with pytest.raises(ModelUnavailable, match="APIConnectionError") as first:
            ask(c, Usage(), f"question {n}")
        assert "no further" not in str(first.value)
    with pytest.raises(ModelUnavailable) as third:
        ask(c, Usage(), "the third")
    assert str(third.value).endswith(
        f"(3 calls in a row to http://127.0.0.1:{port}/v1; no further judge calls this run)"
    )
    with pytest.raises(ModelGivenUp, match="no further judge calls this run"):  # no call made
        ask(c, Usage(), "another question")


def test_schema_violations_are_asked_again():
    assert march_judge.check({"relevance": 4, "faithfulness": 5, "informativeness": 3, "correctness": 6}) == (
        "'correctness' must be an integer from 0 to 5"
    )
    assert march_judge.check([]) == "it is not a JSON object"
    assert parse_json('```json\n{"a": 1}\n```') == {"a": 1}


@pytest.mark.parametrize(
    "content",
    [
        '{"a": 1}',
        '```json\n{"a": 1}\n```',
        'Sure! Here it is:\n```JSON\n{"a": 1}\n```\nAnything else?',
        'Here is my reply: {"a": 1} I hope it helps.',
        '<think>\nthey want {an object}\n</think>\n{"a": 1}',
        'Not this {broken, but this: {"a": 1}',
    ],
)
def test_replies_are_read_whatever_wraps_them(content):
    assert parse_json(content) == {"a": 1}


def test_a_reply_without_a_json_object_is_not_json():
    for content in ("The answer is Paris.", "<think>{}</think>", "[1, 2"):
        with pytest.raises(ValueError):
            parse_json(content)


def test_cost_is_summed_from_token_usage(chat_server, tmp_path):
    usage = Usage()
    ask(client(chat_server, tmp_path, price_in=2.0, price_out=10.0), usage)
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.cost == pytest.approx((usage.prompt_tokens * 2 + usage.completion_tokens * 10) / 1e6)
    total = Usage()
    total.add(usage)
    total.add(usage)
    assert total.cost == pytest.approx(2 * usage.cost) and total.fingerprints == ["fp_local"]


def test_corrupt_cache_is_set_aside(tmp_path):
    path = tmp_path / "judge.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.warns(UserWarning, match="was unreadable"):
        cache = CallCache(path)
    cache.put("k", {"a": 1})
    assert cache.get("k") == {"a": 1} and len(list(tmp_path.glob("judge.sqlite.corrupt-*"))) == 1


def judge(server, tmp_path, samples=1) -> Judge:
    return Judge(ChatSettings(model="judge-m", base_url=server.url, timeout=5), tmp_path, samples=samples)


def test_march_judge_and_samples(chat_server, tmp_path):
    item = MARCH[0]
    one = march_judge.judgement(judge(chat_server, tmp_path), item, item.long_answers[0], Usage())
    assert one.means() == {
        "judge_relevance": 4.0,
        "judge_faithfulness": 5.0,
        "judge_informativeness": 3.0,
        "judge_correctness": 4.0,
        "judge": 4.0,
    }
    prompt = chat_server.requests[0]["messages"][1]["content"]
    assert item.question in prompt and item.interpretations[0].short_answers[0] in prompt
    three = march_judge.judgement(
        judge(chat_server, tmp_path, samples=3), item, item.long_answers[0], Usage()
    )
    assert three.samples["judge_correctness"] == [4.0, 3.0, 4.0]  # seeds 0, 1, 2
    assert [r["seed"] for r in chat_server.requests] == [0, 1, 2]  # seed 0 came from the cache


def test_asqa_utility_judge(chat_server, tmp_path):
    """The judge sees the question and the answer only (as ALCE's raters of utility did) and
    its 1-5 integer becomes ``judge_utility``; anything else is asked again."""
    item, answer = ASQA[0], " ".join(["word"] * 31)
    one = asqa_judge.judgement(judge(chat_server, tmp_path), item, answer, Usage())
    assert one.means() == {"judge_utility": 3.0}  # the stand-in: 1 + 31 // 15
    prompt = chat_server.requests[0]["messages"][1]["content"]
    assert prompt == f"Question: {item.question}\n\nAnswer: {answer}"
    assert item.long_answers[0] not in prompt
    assert (
        asqa_judge.check({"utility": 0})
        == asqa_judge.check({"utility": True})
        == ("'utility' must be an integer from 1 to 5")
    )
    assert asqa_judge.check({"utility": 5}) is None and asqa_judge.check([]) == "it is not a JSON object"


def _gold_answer(item, n=None):
    gold = item.interpretations[:n]
    return Answer(
        text="...",
        interpretations=tuple(
            GeneratedInterpretation(answer=i.short_answers[0], condition=i.condition, citations=i.passage_ids)
            for i in gold
        ),
    )


def test_geval_condambigqa_scores(chat_server, tmp_path):
    item = next(i for i in CONDAMBIGQA if len(i.interpretations) >= 2)
    n = len(item.interpretations)
    answer = _gold_answer(item)
    pairs = generated_pairs(answer)
    usage = Usage()
    main = SETTINGS["main"]
    result = judge_pairs(judge(chat_server, tmp_path), main, item, pairs, usage).means()
    # G-Eval: 7/10 weighted by the two log-probabilities the server sends (7 and 8).
    p7, p8 = math.exp(-0.1), math.exp(-2.5)
    weighted = (7 * p7 + 8 * p8) / (p7 + p8) / 10
    assert result["condition"] == pytest.approx(weighted) and result["answer"] == pytest.approx(weighted)
    assert result["citation_matched"] == 1.0  # the gold citations, matched one to one
    assert result["combined"] == pytest.approx((2 * weighted + 1) / 3)  # Table 2: the plain mean
    per_pair = sum(len(p.citations) for p in pairs) / n
    expected = balanced("main", weighted, weighted, 1.0, per_pair, n, n)
    assert (result["balanced"], result["balanced_combined"]) == pytest.approx(expected)
    calls = len(chat_server.requests)
    assert calls == 2 * n * (n + 1) // 2  # condition and answer, each pair against the unused gold only
    # the main setting's judge reads the generation prompt: question and fragments
    assert item.passages[0].text in chat_server.requests[0]["messages"][0]["content"]
    again = judge_pairs(judge(chat_server, tmp_path), main, item, pairs, Usage()).means()
    assert again == result and len(chat_server.requests) == calls  # all from the cache
    single = generated_pairs(_gold_answer(item, 1))
    few = judge_pairs(judge(chat_server, tmp_path), main, item, single, Usage()).means()
    assert few["balanced"] == pytest.approx(balanced("main", weighted, weighted, 1.0, per_pair, 1, n)[0])
    none = judge_pairs(judge(chat_server, tmp_path), SETTINGS["no-conditions"], item, (), Usage()).means()
    assert none == {"answer": 0.0, "citation_matched": 0.0, "balanced": 0.0}  # no pairs: 0, not dropped


def test_geval_gold_conditions_and_closed_book(chat_server, tmp_path):
    item = next(i for i in CONDAMBIGQA if len(i.interpretations) >= 2)
    n = len(item.interpretations)
    extra = generated_pairs(_gold_answer(item)) + (GeneratedInterpretation(answer="Something else."),)
    gold = judge_pairs(judge(chat_server, tmp_path), SETTINGS["gold-conditions"], item, extra, Usage())
    weighted = gold.means()["answer"] * (n + 1) / n
    assert gold.means()["citation_matched"] == pytest.approx(n / (n + 1))  # the extra pair scores 0
    # these settings' judge reads the bare question, and no condition is judged
    assert all(item.passages[0].text not in r["messages"][0]["content"] for r in chat_server.requests)
    assert len(chat_server.requests) == n * (n + 1) // 2
    closed = judge_pairs(
        judge(chat_server, tmp_path, samples=2), SETTINGS["closed-book"], item, extra, Usage()
    )
    assert closed.units["answer"] == pytest.approx([weighted] * n + [0.0])  # the unmatched pair is a 0 unit
    assert set(closed.samples) == {"answer", "balanced"} and len(closed.samples["answer"]) == 2


def test_llm_reader_keeps_only_verbatim_spans(chat_server, tmp_path):
    reader = LLMReader(judge(chat_server, tmp_path))
    context = "The Ford F-Series is the best-selling pickup truck."
    assert reader.read(["Which pickup?"], context) == ["The Ford F-Series"]
    assert reader.read(["Which pickup?"], "  spaced   out  words here") == [
        ""
    ]  # "spaced out words" is not verbatim


def test_no_request_leaves_loopback(chat_server, tmp_path):
    import socket

    with pytest.raises(AssertionError, match="network guard"):
        socket.create_connection(("192.0.2.1", 80), timeout=0.1)
    assert all(json.dumps(r).find(SECRET) < 0 for r in chat_server.requests)
