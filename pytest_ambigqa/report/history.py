"""``history.html``: many runs' ``scorecard.json`` on one self-contained page.

Each metric of each suite over the runs, in the order they started (``timing.started``; the
file's time for a scorecard that did not record it), its 95% interval drawn at every run, per
run or per commit (``versions.commit``, which a run records where it starts in a git
checkout); and any two runs compared item by item on a click.

The page is made as ``report.html`` is (``html.py``): its script and style inlined from
``assets/``, the data as JSON blocks that only the page's script reads, as text, under a
Content-Security-Policy that admits its own script alone; it opens from ``file://``, nothing
fetched. The trends are drawn from the scorecards' own suite summaries, every number
formatted here (``view.py``). The items of each run ride along in a block of their own,
parsed only when the run is compared: the page opens at once with fifty runs of thousands of
items.

Comparing two runs on a click needs the paired statistics of ``card/compare.py``
(``stats/paired.py``) for whichever two runs are clicked: 1,225 pairs for fifty runs, too many
to compute here. So ``assets/history/stats.js`` and ``paired.js`` carry the same method (paired
bootstrap stratified by type, exact McNemar, sign-flip permutation, Holm) over the same item
columns, its constants read from ``stats/paired.py`` and ``stats/bootstrap.py``. The changes,
W/T/L counts, exact tests (McNemar; sign flips up to 16 differing items) and the reasons a
metric is not compared are those ``pytest-ambigqa compare`` gives; the bootstrap bounds and
Monte Carlo p values are the page's own seeded draws, within Monte Carlo error of the
command's (tests/test_history.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..card.compare import sign
from ..card.saved import read_card
from ..card.scorecard import Scorecard, utc_stamp
from ..errors import ScorecardError
from ..metrics import METRICS
from ..protocols import protocol_of
from ..stats import bootstrap, paired
from . import html, view

FILENAME = "history.html"
# The page's script: report.html's modules it shares (ids made visible, elements, plots),
# then its own, joined in this order (no bundler), each loadable alone by Node (tests/js).
SHARED = ("format", "dom", "plots")
SCRIPTS = ("stats", "paired", "trends", "runs", "history")


@dataclass(frozen=True)
class Run:
    path: Path
    card: Scorecard
    started: str  # when it started, ISO 8601 UTC: recorded, else the file's time
    recorded: bool  # whether the scorecard recorded it


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str


def gather(paths: Sequence[Path]) -> tuple[list[Run], list[Skipped]]:
    """The runs of every ``scorecard.json`` named or found under a named directory, oldest
    first; each file that cannot be read is skipped, with the reason (``read_card`` checks it
    whole, as ``compare`` does)."""
    files: list[Path] = []
    skipped: list[Skipped] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.rglob("scorecard.json"))
            if not found:
                skipped.append(Skipped(path, "no scorecard.json in this directory or below"))
            files += found
        elif path.exists():
            files.append(path)
        else:
            skipped.append(Skipped(path, "no such file or directory"))
    unique: dict[Path, Path] = {}
    for path in files:  # a file named twice (or found twice) is one run
        unique.setdefault(path.resolve(), path)
    runs: list[Run] = []
    for path in unique.values():
        try:
            card = read_card(path)
        except ScorecardError as exc:
            skipped.append(Skipped(path, exc.reason))
            continue
        started = card.started or utc_stamp(path.stat().st_mtime)
        runs.append(Run(path, card, started, card.started is not None))
    runs.sort(key=lambda r: (r.started, str(r.path)))
    return runs, skipped


def render(runs: Sequence[Run], skipped: Sequence[Skipped] = ()) -> str:
    data = payload(runs, skipped)
    keys: dict[str, int] = {}  # item keys as numbers, shared by the runs (the page pairs by them)
    blocks = [_items(run.card, keys) for run in runs]
    code, style = script(), html.asset("report.css") + html.asset("history/history.css")
    policy = (
        f"default-src 'none'; script-src '{html.csp_hash(code)}'; style-src '{html.csp_hash(style)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    items = "".join(
        f'<script type="application/json" id="ambigqa-run-{n}">{html.inert(block)}</script>\n'
        for n, block in enumerate(blocks)
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>ambigqa history</title>\n<style>{style}</style>\n</head>\n<body>\n"
        "<noscript>This page draws itself with JavaScript; each run's scorecard.md has its "
        "numbers as text.</noscript>\n"
        f'<script type="application/json" id="ambigqa-history">{html.inert(data)}</script>\n'
        # Every run's items, a block a run, parsed when the run is compared.
        f"{items}<script>{code}</script>\n</body></html>\n"
    )


@cache
def script() -> str:
    """The page's script, as it is inlined (and hashed for the Content-Security-Policy)."""
    shared = [html.asset(f"js/{name}.js") for name in SHARED]
    return "\n".join([*shared, *(html.asset(f"history/{name}.js") for name in SCRIPTS)])


# ---- the data the page draws


