"""A pytest plugin for the bench scripts: per-item wall time of the whole test protocol."""

from __future__ import annotations

import json
import os
import time

import pytest

_times: list[float] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    started = time.perf_counter()
    try:
        return (yield)
    finally:
        _times.append(time.perf_counter() - started)


def pytest_sessionfinish(session):
    out = os.environ.get("AMBIGQA_BENCH_TIMES")
    if out and not hasattr(session.config, "workerinput"):
        with open(out, "w") as handle:
            json.dump(_times, handle)
