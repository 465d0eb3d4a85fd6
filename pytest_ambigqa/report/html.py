"""``report.html``: the scorecard as one self-contained page, for people.

One file, no server, nothing fetched at view time: the page's script and style are inlined
from ``assets/`` and the data ride along in the page, so it opens from ``file://`` and as a
CI artifact (Inspect's viewer needs a server, deepeval's dashboard an account). The scorecard
is one JSON block; the items and their details, nearly all of the page at scale, are packed
(:func:`packed`): 100,000 items make a page of tens of megabytes rather than 200.

Everything that came from outside (answers, questions, passages, model replies, errors) is
data, never markup: JSON inside a ``<script type="application/json">`` block with ``<``,
``>`` and ``&`` escaped, or base64 (which has none of them) in a data block, and the page's
script puts it in the document only as text (``textContent``). A Content-Security-Policy that
admits the page's own script by its hash and nothing else stands behind that: even an answer
that broke out could not run.

Plots are SVG the page draws itself (a few kilobytes of code) rather than a charting
library inlined into every report (Plotly's bundle alone is over 3 MB).
"""

from __future__ import annotations

import base64
import bisect
import dataclasses
import gc
import hashlib
import math
import re
import time
import zlib
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from typing import Any

from ..card.compare import Comparison, sign
from ..card.scorecard import MetricSummary, Scorecard, SuiteCard
from ..metrics import METRICS, printed_range
from ..metrics.coverage import found
from ..metrics.profiles import PROFILES, ScorerProfile
from ..metrics.text import Normalized
from ..output import excerpt, json_text, safe_output
from ..protocols import Protocol, protocol_of
from ..retrieval.corpus import content_key
from ..schema import AmbigItem, ItemResult
from . import view

# Inside a script element JSON must not close it ("</script>") nor open a comment ("<!--"):
# these characters, written as JSON escapes, keep their meaning and lose that power.
_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


# The page's script: small modules, each loadable on its own by Node for its unit tests
# (tests/js), joined in this order into the one inline script (no bundler).
SCRIPTS = ("format", "dom", "packed", "filter", "plots", "overview", "detail", "list", "comparison", "main")


@cache
def asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


@cache
def script() -> str:
    """The page's script, as it is inlined (and hashed for the Content-Security-Policy)."""
    return "\n".join(asset(f"js/{name}.js") for name in SCRIPTS)


