"""What a run leaves for CI to show: the scorecard in the GitHub Actions step summary, a
short Markdown for a sticky pull-request comment, and each suite's values as JUnit
properties that CI dashboards chart.

- ``$GITHUB_STEP_SUMMARY`` (a file GitHub Actions names in every step): when set and not
  empty, the scorecard's Markdown, comparison and gates included (``scorecard.md``), is
  appended to it, cut to the 1 MiB a step's summary may hold.
- ``--ambig-pr-comment=FILE``: :func:`pr_comment`, compact and link-free, its first line a
  hidden marker (:data:`MARKER`) a bot finds its earlier comment by, to edit it in place.
- JUnit (``--junitxml``): one passing test case per suite, ``ambigqa::scorecard[SUITE]``,
  whose properties are the suite's values (:func:`junit_suites`), beside the items' own.

Everything written is scrubbed of credentials: the Markdown through ``markdown.inert``, the
properties through ``safe_output``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..metrics import METRICS
from ..output import safe_output, write_text
from ..protocols import protocol_of
from . import markdown, view
from .compare import Comparison, Row, sign
from .scorecard import Scorecard

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
STEP_SUMMARY_LIMIT = 1024 * 1024  # bytes GitHub shows of one step's summary; beyond, it shows none
COMMENT_LIMIT = 60_000  # characters; GitHub refuses a comment over 65,536
MARKER = "<!-- pytest-ambigqa:pr-comment"
REGRESSIONS_LISTED = 3  # per suite, in the comment
JUNIT_NAME = "scorecard"  # the suite test cases: ambigqa::scorecard[SUITE]


def publish(card: Scorecard, pr_comment: Path | None) -> list[str]:
    """The step summary (when ``$GITHUB_STEP_SUMMARY`` names a file) and the pull-request
    comment (when asked for); one line per file that could not be written."""
    problems = []
    summary = os.environ.get(STEP_SUMMARY, "").strip()
    if summary:
        try:
            append_step_summary(Path(summary), markdown.render(card))
        except OSError as exc:
            problems.append(f"could not append the scorecard to ${STEP_SUMMARY} ({summary}): {exc}")
    if pr_comment is not None:
        try:
            pr_comment.parent.mkdir(parents=True, exist_ok=True)
            write_text(pr_comment, pr_comment_text(card))
        except OSError as exc:
            problems.append(f"could not write the pull-request comment to {pr_comment}: {exc}")
    return problems


def append_step_summary(path: Path, text: str) -> None:
    """``text`` appended to the step summary, cut at a line to what is left of its limit."""
    used = path.stat().st_size if path.exists() else 0
    room = STEP_SUMMARY_LIMIT - used - 1  # the newline that parts it from what is there
    data = safe_output(text).encode("utf-8")
    if len(data) > room:
        note = b"\n\n*[cut: a step summary holds 1 MiB; scorecard.md (--ambig-report) has it all]*\n"
        keep = max(0, room - len(note))
        data = data[:keep].rpartition(b"\n")[0] + note if keep else b""
    if data:
        with path.open("ab") as out:
            out.write(b"\n" + data)


# ---- the pull-request comment


def pr_comment_text(card: Scorecard) -> str:
    """Markdown for a sticky pull-request comment: the gates, each suite's scores (with the
    paired change against the baseline), the significant changes and the worst regressions.
    No links, mentions or references: text from outside stands in code spans, where GitHub
    makes none."""
    suites = ",".join(re.sub(r"[^a-z0-9_.-]", "", s.name.lower()) for s in card.suites)
    verdict = "❌ gates FAILED" if card.shortfalls else "✅ gates passed"
    if card.gates_deferred and not card.shortfalls:
        verdict = "⏸ gates deferred"
    counts = []
    for s in card.suites:
        unit = protocol_of(s.protocol.name).unit
        counts.append(f"{markdown.inert(s.title)} {s.items} {unit}, errors {s.errors + s.missing}")
    lines = [
        f"{MARKER} suites={suites} -->",
        f"### ambigqa: {verdict}",
        "",
        " · ".join([f"System {_code(card.system.get('label') or '?')}", *counts]),
    ]
    comparison = card.comparison
    if comparison is not None:
        base, items = _code(comparison.base.get("system") or "?"), view.compared_items(comparison.base)
        lines.append(f"Compared with the base run of {base}, {items}, paired by item.")
        lines += [f"- {_code(note)}" for note in comparison.notes]
        for what, keys in (("the base run", comparison.only_base), ("this run", comparison.only_new)):
            if keys:
                lines.append(f"- {len(keys)} item(s) only in {what}, not compared")
    lines += ["", *_scores(card), "", "**Gates**", ""]
    lines += _gates(card)
    if comparison is not None:
        lines += ["", *_significant(comparison), "", *_regressions(comparison)]
    text = "\n".join(lines) + "\n"
    if len(text) > COMMENT_LIMIT:
        cut = "\n\n*[cut: the whole scorecard is in scorecard.md]*\n"
        text = text[:COMMENT_LIMIT].rpartition("\n")[0] + cut
    return safe_output(text)


def _code(text: object) -> str:
    """Outside text as an inline code span: one line, scrubbed, no link, mention or markup."""
    flat = " ".join(safe_output(str(text)).split()).translate(_CONTROLS)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    cell = flat.replace("|", "\\|")  # a pipe would end a table's cell even in a code span
    return f"{fence} {cell} {fence}"


# Control and bidi characters shown as markdown.inert shows them; a code span shows & < > as they are.
_CONTROLS = {k: v for k, v in markdown._ENTITIES.items() if chr(k) not in "&<>"}


def _headline(metric: str) -> bool:
    """A metric the comment's table shows: one with a better direction, per item or suite."""
    spec = METRICS[metric]
    return spec.higher_is_better is not None and spec.aggregation != "sum"


