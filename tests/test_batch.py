"""Batch judging (``--ambig-judge-batch``) through pytest, against the OpenAI batch endpoints of a
real server on 127.0.0.1 (``fixtures/servers.py``): each scripted outcome leaves only the
affected items unscored, with the reason; a restart never sends a request twice; no key is
written anywhere."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixtures.network import GUARD
from fixtures.process import ambig_run
from fixtures.servers import SECRET
from pytest_ambigqa.models import batch
from pytest_ambigqa.models.batch import chunks
from pytest_ambigqa.suites import SUITES


def batched(
    pytester: pytest.Pytester, server, *args: str, report: str = "report", batch: str = "60", url: str = ""
):
    pytester.makeconftest(GUARD)
    flags = (f"--ambig-judge-batch={batch}", "--ambig-judge-batch-poll=0.01") if batch else ()
    return ambig_run(
        pytester,
        f"--ambig-judge-base-url={url or server.url}",
        "--ambig-judge=judge-m",
        "--ambig-judge-timeout=5",
        "--ambig-cache-dir=cache",
        *flags,
        *args,
        report=report,
    )


MARCH = ("--ambig-suite=march", "--ambig-system=oracle", "--ambig-limit=6", "--ambig-judge-price=2,8")


def judge_of(card: dict) -> dict:
    return next(s for s in card["suites"] if s["name"] == "march")["metrics"]["judge"]


def unscored(card: dict, metric: str = "judge") -> dict[str, str]:
    return {r["item_id"]: r["unscored"][metric] for r in card["items"] if metric in r["unscored"]}


def assert_secret_nowhere(pytester: pytest.Pytester, result: pytest.RunResult, *secrets: str) -> None:
    for secret in (SECRET, *secrets):
        for path in pytester.path.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path
        assert secret not in result.stdout.str() + result.stderr.str()


def test_one_batch_then_a_free_rerun(pytester, chat_server):
    chat_server.prompt_cache = True
    api = chat_server.batch_api
    result, card = batched(pytester, chat_server, *MARCH)
    result.assert_outcomes(passed=6)
    assert len(api.created) == 1 and len(api.submitted) == 6 and chat_server.requests == []
    judge = judge_of(card)
    assert judge["n"] == 6 and judge["mean"] == 4.0 and not unscored(card)
    usage = card["judge"]["usage"]
    assert usage["batched"] == 6 and usage["requests"] == 0 and usage["cached"] == 0
    assert usage["cached_tokens"] > 0
    # Priced at half the synchronous price: what was saved equals what was paid.
    assert usage["cost"] > 0 and usage["saved"] == pytest.approx(usage["cost"])
    result.stdout.fnmatch_lines(
        [
            "ambigqa: judge batch batch_1: 6/6 done, 0 failed (completed), * s of 60 s",
            "  requests 0 (+0 from cache) and 6 in batches, retries 0, re-asked 0, "
            "tokens * in (* from the server's prompt cache) / * out, cost $0.0*, $0.0* saved by the batch price",
        ]
    )
    lines = [json.loads(line) for line in api.files["file-1"].decode().splitlines()]
    assert all(line["url"] == "/v1/chat/completions" and line["body"]["model"] == "judge-m" for line in lines)
    again, card2 = batched(pytester, chat_server, *MARCH, report="again")
    again.assert_outcomes(passed=6)
    assert len(api.created) == 1 and chat_server.requests == []  # a rerun sends nothing
    assert card2["judge"]["usage"]["cached"] == 6 and judge_of(card2) == judge
    assert_secret_nowhere(pytester, again)


def test_the_same_scores_as_asked_one_by_one(pytester, chat_server):
    """MARCH's judge with two samples, CondAmbigQA's G-Eval (pairs matched one after another:
    several rounds) and ASQA's LLM reader: the batch run's scores are the synchronous run's."""
    args = (
        "--ambig-suite=march,condambigqa,asqa",
        "--ambig-system=lexical",
        "--ambig-limit=4",
        "--ambig-reader=llm",
        "--ambig-judge-samples=2",
    )
    result, card = batched(pytester, chat_server, *args)
    result.assert_outcomes(passed=12)
    assert chat_server.requests == [] and len(chat_server.batch_api.created) >= 2  # G-Eval's rounds
    _, sync = batched(pytester, chat_server, *args, "--ambig-cache-dir=other", report="sync", batch="")
    assert len(chat_server.requests) == len(chat_server.batch_api.submitted)  # the same requests
    for ours, theirs in zip(card["suites"], sync["suites"], strict=True):
        assert ours["metrics"] == theirs["metrics"]
    assert [r["unscored"] for r in card["items"]] == [r["unscored"] for r in sync["items"]]
    assert all("batch" not in reason for r in card["items"] for reason in r["unscored"].values())


def test_in_progress_then_completed_shows_progress(pytester, chat_server):
    chat_server.batch_api.plans = ["in_progress=3"]
    result, card = batched(pytester, chat_server, *MARCH)
    result.stdout.fnmatch_lines(
        [
            "ambigqa: judge batch batch_1: 3/6 done, 0 failed (in_progress), *",
            "*6/6 done, 0 failed (completed)*",
        ]
    )
    assert judge_of(card)["n"] == 6 and chat_server.batch_api.polls == 4


