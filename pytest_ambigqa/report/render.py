"""The scorecard as text: terminal summary lines and Markdown (fit for $GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

from typing import Any

from ..metrics import METRICS
from . import published
from .scorecard import MetricSummary, Scorecard, SuiteCard

# The setting of each suite's headline published table (MARCH Table 3, ASQA Table 11,
# CondAmbigQA Table 2); MARCH's per-type rows (Table 4) use the type as setting.
MAIN_SETTING = {"march": "all", "asqa": "dev", "condambigqa": "main"}


def _num(value: float | None, metric: str) -> str:
    """Percentages and lengths with one decimal, 0-1 and 0-5 scores with three."""
    if value is None:
        return "n/a"
    spec = METRICS.get(metric)  # evidence recall is a percentage without a metric entry
    return f"{value:.3f}" if spec is not None and spec.factor == 1 and metric != "length" else f"{value:.1f}"


def _score(s: MetricSummary) -> str:
    return _num(s.mean, s.metric)


def _interval(s: MetricSummary) -> str:
    if s.mean is None:
        return s.reason or ""
    return f"[{_num(s.low, s.metric)}, {_num(s.high, s.metric)}]"


def _row_label(row: dict[str, Any]) -> str:
    return f"{row['method']} / {row['model']}" if row.get("method") else row["model"]


def paper_range(suite: str, metric: str, setting: str) -> str:
    """'lo–hi (best: method / model)' over the published rows, or '' if none report it."""
    rows = [r for r in published.rows(suite, setting) if metric in r]
    if not rows:
        return ""
    values = [r[metric] for r in rows]
    text = f"{min(values):g}–{max(values):g}" if len(rows) > 1 else f"{values[0]:g}"
    if METRICS[metric].higher_is_better and len(rows) > 1:
        best = max(rows, key=lambda r: r[metric])
        text += f" (best {_row_label(best)})"
    return text


def _source_line(card: SuiteCard) -> str:
    origin = ", bundled sample (not the benchmark)" if card.is_sample else ""
    return f"{card.title}: {card.items} items{origin}"


def _system_lines(card: Scorecard) -> list[str]:
    system = card.system
    lines = [f"system: {system['label']}"]
    if system.get("default"):
        lines.append("  (no --ambig-system given: this is the bundled lexical baseline, not your system)")
    if system.get("inputs"):
        lines.append(f"  receives: {', '.join(system['inputs'])}")
    if system.get("gold_inputs"):
        lines.append(f"  gold inputs ({', '.join(system['gold_inputs'])}): scores are an upper bound")
    stored = sum(r.cached for r in card.results)
    if stored:
        asked = sum(not r.cached and r.status != "missing" for r in card.results)
        lines.append(f"  answers: {stored} from the response store, {asked} asked now")
    return lines


def _table(rows: list[list[str]], align: str, indent: str = "  ") -> list[str]:
    """Columns padded to width; ``align`` has one ``l`` or ``r`` per column."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        (
            indent
            + "  ".join(
                c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(row, widths, align, strict=True)
            )
        ).rstrip()
        for row in rows
    ]


def _judge_lines(card: Scorecard) -> list[str]:
    judge = card.judge
    if not judge:
        return []
    usage = judge["usage"]
    templates = ", ".join(f"{k} {v}" for k, v in judge["templates"].items())
    fingerprints = ", ".join(usage["fingerprints"]) or "none reported"
    cost = (
        f"${usage['cost']:.4f}"
        if judge["prices_per_million"][0] is not None
        else "no prices given (--ambig-judge-price)"
    )
    samples = (
        f", {judge['samples']} samples per judgement (seeds from {judge['seed']})"
        if judge["samples"] > 1
        else ""
    )
    return [
        f"judge: {judge['model']} at {judge['base_url']}{samples}",
        f"  templates {templates}; system fingerprints: {fingerprints}",
        f"  requests {usage['requests']} (+{usage['cached']} from cache), retries {usage['retries']}, "
        f"re-asked {usage['reasks']}, tokens {usage['prompt_tokens']:,} in / "
        f"{usage['completion_tokens']:,} out, cost {cost}",
    ]


def _variance_lines(suite: SuiteCard) -> list[str]:
    lines = []
    for v in suite.variance.values():
        line = (
            f"  judge variance, {METRICS[v.metric].label}: mean spread {_num(v.mean_spread, v.metric)}, "
            f"max {_num(v.max_spread, v.metric)}, all samples agree on {v.agreement:.0%} of {v.items} items"
        )
        if v.straddling:
            line += f"; straddling --ambig-item-min: {', '.join(v.straddling)}"
        lines.append(line)
    return lines


