"""history.html over many runs: what it costs to write and to open, and a comparison on a click.

Writes R runs of N MARCH items each (fixtures/runs.py: the sample's items copied, seeded
answers getting better run by run, two runs a commit), then times, median of --rounds:
  - `pytest-ambigqa history` as the command runs it: reading and checking every scorecard.json
    (card/saved.py), the page's data, the page; and its size;
and, in headless Chromium (Playwright, as the browser tests drive it), the page's first draw
(every trend of every run drawn) and comparing the first run with the last (every metric of
every slice: paired bootstrap, tests, Holm, in the page's script).

    python bench/history.py [--runs 50] [--items 2000] [--rounds 3]
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from _common import arguments

from fixtures.runs import write_runs
from pytest_ambigqa.report import history


def browse(path: Path, rounds: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    found: dict[str, list[float]] = {"first draw": [], "compare the first run with the last": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        for _ in range(rounds):
            page = browser.new_page()
            start = time.perf_counter()
            page.goto(path.as_uri())
            page.wait_for_selector("#trends .trend-row")
            page.evaluate("() => new Promise(requestAnimationFrame)")
            found["first draw"].append(time.perf_counter() - start)
            last = page.locator("tr.run").count() - 1
            start = time.perf_counter()
            page.locator("tr.run").first.click()
            page.locator("tr.run").nth(last).click()
            page.wait_for_selector("table.changes", timeout=120_000)
            found["compare the first run with the last"].append(time.perf_counter() - start)
            page.close()
        browser.close()
    return {k: statistics.median(v) for k, v in found.items()}


def main() -> None:
    args = arguments(__doc__, runs=50, items=2000, rounds=3)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_runs(root / "runs", args.runs, args.items)
        times, page = [], ""
        for _ in range(args.rounds):
            start = time.perf_counter()
            runs, skipped = history.gather([root / "runs"])
            page = history.render(runs, skipped)
            times.append(time.perf_counter() - start)
        path = root / history.FILENAME
        path.write_text(page, encoding="utf-8")
        print(f"{args.runs} runs of {args.items} items, median of {args.rounds}:")
        size = len(page.encode()) / 1e6
        print(f"  history.html read and written in {statistics.median(times):.2f} s, {size:.1f} MB")
        for name, value in browse(path, args.rounds).items():
            print(f"  Chromium, {name}: {value * 1000:.0f} ms")


if __name__ == "__main__":
    main()
