"""Fast runs: concurrency, the response store, resume, rescore, shards and merge, clean stops."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from fixtures.process import QUIET, ambig_run
from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.schema import ItemResult
from pytest_ambigqa.store.answers import AnswerStore
from pytest_ambigqa.store.pool import Prefetcher
from pytest_ambigqa.suites import SUITES, LoadOptions

MARCH = SUITES["march"].load(None, LoadOptions()).items

# A system that logs each call (pid, item, start, end) and sleeps; SLOW_FAIL names an item it fails on.
LOGGING_SYSTEM = """
import json, os, time
LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.jsonl")
def answer(question, item):
    start = time.time()
    hold, release = os.environ.get("HOLD_AFTER"), os.path.join(os.path.dirname(LOG), "release")
    while hold and os.path.exists(LOG) and len(open(LOG).readlines()) >= int(hold):
        if os.path.exists(release) or time.time() > start + 60:
            break
        time.sleep(0.02)  # the calls after the first HOLD_AFTER wait for the test's word
    time.sleep(float(os.environ.get("SLEEP", "0")))
    if item.id == os.environ.get("FAIL_ON"):
        raise RuntimeError("flaky")
    with open(LOG, "a") as log:
        log.write(json.dumps({"pid": os.getpid(), "item": item.id, "start": start, "end": time.time()}) + "\\n")
    return item.long_answers[0]
"""


def calls(pytester: pytest.Pytester) -> list[dict]:
    log = pytester.path / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def run(pytester: pytest.Pytester, *args: str, report: str = "report") -> tuple[pytest.RunResult, dict]:
    return ambig_run(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=mysys:answer",
        "--ambig-cache-dir=cache",
        *args,
        report=report,
    )


def metrics_of(card: dict) -> list:
    return [
        (s["name"], s["metrics"], s["slices"], s["items"], s["errors"], s["missing"]) for s in card["suites"]
    ]


@pytest.fixture
def system(pytester, monkeypatch):
    pytester.makepyfile(mysys=LOGGING_SYSTEM)
    monkeypatch.setenv("SLEEP", "0")
    monkeypatch.delenv("FAIL_ON", raising=False)
    return pytester


def test_concurrency_overlaps_calls_and_keeps_report_order(system, monkeypatch):
    monkeypatch.setenv("SLEEP", "0.3")
    serial = system.runpytest(
        "--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-limit=8", "--co", "-q"
    )
    result, card = run(system, "--ambig-limit=8", "--ambig-concurrency=4", "-v")
    result.assert_outcomes(passed=8)
    spans = sorted((c["start"], c["end"]) for c in calls(system))
    overlapping = max(sum(s < end and e > start for s, e in spans) for start, end in spans)
    assert len(spans) == 8 and overlapping >= 3  # calls ran side by side, as the system's own clock shows
    reported = [line.split(" PASSED")[0] for line in result.outlines if " PASSED" in line]
    assert reported == [line for line in serial.outlines if "::test_ambig[" in line]


def test_each_item_is_asked_once_under_xdist(system):
    result, card = run(system, "-n", "2", "--ambig-concurrency=3")
    result.assert_outcomes(passed=len(MARCH))
    asked = [c["item"] for c in calls(system)]
    assert sorted(asked) == sorted(i.id for i in MARCH)  # no item asked twice, by either worker's pool
    assert not any(r["cached"] for r in card["items"])  # asked in this run: none "from the store"


# Which test ran in which process, in order (a conftest of the inner run, workers included).
RAN_BY = """
import json, os
def pytest_runtest_call(item):
    with open(os.path.join(str(item.config.rootpath), "ran.jsonl"), "a") as log:
        log.write(json.dumps({"pid": os.getpid(), "test": item.name}) + "\\n")