def _scores(card: Scorecard) -> list[str]:
    comparison = card.comparison
    head = ["suite", "metric", "score", "95% CI"]
    if comparison is not None:
        head += ["change", "95% CI", "Holm p"]
    align = "|".join("---:" if h in ("score", "change", "Holm p") else "---" for h in head)
    lines = [_table_row(head), f"|{align}|"]
    missing: dict[str, list[str]] = {}
    skipped: dict[str, list[str]] = {}
    for suite in card.suites:
        for metric, s in suite.metrics.items():
            if not _headline(metric):
                continue
            label = METRICS[metric].label
            if s.mean is None:
                missing.setdefault(s.reason or "no score", []).append(f"{suite.name} {label}")
                continue
            cells = [suite.name, label, view.score(s), view.interval(s)]
            if comparison is not None:
                row = comparison.row(suite.name, metric)
                cells += _change(row)
                if row is not None and row.diff is None:
                    skipped.setdefault(row.reason or "", []).append(f"{suite.name} {label}")
            lines.append(_table_row(cells))
    for what, groups in (("n/a", missing), ("not compared", skipped)):
        for reason, names in groups.items():
            lines.append(f"\n{what}: {markdown.inert(', '.join(names))} ({_code(reason)})")
    return lines


def _change(row: Row | None) -> list[str]:
    if row is None or row.diff is None:
        return ["", "not compared", ""]  # why: below the table, or the notes above it
    _, _, change, interval, _, holm, _ = view.change(row)
    return [change + _mark(row), interval, holm]


def _mark(row: Row) -> str:
    """▲ or ▼ where the interval of the change leaves 0, in the metric's better direction."""
    better = _better(row)
    return "" if better is None else (" ▲" if better else " ▼")


def _better(row: Row) -> bool | None:
    """Whether a significant change is for the better; None when the interval holds 0."""
    d = sign(row.metric)
    if not d or row.low is None or row.high is None or row.diff is None or row.low <= 0 <= row.high:
        return None
    return d * row.diff > 0


def _table_row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(markdown.inert(c) for c in cells) + " |"


def _gates(card: Scorecard) -> list[str]:
    lines = []
    if card.checks:  # every gate evaluated, passed ones too (issue 26, item 4)
        align = "|".join("---:" if h in ("value", "margin") else "---" for h in view.CHECK_HEAD)
        lines += [
            _table_row(view.CHECK_HEAD),
            f"|{align}|",
            *(_table_row(view.check(c)) for c in card.checks),
            "",
        ]
    lines += [f"- ❌ {_code(s)}" for s in card.shortfalls]
    if card.gates_deferred:
        lines.append(f"- ⏸ deferred: {_code(card.gates_deferred)}")
    if not card.shortfalls and not card.gates_deferred:
        lines.append("- ✅ every gate passed")
    unanswered = sum(s.errors + s.missing for s in card.suites)
    if unanswered:
        lines.append(f"- ❌ {unanswered} item(s) errored or missing: their tests fail, and so does the run")
    return lines


