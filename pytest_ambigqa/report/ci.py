"""What a run leaves for CI to show: the scorecard in the GitHub Actions step summary, a
short Markdown for a sticky pull-request comment, and each suite's values as JUnit
properties that CI dashboards chart.

- ``$GITHUB_STEP_SUMMARY`` (a file GitHub Actions names in every step): when set and not
  empty, the scorecard's Markdown, comparison and gates included (``scorecard.md``), is
  appended to it, cut to the 1 MiB a step's summary may hold.
- ``--ambig-pr-comment=FILE``: :func:`pr_comment`, compact and link-free, its first line a
  hidden marker (:data:`MARKER`) a bot finds its earlier comment by, to edit it in place.
- JUnit (``--junitxml``): one passing test case per suite, ``ambigqa::scorecard[SUITE]``,
  whose properties are the suite's values and its own gates' verdict; one test case per gate,
  ``ambigqa::gate[SUITE:METRIC]``, failing with the gate's line when it failed; one failing
  ``ambigqa::run[N]`` per report not written (:func:`junit`), beside the items' own.

Everything written is scrubbed of credentials: the Markdown through ``markdown.inert``, the
properties through ``safe_output``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..card.compare import Comparison, Row
from ..card.scorecard import Scorecard
from ..metrics import METRICS
from ..output import safe_output, write_text
from ..protocols import protocol_of
from . import markdown, view

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
    """Markdown for a sticky pull-request comment: first the verdict and the gates, then each
    suite's scores (with the paired change against the baseline), the significant changes
    and the worst regressions.
    No links, mentions or references: text from outside stands in code spans, where GitHub
    makes none."""
    suites = ",".join(re.sub(r"[^a-z0-9_.-]", "", s.name.lower()) for s in card.suites)
    counts = []
    for s in card.suites:
        unit = protocol_of(s.protocol.name).unit
        counts.append(f"{markdown.inert(s.title)} {s.items} {unit}, errors {s.errors + s.missing}")
    lines = [
        f"{MARKER} suites={suites} -->",
        f"### ambigqa: {markdown.inert(view.verdict(card))}",
        "",
        *_gates(card),
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
    lines += ["", *_scores(card)]
    if comparison is not None:
        lines += ["", *_significant(comparison), "", *_regressions(comparison)]
    text = safe_output("\n".join(lines) + "\n")  # scrubbed before it is cut
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
        head += ["change", "95% CI of the change"]  # Holm's p: in scorecard.md, where its scope is said
    align = "|".join("---:" if h in ("score", "change") else "---" for h in head)
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
        return ["", "not compared"]  # why: below the table, or the notes above it
    _, _, change, interval, *_ = view.change(row)
    return [change + _mark(row), interval]


def _mark(row: Row) -> str:
    """▲ or ▼ where the interval of the change leaves 0, in the metric's better direction."""
    better = _better(row)
    return "" if better is None else (" ▲" if better else " ▼")


def _better(row: Row) -> bool | None:
    """Whether a significant change is for the better; None when the interval holds 0."""
    word, _ = view.significance(row, 0)
    return None if word is None else word == "better"


def _table_row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(markdown.inert(c) for c in cells) + " |"


def _gates(card: Scorecard) -> list[str]:
    """What failed first (items errored or missing, each gate's FAILED line), then every gate
    evaluated as a table, passed ones too (issue 26, item 4)."""
    lines = []
    errored = view.unanswered(card)
    if errored:
        lines.append(f"- ❌ {errored} item(s) errored or missing: their tests fail, and so does the run")
    lines += [f"- ❌ {_code(s)}" for s in card.shortfalls]
    if card.gates_deferred:
        lines.append(f"- ⏸ deferred: {_code(card.gates_deferred)}")
    elif not card.shortfalls:
        lines.append("- ✅ every gate passed" if view.gates_evaluated(card)[1] else "- no gates set")
    if card.checks:
        align = "|".join("---:" if h in ("value", "margin") else "---" for h in view.CHECK_HEAD)
        lines += [
            "",
            _table_row(view.CHECK_HEAD),
            f"|{align}|",
            *(_table_row(view.check(c)) for c in card.checks),
        ]
    return lines