"""


def test_each_worker_asks_only_the_items_its_tests_run(system):
    """Under -n with a pool, each worker is dealt every other item up front (session/deal.py):
    its pool asks those, in its tests' order, and nothing else, deselected items excluded."""
    system.makeconftest(RAN_BY)
    skip = MARCH[3].id
    args = ("--ambig-suite=march", "--ambig-system=mysys:answer", "-k", f"not {skip}", "-p", "no:randomly")
    order = [
        line.split("::")[-1]
        for line in system.runpytest(*args, "--co", "-q").outlines
        if "::test_ambig[" in line
    ]
    result, card = run(
        system, "-k", f"not {skip}", "-p", "no:randomly", "-n", "2", "--ambig-concurrency=3", "-v"
    )
    result.assert_outcomes(passed=len(MARCH) - 1)  # under xdist the controller counts no deselection
    result.stdout.fnmatch_lines(["scheduling tests via DealScheduling"])
    ran: dict[int, list[str]] = {}
    for row in map(json.loads, (system.path / "ran.jsonl").read_text().splitlines()):
        ran.setdefault(row["pid"], []).append(row["test"])
    assert sorted(ran.values()) == sorted([order[0::2], order[1::2]])  # each its share, in order
    asked: dict[int, set[str]] = {}
    for call in calls(system):
        asked.setdefault(call["pid"], set()).add(call["item"])
    assert len(calls(system)) == len(MARCH) - 1 and skip not in set().union(*asked.values())
    assert asked == {
        pid: {t.split("[")[1].rstrip("]").removeprefix("march-") for t in tests} for pid, tests in ran.items()
    }


@pytest.mark.parametrize(
    "options, scheduler",
    [
        (("--dist=load", "--ambig-concurrency=3"), "LoadScheduling"),  # the user's --dist is xdist's
        (("--ambig-concurrency=1",), "LoadScheduling"),  # no pool: nothing asks ahead
    ],
    ids=["dist-given", "no-pool"],
)
def test_xdist_schedules_when_the_run_does_not_deal(system, options, scheduler):
    result, card = run(system, "-n", "2", "-v", *options)
    result.assert_outcomes(passed=len(MARCH))
    result.stdout.fnmatch_lines([f"scheduling tests via {scheduler}"])
    assert sorted(c["item"] for c in calls(system)) == sorted(i.id for i in MARCH)  # claims: once each


def test_x_stops_every_dealt_worker(system, monkeypatch):
    """-x under the deal: the other worker runs only the chunk it was sent."""
    monkeypatch.setenv("FAIL_ON", MARCH[0].id)
    result, _ = run(system, "-p", "no:randomly", "-n", "2", "--ambig-concurrency=2", "-x")
    outcomes = result.parseoutcomes()
    assert outcomes["errors"] == 1 and outcomes.get("passed", 0) < len(MARCH) - 1


def test_a_crashed_dealt_workers_items_go_to_its_replacement(system):
    """The replacement takes the dead worker's slot; the item it died in is missing, the others run."""
    system.makepyfile(
        mysys=f"""
        import os
        def answer(question, item):
            marker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crashed")
            if item.id == {MARCH[2].id!r} and not os.path.exists(marker):
                open(marker, "w").close()
                os._exit(3)
            return item.long_answers[0]
        """
    )
    result, card = run(system, "-p", "no:randomly", "-n", "2", "--ambig-concurrency=2")
    result.stdout.fnmatch_lines(["*replacing crashed worker*"])
    statuses = [r["status"] for r in card["items"]]
    assert len(statuses) == len(MARCH) and statuses.count("missing") == 1
    assert statuses.count("ok") == len(MARCH) - 1


def test_resume_asks_only_for_what_is_missing(system, monkeypatch):
    monkeypatch.setenv("FAIL_ON", MARCH[1].id)
    first, card = run(system)
    first.assert_outcomes(passed=len(MARCH) - 1, errors=1)
    assert len(calls(system)) == len(MARCH) - 1
    monkeypatch.delenv("FAIL_ON")
    again, resumed = run(system, "--ambig-resume", report="resumed")
    again.assert_outcomes(passed=len(MARCH))
    assert [c["item"] for c in calls(system)][len(MARCH) - 1 :] == [MARCH[1].id]  # only the errored one
    again.stdout.fnmatch_lines([f"  answers: {len(MARCH) - 1} from the response store, 1 asked now"])
    third, complete = run(system, "--ambig-resume", report="third")
    assert len(calls(system)) == len(MARCH)  # a complete store: zero calls
    assert metrics_of(complete) == metrics_of(resumed)
    fresh, _ = run(system, report="fresh")
    assert len(calls(system)) == 2 * len(MARCH)  # without --ambig-resume every item is asked again


