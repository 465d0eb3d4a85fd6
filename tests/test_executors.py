"""Executors as strategies (issue 42, section 2): a plugin's executor (tests/ambig_toy_executor.py,
a thread pool of its own) is chosen with ``--ambig-executor=toy``, runs a real suite's calls
on its own threads and gives the scorecard the local executor gives; a call it loses fails
that item alone, with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures.process import ambig_run
from fixtures.ray_cluster import comparable
from pytest_ambigqa.executors import EXECUTORS

TESTS = Path(__file__).parent
THREAD = "toy-executor"  # ambig_toy_executor.THREAD (not imported here: the runs import the plugin)
# the lexical baseline, saying which thread called it (no --ambig-timeout: no thread of the adapter's)
SYSTEM = """
import threading
from pytest_ambigqa.baselines.offline import lexical

def answer(question, passages, retriever=None):
    with open("threads.txt", "a") as out:
        out.write(threading.current_thread().name + "\\n")
    return lexical(question, passages, retriever)
"""
RUN = ("-p", "ambig_toy_executor", "--ambig-suite=march", "--ambig-system=qa:answer", "--ambig-timeout=0")


@pytest.fixture
def toy(pytester, monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS))
    pytester.makepyfile(qa=SYSTEM)
    yield pytester
    assert "toy" not in EXECUTORS  # what a run's plugins register goes with the run


def _threads(pytester: pytest.Pytester) -> list[str]:
    path = pytester.path / "threads.txt"
    names = path.read_text().split()
    path.unlink()
    return names


def test_a_plugin_executor_runs_a_suite_to_the_local_scorecard(toy):
    local, expected = ambig_run(toy, *RUN, report="local")
    local.assert_outcomes(passed=13)
    assert not any(name.startswith(THREAD) for name in _threads(toy))
    result, card = ambig_run(toy, *RUN, "--ambig-executor=toy", "--ambig-toy-threads=3", report="toy")
    result.assert_outcomes(passed=13)
    called = _threads(toy)
    assert len(called) == 13 and all(name.startswith(THREAD) for name in called)
    result.stdout.fnmatch_lines(
        ["ambigqa: march (13 items, bundled sample); system: qa:answer; executor: toy, 3 threads"]
    )
    assert card["config"]["executor"] == "toy" and "executor" not in expected["config"]
    assert comparable(card) == comparable(expected)
    assert card["suites"][0]["metrics"]  # numbers, the same ones


def test_a_call_the_executor_loses_fails_that_item_alone_with_the_reason(toy):
    _, expected = ambig_run(toy, *RUN, report="local")
    lost = expected["items"][0]
    result, card = ambig_run(toy, *RUN, "--ambig-executor=toy", f"--ambig-toy-lose={lost['item_id']}")
    result.assert_outcomes(passed=12, errors=1)  # the system's failure: the item errors
    (failed,) = [item for item in card["items"] if item["status"] != "ok"]
    assert failed["item_id"] == lost["item_id"]
    assert "the toy executor's worker was lost" in failed["error"]
    kept = [item for item in comparable(card)["items"] if item["item_id"] != lost["item_id"]]
    assert kept == [item for item in comparable(expected)["items"] if item["item_id"] != lost["item_id"]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ambig-executor=dask"], "--ambig-executor: 'dask' is not local, ray, ray://HOST:PORT or toy"),
        (
            ["--ambig-executor=toy://me:pw@x:1"],
            "--ambig-executor: 'toy://[[]redacted]@x:1' is not local, ray, ray://HOST:PORT or toy",
        ),
        (["--ambig-toy-threads=3"], "--ambig-toy-threads: only with --ambig-executor=toy"),
        (["--ambig-executor=toy", "--ambig-toy-threads=0"], "--ambig-toy-threads: '0' is not a whole *"),
        (
            ["--ambig-executor=toy", "--ambig-rescore=local/scorecard.json"],
            "--ambig-executor=toy: --ambig-rescore asks no system",
        ),
    ],
)
def test_what_a_plugin_executor_refuses_is_one_usage_line(toy, args, message):
    if "--ambig-rescore=local/scorecard.json" in args:  # a scorecard to replay: a local run's
        ambig_run(toy, *RUN, report="local")[0].assert_outcomes(passed=13)
    result = toy.runpytest(*RUN, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])


def test_a_fixture_system_runs_on_the_plugin_executor_too(toy):
    """An executor that calls the run's system (it constructs none of its own) calls a
    conftest's ``ambig_system`` as well: the suite's tests ask it there."""
    toy.makeconftest("import pytest, qa\n\n@pytest.fixture\ndef ambig_system():\n    return qa.answer\n")
    args = [a for a in RUN if a != "--ambig-system=qa:answer"]
    result, card = ambig_run(toy, *args, "--ambig-executor=toy", "--ambig-limit=3")
    result.assert_outcomes(passed=3)
    called = _threads(toy)
    assert len(called) == 3 and all(name.startswith(THREAD) for name in called)
    assert [item["status"] for item in card["items"]] == ["ok"] * 3


def test_a_system_error_through_an_executor_keeps_the_system_trace():
    """A failure handed back through the executor's future is the system's own: its trace shows
    the system's frames, not the future's (``Future.result`` re-raising would add its own)."""
    from pytest_ambigqa.errors import SystemFailure
    from pytest_ambigqa.executors import Executor
    from pytest_ambigqa.executors.local import LocalExecutor
    from pytest_ambigqa.suites import SUITES, LoadOptions
    from pytest_ambigqa.systems.call import from_object

    class Inline(Executor):  # the local executor's futures, without its shortcut past them
        name = "inline"
        submit = LocalExecutor.submit

    def refusing(question):
        raise ValueError("no answer for this one")

    item = SUITES["march"].load(None, LoadOptions()).items[0]
    system = Inline().through(from_object(refusing, "refusing"))
    with pytest.raises(SystemFailure) as failed:
        system.answer(item, None)
    assert failed.value.trace is not None
    assert "refusing" in failed.value.trace and "no answer for this one" in failed.value.trace
    assert "concurrent/futures" not in failed.value.trace
