"""A pytest plugin for ``bench/sequential.py --cost``: the CPU time spent in the sequential
gate's own controller code (the seeded order, the gate's start, each result's ``observe``, the
stop signal read before each item, the scorecard's checks replaced at the end), summed and
written as JSON to ``AMBIGQA_BENCH_GATE``.

Why in-process: the gate's cost is a few percent of a run, under this shared machine's
run-to-run noise; the whole-run difference is printed beside it as the check. Why the thread's
CPU time, not the wall clock: the gate runs on the main thread while the run's other threads
(system calls, the answer store's writer) take the GIL in turn, and a wall clock around it
would count their work as the gate's."""

from __future__ import annotations

import functools
import json
import os
import time

import pytest

_spent = [0.0]


def _timed(fn):
    @functools.wraps(fn)
    def timed(*args, **kwargs):
        started = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            _spent[0] += time.thread_time() - started

    return timed


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    import numpy  # noqa: F401 - every run imports it (its scorecard's statistics): not the gate's cost

    from pytest_ambigqa.session import sequential

    gate = sequential.SequentialGate
    sequential.seeded_order = _timed(sequential.seeded_order)
    gate.start = classmethod(_timed(gate.start.__func__))
    gate.observe = _timed(gate.observe)
    gate.apply = _timed(gate.apply)
    sequential.StopSignal.reason = _timed(sequential.StopSignal.reason)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    out = os.environ.get("AMBIGQA_BENCH_GATE")
    if out and not hasattr(config, "workerinput"):
        with open(out, "w") as handle:
            json.dump(_spent[0], handle)