@pytest.mark.parametrize(
    ("plan", "lost", "reason"),
    [
        ("failed-lines=2", 2, "judge batch batch_1: HTTP 500: stand-in line failure"),
        ("expired", 3, "judge batch batch_1 expired before this request was answered (not charged; *"),
        (
            "cancelled",
            6,
            "judge batch batch_1 was cancelled before this request was answered (not charged; *",
        ),
        ("partial", 1, "judge batch batch_1 completed without a reply for this request"),
        ("failed", 6, "judge batch batch_1 failed: stand-in: input refused"),
    ],
)
def test_only_the_affected_items_are_unscored_and_a_rerun_sends_only_them(
    pytester, chat_server, plan, lost, reason
):
    import fnmatch

    api = chat_server.batch_api
    api.plans = [plan]
    result, card = batched(pytester, chat_server, *MARCH)
    result.assert_outcomes(passed=6)  # the system answered: no test fails for the judge
    missing = unscored(card)
    assert len(missing) == lost and all(fnmatch.fnmatch(r, reason) for r in missing.values()), missing
    assert judge_of(card)["n"] == 6 - lost and judge_of(card)["mean"] in (4.0, None)
    assert all(r["scores"]["str_em"] == 1.0 for r in card["items"])  # the other metrics are whole
    first = list(api.submitted)
    again, card2 = batched(pytester, chat_server, *MARCH, report="again")
    assert not unscored(card2) and judge_of(card2)["n"] == 6
    assert len(api.created) == 2 and len(api.submitted) == 6 + lost  # only the lost requests again
    assert set(api.submitted[6:]) <= set(first) and chat_server.requests == []
    assert_secret_nowhere(pytester, again)


def test_a_429_on_create_is_retried(pytester, chat_server):
    chat_server.batch_api.create_faults = ["429", "429"]
    result, card = batched(pytester, chat_server, *MARCH)
    assert len(chat_server.batch_api.created) == 1 and judge_of(card)["n"] == 6


def test_a_batch_not_done_in_time_is_collected_later_and_never_paid_twice(pytester, chat_server):
    """With a password in the judge's URL: the store keeps the URL without it."""
    api = chat_server.batch_api
    api.plans = ["pending"]
    url = chat_server.url.replace("http://", "http://user:hunter2secret@")
    result, card = batched(pytester, chat_server, *MARCH, batch="0.05", url=url)
    assert set(unscored(card).values()) == {"pending batch batch_1"} and judge_of(card)["n"] == 0
    # Still pending: a run without batch mode asks none of its requests, nor a batch run again.
    plain, card2 = batched(pytester, chat_server, *MARCH, report="plain", batch="", url=url)
    assert set(unscored(card2).values()) == {"pending batch batch_1"}
    later, card3 = batched(pytester, chat_server, *MARCH, report="later", batch="0.05", url=url)
    assert set(unscored(card3).values()) == {"pending batch batch_1"}
    assert chat_server.requests == [] and len(api.created) == 1
    api.batches["batch_1"]["plan"] = "completed"  # the server is done now
    done, card4 = batched(pytester, chat_server, *MARCH, "--ambig-resume", report="done", batch="", url=url)
    assert not unscored(card4) and judge_of(card4)["n"] == 6
    assert chat_server.requests == [] and len(api.created) == 1
    assert card4["judge"]["usage"]["batched"] == 6  # collected, and counted, by the run that collected it
    assert_secret_nowhere(pytester, done, "hunter2secret")


def test_unusable_replies_are_asked_again_in_the_next_batch(pytester, chat_server):
    api = chat_server.batch_api
    api.plans = ["invalid=2", "invalid=1"]
    result, card = batched(pytester, chat_server, *MARCH, "--ambig-judge-reasks=1")
    assert len(api.created) == 2 and len(api.submitted) == 8
    (reason,) = unscored(card).values()  # asked twice, unusable twice; the other unusable one mended
    assert reason.startswith("judge reply still unusable after 2 attempts: it is not JSON")
    assert card["judge"]["usage"]["reasks"] == 2 and card["judge"]["usage"]["batched"] == 8


def test_under_xdist_each_worker_batches_its_items(pytester, chat_server):
    api = chat_server.batch_api
    result, card = batched(pytester, chat_server, *MARCH, "-n", "2")
    result.assert_outcomes(passed=6)
    assert len(api.created) == 2 and sorted(api.submitted) == sorted(set(api.submitted))
    assert judge_of(card)["n"] == 6 and card["judge"]["usage"]["batched"] == 6
    again, _ = batched(pytester, chat_server, *MARCH, "-n", "2", report="again")
    assert len(api.created) == 2 and chat_server.requests == []


def test_batch_mode_needs_a_judge(pytester):
    result = pytester.runpytest("--ambig-suite=march", "--ambig-judge-batch=5")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--ambig-judge-batch: batch judging needs a judge (--ambig-judge)*"])


