"""Live progress (``--ambig-progress``): one status line under pytest's output, on a terminal
only, drawn by the controller alone, and gone without a trace when the run ends."""

from __future__ import annotations

import io
import re
import threading

import pytest
from _pytest._io import TerminalWriter

from fixtures.network import GUARD
from fixtures.process import run_pytest
from fixtures.terminal import Screen, run_in_terminal
from pytest_ambigqa.schema import ItemResult
from pytest_ambigqa.session.statusline import StatusLine
from pytest_ambigqa.store.pool import Prefetcher
from pytest_ambigqa.suites import SUITES, LoadOptions

MARCH = len(SUITES["march"].load(None, LoadOptions()).items)
STATUS = re.compile(r"ambigqa \d+/\d+ \|[^\x1b\r\n]*")  # one drawn status line
DOTS = re.compile(rf"^ambigqa \.{{{MARCH}}} +\[100%\]$")  # pytest's line of the run, whole

SLOW = """
import time

def answer(question):
    time.sleep(0.1)  # a few draws (4 a second at most) happen while the items run
    return "I cannot say: " + question
"""


def statuses(output: str) -> list[str]:
    return STATUS.findall(output)


def most_at_once(output: str) -> int:
    """The most status lines a screen showed at any moment of the stream."""
    screen, most = Screen(), 0
    for piece in re.split(r"(?=\x1b\[J)", output):  # every draw and erase starts so
        screen.feed(piece)
        most = max(most, sum(bool(STATUS.search(line)) for line in screen.lines()))
    return most


def slow_server(server, calls: int = 200) -> str:
    server.hang = 0.1  # a "hang" shorter than the client's timeout: a slow, good reply
    server.faults = ["hang"] * calls
    return server.url


@pytest.fixture
def llm_run(pytester, chat_server):
    pytester.makeconftest(GUARD)

    def options(*args: str) -> list[str]:
        return [
            "--ambig-suite=march",
            "--ambig-system=llm:naive-rag",
            "--ambig-llm-model=scripted-m",
            f"--ambig-llm-base-url={slow_server(chat_server)}",
            "--ambig-llm-price=1,2",
            "--ambig-cache-dir=cache",
            *args,
        ]

    return options


def test_a_terminal_shows_the_status_line_with_eta_and_cost_and_then_nothing_of_it(pytester, llm_run):
    code, output = run_in_terminal(pytester.path, *llm_run())
    assert code == 0, output
    drawn = statuses(output)
    assert drawn and drawn[0].startswith(f"ambigqa 0/{MARCH} | 0:00 elapsed | ETA -- | 1 in flight")
    last = drawn[-1]
    assert re.search(r"\| ETA \d+:\d\d \|", last), last
    assert re.search(r"\| [\d.]+k? tokens, \$0\.\d{4} \|", last), last
    assert re.search(r"\| march STR-EM \d+\.\d \[\d+\.\d, \d+\.\d\]$", last), last
    screen = Screen().feed(output).lines()
    assert not any(STATUS.search(line) for line in screen)  # erased, all of it
    assert sum(bool(DOTS.match(line)) for line in screen) == 1, "\n".join(screen)
    assert most_at_once(output) == 1


def test_under_xdist_the_controller_draws_the_one_line(pytester, llm_run):
    code, output = run_in_terminal(pytester.path, *llm_run("-n", "2"))
    assert code == 0, output
    assert len(statuses(output)) >= 2
    assert most_at_once(output) == 1  # workers draw nothing; the controller one line
    screen = Screen().feed(output).lines()
    assert not any(STATUS.search(line) for line in screen)
    assert any(re.match(rf"^\.{{{MARCH}}} +\[100%\]$", line) for line in screen), "\n".join(screen)


