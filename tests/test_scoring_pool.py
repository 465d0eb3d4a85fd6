"""Scoring on every core (issue 27): the pure scorers in worker processes give the numbers the
run's own process gives, to the last digit; a scorer's error, a worker killed, Ctrl-C and the
session's end leave no item unscored, nothing hung and no process behind."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fixtures.process import QUIET, ambig_run
from pytest_ambigqa.baselines import lexical, oracle
from pytest_ambigqa.metrics.profiles import PROFILES
from pytest_ambigqa.metrics.scoring import Scorers
from pytest_ambigqa.schema import AmbigItem, Answer, GeneratedInterpretation, ItemResult
from pytest_ambigqa.store import scoring
from pytest_ambigqa.store.pool import Prefetcher
from pytest_ambigqa.store.scoring import ScoringPool
from pytest_ambigqa.suites import SUITES, LoadOptions


def answers(item: AmbigItem) -> list[Answer]:
    """Answers that reach every scorer's branches: the gold one, a lexical one, one with
    citations and a second line (ALCE reads the first), one that reports its planning, none."""
    gold = oracle(item.question, item)
    found = lexical(item.question, list(item.passages)) if item.passages else gold
    cited = dataclasses.replace(
        gold, text=f"{gold.text} [1][2] | more.\nA second line [3].", is_ambiguous=True
    )
    partial = Answer(
        text=" ".join(gold.text.split()[:12]),
        interpretations=tuple(GeneratedInterpretation(answer=i.answer) for i in gold.interpretations[:1]),
        is_ambiguous=False,
        ambiguity_type="constraint",
    )
    return [gold, found, cited, partial, Answer(text="")]


SETTINGS = [
    ("asqa", {}, "alce"),
    ("asqa", {}, "asqa"),
    ("march", {}, "alce"),
    ("march", {"march": "oracle-evidence"}, "asqa"),
    ("condambigqa", {}, "alce"),
    ("condambigqa", {"condambigqa": "closed-book"}, "alce"),
]


@pytest.mark.parametrize(("suite", "settings", "profile"), SETTINGS)
def test_pooled_scores_are_the_serial_ones_on_the_bundled_samples(suite, settings, profile):
    items = SUITES[suite].load(None, LoadOptions()).items
    scorers = Scorers(settings=settings, profile=PROFILES[profile])
    pairs = _pairwise(suite, items, scorers)
    assert pairs and all(pooled == serial for pooled, serial in pairs)
    assert any(pooled.scores for pooled, _ in pairs)


def test_pooled_scores_are_the_serial_ones_on_the_real_asqa_sample(shared_data):
    items = SUITES["asqa"].load(shared_data / "asqa" / "asqa_dev_sample40.jsonl", LoadOptions()).items
    for profile in PROFILES.values():
        pairs = _pairwise("asqa", items, Scorers(profile=profile))
        assert len(pairs) == 5 * len(items) and all(pooled == serial for pooled, serial in pairs)


def _pairwise(suite: str, items, scorers: Scorers) -> list[tuple]:
    """The scorings, pooled and serial, each answer submitted then taken (one item at a time)."""
    chosen = SUITES[suite]
    pool = ScoringPool(2, [chosen], scorers)
    try:
        jobs = [(item, answer) for item in items for answer in answers(item)]
        pairs = []
        for start in range(0, len(jobs), 40):  # batches of distinct items in flight at once
            batch: list[tuple[AmbigItem, Answer]] = []
            seen: set[str] = set()
            for item, answer in jobs[start : start + 40]:
                if item.key in seen:
                    pairs += _taken(pool, chosen, batch, scorers)
                    batch, seen = [], set()
                pool.submit(chosen, item, answer)
                batch.append((item, answer))
                seen.add(item.key)
            pairs += _taken(pool, chosen, batch, scorers)
        return pairs
    finally:
        pool.close()


def _taken(pool: ScoringPool, suite, batch, scorers: Scorers) -> list[tuple]:
    out = []
    for item, answer in batch:
        done = pool.done(item, answer)
        assert done, "the pool computed nothing of this answer"
        out.append((suite.score(item, answer, scorers, done), suite.score(item, answer, scorers)))
    return out


def test_a_scorer_that_raises_in_a_worker_fails_its_item_as_in_process():
    suite = SUITES["asqa"]
    item = dataclasses.replace(SUITES["asqa"].load(None, LoadOptions()).items[0], interpretations=())
    answer, scorers = Answer(text="an answer"), Scorers()
    pool = ScoringPool(2, [suite], scorers)
    try:
        pool.submit(suite, item, answer)
        done = pool.done(item, answer)
    finally:
        pool.close()
    raised = []
    for parts in (done, {}):
        with pytest.raises(Exception) as caught:
            suite.score(item, answer, scorers, parts)
        raised.append(f"{type(caught.value).__name__}: {caught.value}")
    assert raised[0] == raised[1] == "ValueError: STR-EM needs at least one gold interpretation"


def test_an_answer_that_does_not_pickle_is_scored_in_process_and_the_pool_goes_on():
    suite, scorers = SUITES["asqa"], Scorers()
    first, second = SUITES["asqa"].load(None, LoadOptions()).items[:2]
    odd = Answer(text=first.long_answers[0], metadata={"client": lambda: None})  # a system's own object
    plain = Answer(text=second.long_answers[0])
    pool = ScoringPool(1, [suite], scorers)
    try:
        pool.submit(suite, first, odd)
        assert pool.done(first, odd) == {}  # this process scores it
        pool.submit(suite, second, plain)
        done = pool.done(second, plain)
    finally:
        pool.close()
    assert done and suite.score(second, plain, scorers, done) == suite.score(second, plain, scorers)
    assert pool.died is None


def test_a_suite_with_a_scoring_of_its_own_is_not_offloaded():
    class Own(type(SUITES["asqa"])):
        def score(self, item, answer, scorers, done=None):
            raise AssertionError("not called here")

    names, context = Own().offload(Scorers(judge=object()))
    assert names == () and context.judge is None
    assert SUITES["asqa"].offload(Scorers())[0] == ("long-form", "rouge", "self-report", "length")


# -- sizing -----------------------------------------------------------------------------------


def test_auto_shares_the_cores_among_xdist_workers(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
    cores = scoring.usable_cores()
    assert scoring.pool_size(None) == cores and scoring.pool_size(3) == 3
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", str(cores))
    assert scoring.pool_size(None) == 1  # as many xdist workers as cores: each scores in its own process
    assert scoring.start(None, 10**6, [SUITES["asqa"]], Scorers()) is None
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT")
    assert scoring.start(4, scoring.THRESHOLD - 1, [SUITES["asqa"]], Scorers()) is None  # too few items


def test_score_workers_option_is_checked(pytester):
    result = pytester.runpytest("--ambig-suite=march", "--ambig-score-workers=many")
    result.stderr.fnmatch_lines(["ERROR: --ambig-score-workers: 'many' is not an integer"])


# -- whole runs -------------------------------------------------------------------------------

SYSTEM = """
import os, signal, time
from pathlib import Path
HERE = os.path.dirname(os.path.abspath(__file__))