def scaled_asqa(pytester: pytest.Pytester, n: int) -> str:
    """The bundled ASQA sample repeated to ``n`` items, each with its own id and wording."""
    raw = json.loads(SUITES["asqa"].sample_path().read_text(encoding="utf-8"))
    records = []
    for i in range(n):
        record = json.loads(json.dumps(raw[i % len(raw)]))
        record["sample_id"] = str(i)
        for annotation in record.get("annotations", []):
            annotation["long_answer"] += f" This is copy {i}."
        records.append(record)
    path = pytester.path / "asqa_500.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return str(path)


def test_500_asqa_items_send_one_batch_and_a_rerun_none(pytester, chat_server):
    args = (
        "--ambig-suite=asqa",
        f"--ambig-data={scaled_asqa(pytester, 500)}",
        "--ambig-system=oracle",
        "--ambig-reader=llm",
        "--ambig-metrics=disambig_f1",
        "-p",
        "no:randomly",
        "-q",
    )
    result, card = batched(pytester, chat_server, *args)
    result.assert_outcomes(passed=500)
    api = chat_server.batch_api
    assert len(api.created) == 1 and chat_server.requests == []
    assert len(api.submitted) == len(set(api.submitted)) > 500  # one request per clarified question
    metric = card["suites"][0]["metrics"]["disambig_f1"]
    assert metric["n"] == 500 and metric["mean"] is not None
    again, card2 = batched(pytester, chat_server, *args, report="again")
    again.assert_outcomes(passed=500)
    assert len(api.created) == 1 and chat_server.requests == []
    assert card2["suites"][0]["metrics"]["disambig_f1"] == metric


@given(
    st.lists(st.integers(min_value=1, max_value=40), max_size=60),
    st.integers(min_value=1, max_value=7),
    st.integers(min_value=1, max_value=100),
)
def test_chunks_keep_the_order_within_the_limits_as_few_as_may_be(sizes, most, size_limit):
    lines = [(str(n), b"x" * size) for n, size in enumerate(sizes)]
    found = list(chunks(lines, most, size_limit))
    assert [line for chunk in found for line in chunk] == lines and all(found)
    for chunk in found:
        assert len(chunk) <= most
        assert sum(len(line) for _, line in chunk) <= size_limit or len(chunk) == 1  # a line too long: alone
    for chunk, after in zip(found, found[1:], strict=False):  # each full: the next line would not fit
        assert len(chunk) == most or sum(len(line) for _, line in chunk) + len(after[0][1]) > size_limit


def test_requests_sharing_a_prompt_prefix_are_sent_together(pytester, chat_server):
    batched(pytester, chat_server, "--ambig-suite=march,asqa", "--ambig-system=oracle", "--ambig-limit=3",
            "--ambig-reader=llm")  # fmt: skip
    lines = [json.loads(line) for line in chat_server.batch_api.files["file-1"].decode().splitlines()]
    systems = [line["body"]["messages"][0]["content"] for line in lines]
    # MARCH's judge's, the reader's and ASQA's utility judge's: each prompt's requests in one run
    assert len(set(systems)) == 3 and systems == sorted(systems)
    assert [line["body"]["messages"] for line in lines] == sorted(
        (line["body"]["messages"] for line in lines), key=json.dumps
    )


def test_cached_prompt_tokens_are_shown_for_calls_asked_one_by_one(pytester, chat_server):
    chat_server.prompt_cache = True
    result, card = batched(pytester, chat_server, *MARCH, batch="")
    usage = card["judge"]["usage"]
    assert usage["requests"] == 6 and 0 < usage["cached_tokens"] < usage["prompt_tokens"]
    result.stdout.fnmatch_lines(
        [
            f"  requests 6 (+0 from cache), *, tokens * in ({usage['cached_tokens']:,} from the server's prompt cache)*"
        ]
    )
    assert "in batches" not in result.stdout.str() and "saved" not in result.stdout.str()


def test_a_run_past_the_servers_limit_sends_as_few_batches_as_it_allows(pytester, chat_server, monkeypatch):
    monkeypatch.setattr(batch, "MAX_REQUESTS", 4)  # OpenAI's is 50,000: the same rule, at 6 requests
    result, card = batched(pytester, chat_server, *MARCH)
    api = chat_server.batch_api
    assert len(api.created) == 2 and len(api.submitted) == 6 and judge_of(card)["n"] == 6
    result.stdout.fnmatch_lines(["*judge batch batch_1: 4/4 done*", "*judge batch batch_2: 2/2 done*"])


def test_a_wait_of_0_sends_the_batch_and_leaves_it_to_a_later_run(pytester, chat_server):
    api = chat_server.batch_api
    api.plans = ["pending"]
    result, card = batched(pytester, chat_server, *MARCH, batch="0")
    assert len(api.created) == 1 and len(api.submitted) == 6 and chat_server.requests == []
    assert set(unscored(card).values()) == {"pending batch batch_1"}