def _significant(comparison: Comparison) -> list[str]:
    """The metrics whose change is significant by the statistic the gate reads, its paired
    95% interval leaving 0 (all items of a suite), worse first; that interval printed, and
    where Holm's p disagrees, why, in words."""
    tests = sum(r.p is not None for r in comparison.rows)
    rows = [r for r in comparison.rows if r.slice == "all" and _better(r) is not None]
    rows.sort(key=lambda r: (bool(_better(r)), r.suite))
    head = f"**Significant changes** ({view.SIGNIFICANT_BY})"
    if not rows:
        return [head, "", "- none"]
    lines = [head, ""]
    whys: list[str] = []
    for r in rows:
        base, new, change, interval, *_ = view.change(r)
        word, why = view.significance(r, tests)
        mark = "▲" if word == "better" else "▼"
        what = markdown.inert(f"{r.suite} {METRICS[r.metric].label}")
        numbers = markdown.inert(f"{base} → {new}, {change} {interval}")
        if why and why not in whys:
            whys.append(why)
        note = f"; Holm: see {'†' * (whys.index(why) + 1)}" if why else ""
        lines.append(f"- {mark} {what}: {numbers} ({word}{note})")
    for n, why in enumerate(whys, 1):  # a paragraph each
        lines += ["", f"{'†' * n} {markdown.inert(why)}"]
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


# ---- JUnit and the gates as test cases


@dataclass(frozen=True)
class GateCase:
    """One gate of the run as a test case: ``ambigqa::gate[NAME]``, failing with the gate's
    FAILED line when it failed, passing (with what it compared) otherwise."""

    suite: str  # "" for a line that names no suite
    name: str  # SUITE:METRIC, SUITE:METRIC:OPTION beside another gate on the metric, SUITE:OPTION
    passed: bool
    line: str

    @property
    def nodeid(self) -> str:
        return f"ambigqa::{GATE_NAME}[{self.name}]"


GATE_NAME = "gate"  # the gate test cases: ambigqa::gate[SUITE:METRIC]


def gate_cases(card: Scorecard) -> list[GateCase]:
    """Every gate evaluated (each check), then each failure no option sets (a configured
    model that scored nothing, the protocol's own): one case each, named uniquely. None
    while the gates are deferred to the merge."""
    if card.gates_deferred:
        return []
    names: list[tuple[str, str, str]] = []  # (suite, metric or "", option)
    for c in card.checks:
        option, _, entry = c.gate.partition("=")
        option = option.removeprefix("--ambig-")
        key = entry.partition("=")[0].rpartition(":")[2]  # [SUITE:]METRIC[^k]=VALUE's metric
        metric = c.metric or (key if option == "item-min" else "")
        if metric and option == "fail-under" and key.endswith("^k"):
            metric += "^k"
        names.append((c.suite, metric, option))
    cases: list[GateCase] = []
    seen: dict[str, int] = {}
    for c, (suite, metric, option) in zip(card.checks, names, strict=True):
        shared = sum(1 for s, m, _ in names if (s, m) == (suite, metric)) > 1
        parts = [suite] if suite else []
        parts += [metric, option] if metric and shared else [metric] if metric else [option]
        name = ":".join(parts)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name += f"#{seen[name]}"
        cells = view.check(c)
        said = f"{c.suite}: {c.statistic}: {cells[3]}, bound {cells[4]} ({c.gate}): {cells[6]}".lstrip(": ")
        cases.append(GateCase(suite, name, c.passed, said if c.passed or not c.failure else c.failure))
    from_checks = {c.failure for c in card.checks if c.failure}
    suites = sorted((s.name for s in card.suites), key=len, reverse=True)
    for n, line in enumerate((s for s in card.shortfalls if s not in from_checks), 1):
        suite = next((s for s in suites if line.startswith(f"{s} ")), "")
        name = f"{suite}:required#{n}" if suite else f"required#{n}"
        cases.append(GateCase(suite, name, False, line))
    return cases


