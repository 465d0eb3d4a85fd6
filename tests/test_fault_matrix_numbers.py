"""The fault matrix, third part: numbers that gate, money and state (issue 39, sections 4 and 5).

Each class of hostile input asserts the invariant: the gate decides as it does on the clean
data, or the input is refused with one line naming the file and what was wrong; no internal
error (no traceback) either way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixtures.process import run_pytest
from pytest_ambigqa.cli import main as cli

GATE = "--ambig-fail-under=str_em=35"  # the lexical baseline's MARCH sample: 29.5, fails


def _run(root: Path, name: str, *args: str) -> Path:
    done = run_pytest(
        root, "--ambig-suite=march", "--ambig-system=lexical", GATE, f"--ambig-report={name}", *args
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stdout[-2000:]
    return root / name / "scorecard.json"


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> dict[str, Path]:
    """The MARCH sample's two shards, whole, and narrowed in the ways a shard can be."""
    root = tmp_path_factory.mktemp("shards")
    return {
        "1": _run(root, "s1", "--ambig-shard=1/2"),
        "2": _run(root, "s2", "--ambig-shard=2/2"),
        "-k": _run(root, "k", "--ambig-shard=1/2", "-k", "not con"),
        "-k -n 2": _run(root, "kn", "--ambig-shard=1/2", "-k", "not con", "-n", "2"),
        "--deselect": _run(root, "d", "--ambig-shard=1/2", "--deselect", "ambigqa::test_ambig[march-con-01]"),
        "--ambig-limit": _run(root, "l", "--ambig-shard=1/2", "--ambig-limit=5"),
    }


def _outcome(args: list[str], capsys) -> tuple[int, str, str]:
    code = cli(args)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- 4.1 a shard that did not run its whole shard ------------------------------------------


def test_whole_shards_merge_and_the_gate_fails_as_on_the_clean_run(shards, tmp_path, capsys):
    code, out, _ = _outcome(["merge", str(shards["1"]), str(shards["2"]), "-o", str(tmp_path / "m")], capsys)
    assert code == 1 and "gate FAILED" in out and "merged 13 items" in out
    assert json.loads(shards["1"].read_text())["config"]["selection"] == {"items": 7, "selected": 7, "by": []}
    merged = json.loads((tmp_path / "m" / "scorecard.json").read_text())
    assert merged["config"]["selection"] == {"items": 13, "selected": 13, "by": []}


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("-k", "ran 4 of its 7 items (narrowed by -k 'not con')"),
        ("-k -n 2", "ran 4 of its 7 items (narrowed by -k 'not con')"),
        ("--deselect", "ran 6 of its 7 items (narrowed by --deselect (1 node id(s)))"),
    ],
)
def test_merge_refuses_a_narrowed_shard_naming_it(shards, tmp_path, capsys, how, said):
    code, out, err = _outcome(
        ["merge", str(shards[how]), str(shards["2"]), "-o", str(tmp_path / "m")], capsys
    )
    assert code == 2 and not (tmp_path / "m").exists()
    line = _one_line(err)
    assert f"shard 1/2 ({shards[how]}) {said}: not the whole shard" in line


def test_merge_refuses_a_shard_of_another_limit(shards, tmp_path, capsys):
    code, _, err = _outcome(
        ["merge", str(shards["2"]), str(shards["--ambig-limit"]), "-o", str(tmp_path / "m")], capsys
    )
    assert code == 2
    assert f"shard 1/2 ({shards['--ambig-limit']}) ran --ambig-limit=5 where shard 2/2" in _one_line(err)


def test_an_older_shard_without_a_record_still_merges_with_a_note(shards, tmp_path, capsys):
    old = tmp_path / "old.json"
    data = json.loads(shards["1"].read_text())
    del data["config"]["selection"]
    old.write_text(json.dumps(data))
    code, out, _ = _outcome(["merge", str(old), str(shards["2"]), "-o", str(tmp_path / "m")], capsys)
    assert code == 1 and "merged 13 items" in out
    assert f"note: {old} record(s) no selection (written by an older version)" in out


