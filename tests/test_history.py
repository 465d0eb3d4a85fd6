"""``pytest-ambigqa history`` (report/history.py): which files it reads, skips and orders, and
the page's own paired comparison against card/compare.py's, run by run, row by row."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import subprocess
import time
from pathlib import Path

import pytest

from pytest_ambigqa.card import compare
from pytest_ambigqa.card.scorecard import Scorecard, build
from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.output import json_document
from pytest_ambigqa.report import history
from pytest_ambigqa.schema import ItemResult
from pytest_ambigqa.suites import SUITES, LoadOptions, Scorers

ASSETS = Path(history.__file__).parent / "assets"
METRICS = frozenset(
    {"str_em", "str_hit", "cover_em", "rouge_lsum", "rouge_lsum_mid", "disambig_f1", "dr", "answer", "length"}
)


def _scores(suite: str, rng: random.Random) -> tuple[dict[str, float], dict[str, list[float]]]:
    """An item's scores (and pooled units) as a run of ``suite`` might give them."""
    if suite == "condambigqa":
        units = [rng.choice([0.0, 0.25, 0.5, 1.0]) for _ in range(rng.randint(1, 3))]
        pooled = rng.random() < 0.7  # the others: a score, no units (one unit each)
        return {"answer": sum(units) / len(units), "length": float(rng.randint(5, 80))}, (
            {"answer": units} if pooled else {}
        )
    em = rng.choice([0.0, 1 / 3, 2 / 3, 1.0])
    scores = {"str_em": em, "str_hit": float(em == 1), "cover_em": em, "length": float(rng.randint(5, 80))}
    if suite == "asqa":
        scores["rouge_lsum"] = round(rng.random(), 4)
        if rng.random() < 0.9:  # a few unscored: counted as one-sided where the other run scored them
            scores["disambig_f1"] = round(rng.random(), 4)
    return scores, {}


def _pair(copies: int, seed: int) -> tuple[Scorecard, Scorecard]:
    """Two runs of the three suites on ``copies`` copies of each sample's items: the second
    keeps the first's scores on most items and draws new ones on the rest."""
    loaded = []
    for name in ("march", "asqa", "condambigqa"):
        suite = SUITES[name].load(None, LoadOptions())
        items = [
            dataclasses.replace(item, id=f"{item.id}-{k}", index=k * len(suite.items) + n)
            for k in range(copies)
            for n, item in enumerate(suite.items)
        ]
        loaded.append(dataclasses.replace(suite, items=tuple(items), total=len(items)))
    cards = []
    first: dict[str, tuple[dict[str, float], dict[str, list[float]]]] = {}
    for run in (0, 1):
        rng = random.Random(f"{seed}-{run}")
        results = {}
        for suite in loaded:
            for item in suite.items:
                drawn = _scores(suite.suite.name, rng)
                scores, units = first[item.key] if run and rng.random() < 0.6 else drawn
                first.setdefault(item.key, drawn)
                results[item.key] = ItemResult(
                    suite.suite.name,
                    item.id,
                    "ok",
                    item.ambiguity_type,
                    index=item.index,
                    scores=scores,
                    units=units,
                )
        cards.append(
            build(
                loaded,
                results,
                None,
                Scorers(metrics=METRICS),
                0,
                system={"label": f"run {run}", "inputs": []},
                config={"seed": 3, "suites": [s.suite.name for s in loaded], "data": {}},
                versions={},
            )
        )
    return cards[0], cards[1]