def scoring_workers():
    mine = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rpartition(")")[2].split()[1])
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if parent == os.getpid() and b"pytest_ambigqa.store.scoring import serve" in command:
            mine.append(int(stat.parent.name))
    return mine

def answer(question, item):
    workers = scoring_workers()
    if workers:
        with open(os.path.join(HERE, "workers.txt"), "a") as out:
            out.write("".join(f"{pid}\\n" for pid in workers))
    if item.id == os.environ.get("KILL_AT"):  # once both workers run, kill them
        deadline = time.time() + 60
        while len(workers) < 2 and time.time() < deadline:
            time.sleep(0.05)
            workers = scoring_workers()
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
    time.sleep(float(os.environ.get("SLEEP", "0")))
    return item.long_answers[0] + (" [1] Copied.\\nSecond line." if int(item.id[5:]) % 3 == 0 else "")
"""


def scaled_asqa(path: Path, n: int) -> Path:
    """``n`` ASQA items: the bundled sample repeated with fresh ids."""
    records = json.loads(SUITES["asqa"].sample_path().read_text(encoding="utf-8"))
    out = []
    for i in range(n):
        record = json.loads(json.dumps(records[i % len(records)]))
        record["sample_id"] = f"copy-{i}"
        out.append(record)
    data = path / "asqa_many.json"
    data.write_text(json.dumps(out), encoding="utf-8")
    return data


STARTS_AT = scoring.THRESHOLD  # the pool's threshold, as a run in a process of its own has it
LOWERED = 20  # the threshold of the runs made in this process: 60 items start the pool as 540 do


@pytest.fixture
def many(pytester, monkeypatch):
    """Items enough to start the pool, for a run in this process (its threshold lowered)."""
    pytester.makepyfile(mysys=SYSTEM)
    monkeypatch.delenv("KILL_AT", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
    monkeypatch.setattr(scoring, "THRESHOLD", LOWERED)
    return scaled_asqa(pytester.path, LOWERED + 40)


def options(data: Path, *extra: str) -> list[str]:
    return [
        "--ambig-suite=asqa",
        f"--ambig-data={data}",
        "--ambig-system=mysys:answer",
        "--ambig-cache-dir=cache",
        "--ambig-concurrency=8",
        *extra,
    ]


def items_of(card: dict) -> list[tuple]:
    return [
        (r["item_id"], r["status"], r["scores"], r["unscored"], r["details"], r["error"])
        for r in card["items"]
    ]


def suites_of(card: dict) -> list[tuple]:
    return [(s["name"], s["metrics"], s["slices"], s["items"], s["errors"]) for s in card["suites"]]


def started_pools(monkeypatch) -> list[ScoringPool]:
    pools: list[ScoringPool] = []
    real = scoring.start

    def start(*args, **kwargs):
        pool = real(*args, **kwargs)
        pools.append(pool)
        return pool

    monkeypatch.setattr(scoring, "start", start)
    return pools


def gone(pids: set[int], within: float = 10.0) -> bool:
    """No process of these ids is left, zombie or not (the fork server reaps its workers)."""
    deadline = time.time() + within
    while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.time() < deadline:
        time.sleep(0.05)
    return not any(Path(f"/proc/{pid}").exists() for pid in pids)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_pooled_run_equals_a_serial_one_and_leaves_no_process(pytester, many, monkeypatch):
    pools = started_pools(monkeypatch)
    serial_result, serial = ambig_run(pytester, *options(many, "--ambig-score-workers=0"), report="serial")
    pooled_result, pooled = ambig_run(pytester, *options(many, "--ambig-score-workers=2"), report="pooled")
    serial_result.assert_outcomes(passed=len(serial["items"]))
    pooled_result.assert_outcomes(passed=len(serial["items"]))
    assert pools[0] is None and pools[1] is not None  # 0 scores in the run's process; 2 started a pool
    assert items_of(pooled) == items_of(serial)
    assert suites_of(pooled) == suites_of(serial)
    pids = set(pools[1].pids)
    assert len(pids) == 2 and gone(pids)


def test_a_resumed_pooled_run_reuses_every_score_and_starts_no_worker(pytester, many, monkeypatch):
    """Target 2 over target 1: stored scores are never sent to a worker, and a run that scores
    nothing pays for no worker's start."""
    pools = started_pools(monkeypatch)
    first_result, first = ambig_run(pytester, *options(many, "--ambig-score-workers=2"), report="first")
    again_result, again = ambig_run(
        pytester, *options(many, "--ambig-score-workers=2", "--ambig-resume"), report="again"
    )
    again_result.assert_outcomes(passed=len(first["items"]))
    assert all(r["reused"] for r in again["items"])
    assert items_of(again) == items_of(first) and suites_of(again) == suites_of(first)
    assert pools[1] is not None and pools[1].pids == []  # the pool was made; no worker started


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_killed_worker_costs_no_item_and_no_hang(pytester, many, monkeypatch):
    monkeypatch.setenv("KILL_AT", "copy-30")
    killed_result, killed = ambig_run(pytester, *options(many, "--ambig-score-workers=2"), report="killed")
    monkeypatch.delenv("KILL_AT")
    serial_result, serial = ambig_run(pytester, *options(many, "--ambig-score-workers=0"), report="serial")
    killed_result.assert_outcomes(passed=len(serial["items"]))
    killed_result.stdout.fnmatch_lines(
        ["*a scoring worker process was killed (SIGKILL); its items were scored in the run's process*"]
    )
    assert items_of(killed) == items_of(serial) and suites_of(killed) == suites_of(serial)
    pids = {int(p) for p in (pytester.path / "workers.txt").read_text().split()}
    assert gone(pids)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_ctrl_c_stops_a_pooled_run_promptly_and_leaves_no_process(pytester, many):
    many = scaled_asqa(pytester.path, STARTS_AT + 40)  # a process of its own: the threshold as ever
    env = {**os.environ, "SLEEP": "0.5", "PYTEST_ADDOPTS": QUIET}
    interruptible = (  # Ctrl-C as a terminal sends it (see test_plugin_runs.py)
        "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.argv[0] = 'pytest'; runpy.run_module('pytest', run_name='__main__')"
    )
    args = [sys.executable, "-c", interruptible, *options(many, "--ambig-score-workers=2"), "-q"]
    proc = subprocess.Popen(
        args,
        cwd=pytester.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    workers = pytester.path / "workers.txt"
    deadline = time.time() + 60
    while not (workers.exists() and len(workers.read_text().split()) >= 2) and time.time() < deadline:
        time.sleep(0.05)
    pids = {int(p) for p in workers.read_text().split()}
    interrupted = time.time()
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the run, its fork server and its workers
    output = proc.communicate(timeout=60)[0].decode()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output[-3000:]
    assert time.time() - interrupted < 20, "Ctrl-C took too long"
    assert "Process ambigqa-scoring" not in output  # no worker died of it, printing a traceback
    assert gone(pids)


# -- the call pool's window -------------------------------------------------------------------


def test_calls_run_at_most_a_window_ahead_and_skipped_items_hold_no_room():
    items = SUITES["march"].load(None, LoadOptions()).items
    order = {item.key: n for n, item in enumerate(items)}
    cursor, ahead, lock = [0], [], threading.Lock()

    def call(item):
        with lock:
            ahead.append(order[item.key] - cursor[0])
        return lambda: ItemResult(suite=item.suite, item_id=item.id, status="ok")

    pool = Prefetcher(call, workers=4, window=3)
    pool.start(items)
    wanted = [0, 5, 6, len(items) - 1]  # the tests of the others never ask (deselected, skipped)
    for n in wanted:
        with lock:
            cursor[0] = n
        assert pool.result(items[n]).item_id == items[n].id
    assert max(ahead) < 3  # never the window or more ahead of the test that waited
    pool.stop()