# -- 4.2 the same item twice: a base, a shard, a labels file, a batch's replies -------------


def _doubled(source: Path, target: Path, index: int = 2) -> Path:
    """``source`` with its item ``index`` listed twice, the second a better score (the last wins
    where a mapping reads it: a regression would pass)."""
    data = json.loads(source.read_text(encoding="utf-8"))
    again = json.loads(json.dumps(data["items"][index]))
    again["scores"]["str_em"] = 1.0
    data["items"].append(again)
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def _key(card: Path, index: int) -> str:
    item = json.loads(card.read_text(encoding="utf-8"))["items"][index]
    return f"{item['suite']}-{item['item_id']}"


def test_merge_refuses_a_shard_holding_an_item_twice(shards, tmp_path, capsys):
    shard = _doubled(shards["2"], tmp_path / "s2.json")
    code, _, err = _outcome(["merge", str(shards["1"]), str(shard), "-o", str(tmp_path / "m")], capsys)
    assert code == 2
    line = _one_line(err)
    key = _key(shards["2"], 2)
    assert str(shard) in line and f"item {key}, field items: listed twice (items #3 and #7)" in line


def test_compare_refuses_a_base_holding_an_item_twice(shards, tmp_path, capsys):
    clean = _outcome(["compare", str(shards["1"]), str(shards["1"]), "--fail-if-worse=str_em:1"], capsys)
    assert clean[0] == 0
    base = _doubled(shards["1"], tmp_path / "base.json", 0)
    code, _, err = _outcome(["compare", str(base), str(shards["1"]), "--fail-if-worse=str_em:1"], capsys)
    key = _key(shards["1"], 0)
    assert code == 2 and f"item {key}, field items: listed twice (items #1 and #8)" in _one_line(err)


def test_a_run_refuses_a_baseline_holding_an_item_twice(shards, tmp_path):
    base = _doubled(shards["1"], tmp_path / "base.json", 0)
    done = run_pytest(
        tmp_path,
        "--ambig-suite=march",
        "--ambig-system=lexical",
        f"--ambig-baseline={base}",
        "-p",
        "no:randomly",
    )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR and "Traceback" not in done.stderr
    assert "listed twice" in done.stderr and str(base) in done.stderr


def _labels(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        (
            [{"id": "a", "suite": "asqa", "score": 4}, {"id": "a", "suite": "asqa", "score": 1}],
            "line 2: a second row for item 'a' (first: line 1)",
        ),
        (  # a row without a suite, whose id is in one suite of the run: the same item
            [{"id": "a", "suite": "asqa", "score": 4}, {"id": "a", "score": 1}],
            "line 2: a second row for item 'a' (first: line 1)",
        ),
        (  # a row for every system, and one for the run's: both would match
            [{"id": "a", "score": 4}, {"id": "a", "system": "sys", "score": 1}],
            "line 2: a second row for item 'a' (first: line 1)",
        ),
        (  # the overall score is ASQA's judge_utility: the same label twice
            [{"id": "a", "score": 4}, {"id": "a", "scores": {"judge_utility": 1}}],
            "line 2: a second row for item 'a' (first: line 1)",
        ),
    ],
)
def test_labels_for_one_item_twice_are_refused(tmp_path, rows, problem):
    from pytest_ambigqa.card.calibration import read_labels
    from pytest_ambigqa.errors import UnreadableFile

    path = _labels(tmp_path / "labels.jsonl", rows)
    with pytest.raises(UnreadableFile) as caught:
        read_labels(path, {"a": ["asqa"], "b": ["asqa"]})
    assert str(caught.value) == f"{path}, {problem}"