def test_rescore_needs_no_system(system):
    run(system)[0].assert_outcomes(passed=len(MARCH))
    data = system.path / "march.json"  # a run on a data file of its own is rescored on that file
    data.write_text(json.dumps(json.loads(SUITES["march"].sample_path().read_text())[:3]))
    run(system, f"--ambig-data={data}", report="own")[0].assert_outcomes(passed=3)
    (system.path / "mysys.py").unlink()
    own = system.runpytest("--ambig-rescore=own/scorecard.json", "--ambig-cache-dir=cache")
    own.assert_outcomes(passed=3)
    result = system.runpytest(
        "--ambig-rescore=report/scorecard.json", "--ambig-report=rescored", "--ambig-cache-dir=cache"
    )
    result.assert_outcomes(passed=len(MARCH))
    original = json.loads((system.path / "report" / "scorecard.json").read_text())
    rescored = json.loads((system.path / "rescored" / "scorecard.json").read_text())
    assert metrics_of(rescored) == metrics_of(original)
    assert rescored["system"]["label"].startswith("mysys:answer (answers saved in ")
    assert rescored["system"]["inputs"] == original["system"]["inputs"]
    assert [s["protocol"] for s in rescored["suites"]] == [s["protocol"] for s in original["suites"]]
    other = system.runpytest("--ambig-rescore=report/scorecard.json", "--ambig-march-setting=oracle-evidence")
    assert other.ret == pytest.ExitCode.USAGE_ERROR
    other.stderr.fnmatch_lines(
        ["ERROR: --ambig-march-setting: the answers in --ambig-rescore were made under 'open-retrieval'*"]
    )
    bad = system.runpytest("--ambig-rescore=nothing.json")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["ERROR: --ambig-rescore: *nothing.json is not a readable scorecard.json*"])


def collected(pytester, *args):
    result = pytester.runpytest("--ambig-suite=march,condambigqa,asqa", "--co", "-q", *args)
    return [line for line in result.outlines if "::test_ambig[" in line]


def test_shards_partition_the_items(system):
    whole = collected(system)
    shards = [collected(system, f"--ambig-shard={i}/3") for i in (1, 2, 3)]
    assert sorted(sum(shards, [])) == sorted(whole) and sum(map(len, shards)) == len(whole)
    assert max(map(len, shards)) - min(map(len, shards)) <= 3  # balanced within each suite and type
    bad = system.runpytest("--ambig-suite=march", "--ambig-shard=4/3")
    bad.stderr.fnmatch_lines(["ERROR: --ambig-shard: expected I/N with 1 <= I <= N, got '4/3'"])


@pytest.mark.parametrize("gate", ["str_em=50", "length=1000"])  # a gate that passes, and one that fails
def test_merged_shards_equal_one_run(system, gate, capsys):
    whole, single = run(system, f"--ambig-fail-under={gate}", report="whole")
    for i in (1, 2):
        shard, card = run(system, f"--ambig-fail-under={gate}", f"--ambig-shard={i}/2", report=f"shard{i}")
        assert shard.ret == 0 and card["gates"]["deferred"].startswith(f"shard {i}/2")  # the merge gates
    if gate == "length=1000":
        strict, _ = run(system, f"--ambig-fail-under={gate}", "--ambig-shard=1/2", "--ambig-shard-gates")
        assert strict.ret == 1
    code = cli(
        [
            "merge",
            str(system.path / "shard1/scorecard.json"),
            str(system.path / "shard2/scorecard.json"),
            "-o",
            str(system.path / "merged"),
        ]
    )
    merged = json.loads((system.path / "merged" / "scorecard.json").read_text())
    assert metrics_of(merged) == metrics_of(single)
    assert [r["item_id"] for r in merged["items"]] == [r["item_id"] for r in single["items"]]
    assert merged["gates"] == single["gates"] and code == whole.ret
    assert "merged 13 items from 2 scorecards" in capsys.readouterr().out