def _page_comparison(node: str, tmp_path: Path, base: Scorecard, new: Scorecard) -> dict:
    """The page's comparison of ``new`` with ``base``, from the page itself: its data blocks
    read back out of history.html, its scripts run by Node."""
    paths = []
    for n, card in enumerate((base, new)):
        path = tmp_path / f"run{n}" / "scorecard.json"
        path.parent.mkdir()
        started = f"2024-01-0{n + 1}T00:00:00Z"
        path.write_text(json_document(dataclasses.replace(card, started=started).to_json()), encoding="utf-8")
        paths.append(path)
    runs, skipped = history.gather(paths)
    assert skipped == [] and [r.path for r in runs] == paths
    page = history.render(runs)
    blocks = dict(re.findall(r'<script type="application/json" id="([^"]+)">(.*?)</script>', page, re.S))
    data = json.loads(blocks["ambigqa-history"])
    dumped = tmp_path / "page.json"
    dumped.write_text(
        json.dumps({"data": data, "items": [json.loads(blocks[f"ambigqa-run-{n}"]) for n in (0, 1)]})
    )
    code = f"""
        const ns = require({str(ASSETS / "history" / "stats.js")!r});
        require({str(ASSETS / "history" / "paired.js")!r});
        const {{ data, items }} = JSON.parse(require("fs").readFileSync({str(dumped)!r}, "utf8"));
        const run = (n) => ({{ meta: data.runs[n], items: items[n] }});
        console.log(JSON.stringify(ns.paired.compare(run(0), run(1), data.metrics, data.constants)));
    """
    done = subprocess.run([node, "-e", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("copies", [1, 30], ids=["exact", "monte-carlo"])
def test_the_page_compares_two_runs_as_compare_does(node, tmp_path, copies):
    base, new = _pair(copies, seed=copies)
    expected = compare.compare(base, new, seed=3)
    page = _page_comparison(node, tmp_path, base, new)
    assert page["notes"] == expected.notes
    assert (page["onlyBase"], page["onlyNew"]) == (len(expected.only_base), len(expected.only_new))
    rows = {(r["suite"], r["slice"], r["metric"]): r for r in page["rows"]}
    assert list(rows) == [(r.suite, r.slice, r.metric) for r in expected.rows]
    kinds = set()
    for want in expected.rows:
        got = rows[(want.suite, want.slice, want.metric)]
        where = f"{want.suite} {want.slice} {want.metric}"
        for field in ("n", "one_sided", "reason", "test", "wins", "ties", "losses"):
            assert got[field] == getattr(want, field), f"{where}: {field}"
        if want.diff is None:
            continue
        for field in ("base", "new", "diff"):
            assert got[field] == pytest.approx(getattr(want, field), rel=1e-9, abs=1e-9), f"{where}: {field}"
        width = want.high - want.low
        for field in ("low", "high"):  # Monte Carlo: each its own seeded draws
            assert got[field] == pytest.approx(getattr(want, field), abs=0.15 * width + 1e-9), (
                f"{where}: {field}"
            )
        exact = want.test == "mcnemar" or want.n <= 16
        if exact:
            assert got["p"] == pytest.approx(want.p, rel=1e-9), f"{where}: p"
        else:
            assert got["p"] == pytest.approx(want.p, abs=0.03), f"{where}: p"
        kinds.add((want.test, exact, _kind(want.metric)))
    if copies == 1:
        exact_rows = [r for r in expected.rows if r.p is not None]
        assert all(r.test == "mcnemar" or r.n <= 16 for r in exact_rows)  # Holm over exact p's only
        for want in exact_rows:
            assert rows[(want.suite, want.slice, want.metric)]["p_holm"] == pytest.approx(
                want.p_holm, rel=1e-9
            )
    else:  # every way a metric is compared was met: McNemar, sign flips of means, DR's product, pooled units
        assert {("mcnemar", True, "mean"), ("permutation", False, "mean"), ("permutation", False, "geometric"),
                ("permutation", False, "pooled")} <= kinds  # fmt: skip


def _kind(metric: str) -> str:
    spec = history._metric(metric)
    return "pooled" if metric == "answer" else spec["kind"]


def test_files_are_found_ordered_and_the_unreadable_ones_named_and_skipped(tmp_path, capsys):
    base, new = _pair(1, seed=0)
    later, earlier = tmp_path / "a" / "scorecard.json", tmp_path / "b" / "deep" / "scorecard.json"
    for path, card, started in (
        (later, new, "2024-02-01T00:00:00Z"),
        (earlier, base, "2024-01-01T00:00:00Z"),
    ):
        path.parent.mkdir(parents=True)
        path.write_text(json_document(dataclasses.replace(card, started=started).to_json()), encoding="utf-8")
    unstamped = tmp_path / "c" / "scorecard.json"  # no start recorded: its file's time orders it
    unstamped.parent.mkdir()
    unstamped.write_text(json_document(base.to_json()), encoding="utf-8")
    os.utime(unstamped, (time.time(), 1_600_000_000))  # 2020: first
    broken = tmp_path / "d" / "scorecard.json"
    broken.parent.mkdir()
    card = json.loads(later.read_text(encoding="utf-8"))
    card["items"][0]["scores"]["str_em"] = 7.0  # off the item scale
    broken.write_text(json.dumps(card), encoding="utf-8")
    (tmp_path / "empty").mkdir()
    named = [tmp_path, later, tmp_path / "empty", tmp_path / "nowhere"]
    runs, skipped = history.gather(named)
    assert [r.path for r in runs] == [unstamped, earlier, later]  # named twice, read once
    assert [r.recorded for r in runs] == [False, True, True]
    assert [(s.path, s.reason.split(":")[0]) for s in skipped] == [
        (tmp_path / "empty", "no scorecard.json in this directory or below"),
        (tmp_path / "nowhere", "no such file or directory"),
        (broken, "item march-sem-01-0, field scores.str_em"),
    ]
    assert cli(["history", *map(str, named), "-o", str(tmp_path / "out")]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == f"history of 3 runs written to {tmp_path / 'out' / 'history.html'}, 3 skipped"
    assert f"pytest-ambigqa history: skipped {broken}: item march-sem-01-0, field scores.str_em: " in err
    page = (tmp_path / "out" / "history.html").read_text(encoding="utf-8")
    assert page.count('<script type="application/json" id="ambigqa-run-') == 3
    assert cli(["history", str(broken), str(tmp_path / "nowhere"), "-o", str(tmp_path / "none")]) == 2
    assert "no readable scorecard.json in" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()