def test_labels_of_other_items_metrics_or_systems_are_not_twice(tmp_path):
    from pytest_ambigqa.card.calibration import read_labels

    rows = [
        {"id": "a", "suite": "asqa", "score": 4},
        {"id": "a", "suite": "march", "score": 4},  # another suite's item
        {"id": "b", "system": "x", "score": 4},
        {"id": "b", "system": "y", "score": 4},  # another system's
        {"id": "c", "scores": {"judge_utility": 4}},
        {"id": "c", "scores": {"judge_correctness": 4}},  # another metric
    ]
    assert len(read_labels(_labels(tmp_path / "l.jsonl", rows), {"a": ["asqa", "march"]})) == 6


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        (
            {"id": "a", "suite": "asqa", "score": 7},
            "'score' 7 is outside the scale of asqa's judge_utility 0 to 5",
        ),
        (
            {"id": "a", "suite": "condambigqa", "score": 2},
            "'score' 2 is outside the scale of condambigqa's condition 0 to 1",
        ),
        ({"id": "a", "score": -1}, "'score' -1 is outside the scale of asqa's judge_utility 0 to 5"),
        (
            {"id": "a", "scores": {"judge_utility": 5.5}},
            "'scores.judge_utility' 5.5 is outside the scale of judge_utility 0 to 5",
        ),
        ({"id": "a", "score": 1e308}, "outside the scale"),
        ({"id": "a", "score": float("nan")}, "'score' must be a finite number, not NaN"),
        ({"id": "a", "score": float("inf")}, "'score' must be a finite number, not Infinity"),
    ],
)
def test_labels_off_the_scale_or_not_finite_are_refused_with_file_line_and_scale(tmp_path, row, problem):
    from pytest_ambigqa.card.calibration import read_labels
    from pytest_ambigqa.errors import UnreadableFile

    path = _labels(tmp_path / "labels.jsonl", [{"id": "b", "score": 3}, row])
    with pytest.raises(UnreadableFile) as caught:
        read_labels(path, {"a": ["asqa"], "b": ["asqa"]})
    assert str(caught.value).startswith(f"{path}, line 2: ") and problem in str(caught.value)


ANSWER = """
def answer(question, item):
    return item.long_answers[0]
"""


def _labelled(pytester, chat_server, rows, *args, report="report"):
    from fixtures.network import GUARD
    from fixtures.process import ambig_run

    pytester.makeconftest(GUARD)
    pytester.makepyfile(mysys=ANSWER)
    _labels(pytester.path / "labels.jsonl", rows)
    return ambig_run(
        pytester,
        "--ambig-suite=asqa",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-judge=judge-m",
        "--ambig-cache-dir=cache",
        "--ambig-metrics=str_em,judge_utility",
        "--ambig-limit=4",
        *args,
        report=report,
    )