def _significant(comparison: Comparison) -> list[str]:
    """The metrics whose paired 95% interval leaves 0 (all items of a suite), worse first."""
    rows = [r for r in comparison.rows if r.slice == "all" and _better(r) is not None]
    rows.sort(key=lambda r: (bool(_better(r)), r.suite))
    head = "**Significant changes** (the paired 95% interval of the change leaves 0; Holm p beside it)"
    if not rows:
        return [head, "", "- none"]
    lines = [head, ""]
    for r in rows:
        base, new, change, interval, p, holm, _ = view.change(r)
        mark, word = ("▲", "better") if _better(r) else ("▼", "worse")
        what = markdown.inert(f"{r.suite} {METRICS[r.metric].label}")
        numbers = markdown.inert(f"{base} → {new}, {change} {interval}, Holm p {holm}")
        lines.append(f"- {mark} {what}: {numbers} ({word})")
    return lines


def _regressions(comparison: Comparison) -> list[str]:
    worse = comparison.regressions
    if not worse:
        return ["**Regressions**", "", "- no item scored lower than in the base run"]
    shown = f"the worst {REGRESSIONS_LISTED} a suite"
    lines = [f"**Worst regressions** ({len(worse)} items scored lower; {shown})", ""]
    for suite in dict.fromkeys(r.suite for r in worse):
        mine = [r for r in worse if r.suite == suite]
        for r in mine[:REGRESSIONS_LISTED]:
            status = f" (now {r.new_status})" if r.new_status != r.base_status else ""
            lines.append(f"- {_code(r.key)}: {markdown.inert(view.drops(r, '→') or 'no answer')}{status}")
        if len(mine) > REGRESSIONS_LISTED:
            more = len(mine) - REGRESSIONS_LISTED
            lines.append(f"- … {more} more in {markdown.inert(suite)}: see report.html")
    return lines


# ---- JUnit


def junit_suites(config: Any, card: Scorecard) -> None:
    """One passing test case per suite in ``--junitxml``'s file, its properties the suite's
    values, added through the JUnit plugin as a test's own reports reach it. Must run before
    that plugin writes the file (the scorecard plugin's session end is ``tryfirst``)."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - a pytest without it writes no JUnit we can add to
        return
    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    import pytest

    for suite in card.suites:
        nodeid = f"ambigqa::{JUNIT_NAME}[{suite.name}]"
        location = ("ambigqa", None, f"{JUNIT_NAME}[{suite.name}]")
        for when in ("call", "teardown"):
            report = pytest.TestReport(
                nodeid, location, {}, "passed", None, when,
                user_properties=junit_properties(card, suite.name) if when == "teardown" else (),
            )  # fmt: skip
            xml.pytest_runtest_logreport(report)


def junit_properties(card: Scorecard, name: str) -> list[tuple[str, object]]:
    """A suite's values as ``ambigqa.*`` properties: items, errors, missing; each metric's
    score on the printed scale (or n/a and why) and its 95% interval; with a baseline, the
    paired change, its interval and Holm p; and whether the run's gates passed."""
    suite = next(s for s in card.suites if s.name == name)
    props: list[tuple[str, object]] = [
        ("ambigqa.items", suite.items),
        ("ambigqa.errors", suite.errors),
        ("ambigqa.missing", suite.missing),
    ]
    for metric, s in suite.metrics.items():
        if s.mean is None:
            props.append((f"ambigqa.{metric}", safe_output(f"n/a: {s.reason}")))
            continue
        props.append((f"ambigqa.{metric}", round(s.mean, 6)))
        values = {"low": s.low, "high": s.high}
        row = card.comparison.row(name, metric) if card.comparison is not None else None
        if row is not None and row.diff is not None:
            values |= {"change": row.diff, "change.low": row.low, "change.high": row.high}
            values["change.p_holm"] = row.p_holm
        props += [(f"ambigqa.{metric}.{k}", round(v, 6)) for k, v in values.items() if v is not None]
    gates = "deferred" if card.gates_deferred else ("failed" if card.shortfalls else "passed")
    props.append(("ambigqa.gates", gates))
    return props