@pytest.mark.parametrize("limit", [None, 5])
def test_a_merge_notes_the_subset_its_shards_ran_together(system, limit, capsys):
    """Each shard of a data file's run notes that it ran a part; the merge notes only what the
    shards ran together (all of the file, or the --ambig-limit subset)."""
    data = system.path / "march.json"
    data.write_text(SUITES["march"].sample_path().read_text())
    args = [f"--ambig-data={data}", *([f"--ambig-limit={limit}"] if limit else [])]
    notes = []
    for report in ("whole", "shard1", "shard2"):
        shard = [f"--ambig-shard={report[-1]}/2"] if report != "whole" else []
        _, card = run(system, *args, *shard, report=report)
        notes.append(card["suites"][0]["protocol"]["notes"])
    assert all(any(n.startswith("a subset: ") for n in shard) for shard in notes[1:])
    shards = [str(system.path / f"shard{i}/scorecard.json") for i in (1, 2)]
    cli(["merge", *shards, "-o", str(system.path / "merged")])
    merged = json.loads((system.path / "merged" / "scorecard.json").read_text())
    assert merged["suites"][0]["protocol"]["notes"] == notes[0]
    subset = [n for n in notes[0] if n.startswith("a subset: ")]
    assert subset == ([f"a subset: 5 of the file's {len(MARCH)} items"] if limit else [])


def test_shards_on_different_devices_merge(system, capsys):
    """The device a shard's models ran on is the shard's own (`auto` chose per machine)."""
    for i, device in ((1, "cuda:0"), (2, "cpu")):
        run(system, f"--ambig-shard={i}/2", report=f"shard{i}")
        path = system.path / f"shard{i}" / "scorecard.json"
        card = json.loads(path.read_text())
        card["config"]["device_used"] = device
        path.write_text(json.dumps(card))
    shards = [str(system.path / f"shard{i}/scorecard.json") for i in (1, 2)]
    assert cli(["merge", *shards, "-o", str(system.path / "merged")]) == 0, capsys.readouterr().err
    merged = json.loads((system.path / "merged" / "scorecard.json").read_text())
    assert merged["config"]["device_used"] == "cpu, cuda:0"


def test_merge_refuses_what_is_not_one_run(system, capsys):
    run(system, "--ambig-shard=1/2", report="a")
    run(system, "--ambig-shard=1/2", "--ambig-seed=7", report="b")
    a, b = str(system.path / "a/scorecard.json"), str(system.path / "b/scorecard.json")
    assert cli(["merge", a, a, "-o", str(system.path / "m")]) == 2
    assert "shard 1/2 is given twice" in capsys.readouterr().err
    assert cli(["merge", a, "-o", str(system.path / "m")]) == 2
    assert "shard 2/2 missing: a merge needs every shard of the run" in capsys.readouterr().err
    assert cli(["merge", a, b, "-o", str(system.path / "m")]) == 2
    assert "its configuration differs" in capsys.readouterr().err


def test_corrupt_answer_store_is_set_aside(system):
    (system.path / "cache").mkdir()
    (system.path / "cache" / "answers.sqlite").write_bytes(b"garbage, not SQLite" * 500)
    result, card = run(system, "-W", "default")
    result.assert_outcomes(passed=len(MARCH))
    result.stdout.fnmatch_lines(["*answer cache *answers.sqlite was unreadable*set aside*"])
    assert list((system.path / "cache").glob("answers.sqlite.corrupt-*"))


def test_rate_cap_holds_across_workers(system):
    result, _ = run(system, "-n", "2", "--ambig-concurrency=4", "--ambig-rate=8", "--ambig-limit=10")
    result.assert_outcomes(passed=10)
    starts = sorted(c["start"] for c in calls(system))
    assert len({c["pid"] for c in calls(system)}) == 2
    # Slots are 1/8 s apart; a thread may wake a little late, so check what a cap means:
    # any 9 consecutive calls span about a second (8 gaps), never a burst.
    assert all(starts[i + 8] - starts[i] >= 1.0 - 0.1 for i in range(len(starts) - 8)), starts


def test_hung_system_is_cut_without_blocking_the_pool(system, monkeypatch):
    monkeypatch.setenv("SLEEP", "30")
    result, card = run(system, "--ambig-limit=4", "--ambig-concurrency=4", "--ambig-timeout=0.5")
    result.assert_outcomes(errors=4)
    assert all("timed out after 0.5 s" in r["error"] for r in card["items"])