def payload(runs: Sequence[Run], skipped: Sequence[Skipped] = ()) -> dict[str, Any]:
    names: dict[str, dict[str, None]] = {}  # suite: its metrics, in the order the runs give them
    titles: dict[str, str] = {}
    for run in runs:
        for suite in run.card.suites:
            names.setdefault(suite.name, {}).update(dict.fromkeys(suite.metrics))
            titles.setdefault(suite.name, suite.title)
    every = {m for metrics in names.values() for m in metrics}
    commits = {run.card.versions.get("commit") for run in runs} - {None}
    return {
        "facts": [
            f"{len(runs)} runs",
            f"{len(commits)} commits recorded" if commits else "no commit recorded",
            f"{_when(runs[0].started)} to {_when(runs[-1].started)}" if runs else "",
            "written " + time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        ],
        "constants": {
            "resamples": bootstrap.RESAMPLES,
            "level": bootstrap.LEVEL,
            "permutations": paired.PERMUTATIONS,
            "exact_up_to": paired.EXACT_UP_TO,
            "tie": paired._TIE,
        },
        "metrics": {m: _metric(m) | info for m, info in html.metric_info(every).items()},
        "suites": [{"name": name, "title": titles[name], "metrics": list(ms)} for name, ms in names.items()],
        "runs": [_run(n, run) for n, run in enumerate(runs)],
        "skipped": [{"path": str(s.path), "reason": s.reason} for s in skipped],
    }


def _metric(metric: str) -> dict[str, Any]:
    """How the page compares a metric, as ``compare._row`` does: the item scores it is made
    of (``sources``: score name and factor to the printed scale), how they make the suite's
    number (``kind``), whether McNemar applies, its better direction, its decimals."""
    spec = METRICS[metric]
    parts = [METRICS[m] for m in spec.of] if spec.aggregation == "geometric" else [spec]
    return {
        "kind": spec.aggregation if spec.aggregation in ("geometric", "sum") else "mean",
        "sources": [[part.item_metric, part.factor] for part in parts],
        "binary": spec.binary,
        "direction": sign(metric),
        "digits": len(view.num(0.0, metric).partition(".")[2]),
    }


def _run(n: int, run: Run) -> dict[str, Any]:
    card = run.card
    commit = card.versions.get("commit")
    return {
        "label": f"#{n + 1} {_when(run.started)[:-4]}" + (f" {commit[:8]}" if commit else ""),
        "path": str(run.path),
        "system": card.system.get("label"),
        "commit": commit,
        "started": run.started,
        "when": _when(run.started) + ("" if run.recorded else " (the file's time: no start recorded)"),
        "seed": int(card.config.get("seed") or 0),
        "gates": "deferred" if card.gates_deferred else ("FAILED" if card.shortfalls else "passed"),
        "shortfalls": list(card.shortfalls),
        "items": len(card.results),
        "suites": {
            s.name: {
                "protocol": s.protocol.name,
                "protocol_label": s.protocol.label,
                "sha256": s.sha256,
                "profile": s.profile,
                "items": s.items,
                "errors": s.errors + s.missing,
                "slices": [sl.name for sl in s.slices],
                "metrics": {
                    m: [v.mean, v.low, v.high, view.score(v), view.interval(v), v.reason]
                    for m, v in s.metrics.items()
                },
            }
            for s in card.suites
        },
    }


def _when(started: str) -> str:
    """``2024-01-02T22:13:20Z`` as people read it: ``2024-01-02 22:13:20 UTC``."""
    return started.replace("T", " ").replace("Z", " UTC")


def _items(card: Scorecard, keys: dict[str, int]) -> dict[str, Any]:
    """A run's items as the page pairs them, suite by suite: each item's key (an index into
    the page's keys, shared by the runs), its stratum (the slice its protocol puts it in,
    an index into ``labels``), and per score name the item's value on the item scale (null:
    unscored); per pooled metric, its units' sum and count (null: no units)."""
    out: dict[str, Any] = {}
    for suite in card.suites:
        mine = [r for r in card.results if r.suite == suite.name]
        label = protocol_of(suite.protocol.name).slice_of
        labels: dict[str | None, int] = {}
        sources = {s for m in suite.metrics if m in METRICS for s, _ in _metric(m)["sources"]}
        pooled = {m for r in mine for m in r.units if m in suite.metrics}
        out[suite.name] = {
            "items": [keys.setdefault(r.key, len(keys)) for r in mine],
            "strata": [labels.setdefault(label(r), len(labels)) for r in mine],
            "labels": list(labels),
            "scores": {s: [_number(r.scores.get(s)) for r in mine] for s in sorted(sources)},
            "units": {m: [_units(r.units.get(m)) for r in mine] for m in sorted(pooled)},
        }
    return out


def _number(value: float | None) -> float | int | None:
    """A score as short as JSON can say it exactly: 1 for 1.0."""
    if value is None:
        return None
    return int(value) if value.is_integer() else value


def _units(units: Iterable[float] | None) -> list[float] | None:
    if units is None:
        return None
    import math

    values = list(units)
    return [_number(math.fsum(values)), len(values)]  # type: ignore[list-item]
