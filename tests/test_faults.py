"""Hostile input and misbehaving parts: each failure stays local, every report stays whole."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from fixtures.network import GUARD
from fixtures.process import ambig_run
from fixtures.servers import SECRET

HOSTILE = """
import math

def answer(question, item):
    kind = item.index % 4
    if kind == 0:
        return {"text": "lone \\ud800 surrogate " + item.long_answers[0]}
    if kind == 1:
        return {"text": item.long_answers[0], "metadata": {"confidence": math.nan, "range": [math.inf]}}
    if kind == 2:
        raise RuntimeError("<script>alert(1)</script>\\n# heading\\n```\\nunclosed fence | pipe \\x00 \\u202e reversed")
    return item.long_answers[0]
"""


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    pytester.makeconftest(GUARD)
    return ambig_run(
        pytester, "-p", "no:cacheprovider", "--junitxml=junit.xml", "--ambig-cache-dir=cache", *args
    )


def test_odd_answers_never_cost_the_report(pytester):
    """A lone surrogate, NaN metadata and an error full of Markdown: one item each, a whole report."""
    pytester.makepyfile(hostile=HOSTILE)
    result, card = run(pytester, "--ambig-suite=march", "--ambig-system=hostile:answer")
    statuses = [i["status"] for i in card["items"]]
    assert "error" in statuses and statuses.count("ok") >= 3
    result.assert_outcomes(passed=statuses.count("ok"), errors=statuses.count("error"))
    raw = (pytester.path / "report" / "scorecard.json").read_text(encoding="utf-8")
    assert "NaN" not in raw and "Infinity" not in raw  # standard JSON
    metadata = [i["answer"]["metadata"] for i in card["items"] if i["answer"] and i["answer"]["metadata"]]
    assert metadata and all(m == {"confidence": "nan", "range": ["inf"]} for m in metadata)
    md = (pytester.path / "report" / "scorecard.md").read_text(encoding="utf-8")
    assert "<script>" not in md and "\n# heading" not in md and "```" not in md
    assert "\x00" not in md and "\u202e" not in md and "\u2400 \\[U+202E\\] reversed" in md  # shown, inert
    errored = statuses.count("error")
    # the section is there, first, not swallowed by a fence; what failed first in it
    gates = md.partition("\n## Gates\n")[2].partition("\n## Run\n")[0]
    assert gates.strip().split("\n") == [
        f"- {errored} item(s) errored or missing: their tests fail, and so does the run",
        "- no gates set",
    ]
    ET.parse(pytester.path / "junit.xml")  # well-formed


def test_a_key_the_judge_server_echoes_is_written_nowhere(pytester, chat_server):
    chat_server.faults = ["401-echo"] * 10
    result, card = run(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=oracle",
        "--ambig-limit=2",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-judge=judge-m",
    )
    assert result.ret == 1  # the judge scored nothing
    assert len(chat_server.requests) == 1  # authentication failed: no further calls
    reasons = {i["unscored"]["judge"] for i in card["items"]}
    assert reasons == {
        "judge authentication failed: HTTP 401: invalid key in header Authorization: Bearer [redacted] "
        "(no further judge calls this run)"
    }
    for path in pytester.path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in result.stdout.str() + result.stderr.str()


def test_an_unwritable_cache_directory_costs_only_reuse(pytester):
    pytester.path.joinpath("not-a-dir").write_text("a file where the cache directory should be")
    result, card = run(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=oracle",
        "--ambig-cache-dir=not-a-dir/cache",
        "-W",
        "default",
    )
    result.assert_outcomes(passed=13)
    assert card["suites"][0]["metrics"]["str_em"]["mean"] == 100.0
    result.stdout.fnmatch_lines(["*the cache directory *not-a-dir/cache cannot be written*"])


@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_unusable_response_store_turns_itself_off(pytester, workers):
    wal = pytester.path / "cache" / "answers.sqlite-wal"
    wal.mkdir(parents=True)  # a directory where SQLite's write-ahead log must go: no store at all
    result, card = run(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=oracle",
        "--ambig-resume",
        "--ambig-concurrency=4",
        "-n",
        workers,
    )
    result.assert_outcomes(passed=13)
    assert {i["status"] for i in card["items"]} == {"ok"} and not any(i["cached"] for i in card["items"])
    result.stdout.fnmatch_lines(["*the response store * cannot be used*--ambig-resume*off*"])


def test_gold_answers_that_normalise_to_nothing_are_flagged(pytester):
    from pytest_ambigqa.suites import SUITES

    raw = json.loads(SUITES["march"].sample_path().read_text(encoding="utf-8"))[:3]
    raw[1]["interpretations"][0]["short_answers"] = ["!!!"]
    pytester.path.joinpath("m.json").write_text(json.dumps(raw))
    result, card = run(pytester, "--ambig-suite=march", "--ambig-data=m.json", "--ambig-system=lexical")
    warnings = card["suites"][0]["data_warnings"]
    assert len(warnings) == 1 and f"march-{raw[1]['id']} ('!!!')" in warnings[0]
    result.stdout.fnmatch_lines(["*data warning: 1 item(s) have a gold answer that normalises to nothing*"])


def test_items_that_never_ran_are_not_called_scored(pytester):
    pytester.makepyfile(
        first="def answer(question, item):\n    if item.index == 1:\n        raise ValueError('x')\n    return question\n"
    )
    result, card = run(pytester, "--ambig-suite=march", "--ambig-system=first:answer", "-x")
    str_em = card["suites"][0]["metrics"]["str_em"]
    assert card["suites"][0]["missing"] == 11 and str_em["n"] == 13 and str_em["failed"] == 12
    result.stdout.fnmatch_lines(["*STR-EM*1/13 +12 failed as 0*"])


def test_a_system_reading_passages_from_a_file_without_any_is_refused(pytester, shared_data):
    data = shared_data / "asqa" / "asqa_dev_sample40.jsonl"  # the din0s layout: no passages
    pytester.makepyfile(reads="def answer(question, passages):\n    return question\n")
    result, card = run(pytester, "--ambig-suite=asqa", f"--ambig-data={data}", "--ambig-system=reads:answer")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and card == {}
    result.stderr.fnmatch_lines(
        ["ERROR: ASQA: *reads `passages`*asqa_dev_sample40.jsonl gives its items no passages*"]
    )


@pytest.mark.parametrize(
    "text, kept",
    [
        ('Set api-key: "abc" first', True),
        ('see example.org/x?key=abc"def', False),
        ("Prior authorization: required before Basic Law-making; Bearer Bonds2019 matured", True),
        (f"Authorization: Bearer {SECRET}", False),
        ("authorization = sk-proj-abcdefghijklmnopq", False),
        ("https://user:pw@host/x?api_key=abc123", False),
    ],
)
def test_scrubbing_masks_credentials_only(text, kept, monkeypatch):
    from pytest_ambigqa.output import json_text, scrub

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert (scrub(text) == text) is kept
    assert json.loads(json_text({"answer": text}))["answer"] == scrub(text)  # scrubbed, never cut in half
    assert SECRET not in scrub(text)


ODD = """
import os