def test_ctrl_c_keeps_finished_answers_for_resume(system, monkeypatch):
    # The run cannot end before the signal, however slowly this machine lets the test poll.
    env = {**os.environ, "SLEEP": "0.4", "HOLD_AFTER": "4", "PYTEST_ADDOPTS": QUIET}
    options = [
        "--ambig-suite=march",
        "--ambig-system=mysys:answer",
        "--ambig-cache-dir=cache",
        "--ambig-concurrency=2",
    ]
    # Ctrl-C as a terminal sends it, whatever this process inherited: a shell that started
    # it in the background (`cmd &`) leaves SIGINT ignored, and so would the child be.
    interruptible = (
        "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.argv[0] = 'pytest'; runpy.run_module('pytest', run_name='__main__')"
    )
    args = [sys.executable, "-c", interruptible, *options, "-q"]
    proc = subprocess.Popen(args, cwd=system.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while len(calls(system)) < 4 and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    (system.path / "release").touch()  # the held calls come back; the run must still stop
    output = proc.communicate(timeout=60)[0].decode()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
    with sqlite3.connect(system.path / "cache" / "answers.sqlite") as db:
        stored = {row[0] for row in db.execute("SELECT key FROM answers WHERE state = 'ok'")}
    before = len(calls(system))
    assert 4 <= len(stored) <= before < len(MARCH)  # the answers that came back were kept
    resumed = subprocess.run(
        [*args, "--ambig-resume"],
        cwd=system.path,
        env={**env, "SLEEP": "0", "HOLD_AFTER": ""},
        capture_output=True,
    )
    assert resumed.returncode == 0, resumed.stdout.decode()[-2000:]
    asked_again = [c["item"] for c in calls(system)][before:]
    assert len(asked_again) == len(MARCH) - len(stored)  # the resumed run asked for exactly the rest
    assert {c["item"] for c in calls(system)} == {i.id for i in MARCH}


# -- the answer store's writer ---------------------------------------------------------------


def test_store_writes_every_queued_answer_off_the_call_path(tmp_path):
    store = AnswerStore(tmp_path / "answers.sqlite")
    keys = [f"k{i}" for i in range(400)]

    def answer(chunk):
        for key in chunk:
            store.put(key, "run", "ok", {"text": key})

    threads = [threading.Thread(target=answer, args=(keys[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()  # what the run's end (Ctrl-C included) does: the queue is written
    store.put("late", "run", "ok", {"text": "late"})  # a call that outlived the run (-x): written at once
    reopened = AnswerStore(tmp_path / "answers.sqlite")
    assert all(reopened.done(k, "run", resume=False) == ("ok", {"text": k}, False) for k in [*keys, "late"])


def test_a_closed_store_holds_its_answers_in_its_file_alone(tmp_path):
    """The end of a run moves the write-ahead log into the file: the file copied or cached
    alone, without its ``-wal``, holds every answer and score."""
    store = AnswerStore(tmp_path / "answers.sqlite")
    for i in range(50):
        store.put(f"k{i}", "run", "ok", {"text": f"answer {i}"})
        store.put_scores(f"s{i}", json.dumps({"scores": {"str_em": 1.0}}))
    store.close()
    assert (tmp_path / "answers.sqlite-wal").exists()  # the connection stays open
    alone = tmp_path / "copy" / "answers.sqlite"
    alone.parent.mkdir()
    alone.write_bytes((tmp_path / "answers.sqlite").read_bytes())
    db = sqlite3.connect(alone)
    assert db.execute("SELECT count(*) FROM answers").fetchone() == (50,)
    assert db.execute("SELECT count(*) FROM scores").fetchone() == (50,)


def test_the_stores_writer_keeps_every_row_in_many_row_statements(tmp_path):
    """The writer inserts a table's queued rows ROWS to a statement: every row is written,
    however many are queued, and a key written twice keeps its last row, as row by row."""
    from pytest_ambigqa.store.answers import ROWS

    store = AnswerStore(tmp_path / "answers.sqlite")
    count = 2 * ROWS + 7
    with store._lock:  # the writer waits for the connection while rows queue up: large batches
        for i in range(count):
            store.put(f"k{i}", "run", "ok", {"text": f"answer {i}"})
            store.put_scores(f"s{i % 10}", json.dumps({"scores": {"str_em": i}}))
        store.put("k3", "run", "ok", {"text": "asked again"})
    store.close()
    assert store.done("k3", "run", resume=False) == ("ok", {"text": "asked again"}, False)
    assert store.done(f"k{count - 1}", "run", resume=False) == ("ok", {"text": f"answer {count - 1}"}, False)
    db = sqlite3.connect(tmp_path / "answers.sqlite")
    assert db.execute("SELECT count(*) FROM answers").fetchone() == (count,)
    last = {f"s{i % 10}": i for i in range(count)}
    assert dict(db.execute("SELECT key, json_extract(payload, '$.scores.str_em') FROM scores")) == last


def test_a_store_write_that_fails_is_reported_not_lost_silently(tmp_path):
    store = AnswerStore(tmp_path / "answers.sqlite")
    store._db.close()  # the disk goes away under the writer
    store.put("k", "run", "ok", {"text": "a"})
    with pytest.raises(sqlite3.Error):
        store.close()  # the run turns the store off with a warning (see test_faults)


# -- the pool's two stages ------------------------------------------------------------------


def test_calls_never_wait_for_scoring_or_its_imports():
    items = SUITES["march"].load(None, LoadOptions()).items
    called, ready = [], threading.Event()
    all_called = threading.Event()

    def call(item):
        called.append(item.key)
        if len(called) == len(items):
            all_called.set()
        return lambda: ItemResult(suite=item.suite, item_id=item.id, status="ok", scores={"x": 1.0})

    pool = Prefetcher(call, workers=3, ready=ready)  # scoring is held back, as by slow imports
    pool.start(items)
    assert all_called.wait(60)  # a deadlock guard, not a timing: every call ran with no scoring yet
    assert sorted(called) == sorted(i.key for i in items)
    ready.set()
    assert [pool.result(i).item_id for i in items] == [i.id for i in items]


def test_after_stop_nothing_more_is_scored():
    items = SUITES["march"].load(None, LoadOptions()).items
    scored, ready, all_called = [], threading.Event(), threading.Event()
    called = []

    def call(item):
        called.append(item.key)
        if len(called) == len(items):
            all_called.set()
        return lambda: scored.append(item.key)

    pool = Prefetcher(call, workers=3, ready=ready)
    pool.start(items)
    assert all_called.wait(60)
    pool.stop(grace=0)  # -x: the answers are in; their paid scoring must not start
    ready.set()
    assert [pool.result(i) for i in items] == [None] * len(items) and scored == []


def test_a_resumed_pool_reads_the_store_in_the_tests_thread_until_there_is_work_to_overlap():
    """A resume: stored results are read back by each test itself (handing them over from a
    thread cost more than reading them); from the first item to score, one call thread reads
    ahead; from the first system asked, every call thread asks."""
    items = SUITES["march"].load(None, LoadOptions()).items[:12]
    stored, to_ask = {i.key for i in items[:4]}, items[8].key  # items[4] is the first to score
    threads: dict[str, str] = {}
    ready, warmed = threading.Event(), []

    def call(item):
        threads[item.key] = threading.current_thread().name
        if item.key == to_ask:
            pool.widen()  # what Evaluator.asking does when the store has no answer
        result = ItemResult(suite=item.suite, item_id=item.id, status="ok", scores={"x": 1.0})
        return result if item.key in stored else lambda: result

    pool = Prefetcher(call, workers=3, ready=ready, warm=lambda: (warmed.append(1), ready.set()), lazy=True)
    pool.start(items)
    assert [pool.result(i).item_id for i in items] == [i.id for i in items]
    main = threading.current_thread().name
    assert [threads[i.key] for i in items[:5]] == [main] * 5  # read back, then the first to score
    assert warmed and all(threads[i.key] == "ambigqa-call-0" for i in items[5:8])  # one reads ahead
    assert {threads[i.key] for i in items[9:]} <= {f"ambigqa-call-{n}" for n in range(3)}
    assert sorted(threads) == sorted(i.key for i in items)  # each item asked once


def test_a_store_another_process_holds_is_waited_for_not_set_aside(tmp_path, recwarn):
    """Workers creating one store at once meet each other's locks: that is no damage."""
    from pytest_ambigqa.store.answers import SCHEMA
    from pytest_ambigqa.store.sqlite import open_database

    path = tmp_path / "answers.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")  # as a worker switching the new file to WAL holds it
    threading.Timer(0.5, lambda: holder.execute("COMMIT")).start()
    db = open_database(path, SCHEMA, "SELECT count(*) FROM answers", "answer cache")
    assert db.execute("SELECT count(*) FROM answers").fetchone() == (0,)
    assert not list(tmp_path.glob("*.corrupt-*")) and not recwarn.list
