"""The controller's spool of results (``session/spool.py``, issue 27 target 4): what it keeps
in memory, what it reads back, and a damaged line."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile

import pytest

from pytest_ambigqa.errors import SpoolError
from pytest_ambigqa.output import json_text
from pytest_ambigqa.schema import Answer, ItemResult
from pytest_ambigqa.session.spool import HEAVY, Spool


def _result(i: int) -> ItemResult:
    return ItemResult(
        suite="march",
        item_id=str(i),
        status="ok",
        scores={"str_em": i / 10},
        unscored={"judge": "no judge configured (--ambig-judge)"},
        answer=Answer(text=f"answer {i} " * 100, metadata={"method": "x"}),
        details={"reader": [f"span {i}"] * 20},
        trace=None,
    )


@pytest.fixture
def spool():
    spool = Spool()
    assert os.fstat(spool._file.fileno()).st_nlink == 0  # no name on disk: a killed run leaves nothing behind
    yield spool
    spool.close()


def _bytes(spool: Spool) -> bytes:
    fd = spool._file.fileno()
    return os.pread(fd, os.fstat(fd).st_size, 0)


def test_a_spooled_result_reads_back_as_it_was(spool):
    results = [_result(i) for i in range(3)]
    spooled = [spool.add(json_text(r.to_dict())) for r in results]
    for result, kept in zip(results, spooled, strict=True):
        assert not set(HEAVY) & set(vars(kept))  # on the disk, not in memory
        assert kept.to_dict() == result.to_dict()
    assert spooled[0].answer == results[0].answer and spooled[2].details == results[2].details
    changed = dataclasses.replace(spooled[1], scores={"str_em": 1.0})  # as a protocol's settle does
    assert changed.answer == results[1].answer and changed.scores == {"str_em": 1.0}
    assert _bytes(spool).decode().splitlines()[1] == json_text(results[1].to_dict())


@pytest.mark.parametrize("damage", ["truncated", "garbled", "another item's"])
def test_a_damaged_line_is_one_error_naming_the_spool_and_line(spool, damage):
    spooled = [spool.add(json_text(_result(i).to_dict())) for i in range(3)]
    lines = _bytes(spool).split(b"\n")
    second, fd = len(lines[0]) + 1, spool._file.fileno()
    if damage == "truncated":
        os.ftruncate(fd, second + 40)
    elif damage == "garbled":
        os.pwrite(fd, b"\x00#", second + 5)
    else:
        os.pwrite(fd, lines[1].replace(b'"item_id": "1"', b'"item_id": "7"'), second)
    where = re.escape(
        f"the results spool (a temporary file in {tempfile.gettempdir()}), line 2: the result of march-1 is damaged"
    )
    with pytest.raises(SpoolError, match=where):
        spooled[1].answer  # noqa: B018
    assert spooled[0].answer is not None


def test_a_closed_spool_says_so(spool):
    kept = spool.add(json_text(_result(0).to_dict()))
    spool.close()
    with pytest.raises(SpoolError, match="cannot be read"):
        kept.details  # noqa: B018


# What the controller holds once every item has run, and a spool damaged under the run.
PROBE = """
import gc, json, os, sys

import pytest


def _size(root, skip):
    seen, stack, total = set(map(id, skip)), [root], 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session):
    from pytest_ambigqa.session.runner import PAYLOAD_KEY

    plugin = session.config.pluginmanager.get_plugin("ambigqa-scorecard")
    results = plugin.results
    if {PROBE_DAMAGE}:
        os.ftruncate(plugin.spool._file.fileno(), 10)
    interned = [sys.intern(s) for r in results.values() for s in (*r.scores, *r.unscored, *r.unscored.values())]
    held = {
        "items": len(results),
        "bytes": _size(results, [plugin.spool, *interned]),
        "in_memory": sorted({k for r in results.values() for k in ("answer", "details", "trace") if k in vars(r)}),
        "payloads": sum(PAYLOAD_KEY in item.stash for item in session.items),
    }
    with open("held.json", "w") as out:
        json.dump(held, out)
    return (yield)
"""

LONG = """
def answer(question, item):
    return " ".join([item.long_answers[0]] + [f"padding {i}" for i in range(2000)])
"""


def test_the_controller_holds_little_per_item_however_long_the_answers(pytester):
    pytester.makeconftest(PROBE.replace("{PROBE_DAMAGE}", "False"))
    pytester.makepyfile(long_system=LONG)
    result = pytester.runpytest(
        "--ambig-suite=march", "--ambig-system=long_system:answer", "-p", "no:randomly"
    )
    assert result.ret == 0
    held = json.loads((pytester.path / "held.json").read_text())
    assert held["items"] > 10 and held["in_memory"] == [] and held["payloads"] == 0
    # Each answer is about 20 KB; a result kept whole held it all.
    assert held["bytes"] / held["items"] < 2500, held


def test_a_spool_damaged_under_the_run_is_one_line(pytester):
    pytester.makeconftest(PROBE.replace("{PROBE_DAMAGE}", "True"))
    result = pytester.runpytest("--ambig-suite=march", "--ambig-system=oracle", "--ambig-report=out")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["ambigqa: *the results spool (a temporary file in *), line 1: the result of march-* is damaged*"]
    )
    assert "Traceback" not in result.stdout.str() and "INTERNALERROR" not in result.stdout.str()