def test_the_running_change_against_the_baseline(pytester):
    pytester.makepyfile(slow=SLOW)
    march = "--ambig-suite=march"
    base = run_pytest(pytester.path, march, "--ambig-system=oracle", "--ambig-report=base")
    assert base.returncode == 0, base.stdout
    code, output = run_in_terminal(
        pytester.path, march, "--ambig-system=slow:answer", "--ambig-baseline=base/scorecard.json"
    )
    assert code == 0, output
    last = statuses(output)[-1]
    assert re.search(r"\| march STR-EM 0\.0 \[0\.0, 0\.0\] vs base -\d+\.\d \[-\d+\.\d, -\d+\.\d\]$", last), (
        last
    )


def test_no_line_under_q_without_colour_nor_into_a_pipe_unless_asked_for(pytester):
    pytester.makepyfile(slow=SLOW.replace("0.1", "0.02"))
    options = ["--ambig-suite=march", "--ambig-system=slow:answer", "--ambig-limit=4"]
    code, output = run_in_terminal(pytester.path, *options, "-q")
    assert code == 0 and not statuses(output) and "4 passed" in output
    code, output = run_in_terminal(pytester.path, *options, "--color=no")  # no escape codes wanted
    assert code == 0 and not statuses(output) and "4 passed" in output
    code, output = run_in_terminal(pytester.path, *options, "--ambig-progress=off")
    assert code == 0 and not statuses(output)
    piped = run_pytest(pytester.path, *options)
    assert piped.returncode == 0 and not statuses(piped.stdout)
    forced = run_pytest(pytester.path, *options, "--ambig-progress=on")
    assert forced.returncode == 0 and statuses(forced.stdout)
    assert not any(STATUS.search(line) for line in Screen().feed(forced.stdout).lines())
    bad = run_pytest(pytester.path, *options, "--ambig-progress=always")
    assert bad.returncode == 4
    assert "--ambig-progress: 'always' is not one of auto, on, off" in bad.stderr


def _writer(columns: int = 40) -> tuple[TerminalWriter, io.StringIO]:
    out = io.StringIO()
    writer = TerminalWriter(out)
    writer.fullwidth = columns
    return writer, out


def test_pytests_text_erases_the_line_before_it_would_run_into_it():
    writer, out = _writer()
    line = StatusLine(writer)
    writer.write("ambigqa ...")
    line.draw("status one")
    assert Screen(40).feed(out.getvalue()).lines() == ["ambigqa ...", "status one"]
    writer.write("..")  # the dots go on beside it
    assert Screen(40).feed(out.getvalue()).lines() == ["ambigqa .....", "status one"]
    writer.line(" [50%]")  # pytest's next line: the status goes first
    assert not line.shown
    assert Screen(40).feed(out.getvalue()).lines() == ["ambigqa ..... [50%]", ""]
    line.draw("a status line longer than the screen is wide")
    writer.write("x" * 39)  # a line that fills the screen: erased before, not drawn over
    assert not line.shown
    line.draw("status two")
    assert not line.shown
    writer.line()
    line.draw("status three")
    line.close()
    assert writer._file is out  # pytest's writer has its file back
    assert Screen(40).feed(out.getvalue()).lines() == ["ambigqa ..... [50%]", "x" * 39, ""]
    assert "a status line longer than the screen " in out.getvalue()  # cut to the width


def test_the_pool_counts_the_items_in_flight():
    items = SUITES["march"].load(None, LoadOptions()).items
    ready, all_called, called = threading.Event(), threading.Event(), []

    def call(item):
        called.append(item.key)
        if len(called) == len(items):
            all_called.set()
        return lambda: ItemResult(suite=item.suite, item_id=item.id, status="ok")

    pool = Prefetcher(call, workers=3, ready=ready)  # scoring waits: every item stays in flight
    assert pool.running == 0
    pool.start(items)
    assert all_called.wait(60)
    assert pool.running == len(items)
    ready.set()
    assert all(pool.result(i) is not None for i in items)
    assert pool.running == 0