def suite_verdict(card: Scorecard, suite: str, cases: Iterable[GateCase] | None = None) -> str:
    """A suite's own gates: ``failed``, ``passed``, ``deferred`` (a shard's, to the merge) or
    ``none`` (no gate was set on it)."""
    if card.gates_deferred:
        return "deferred"
    mine = [c for c in (gate_cases(card) if cases is None else cases) if c.suite == suite]
    if not mine:
        return "none"
    return "passed" if all(c.passed for c in mine) else "failed"


GATE_FAILED = "gate FAILED: "  # the start of a run's line of a gate it could not evaluate at all


def unmet_gate(line: str) -> bool:
    """Whether a line of what a run could not do is a gate's (no item ran to meet it)."""
    return line.startswith(GATE_FAILED)


def unmet_nodeid(n: int, line: str) -> str:
    """The test case of a run's ``n``-th line of what it could not do: ``ambigqa::gate[run]``
    for a gate, ``ambigqa::run[N]`` for a report not written (or the run's own file damaged)."""
    return f"ambigqa::{GATE_NAME}[run]" if unmet_gate(line) else f"ambigqa::run[{n}]"


def junit(config: Any, card: Scorecard | None, unmet: Sequence[str] = ()) -> None:
    """Into ``--junitxml``'s file, through the JUnit plugin as a test's own reports reach it:
    one passing case per suite, ``ambigqa::scorecard[SUITE]``, its properties the suite's
    values; one case per gate (:func:`gate_cases`), failing with its line when it failed;
    one failing case per ``unmet`` line (:func:`unmet_nodeid`: a report not written, a gate
    no item ran to meet). Must
    run before that plugin writes the file (the scorecard plugin's session end is
    ``tryfirst``)."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - a pytest without it writes no JUnit we can add to
        return
    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    if card is not None:
        cases = gate_cases(card)
        for suite in card.suites:
            _case(xml, JUNIT_NAME, suite.name, None, junit_properties(card, suite.name, cases))
        for case in cases:
            _case(xml, GATE_NAME, case.name, None if case.passed else safe_output(case.line), ())
    for n, line in enumerate(unmet, 1):
        kind, _, name = unmet_nodeid(n, line).removeprefix("ambigqa::").partition("[")
        _case(xml, kind, name.removesuffix("]"), safe_output(line), ())


def _case(
    xml: Any, kind: str, name: str, failure: str | None, properties: Sequence[tuple[str, object]]
) -> None:
    import pytest

    nodeid, location = f"ambigqa::{kind}[{name}]", ("ambigqa", None, f"{kind}[{name}]")
    outcome: Literal["passed", "failed"] = "passed" if failure is None else "failed"
    xml.pytest_runtest_logreport(pytest.TestReport(nodeid, location, {}, outcome, failure, "call"))
    xml.pytest_runtest_logreport(
        pytest.TestReport(nodeid, location, {}, "passed", None, "teardown", user_properties=properties)
    )


def junit_properties(
    card: Scorecard, name: str, cases: Sequence[GateCase] | None = None
) -> list[tuple[str, object]]:
    """A suite's values as ``ambigqa.*`` properties: items, errors, missing; each metric's
    score on the printed scale (or n/a and why) and its 95% interval; with a baseline, the
    paired change, its interval and Holm p; and the verdict of this suite's own gates
    (:func:`suite_verdict`), not the run's."""
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
    props.append(("ambigqa.gates", suite_verdict(card, name, cases)))
    return props
