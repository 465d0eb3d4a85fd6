"""Resume without rescoring (issue 27, target 2): a resumed run whose answers and scorers are
unchanged reads each item's scores from the store, to the last digit what a fresh run
computes; any change of the answer, the item or the scoring configuration scores afresh."""

from __future__ import annotations

import json
import sqlite3

import pytest

from fixtures.process import ambig_run
from pytest_ambigqa.suites import SUITES, LoadOptions

ASQA = SUITES["asqa"].load(None, LoadOptions()).items
# What a stored score stands for; the answer's origin, its timing and the flags say where it came from.
RUN_FIELDS = ("duration", "cached", "reused")

SYSTEM = """
import os
def answer(question, item):
    with open("calls.txt", "a") as log:
        log.write(item.id + "\\n")
    return item.long_answers[0] + os.environ.get("SUFFIX", "")
"""


@pytest.fixture
def system(pytester, monkeypatch):
    pytester.makepyfile(mysys=SYSTEM)
    monkeypatch.delenv("SUFFIX", raising=False)
    return pytester


def run(pytester: pytest.Pytester, *args: str, report: str) -> tuple[pytest.RunResult, dict]:
    result, card = ambig_run(
        pytester,
        "--ambig-suite=asqa",
        "--ambig-system=mysys:answer",
        "--ambig-cache-dir=cache",
        *args,
        report=report,
    )
    result.assert_outcomes(passed=len(ASQA))
    return result, card


def scored(card: dict) -> list[dict]:
    return [{k: v for k, v in item.items() if k not in RUN_FIELDS} for item in card["items"]]


def test_a_resumed_run_reuses_every_score_to_the_last_digit(system):
    _, fresh = run(system, report="fresh")
    again, resumed = run(system, "--ambig-resume", report="resumed")
    assert all(item["reused"] and item["cached"] for item in resumed["items"])
    assert scored(resumed) == scored(fresh)  # every score, sample, unit and detail
    assert resumed["suites"] == fresh["suites"]  # every metric, interval and slice
    again.stdout.fnmatch_lines([f"  scores: {len(ASQA)} reused (same answer, same scorers), 0 computed now"])
    _, rerun = run(system, report="rerun")  # without --ambig-resume: asked and scored again
    assert not any(item.get("reused") or item["cached"] for item in rerun["items"])
    assert scored(rerun) == scored(fresh)


def test_a_changed_scorer_or_answer_scores_afresh(system, monkeypatch):
    run(system, report="fresh")
    _, other = run(system, "--ambig-resume", "--ambig-scorer-profile=asqa", report="profile")
    assert not any(item.get("reused") for item in other["items"])  # the scorers changed: all rescored
    assert all(item["cached"] for item in other["items"])  # the answers still came from the store
    _, back = run(system, "--ambig-resume", report="back")  # the first scorers again: their scores
    assert all(item.get("reused") for item in back["items"])
    monkeypatch.setenv("SUFFIX", " More.")
    _, changed = run(system, report="changed")
    _, resumed = run(system, "--ambig-resume", report="resumed")  # the newest answers, scored once
    assert all(item.get("reused") for item in resumed["items"])
    assert scored(resumed) == scored(changed) != scored(back)


def test_a_damaged_stored_score_is_computed_again(system):
    _, fresh = run(system, report="fresh")
    with sqlite3.connect(system.path / "cache" / "answers.sqlite") as db:
        keys = [k for (k,) in db.execute("SELECT key FROM scores ORDER BY key")]
        assert len(keys) == len(ASQA)
        bad = {"suite": "asqa", "item_id": "x", "status": "ok", "scores": {"str_em": float("nan")}}
        db.execute("UPDATE scores SET payload = ? WHERE key = ?", (json.dumps(bad), keys[0]))
        db.execute("UPDATE scores SET payload = 'not json' WHERE key = ?", (keys[1],))
    result, resumed = run(system, "--ambig-resume", report="resumed")
    assert sum(not item.get("reused") for item in resumed["items"]) == 2
    assert scored(resumed) == scored(fresh)
    result.stdout.fnmatch_lines(
        [f"  scores: {len(ASQA) - 2} reused (same answer, same scorers), 2 computed now"]
    )


def test_a_score_a_model_failed_to_give_is_not_kept(pytester, chat_server):
    """A judge that failed now may answer later: that item is scored again on resume, the
    others are read back, and their judge calls count as the cache's (no request, no cost)."""
    chat_server.faults = ["500"]  # the first item's judge call, with no retry
    args = (
        "--ambig-suite=march", "--ambig-system=oracle", "--ambig-limit=3", "--ambig-cache-dir=cache",
        "--ambig-judge=judge-m", f"--ambig-judge-base-url={chat_server.url}", "--ambig-judge-retries=0",
        "--ambig-resume",
    )  # fmt: skip
    _, first = ambig_run(pytester, *args, report="first")
    failed = [i["item_id"] for i in first["items"] if "judge" in i["unscored"]]
    assert len(failed) == 1
    asked = len(chat_server.requests)
    _, resumed = ambig_run(pytester, *args, report="resumed")
    assert len(chat_server.requests) == asked + 1  # the failed item's judge call, and nothing else
    by_id = {i["item_id"]: i for i in resumed["items"]}
    assert not by_id[failed[0]].get("reused") and "judge" in by_id[failed[0]]["scores"]
    kept = [i for i in resumed["items"] if i["item_id"] not in failed]
    assert all(i["reused"] and i["usage"]["requests"] == 0 and i["usage"]["cost"] == 0 for i in kept)
    assert all(i["usage"]["cached"] >= 1 for i in kept)
    before = {i["item_id"]: i for i in first["items"]}
    assert [i["scores"] for i in kept] == [before[i["item_id"]]["scores"] for i in kept]


def test_a_resumed_run_under_xdist_reuses_what_one_process_stored(system):
    _, fresh = run(system, "--ambig-concurrency=4", report="fresh")
    _, resumed = run(system, "-n", "2", "--ambig-concurrency=2", "--ambig-resume", report="resumed")
    assert all(item["reused"] for item in resumed["items"])
    assert scored(resumed) == scored(fresh) and resumed["suites"] == fresh["suites"]