def csp_hash(source: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii")


def render(card: Scorecard, duration: float | None = None) -> str:
    # Tens of thousands of small containers, none of them cyclic: the cycle collector would
    # walk the whole session's heap again and again for nothing (a third of the time).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _page(card, duration)
    finally:
        if collecting:
            gc.enable()


def _page(card: Scorecard, duration: float | None) -> str:
    data = payload(card, duration)
    items, details = data.pop("items"), data.pop("details")
    code, style = script(), asset("report.css")
    policy = (
        f"default-src 'none'; script-src '{csp_hash(code)}'; style-src '{csp_hash(style)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>ambigqa report</title>\n<style>{style}</style>\n</head>\n<body>\n"
        "<noscript>This report draws itself with JavaScript; scorecard.md beside it has the same "
        "numbers as text.</noscript>\n"
        f'<script type="application/json" id="ambigqa-data">{inert(data)}</script>\n'
        # The list's rows, then the items' details (parsed when one is first opened or searched).
        f'<script type="{PACKED}" id="ambigqa-items">{items.text()}</script>\n'
        f'<script type="{PACKED}" id="ambigqa-details">{details.text()}</script>\n'
        f"<script>{code}</script>\n</body></html>\n"
    )


# A data block's type (not a script: never run) for JSON, deflated (zlib's format, RFC 1950)
# and base64-encoded.
PACKED = "application/vnd.ambigqa.json+deflate;base64"


class Packed:
    """A JSON list, scrubbed and deflated as it is built, base64-encoded at the end: the page
    inflates it with the browser's own ``DecompressionStream("deflate")`` (assets/js/packed.js),
    no library. Inert by its alphabet: base64 has no ``<``, ``>`` nor ``&``. Each element is
    encoded and compressed as it is appended, so a page's tens of megabytes of details never
    stand in memory at once (issue 27: they were most of the controller's peak at 20,000
    items). zlib's default level: on bench/report.py's items it packs the details 8x, against
    5.7x at the fastest level, for 0.01 ms an item more."""

    def __init__(self) -> None:
        self._deflate = zlib.compressobj()
        self._parts: list[bytes] = []
        self._count = 0

    def append(self, value: Any) -> None:
        text = json_text(value, ensure_ascii=False)
        self._parts.append(self._deflate.compress(f"{',' if self._count else '['}{text}".encode()))
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def text(self) -> str:
        """The list's JSON, deflated (zlib's format, RFC 1950) and base64-encoded; once."""
        end = self._deflate.compress(b"]" if self._count else b"[]") + self._deflate.flush()
        return base64.b64encode(b"".join((*self._parts, end))).decode("ascii")


def inert(value: Any) -> str:
    """JSON that can stand inside a script element: scrubbed, and nothing in it closes one."""
    text = json_text(value, ensure_ascii=False)
    for char, escape in _ESCAPES:  # str.replace: translate() with a dict is slow on megabytes
        text = text.replace(char, escape)
    return text


# ---- the data the page draws: every number it shows formatted by report/view.py, the raw
# values beside them only where the page sorts, filters or plots


def metric_info(names: set[str]) -> dict[str, Any]:
    return {
        m: {"label": METRICS[m].label, "source": METRICS[m].source, "scale": _scale(m)}
        for m in names
        if m in METRICS
    }


def _scale(metric: str) -> tuple[float, float] | None:
    """The metric's range on the printed scale, for the plots' axes; None for counts and
    totals, or a range without a floor (a reward): the axis then spans the values."""
    scale = printed_range(metric)
    return scale if scale is not None and all(map(math.isfinite, scale)) else None


def _papers(card: SuiteCard, setting: str) -> dict[str, Any]:
    """Per metric: the range of the published rows of this run's protocol and ``setting`` (a
    headline setting, or an ambiguity type), and whether they are comparable
    (card/published.py decides), as the scorecard's "papers" column."""
    if not protocol_of(card.protocol.name).papers_column:
        return {}
    rows = [r for r in card.published if r["same_protocol"] and r.get("setting") == setting]
    out = {}
    for metric in card.metrics:
        values = [(r[metric], r) for r in rows if metric in r]
        if not values:
            continue
        best = max(values, key=lambda v: v[0])[1]
        low, high = min(v for v, _ in values), max(v for v, _ in values)
        comparable = all(r["comparable"] for _, r in values)
        reason = next((r["reason"] for _, r in values if not r["comparable"]), None)
        span = f"{low:g}–{high:g}"
        marked = "" if comparable else f"{view.NOT_COMPARABLE} "
        best_label = f"{best.get('method') or ''} {best['model']}".strip()
        out[metric] = {
            "low": low,
            "high": high,
            "comparable": comparable,
            "text": f"{marked}{span} ({len(values)} rows, best {best_label})",
            "title": f"papers: {span}" + ("" if comparable else f" (not comparable: {reason or ''})"),
        }
    return out


def _summary(s: MetricSummary, papers: dict[str, Any] | None = None) -> dict[str, Any]:
    """A metric's score as the scorecard prints it, and its interval on the printed scale."""
    return {
        "metric": s.metric,
        "score": view.score(s),
        "interval": view.interval(s),
        "scored": view.scored(s) if s.n else "",
        "mean": s.mean,
        "low": s.low,
        "high": s.high,
        "papers": papers,
    }


def _suite(card: SuiteCard, results: list[ItemResult]) -> dict[str, Any]:
    errors: dict[str, int] = {}
    for r in results:
        if r.status != "ok":
            reason = (
                excerpt((r.error or r.status).splitlines()[0], 300) if (r.error or r.status) else r.status
            )
            errors[reason] = errors.get(reason, 0) + 1
    problems = [
        f"{n} item(s) without an answer: {reason}"
        for reason, n in sorted(errors.items(), key=lambda kv: -kv[1])
    ]
    problems += [
        f"{METRICS[s.metric].label}: {s.unscored} unscored: {s.reason or ''}"
        for s in card.metrics.values()
        if s.unscored > 0 and s.mean is not None
    ]
    papers = _papers(card, view.headline(card.name))
    by_type = {s.name: _papers(card, s.name) for s in card.slices}
    multiples = []
    for metric in card.metrics:
        shown = [sl for sl in card.slices if metric in sl.metrics]
        if any(sl.metrics[metric].mean is not None for sl in shown):
            rows = [
                _summary(sl.metrics[metric], by_type[sl.name].get(metric))
                | {"name": f"{sl.name} ({sl.items})"}
                for sl in shown
            ]
            multiples.append({"metric": metric, "rows": rows})
    origin = " (bundled sample)" if card.is_sample else ""
    facts = [
        f"{card.items} items{origin}",
        f"errors {card.errors}",
        f"missing {card.missing}",
        card.protocol.label,
    ]
    if card.profile:
        facts.append(f"scored as {card.profile}")
    return {
        "name": card.name,
        "title": card.title,
        "summary": " · ".join(facts),
        "data": f"data: {card.source} (sha256 {card.sha256[:12]})",
        "receives": f"receives: {view.received_line(card.protocol)}",
        "upper_bound": card.protocol.upper_bound,
        "notes": [*card.protocol.notes, *view.repeats_lines(card)],
        "warnings": [*card.data_warnings, *([view.short_line(card, results)] if card.evidence_short else [])],
        "metrics": [_summary(s, papers.get(s.metric)) for s in card.metrics.values()],
        "published": view.published_lines(card, view.published_rows(card)),
        "problems": problems,
        "by": f"By {protocol_of(card.protocol.name).slice_heading}" if card.slices else None,
        "tables": [  # the protocol's section: e.g. its costs, policies with n and errors, oracle
            {"title": title, "head": list(t.header), "rows": [list(row) for row in t.rows]}
            for title, t in (protocol_of(card.protocol.name).tables(card.section) if card.section else [])
        ],
        "multiples": multiples,
        "evidence": [
            {
                "name": e.name,
                "items": e.items,
                "original": view.score(e.original),
                "clarified": view.score(e.clarified),
            }
            for e in card.evidence
        ],
    }


def _facts(card: Scorecard, duration: float | None) -> list[str]:
    """The header's line: what ran, when, with what."""
    config = card.config
    facts = ["suites " + ", ".join(config.get("suites") or [])]
    if config.get("protocol"):
        facts.append(f"protocol {config['protocol']}")
    facts.append(f"seed {config.get('seed')}")
    if card.sample:
        facts.append(view.sample_line(card.sample))
    if duration:
        facts.append(f"ran {duration:.1f} s")
    facts.append("written " + time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    if card.versions:
        facts.append(f"pytest-ambigqa {card.versions.get('pytest-ambigqa')}")
    return facts


def payload(card: Scorecard, duration: float | None = None) -> dict[str, Any]:
    comparison = card.comparison
    regressed = {r.key for r in comparison.regressions} if comparison else set()
    primary = {s.name: next(iter(s.metrics), None) for s in card.suites}
    by_title = {p.title: p for p in PROFILES.values()}
    read = {s.name: by_title.get(s.profile or "") for s in card.suites}
    ways = {s.name: protocol_of(s.protocol.name) for s in card.suites}
    items, details = Packed(), Packed()  # each item's row and details, packed as they are made
    reasons: dict[str, int] = {}  # why metrics are unscored: a few strings, each written once
    # An errored item's 0 on a metric its run cannot report (n/a) is no score to show.
    na = {s.name: {m for m, v in s.metrics.items() if v.mean is None} for s in card.suites}
    ids = PassageIds(card.gold.values())
    priced = bool(card.config.get("llm_price"))
    disputed = _disputed(card)
    for r in card.results:
        if not na.get(r.suite, set()).isdisjoint(r.scores):
            r = dataclasses.replace(r, scores={m: v for m, v in r.scores.items() if m not in na[r.suite]})
        base = comparison.base_results.get(r.key) if comparison else None
        gold, absent = card.gold.get(r.key), card.gold_absent.get(r.suite)
        way = ways.get(r.suite) or protocol_of(None)
        items.append(_item(r, gold, base, r.key in regressed, primary, way, r.key in disputed))
        details.append(_detail(r, gold, absent, base, reasons, read.get(r.suite), way, ids, priced))
    names = {m for s in card.suites for m in s.metrics} | {m for r in card.results for m in r.scores}
    unanswered = sum(s.errors + s.missing for s in card.suites)
    return {
        "system": card.system.get("label"),
        "facts": _facts(card, duration),
        "config": card.config,
        "versions": card.versions,
        "judge": card.judge,
        "gates": {
            "verdict": view.verdict(card, marks=False),
            "set": bool(view.gates_evaluated(card)[1]),
            "shortfalls": card.shortfalls,
            "checks": {"head": view.CHECK_HEAD, "rows": [view.check(c) for c in card.checks]},
            "deferred": card.gates_deferred,
            "unanswered": (
                f"{unanswered} item{'' if unanswered == 1 else 's'} errored or missing: "
                f"{'its test fails' if unanswered == 1 else 'their tests fail'}, and so does the run"
            )
            if unanswered
            else None,
        },
        "metrics": metric_info(names),
        "suites": [_suite(s, [r for r in card.results if r.suite == s.name]) for s in card.suites],
        "items": items,
        "details": details,  # by item, as items
        "reasons": list(reasons),
        "comparison": _comparison(comparison, card.config) if comparison else None,
        "calibration": _calibration(card),
    }


def _calibration(card: Scorecard) -> dict[str, Any] | None:
    """The overview's section on the judge against human labels, formatted as scorecard.md has it."""
    if card.calibration is None:
        return None
    agreement, ppi = view.calibration_rows(card.calibration, {s.name: s.title for s in card.suites})
    return {
        "notes": view.calibration_notes(card.calibration),
        "tables": [
            {"head": list(view.CALIBRATION_HEAD), "rows": [list(r) for r in agreement]},
            {"head": list(view.PPI_HEAD), "rows": [list(r) for r in ppi]},
        ],
        "key": view.CALIBRATION_KEY,
    }


def _scores(scores: dict[str, float]) -> dict[str, str]:
    return {m: view.num(view.item_value(v, m), m) for m, v in scores.items()}


def _item(
    r: ItemResult,
    gold: AmbigItem | None,
    base: ItemResult | None,
    regressed: bool,
    primary: dict[str, str | None],
    way: Protocol,
    disputed: bool = False,
) -> dict[str, Any]:
    """One item as the list filters, sorts (``scores``: on the printed scale) and shows it
    (``shown``); its detail is apart (:func:`_detail`). ``spread``, which the "judge
    disagreement" filter reads: the widest spread of its judge's samples, or of its panel's
    judges where they dispute it (``disputed``)."""
    spreads = [max(v) - min(v) for v in r.samples.values() if len(v) > 1]
    spreads += [max(v) - min(v) for v in r.panel.values()] if disputed else []
    spread = max(spreads, default=0.0)
    metric = primary.get(r.suite)
    change = None
    if base is not None and metric and metric in r.scores and metric in base.scores:
        change = r.scores[metric] - base.scores[metric]
    return {
        "key": r.key,
        "suite": r.suite,
        "type": r.ambiguity_type or way.slice_of(r),  # a MARCH episode keeps its type
        "status": r.status,
        "question": gold.question if gold is not None else "",
        "scores": {m: view.item_value(v, m) for m, v in r.scores.items()},
        "shown": _scores(r.scores),
        "unscored": sorted(r.unscored),
        "spread": spread,
        "duration": r.duration,
        "change": change,
        "regressed": regressed,
    }


def _failed_calls(calls: dict[str, Any] | None) -> dict[str, Any] | None:
    """What an errored item's model calls cost, in one line, and the last reply it got."""
    if not calls:
        return None
    steps = ", ".join(str(s.get("step")) for s in calls.get("steps") or () if isinstance(s, dict))
    summary = (
        f"{calls['calls']} calls to {calls['model']} ({calls.get('cached', 0)} from the cache)"
        f"{': ' + steps if steps else ''} · {calls.get('prompt_tokens', 0):,} tokens in / "
        f"{calls.get('completion_tokens', 0):,} out · ${calls.get('cost', 0.0):.4f} · "
        f"{calls.get('latency', 0.0):.2f} s"
    )
    return {"summary": summary, "last_reply": calls.get("last_reply")}


TRACE_HEAD = ("#", "step", "tokens in", "tokens out", "latency", "cost", "")


def _steps(r: ItemResult, priced: bool) -> dict[str, Any] | None:
    """The trace of an ``llm:`` system's item (an episode's turns included), as its answer's
    metadata records it, or its error's calls: each step (its prompt kind), its tokens,
    latency and cost (blank without --ambig-llm-price, or where the step did not record
    it), whether the cache answered it, the totals; then the method's intermediate outputs
    (plan, readings, searches, verdicts, retrieved ids...), each a list of texts. None for a
    system that records no steps."""
    if r.answer is not None:
        metadata = r.answer.metadata
        llm: Any = metadata.get("llm")
        outputs = {k: v for k, v in metadata.items() if k not in ("method", "llm")}
    else:
        llm, outputs = r.details.get("calls"), {}
    steps = llm.get("steps") if isinstance(llm, dict) else None
    if not isinstance(steps, list) or not steps:
        return None

    def cost(value: Any) -> str:
        return f"${value:.4f}" if priced and isinstance(value, (int, float)) else ""

    def count(value: Any) -> str:
        return f"{value:,.0f}" if isinstance(value, (int, float)) else ""

    def seconds(value: Any) -> str:
        return f"{value:.2f} s" if isinstance(value, (int, float)) else ""

    def row(first: str, what: str, record: dict[str, Any], latency: str, cached: str) -> list[str]:
        tokens = (count(record.get("prompt_tokens")), count(record.get("completion_tokens")))
        return [first, what, *tokens, seconds(record.get(latency)), cost(record.get("cost")), cached]

    done = [s for s in steps if isinstance(s, dict)]
    rows = [
        row(str(n), str(s.get("step", "")), s, "seconds", "from the cache" if s.get("cached") else "")
        for n, s in enumerate(done, 1)
    ]
    cached = sum(bool(s.get("cached")) for s in done)
    total = row("", f"{len(rows)} calls", llm, "latency", f"{cached} from the cache" if cached else "")
    shown = [
        {"name": name, "items": [v if isinstance(v, str) else json_text(v) for v in value]}
        if isinstance(value, list)
        else {"name": name, "items": [value if isinstance(value, str) else json_text(value)]}
        for name, value in outputs.items()
    ]
    return {"head": TRACE_HEAD, "rows": rows, "total": total, "outputs": shown}


def _disputed(card: Scorecard) -> set[str]:
    """The items a panel of judges disputes (``PanelAgreement.disputed``)."""
    return {key for suite in card.suites for p in suite.panel.values() for key in p.disputed}


def _samples(samples: list[float]) -> str:
    spread = max(samples) - min(samples) if len(samples) > 1 else 0
    return ", ".join(f"{v:g}" for v in samples) + (f" (spread {spread:.2f})" if spread else "")


def _detail(
    r: ItemResult,
    gold: AmbigItem | None,
    absent: str | None,
    base: ItemResult | None,
    reasons: dict[str, int],
    profile: ScorerProfile | None,
    way: Protocol,
    ids: PassageIds | None = None,
    priced: bool = False,
) -> dict[str, Any]:
    """Everything the drill-down shows, less what the item's row has (its shown scores, the
    question: the page puts them back) and what it does not show (the answer's metadata, whose
    steps and outputs are ``steps``); what is empty is left out, and the reasons a metric is
    unscored are indices into the payload's ``reasons``. ``profile``: the official scorer the
    suite's STR-EM followed, whose reading of the answer the hits are taken from; ``way``: the
    suite's protocol, which may say a line about the test (an interactive episode's)."""
    answer = None
    if r.answer is not None:
        shown = r.answer.to_dict()
        del shown["metadata"]
        answer = {k: v for k, v in shown.items() if k == "text" or v not in (None, [])}
    text = r.answer.text if r.answer is not None else ""
    evidence = None
    if r.evidence:
        evidence = (
            f"from the original question {100 * r.evidence['original']:.1f}% · "
            f"from the clarified questions {100 * r.evidence['clarified']:.1f}%"
        )
    out: dict[str, Any] = {
        "answer": answer,
        "unscored": {m: reasons.setdefault(why, len(reasons)) for m, why in r.unscored.items()},
        "samples": {m: _samples(v) for m, v in r.samples.items() if v},
        "evidence": evidence,
        "error": r.error,
        "trace": r.trace,
        "duration": f"{r.duration or 0:.2f} s",
        "cached": r.cached,
        "usage": r.usage,
        "transcript": r.details.get("transcript"),
        "episode": way.detail(r),
        "reader": r.details.get("reader"),
        "calls": _failed_calls(r.details.get("calls")),
        "steps": _steps(r, priced),
    }
    if gold is None:
        out["gold_absent"] = absent or "the question and gold readings were not recorded for this item"
    else:
        out["gold"] = _gold(gold, text, r.answer, profile, ids)
    if base is not None:
        out["base"] = {
            "status": base.status,
            "text": base.answer.text if base.answer is not None else None,
            "scores": _scores(base.scores),
            "error": base.error,
        }
    return {k: v for k, v in out.items() if v is not None and v != {} and v != [] and v is not False}


def _comparison(comparison: Comparison, config: dict[str, Any]) -> dict[str, Any]:
    """The comparison tab: each compared row's cells as scorecard.md prints them, with its
    change and interval beside them for the plot; the regressions with their word diffs."""
    base = comparison.base
    margins = {}  # --ambig-fail-if-worse's margin per metric, marked on the plots
    for margin in config.get("fail_if_worse") or ():
        metric, value = margin.split(":")[-2:]
        margins[metric] = float(value)
    suites = []
    tests = sum(r.p is not None for r in comparison.rows)
    for suite in dict.fromkeys(r.suite for r in comparison.rows):
        rows = [r for r in comparison.rows if r.suite == suite]
        skipped: dict[str | None, list[str]] = {}
        for r in rows:
            if r.diff is None and METRICS[r.metric].label not in skipped.get(r.reason, []):
                skipped.setdefault(r.reason, []).append(METRICS[r.metric].label)
        suites.append(
            {
                "name": suite,
                "rows": [
                    {
                        "slice": r.slice,
                        "metric": r.metric,
                        "cells": [str(r.n), *view.change(r)],
                        # by the statistic the gate reads (view.significance); why, where Holm's p differs
                        "significant": view.significance(r, tests)[0],
                        "why": view.significance(r, tests)[1],
                        "diff": r.diff,
                        "low": r.low,
                        "high": r.high,
                        "direction": sign(r.metric),
                        "margin": margins.get(r.metric),
                    }
                    for r in rows
                    if r.diff is not None
                ],
                "skipped": [
                    f"not compared: {', '.join(labels)} ({reason})" for reason, labels in skipped.items()
                ],
                "one_sided": view.one_sided([r for r in rows if r.slice == "all"]),
            }
        )
    where = f"({base['scorecard']}) " if base.get("scorecard") else ""
    return {
        "intro": (
            f"Compared with the base run {where}of {base.get('system')}, {view.compared_items(base)}, "
            "paired by item. Change = this run − base, with a seeded paired bootstrap 95% interval "
            "(items resampled within their type); p: exact McNemar for 0/1 metrics, else a sign-flip "
            "permutation test; Holm-corrected across every test shown. W/T/L: items better / same / "
            f"worse in this run. ▲/▼ significant: {view.SIGNIFICANT_BY}."
        ),
        "notes": comparison.notes,
        "significant_by": view.SIGNIFICANT_BY,
        "only": [
            {"what": what, "keys": keys}
            for what, keys in (
                ("only in the base run", comparison.only_base),
                ("only in this run", comparison.only_new),
            )
            if keys
        ],
        "suites": suites,
        "regressions": [
            {
                "key": r.key,
                "suite": r.suite,
                "text": (view.drops(r, "→") or "no answer")
                + (f" · now {r.new_status}" if r.new_status != r.base_status else ""),
                "diff": r.diff,
            }
            for r in comparison.regressions
        ],
    }


def _gold(
    item: AmbigItem, text: str, answer: Any, profile: ScorerProfile | None, ids: PassageIds | None = None
) -> dict[str, Any]:
    """Each reading hit or missed as STR-EM counted it: in the text the suite's scorer read
    (ALCE's: the first line, citation marks out), highlighted where the answer has it. A suite
    scored without STR-EM (CondAmbigQA, an interactive run: no profile) marks no hits: what
    counts there is the judge's or the reader's, not the presence of the gold text. A citation
    is gold when it names a gold passage of the item, by its own id or its corpus id (``ids``),
    and a gold passage it names is not listed again as uncited."""
    interpretations = []
    spans: list[tuple[int, int, int]] = []
    marks = None
    if profile is not None and any(i.short_answers for i in item.interpretations):
        marks = Highlights(text, profile)
    for n, interp in enumerate(item.interpretations):
        hit = None
        if marks is not None and interp.short_answers:
            hit, where = marks.found(interp.short_answers)
            spans += [(start, end, n) for start, end in where]
        interpretations.append(
            {
                "question": interp.question,
                "condition": interp.condition,
                "answers": list(interp.short_answers),
                "passages": list(interp.passage_ids),
                "hit": hit,
            }
        )
    cited = list(answer.citations) if answer is not None else []
    if answer is not None:
        cited += [c for i in answer.interpretations for c in i.citations]
    gold_ids = {p for i in item.interpretations for p in i.passage_ids}
    titles = {p.id: p.title for p in item.passages}
    citations, named = [], set()
    for c in dict.fromkeys(cited):
        own = ids.local(item, c) if ids is not None else (c if c in titles else None)
        named.add(own)
        shown = {"id": c, "title": titles.get(own or c), "gold": own in gold_ids}
        citations.append(shown | ({"as": own} if own is not None and own != c else {}))
    return {
        "interpretations": interpretations,
        "spans": sorted(set(spans)),
        "citations": citations,
        "uncited": [{"id": p, "title": titles.get(p)} for p in sorted(gold_ids) if p not in named],
    }


class PassageIds:
    """Which of an item's passages a cited id names: its own id (``p2``), the id the
    retriever's corpus gave it (``march/sem-01/p2``, retrieval/corpus.py), or, for a passage
    the corpus keeps once under the id of its first occurrence in another item, that id
    (matched by content, over the items at hand; built on the first such citation)."""

    def __init__(self, items: Iterable[AmbigItem]) -> None:
        self._items = items
        self._contents: dict[str, str] | None = None

    def local(self, item: AmbigItem, cited: str) -> str | None:
        own = {p.id: p for p in item.passages}
        if cited in own:
            return cited
        prefix = f"{item.suite}/{item.id}/"
        if cited.startswith(prefix) and cited[len(prefix) :] in own:
            return cited[len(prefix) :]
        if self._contents is None:
            self._contents = {
                f"{i.suite}/{i.id}/{p.id}": content_key(p.title, p.text)
                for i in self._items
                for p in i.passages
            }
        key = self._contents.get(cited)
        return (
            next((p.id for p in item.passages if content_key(p.title, p.text) == key), None) if key else None
        )


class Highlights:
    """An answer as STR-EM read it (``scored``: normalised) and where the gold answers it
    finds stand in the answer as the page shows it: scrubbed of credentials (rarely other than
    the scored text: then searched in what is shown), in UTF-16 units, as the page's script
    indexes strings."""

    def __init__(self, text: str, profile: ScorerProfile) -> None:
        read, self._origin = profile.located(text)
        self._scored = self._shown = Normalized(read)
        self.scored = self._scored.normal
        shown = safe_output(text)
        if shown != text:
            read, self._origin = profile.located(shown)
            self._shown = Normalized(read)
        astral = [] if shown.isascii() else [m.start() for m in _ASTRAL.finditer(shown)]
        # a character beyond the Basic Multilingual Plane is two units: one more per such before
        self._unit = (lambda i: i + bisect.bisect_left(astral, i)) if astral else (lambda i: i)

    def found(self, short_answers: Sequence[str]) -> tuple[bool, list[tuple[int, int]]]:
        """STR-EM's hit for one reading, as scored, and where the page shows its answers."""
        hit, where = found(short_answers, self._scored)
        if hit and self._shown is not self._scored:
            where = [span for answer in short_answers for span in self._shown.find(answer)]
        origin, unit = self._origin, self._unit
        return hit, [(unit(origin[s]), unit(origin[e - 1] + 1)) for s, e in where]


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