def answer(question, item):
    kind = item.index % 4
    if kind == 0:
        return 'He said: "Set api-key: \\\\"abc\\\\"" and ?key=abc"def'
    if kind == 1:
        return "the key is " + os.environ["OPENAI_API_KEY"]
    if kind == 2:
        deep = []
        for _ in range(5000):
            deep = [deep]
        return {"text": "x", "metadata": {"deep": deep}}
    return {"text": "x", "citations": [10 ** 5000]}
"""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_odd_answers_and_echoed_keys_stay_local(pytester, chat_server, workers):
    """Quotes next to key-like words, a key in an answer, answers too deep or too big to read, and a
    judge error holding a lone surrogate: items stay present, the key reaches no file."""
    chat_server.faults = ["400-surrogate"] * 1000
    pytester.makepyfile(odd=ODD)
    result, card = run(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=odd:answer",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-judge=judge-m",
        "-n",
        workers,
    )
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output
    assert len(card["items"]) == 13 and card["suites"][0]["missing"] == 0
    errors = [i["error"] for i in card["items"] if i["status"] == "error"]
    assert errors and all(e.startswith("system returned an answer that cannot be read") for e in errors)
    for path in pytester.path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_addopts_for_ambigqa_runs_do_not_break_other_runs(pytester):
    pytester.makeini("[pytest]\naddopts = --ambig-report=report --ambig-cache-dir=cache\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    pytester.runpytest().assert_outcomes(passed=1)


def test_merge_of_what_is_not_a_scorecard_is_one_line(pytester, capsys):
    from pytest_ambigqa.cli import main

    for n, body in enumerate(["{}", "[]", '{"config": {"shard": [1, "2"]}}']):
        path = pytester.path / f"s{n}.json"
        path.write_text(body)
        assert main(["merge", str(path), "-o", str(pytester.path / "out")]) == 2
        assert "pytest-ambigqa merge: " in capsys.readouterr().err
