"""A pytest plugin for the bench scripts: per-item wall time of the whole test protocol, and
the session's end (from the last item's report to the end of every other plugin's unconfigure:
scorecard, gates, reports, terminal summary, store close). ``AMBIGQA_BENCH_SKIP_WRITERS``
(names, comma-separated) leaves those report writers out, to price one writer within a run."""

from __future__ import annotations

import json
import os
import time

import pytest

_times: list[float] = []
_last_item_done: list[float] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    started = time.perf_counter()
    try:
        return (yield)
    finally:
        _times.append(time.perf_counter() - started)
        _last_item_done[:] = [time.perf_counter()]


def pytest_configure(config):
    from pytest_ambigqa.report.writers import WRITERS

    for name in filter(None, os.environ.get("AMBIGQA_BENCH_SKIP_WRITERS", "").split(",")):
        WRITERS.pop(name)


def pytest_sessionfinish(session):
    out = os.environ.get("AMBIGQA_BENCH_TIMES")
    if out and not hasattr(session.config, "workerinput"):
        with open(out, "w") as handle:
            json.dump(_times, handle)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    out = os.environ.get("AMBIGQA_BENCH_END")
    if out and _last_item_done and not hasattr(config, "workerinput"):
        with open(out, "w") as handle:
            json.dump(time.perf_counter() - _last_item_done[0], handle)