def terminal_lines(card: Scorecard) -> list[str]:
    lines = _system_lines(card) + _judge_lines(card)
    for suite in card.suites:
        setting = MAIN_SETTING.get(suite.name, "")
        lines += ["", _source_line(suite)]
        lines.append(f"  data: {suite.source} (sha256 {suite.sha256[:12]})")
        lines.append(f"  errors {suite.errors}, missing {suite.missing}")
        rows = [["metric", "score", "95% CI", "scored", "papers"]]
        for metric, s in suite.metrics.items():
            scored = f"{s.n}/{s.n + s.unscored}" if s.n else ""
            rows.append(
                [
                    METRICS[metric].label,
                    _score(s),
                    _interval(s),
                    scored,
                    paper_range(suite.name, metric, setting),
                ]
            )
        lines += _table(rows, "lrlrl")
        if suite.slices:
            shown = [m for m in suite.metrics if any(sl.metrics[m].mean is not None for sl in suite.slices)]
            papers = next(
                (m for m in shown if any(m in r for r in published.rows(suite.name, "semantic"))), None
            )
            rows = [["ambiguity type", "items", *(METRICS[m].label for m in shown)]]
            if papers:
                rows[0].append(f"papers {METRICS[papers].label}")
            for sl in suite.slices:
                row = [sl.name, str(sl.items), *(_score(sl.metrics[m]) for m in shown)]
                if papers:
                    row.append(paper_range(suite.name, papers, sl.name).split(" (")[0])
                rows.append(row)
            lines += [""] + _table(rows, "lr" + "r" * len(shown) + "l")
        if suite.variance:
            lines += [""] + _variance_lines(suite)
        if suite.evidence:
            lines += [""] + _evidence_lines(card, suite)
        missing = [r.key for r in card.results if r.suite == suite.name and r.status == "missing"]
        if missing:
            more = f" (+{len(missing) - 10} more)" if len(missing) > 10 else ""
            lines.append(f"  missing: {', '.join(missing[:10])}{more}")
    lines.append("")
    lines += [f"gate FAILED: {s}" for s in card.shortfalls]
    return lines


def _evidence_title(card: Scorecard) -> str:
    info = card.retrieval or {}
    return (
        f"evidence coverage: recall@{info.get('k')} of gold passages, {info.get('retriever')} over "
        f"{info.get('passages')} passages ({info.get('corpus')})"
    )


def _evidence_rows(suite: SuiteCard) -> list[list[str]]:
    return [
        [
            e.name,
            str(e.items),
            _score(e.original),
            _interval(e.original),
            _score(e.clarified),
            _interval(e.clarified),
        ]
        for e in suite.evidence
    ]


def _evidence_lines(card: Scorecard, suite: SuiteCard) -> list[str]:
    header = ["slice", "items", "original question", "95% CI", "clarified questions", "95% CI"]
    return ["  " + _evidence_title(card)] + _table([header, *_evidence_rows(suite)], "lrrlrl")


def markdown(card: Scorecard) -> str:
    out = ["# ambigqa scorecard", ""]
    out += [line.strip() and f"- {line.strip()}" for line in _system_lines(card) + _judge_lines(card)]
    for suite in card.suites:
        out += [
            "",
            f"## {suite.title}",
            "",
            f"{_source_line(suite)}; errors {suite.errors}, missing {suite.missing}.",
            "",
        ]
        out += [f"Data: `{suite.source}` (sha256 `{suite.sha256}`)", ""]
        out += ["| metric | score | 95% CI | scored | papers |", "|---|---:|---|---:|---|"]
        setting = MAIN_SETTING.get(suite.name, "")
        for metric, s in suite.metrics.items():
            out.append(
                f"| {METRICS[metric].label} | {_score(s)} | {_interval(s)} | {s.n}/{s.n + s.unscored} "
                f"| {paper_range(suite.name, metric, setting)} |"
            )
        if suite.slices:
            shown = list(suite.metrics)
            out += ["", "By ambiguity type:", ""]
            out.append("| type | items | " + " | ".join(METRICS[m].label for m in shown) + " |")
            out.append("|---|---:|" + "---:|" * len(shown))
            for sl in suite.slices:
                out.append(
                    f"| {sl.name} | {sl.items} | " + " | ".join(_score(sl.metrics[m]) for m in shown) + " |"
                )
        if suite.variance:
            out += [""] + [f"- {line.strip()}" for line in _variance_lines(suite)]
        if suite.evidence:
            out += ["", f"{_evidence_title(card)[0].upper()}{_evidence_title(card)[1:]}:", ""]
            out += ["| slice | items | original question | 95% CI | clarified questions | 95% CI |"]
            out += ["|---|---:|---:|---|---:|---|"]
            out += ["| " + " | ".join(row) + " |" for row in _evidence_rows(suite)]
        rows = published.rows(suite.name, MAIN_SETTING.get(suite.name))
        metrics = [m for m in suite.metrics if any(m in r for r in rows)]
        if rows and metrics:
            out += ["", f"<details><summary>Published ({rows[0]['source']})</summary>", ""]
            out.append("| method / model | " + " | ".join(METRICS[m].label for m in metrics) + " |")
            out.append("|---|" + "---:|" * len(metrics))
            for r in rows:
                out.append(
                    f"| {_row_label(r)} | "
                    + " | ".join(f"{r[m]:g}" if m in r else "" for m in metrics)
                    + " |"
                )
            out += ["", "</details>"]
        errored = [r for r in card.results if r.suite == suite.name and r.status != "ok"]
        if errored:
            out += ["", "Items without an answer:", ""]
            out += [f"- `{r.key}` ({r.status}): {r.error}" for r in errored]
    out += ["", "## Gates", ""]
    out += [f"- FAILED: {s}" for s in card.shortfalls] or ["- passed"]
    return "\n".join(out) + "\n"