def test_a_run_refuses_labels_off_the_scale_before_any_item(pytester, chat_server):
    from pytest_ambigqa.suites import SUITES

    item = (
        SUITES["asqa"]
        .load(None, __import__("pytest_ambigqa.suites", fromlist=["LoadOptions"]).LoadOptions())
        .items[0]
    )
    rows = [{"id": item.id, "score": 6}]
    result, card = _labelled(
        pytester, chat_server, rows, "--ambig-system=mysys:answer", "--ambig-human-labels=labels.jsonl"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR and not card and not chat_server.requests
    errors = [line for line in result.stderr.lines if line.startswith("ERROR")]
    assert errors == [
        f"ERROR: --ambig-human-labels: {pytester.path / 'labels.jsonl'}, line 1: "
        "'score' 6 is outside the scale of asqa's judge_utility 0 to 5"
    ]
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_under_rescore_rows_naming_the_runs_system_still_match_it(pytester, chat_server):
    first, card = _labelled(pytester, chat_server, [], "--ambig-system=mysys:answer", report="first")
    assert first.ret == 0
    rows = [{"id": i["item_id"], "system": "mysys:answer", "score": 4} for i in card["items"]]
    again, rescored = _labelled(
        pytester,
        chat_server,
        rows,
        "--ambig-rescore=first/scorecard.json",
        "--ambig-human-labels=labels.jsonl",
        report="again",
    )
    assert again.ret == 0, again.stdout.str()[-2000:]
    calibration = rescored["calibration"]
    assert calibration["system"] == "mysys:answer" and calibration["other_systems"] == 0
    assert calibration["metrics"][0]["labelled"] == 4


BATCH = (
    "--ambig-suite=march",
    "--ambig-system=oracle",
    "--ambig-limit=6",
    "--ambig-judge=judge-m",
    "--ambig-judge-timeout=5",
    "--ambig-cache-dir=cache",
    "--ambig-judge-batch=60",
    "--ambig-judge-batch-poll=0.01",
)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_two_batch_replies_for_one_request_are_refused(pytester, chat_server, workers):
    from fixtures.network import GUARD
    from fixtures.process import ambig_run

    pytester.makeconftest(GUARD)
    chat_server.batch_api.plans = ["duplicate=1"] * 2  # one per worker's batch
    result, card = ambig_run(pytester, f"--ambig-judge-base-url={chat_server.url}", *BATCH, "-n", workers)
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback (most recent call last)" not in output and "INTERNALERROR" not in output
    refused = {i["item_id"]: i["unscored"]["judge"] for i in card["items"] if "judge" in i["unscored"]}
    assert len(refused) == len(chat_server.batch_api.created)
    assert all(
        reason.endswith(
            "holds two replies for this request: both refused (which one the judge meant is unknown)"
        )
        for reason in refused.values()
    )
    judged = [i["scores"]["judge"] for i in card["items"] if "judge" in i["scores"]]
    assert judged == [4.0] * (6 - len(refused))  # the others as on clean replies


# -- 4.4 the comparison header counts the items it paired -----------------------------------


def test_the_comparison_header_counts_the_items_it_paired(shards, tmp_path, capsys):
    """Shard 1 (7 items) against the 4 items of its -k run: 4 paired, of 7 in the base run."""
    code, out, _ = _outcome(["compare", str(shards["1"]), str(shards["-k"])], capsys)
    assert code == 0
    assert ", 4 items in 1 suite paired (of 7 in the base run)" in out
    assert "3 item(s) only in the base run, not compared" in out
    code, out, _ = _outcome(["compare", str(shards["-k"]), str(shards["1"])], capsys)
    assert ", 4 items in 1 suite paired" in out and "(of" not in out.splitlines()[0]
    assert "3 item(s) only in this run, not compared" in out


# -- 4.5 the sequential gate: what it assumes, errors, a trend against call order ----------

DEGRADING = """
import itertools

CALLS = itertools.count()


def answer(question, item):
    # each call gives fewer of the item's readings: answers that degrade as calls go on
    c = next(CALLS)
    answers = [i.short_answers[0] for i in item.interpretations if i.short_answers]
    keep = round(len(answers) * max(0.0, 1 - c / 25))
    return " ".join(answers[:keep]) or "I do not know."
"""

QUOTA = """
import itertools

CALLS = itertools.count()


def answer(question, item):
    if next(CALLS) == 1:
        raise RuntimeError("429: quota exceeded")
    return item.long_answers[0]
"""


def _sequential_run(pytester, asqa: Path, *args: str, report: str):
    from fixtures.process import ambig_run

    result, card = ambig_run(
        pytester,
        "--ambig-suite=asqa",
        f"--ambig-data=asqa={asqa}",
        "--ambig-metrics=str_em,str_hit",
        "-p",
        "no:randomly",
        *args,
        report=report,
    )
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback (most recent call last)" not in output and "INTERNALERROR" not in output
    return result, card


def _gate(card: dict) -> tuple[bool, list[str]]:
    return card["gates"]["passed"], [c["passed"] for c in card["gates"]["checks"]]


def test_a_system_that_degrades_with_calls_does_not_pass_early_where_its_full_run_fails(
    pytester, shared_data
):
    asqa = shared_data / "asqa" / "asqa_dev_sample40.jsonl"
    pytester.makepyfile(degrading=DEGRADING)
    args = ("--ambig-system=degrading:answer", "--ambig-fail-under=str_em=55")
    full, clean = _sequential_run(pytester, asqa, *args, report="full")
    assert full.ret == pytest.ExitCode.TESTS_FAILED and not clean["gates"]["passed"]
    pytester.makepyfile(degrading=DEGRADING)  # its call count anew
    result, card = _sequential_run(pytester, asqa, *args, "--ambig-sequential", report="seq")
    assert result.ret == pytest.ExitCode.TESTS_FAILED and not card["gates"]["passed"]
    (gate,) = card["sequential"]["gates"]
    assert gate["decision"] is None and card["sequential"]["skipped"] == 0
    assert "trend with the order the items were asked in (Kendall's tau -" in gate["unusable"]
    result.stdout.fnmatch_lines(
        [
            "*assumes an item's score does not depend on when it is asked*",
            "*asqa --ambig-fail-under=str_em=55: undecided after * of 40: its values trend with the order*",
            "gate FAILED: asqa str_em (STR-EM) mean * < 55",
        ]
    )


@pytest.mark.parametrize("workers", ["0", "2"])
def test_no_early_pass_while_an_item_has_errored(pytester, shared_data, workers):
    asqa = shared_data / "asqa" / "asqa_dev_sample40.jsonl"
    pytester.makepyfile(quota=QUOTA)
    args = ("--ambig-system=quota:answer", "--ambig-fail-under=str_em=30", "-n", workers)
    full, clean = _sequential_run(pytester, asqa, *args, report="full")
    result, card = _sequential_run(pytester, asqa, *args, "--ambig-sequential", report="seq")
    assert result.ret == full.ret == pytest.ExitCode.TESTS_FAILED  # the errored items fail either way
    assert _gate(card) == _gate(clean) == (True, [True])  # the full run's decision, not an early one
    assert card["sequential"]["skipped"] == 0 and card["sequential"]["stopped_after"] is None
    (gate,) = card["sequential"]["gates"]
    assert gate["decision"] is None and "errored" in gate["unusable"] and "no early pass" in gate["unusable"]


# -- 5.1 a batch is created once, whatever happens to the create ----------------------------


def _batched(pytester, chat_server, *args: str, report: str = "report"):
    from fixtures.network import GUARD
    from fixtures.process import ambig_run

    pytester.makeconftest(GUARD)
    result, card = ambig_run(
        pytester, f"--ambig-judge-base-url={chat_server.url}", *BATCH, *args, report=report
    )
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback (most recent call last)" not in output and "INTERNALERROR" not in output
    return result, card


def _judged(card: dict) -> int:
    return next(s for s in card["suites"] if s["name"] == "march")["metrics"]["judge"]["n"]


def test_a_create_whose_reply_was_lost_is_found_not_made_again(pytester, chat_server):
    api = chat_server.batch_api
    api.create_faults = ["lost"]
    result, card = _batched(pytester, chat_server)
    assert result.ret == 0 and _judged(card) == 6
    assert len(api.created) == 1 and api.lists == 1 and chat_server.requests == []
    (made,) = api.batches.values()
    assert set(made["status"]["metadata"]) == {"ambigqa_intent"}


KILLED = """
import os

from pytest_ambigqa.models.cache import CallCache

_record = CallCache.add_batch


def _killed(self, batch, *args):
    if not batch.startswith("intent:"):
        os._exit(9)  # the process dies after the create, before its record
    return _record(self, batch, *args)


CallCache.add_batch = _killed
"""


def test_a_run_killed_between_create_and_record_never_pays_twice(pytester, chat_server):
    from fixtures.network import GUARD

    api = chat_server.batch_api
    pytester.makeconftest(GUARD + KILLED)
    args = (f"--ambig-judge-base-url={chat_server.url}", *BATCH, "--ambig-report=first")
    first = run_pytest(pytester.path, *args)
    assert first.returncode == 9 and len(api.created) == 1
    again, card = _batched(pytester, chat_server, report="again")
    assert again.ret == 0 and _judged(card) == 6
    assert len(api.created) == 1 and chat_server.requests == []  # collected, not made or asked again
    assert api.lists == 1
    third, card = _batched(pytester, chat_server, report="third")
    assert _judged(card) == 6 and len(api.created) == 1 and api.lists == 1  # the intent is gone


def test_a_create_that_cannot_be_confirmed_holds_its_requests_until_it_can(pytester, chat_server):
    api = chat_server.batch_api
    api.create_faults = ["lost"]
    api.list_faults = ["400"]
    result, card = _batched(pytester, chat_server, report="first")
    unscored = {i["unscored"]["judge"] for i in card["items"] if "judge" in i["unscored"]}
    assert len(unscored) == 1 and "a batch create not confirmed" in unscored.pop()
    assert len(api.created) == 1 and chat_server.requests == []
    again, card = _batched(pytester, chat_server, report="again")
    assert again.ret == 0 and _judged(card) == 6 and len(api.created) == 1 and chat_server.requests == []


# -- 5.2 two processes creating answers.sqlite at once --------------------------------------


def _opened_without_warning(path: Path):
    import warnings

    from pytest_ambigqa.store.answers import AnswerStore

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        store = AnswerStore(path)
    assert [str(w.message) for w in caught] == []
    assert not list(path.parent.glob("*.corrupt-*"))  # nothing set aside
    return store


def test_a_store_another_process_holds_is_waited_for(tmp_path):
    import sqlite3
    import threading

    path = tmp_path / "answers.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("CREATE TABLE other (x)")
    threading.Timer(0.5, lambda: holder.execute("COMMIT")).start()
    store = _opened_without_warning(path)
    store.close()
    assert sqlite3.connect(path).execute("SELECT count(*) FROM other").fetchone() == (0,)


def test_a_store_whose_first_page_is_being_written_is_waited_for_not_set_aside(tmp_path):
    import sqlite3
    import threading

    whole = tmp_path / "whole.sqlite"
    made = sqlite3.connect(whole)
    made.execute("CREATE TABLE other (x)")
    made.commit()
    made.close()
    path = tmp_path / "store" / "answers.sqlite"
    path.parent.mkdir()
    path.write_bytes(whole.read_bytes()[:50])  # another process, half way through its first write
    threading.Timer(0.5, lambda: path.write_bytes(whole.read_bytes())).start()
    _opened_without_warning(path).close()
    assert sqlite3.connect(path).execute("SELECT count(*) FROM other").fetchone() == (0,)


CREATE = """
import sys, time
from pathlib import Path
from pytest_ambigqa.store.answers import AnswerStore

start = float(sys.argv[2])
while time.time() < start:
    pass
AnswerStore(Path(sys.argv[1])).close()
"""


def test_processes_creating_the_store_at_once_all_open_it(tmp_path):
    import subprocess
    import sys
    import time

    script = tmp_path / "create.py"
    script.write_text(CREATE, encoding="utf-8")
    for round_ in range(3):
        path = tmp_path / f"round{round_}" / "answers.sqlite"
        start = str(time.time() + 2)
        runs = [
            subprocess.Popen(
                [sys.executable, "-W", "error", str(script), str(path), start],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for _ in range(4)
        ]
        outputs = [run.communicate(timeout=120)[0] for run in runs]
        assert [run.returncode for run in runs] == [0] * 4, outputs
        assert not list(path.parent.glob("*.corrupt-*"))


# -- 5.3 --ambig-report URLs the plugin cannot use; merge's globs ---------------------------


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/run",
        "sftp://example.com/run",
        "http://example.com/run",
        "https://example.com/run",
        "zip://run::file:///tmp/x.zip",
        "tar://run",
        "reference://run",
        "github://owner:repo@main/run",
        "memory://run",
        "hf://datasets/x/run",
        "git://run",
        "webdav://example.com/run",
    ],
)
def test_a_report_url_this_plugin_cannot_use_is_one_usage_line_at_start_up(pytester, url):
    from fixtures.network import GUARD

    pytester.makeconftest(GUARD)  # nothing may be contacted while pytest configures
    result = pytester.runpytest("--ambig-suite=march", "--ambig-system=oracle", f"--ambig-report={url}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1, errors
    scheme = url.split("://")[0]
    assert (
        errors[0].startswith("ERROR: --ambig-report: ") and f": {scheme}:// is no object store" in errors[0]
    )
    assert "network guard" not in result.stdout.str() + result.stderr.str()


def test_a_chained_report_url_is_refused(pytester):
    result = pytester.runpytest("--ambig-suite=march", "--ambig-report=simplecache::s3://bucket/run")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --ambig-report: simplecache::s3://bucket/run: a chained URL*"])


def test_merge_refuses_an_output_url_it_cannot_use(shards, tmp_path, capsys):
    code, _, err = _outcome(
        ["merge", str(shards["1"]), str(shards["2"]), "-o", "ftp://example.com/m"], capsys
    )
    assert code == 2 and "ftp:// is no object store" in _one_line(err)


@pytest.mark.parametrize("as_url", [False, True])
def test_merge_expands_a_quoted_local_glob_and_a_file_glob(shards, tmp_path, capsys, as_url):
    root = shards["1"].parent.parent  # s1/, s2/, k/, ...: the shards of one run are s1 and s2
    pattern = f"{root}/s[12]/scorecard.json"
    given = Path(pattern).as_uri().replace("%5B", "[").replace("%5D", "]") if as_url else pattern
    code, out, _ = _outcome(["merge", given, "-o", str(tmp_path / "m")], capsys)
    assert code == 1 and "merged 13 items from 2 scorecards" in out  # the clean run's gate, failing
    code, _, err = _outcome(["merge", f"{root}/nothing-*/scorecard.json", "-o", str(tmp_path / "n")], capsys)
    assert code == 2 and "matches no file" in _one_line(err)


# -- 5.4 the step summary stays within GitHub's 1 MiB ---------------------------------------

from hypothesis import example, given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(
    before=st.integers(0, 2100),
    lines=st.lists(st.text(st.characters(codec="utf-8"), max_size=40), max_size=80),
)
@example(before=1000, lines=["y" * 1000])  # fits but for the newline that parts it: was 1 byte over
def test_property_the_step_summary_stays_within_its_limit_after_appending(tmp_path_factory, before, lines):
    """With the limit at 2,000 bytes: whatever was there and whatever is appended, the file
    ends within the limit (or as it was, if it was past it), and a text that fits is whole."""
    from unittest import mock

    from pytest_ambigqa.output import safe_output
    from pytest_ambigqa.report import ci

    path = tmp_path_factory.mktemp("summary") / "summary.md"
    path.write_bytes(b"x" * before)
    text = "\n".join(lines)
    with mock.patch.object(ci, "STEP_SUMMARY_LIMIT", 2000):
        ci.append_step_summary(path, text)
    size = path.stat().st_size
    assert size <= max(2000, before)
    whole = safe_output(text).encode("utf-8")
    if whole and before + 1 + len(whole) <= 2000:
        assert path.read_bytes() == b"x" * before + b"\n" + whole
    path.read_bytes().decode("utf-8")  # never cut inside a character
