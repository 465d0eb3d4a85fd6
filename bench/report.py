"""report.html and the paired comparison at 10,000 items (100,000 too): what they cost to write and to use.

Builds two scorecards of N MARCH items (the sample's items copied, each copy's question, gold
readings and answer with its words shuffled by a seed of its own, so that no compression is
flattered by texts repeated word for word; seeded scores; a base run and a new run that
differs on a third of them), then times, median of R:
  - the comparison (card/compare.py: every metric and slice, bootstrap, tests, Holm);
  - writing report.html (payload, JSON, packing) and its size;
and, in headless Chromium (Playwright, as the browser tests drive it), the page's first draw,
its details unpacked (from the start), opening the Items tab, a search over every item's answer
and opening one item.

    python bench/report.py [--items 10000] [--runs 3]
"""

from __future__ import annotations

import dataclasses
import random
import statistics
import tempfile
import time
from pathlib import Path

from _common import arguments

from pytest_ambigqa.card import compare
from pytest_ambigqa.card.scorecard import build
from pytest_ambigqa.report import html
from pytest_ambigqa.schema import AmbigItem, Answer, ItemResult
from pytest_ambigqa.suites import SUITES, LoadOptions, Scorers

METRICS = frozenset({"str_em", "str_hit", "cover_em", "length"})


def shuffled(text: str, rng: random.Random) -> str:
    words = text.split()
    rng.shuffle(words)
    return " ".join(words)


def copy(base: AmbigItem, k: int) -> AmbigItem:
    """The ``k``th copy of ``base``: its own id, and its texts in an order of their own (the
    same in both runs)."""
    rng = random.Random(k)
    readings = tuple(
        dataclasses.replace(i, question=shuffled(i.question, rng)) if i.question else i
        for i in base.interpretations
    )
    return dataclasses.replace(
        base,
        id=f"{base.id}-{k}",
        index=k,
        question=shuffled(base.question, rng),
        interpretations=readings,
        long_answers=tuple(shuffled(a, rng) for a in base.long_answers),
    )


def card(n: int, seed: int, worse: float):
    loaded = SUITES["march"].load(None, LoadOptions())
    rng = random.Random(seed)
    items, results = [], {}
    for k in range(n):
        item = copy(loaded.items[k % len(loaded.items)], k)
        items.append(item)
        text = item.long_answers[0] if rng.random() > worse else "I could not say."
        hits = [a in text for i in item.interpretations for a in i.short_answers[:1]]
        em = sum(hits) / len(hits)
        scores = {"str_em": em, "str_hit": float(em == 1), "cover_em": em, "length": float(len(text.split()))}
        results[item.key] = ItemResult(
            "march", item.id, "ok", item.ambiguity_type, index=k, answer=Answer(text), scores=scores
        )
    chosen = dataclasses.replace(loaded, items=tuple(items), total=n)
    system = {"label": f"run {seed}", "inputs": []}
    config = {"seed": 0, "suites": ["march"]}
    return build(
        [chosen], results, None, Scorers(metrics=METRICS), 0, system=system, config=config, versions={}
    )


def timed(fn, runs: int):
    times, value = [], None
    for _ in range(runs):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def browse(path: Path, runs: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    chromium = "/usr/bin/chromium"
    found: dict[str, list[float]] = {
        "first draw": [],
        "details unpacked": [],
        "Items tab": [],
        "search": [],
        "open an item": [],
    }
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        for _ in range(runs):
            page = browser.new_page()
            start = time.perf_counter()
            page.goto(path.as_uri(), timeout=120_000)
            page.wait_for_selector("#overview h2", timeout=120_000)
            found["first draw"].append(time.perf_counter() - start)
            page.wait_for_selector("main:not([aria-busy])", state="attached", timeout=120_000)
            found["details unpacked"].append(time.perf_counter() - start)
            for name, action in (
                ("Items tab", lambda page=page: page.click("#tab-items")),
                ("search", lambda page=page: page.fill("#search", "could not")),
                ("open an item", lambda page=page: page.locator(".row").first.click()),
            ):
                start = time.perf_counter()
                action()
                page.evaluate("() => new Promise(requestAnimationFrame)")
                found[name].append(time.perf_counter() - start)
            page.close()
        browser.close()
    return {k: statistics.median(v) for k, v in found.items()}


def main() -> None:
    args = arguments(__doc__, items=10_000, runs=3)
    base, new = card(args.items, 1, 0.1), card(args.items, 2, 0.3)
    seconds, comparison = timed(lambda: compare.compare(base, new, seed=0), args.runs)
    rows = sum(r.p is not None for r in comparison.rows)
    print(f"{args.items} items, median of {args.runs}:")
    regressions = len(comparison.regressions)
    print(f"  comparison ({rows} rows with a test, {regressions} regressions): {seconds:.2f} s")
    with_comparison = dataclasses.replace(new, comparison=comparison)
    seconds, page = timed(lambda: html.render(with_comparison), args.runs)
    print(f"  report.html written in {seconds:.2f} s, {len(page.encode()) / 1e6:.1f} MB")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.html"
        path.write_text(page)
        for name, value in browse(path, args.runs).items():
            print(f"  Chromium, {name}: {value * 1000:.0f} ms")


if __name__ == "__main__":
    main()
