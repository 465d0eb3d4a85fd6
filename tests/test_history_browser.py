"""history.html opened in a real headless Chromium, used as a person would: the trends, the
runs, two runs compared on a click, the x axis by commit, a hostile path, fifty runs of 2,000
items (their open time is bench/history.py's figure, not asserted here).

The small history is of real runs of the plugin (a subprocess each); the large one is built
in process (fixtures/runs.py). Screenshots land in the browser artifacts directory.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from fixtures.process import run_pytest
from fixtures.runs import write_runs
from pytest_ambigqa.card import compare
from pytest_ambigqa.card.saved import read_card
from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.report import view

HOSTILE = "<img src=x onerror=window.__pwned=1>"  # a directory name: shown as text, never markup


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> dict[str, Path]:
    """history.html of three MARCH runs (lexical, oracle, lexical again, in that order; the
    oracle's under a hostile directory name) and a damaged scorecard, skipped."""
    root = tmp_path_factory.mktemp("history")
    (root / "test_nothing.py").write_text("def test_nothing(): pass\n")
    runs = [("1-lexical", "lexical"), (f"2-{HOSTILE}", "oracle"), ("3-lexical", "lexical")]
    for name, system in runs:
        done = run_pytest(root, "-p", "no:randomly", "--ambig-suite=march", f"--ambig-system={system}",
                          f"--ambig-report=runs/{name}")  # fmt: skip
        assert (root / "runs" / name / "scorecard.json").is_file(), done.stdout[-2000:] + done.stderr[-2000:]
        time.sleep(1.1)  # starts a second apart: their order is their start's
    broken = root / "runs" / "4-broken" / "scorecard.json"
    broken.parent.mkdir()
    broken.write_text('{"schema_version": 1}', encoding="utf-8")
    assert cli(["history", str(root / "runs"), "-o", str(root / "out")]) == 0
    return {
        "page": root / "out" / "history.html",
        **{system + name[0]: root / "runs" / name for name, system in runs},
    }


def clean(page) -> None:
    """No console error, no script error, and nothing asked of the network."""
    assert page.console_errors == []
    assert page.blocked == []
    assert all(url.startswith(("file:", "data:", "about:")) for url in page.requests)


def test_the_trends_and_the_runs_render(open_page, small):
    page = open_page(small["page"])
    assert page.locator("#trends h2").all_text_contents() == ["MARCH"]
    em = page.locator('.trend-row[data-metric="str_em"]')
    assert em.locator(".pt").count() == 3 and em.locator(".pt .ci").count() == 3
    last = read_card(small["lexical3"] / "scorecard.json").suites[0].metrics["str_em"]
    assert (
        em.locator(".trend-label .meta").text_content() == f"last: {view.score(last)} {view.interval(last)}"
    )
    assert page.locator("tr.run").count() == 3
    systems = [page.locator("tr.run").nth(n).locator("td").nth(3).text_content() for n in range(3)]
    assert [s.split(" (")[0] for s in systems] == ["lexical baseline", "oracle baseline", "lexical baseline"]
    skipped = page.locator("#skipped li")
    assert skipped.count() == 1 and skipped.text_content().startswith(
        str(small["lexical3"].parent / "4-broken")
    )
    assert HOSTILE in page.locator("tr.run").nth(1).text_content()  # as text
    assert page.evaluate("typeof window.__pwned") == "undefined" and page.locator("img").count() == 0
    page.screenshot("history")
    clean(page)


def test_two_runs_clicked_are_compared_as_compare_compares_them(open_page, small):
    page = open_page(small["page"])
    page.locator('.trend-row[data-metric="str_em"] .pt[data-run="1"]').click()  # the oracle: the base
    assert page.locator("#base").input_value() == "1" and page.locator("#new").input_value() == ""
    page.locator("tr.run").nth(2).click()  # the last lexical run, compared with it
    page.wait_for_selector("table.changes")
    assert page.locator(".pt.base").count() >= 4 and page.locator("tr.run.new").count() == 1
    expected = compare.compare(
        read_card(small["oracle2"] / "scorecard.json"), read_card(small["lexical3"] / "scorecard.json"), 0
    )
    for row in (r for r in expected.rows if r.slice == "all" and r.diff is not None):
        cells = page.locator(f'table.changes tr[data-metric="{row.metric}"][data-slice="all"] td')
        base, new, change, _, p, _, wtl = view.change(row)
        shown = [cells.nth(n).text_content() for n in (2, 3, 4, 5, 10)]
        assert shown == [str(row.n), base, new, change, wtl], row.metric
        if row.test == "mcnemar":  # exact: the same p
            assert cells.nth(8).text_content() == p
    skipped = page.locator("#comparison .not-compared").all_text_contents()
    assert "not compared: Disambig-F1, Disambig-EM, Disambig-Hit (n/a in this run: no reader configured " \
           "(--ambig-reader))" in skipped  # fmt: skip
    page.screenshot("history-comparison")
    page.select_option("#new", "0")  # the selects pick too
    page.wait_for_selector("#comparison h2:has-text('#1')")
    clean(page)


@pytest.fixture(scope="module")
def fifty(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fifty")
    write_runs(root / "runs", runs=50, items=500)  # bench/history.py opens 2,000 a run
    assert cli(["history", str(root / "runs"), "-o", str(root / "out")]) == 0
    return root / "out" / "history.html"


def test_fifty_runs_open_and_compare(open_page, fifty):
    started = time.perf_counter()
    page = open_page(fifty)
    page.wait_for_selector("#trends h2")
    opened = time.perf_counter() - started  # bench/history.py reports it; printed with -s
    print(f"50 runs of 500 items: open {opened:.2f} s, {fifty.stat().st_size / 1e6:.1f} MB")
    assert page.locator('.trend-row[data-metric="str_em"] .pt').count() == 50
    data = json.loads(page.evaluate("document.getElementById('ambigqa-history').textContent"))
    assert len(data["runs"]) == 50
    page.select_option("#base", "0")
    page.select_option("#new", "49")
    page.wait_for_selector('table.changes tr[data-metric="str_em"][data-slice="all"]', timeout=60_000)
    change = page.locator('table.changes tr[data-metric="str_em"][data-slice="all"] td').nth(5).text_content()
    assert change.startswith("+")  # the runs got better
    page.click('input[value="commits"]')
    ticks = page.locator('.trend-row[data-metric="str_em"] .tick').all_text_contents()
    assert ticks[0] == data["runs"][0]["commit"][:8] and len(ticks) <= 25
    assert page.locator('.trend-row[data-metric="str_em"] .pt').count() == 50
    page.screenshot("history-fifty-by-commit")
    clean(page)
