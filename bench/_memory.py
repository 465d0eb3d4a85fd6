"""A pytest plugin for ``bench/memory.py``: the controller's resident memory after collection,
after the last item, after the session's end (scorecard, reports), its peak, and the time
its garbage collector took while the items ran. Written as JSON to ``AMBIGQA_BENCH_MEMORY``."""

from __future__ import annotations

import gc
import json
import os
import time

import pytest

_state: dict[str, float] = {"gc": 0.0}
_began: list[float] = []


def _status(field: str) -> int:
    """A size from ``/proc/self/status``, in bytes: ``VmRSS`` (resident now), ``VmHWM``
    (the peak of this process's own memory since its ``exec``)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    return 0


def _rss() -> int:
    return _status("VmRSS")


def _timed(phase: str, info: dict) -> None:
    if phase == "start":
        _began[:] = [time.perf_counter()]
    elif _began:
        _state["gc"] += time.perf_counter() - _began.pop()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    _state["items"] = len(session.items)
    _state["collected"] = _rss()
    _state["started"] = time.perf_counter()
    gc.callbacks.append(_timed)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    _state["ran"] = _rss()
    _state["run_s"] = time.perf_counter() - _state.get("started", time.perf_counter())
    if _timed in gc.callbacks:
        gc.callbacks.remove(_timed)
    result = yield
    _state["finished"] = _rss()
    return result


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    out = os.environ.get("AMBIGQA_BENCH_MEMORY")
    if out and not hasattr(config, "workerinput"):
        # Not ``getrusage``'s ru_maxrss: Linux keeps it across exec, so a process forked from
        # a large parent (bench/memory.py, with the items it made loaded) starts at the
        # parent's size. VmHWM is the high-water mark of this process's memory alone.
        _state["peak"] = _status("VmHWM")
        with open(out, "w") as handle:
            json.dump(_state, handle)
