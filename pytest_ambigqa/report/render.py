"""The scorecard as text: terminal summary lines and Markdown (fit for $GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

import re
from typing import Any

from ..metrics import METRICS
from ..output import safe_output
from ..suites import SUITES
from . import published
from .compare import REGRESSIONS_SHOWN, Comparison, Regression, Row
from .scorecard import MetricSummary, Scorecard, SuiteCard

NOT_COMPARABLE = "n/c"


def _headline(suite: str) -> str:
    """The slice of published rows the "papers" column shows (MARCH Table 3, ASQA Table 11,
    CondAmbigQA Tables 2 and 3; MARCH's per-type rows use the type): the suite says which."""
    known = SUITES.get(suite)
    return known.headline_setting if known is not None else "all"


def decimals(metric: str) -> int | None:
    """Percentages and lengths with one decimal, 0-1 and 0-5 scores with three, totals as
    they are (None); report.html prints them alike."""
    spec = METRICS.get(metric)  # evidence recall is a percentage without a metric entry
    if spec is not None and spec.aggregation == "sum":
        return None
    return 3 if spec is not None and spec.factor == 1 and metric != "length" else 1


def _num(value: float | None, metric: str) -> str:
    if value is None:
        return "n/a"
    digits = decimals(metric)
    return f"{value:g}" if digits is None else f"{value:.{digits}f}"


def _score(s: MetricSummary) -> str:
    return _num(s.mean, s.metric)


def _interval(s: MetricSummary) -> str:
    if s.mean is None:
        return s.reason or ""
    if s.low is None:  # a total, or the official bootstrap mid: no interval of its own
        return ""
    return f"[{_num(s.low, s.metric)}, {_num(s.high, s.metric)}]"


def _scored(s: MetricSummary) -> str:
    """Items scored from an answer, of all; the items without one that count as 0 said apart."""
    text = f"{s.n - s.failed}/{s.n + s.unscored}"
    return f"{text} +{s.failed} failed as 0" if s.failed else text


def _row_label(row: dict[str, Any]) -> str:
    return f"{row['method']} / {row['model']}" if row.get("method") else row["model"]


def paper_range(rows: list[dict[str, Any]], metric: str, setting: str) -> str:
    """'lo–hi (best: method / model)' over the comparable rows of ``setting``; rows of the
    run's protocol that still cannot be compared (an upper-bound run, a source that is not
    like for like) are marked n/c; '' if no row of the protocol reports the metric."""
    rows = [r for r in rows if metric in r and r.get("setting") == setting and r["same_protocol"]]
    comparable = [r for r in rows if r["comparable"]]
    shown = comparable or rows
    if not shown:
        return ""
    values = [r[metric] for r in shown]
    text = f"{min(values):g}–{max(values):g}" if len(shown) > 1 else f"{values[0]:g}"
    if not comparable:
        return f"{NOT_COMPARABLE} {text}"
    if METRICS[metric].higher_is_better and len(shown) > 1:
        best = max(shown, key=lambda r: r[metric])
        text += f" (best {_row_label(best)})"
    return text


def _published_lines(suite: SuiteCard, rows: list[dict[str, Any]]) -> list[str]:
    """Which published rows the "papers" column draws on, and why the others are not comparable."""
    lines = []
    by_source: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_source.setdefault(row["source"], []).append(row)
    for name, group in by_source.items():
        comparable = [r for r in group if r["comparable"]]
        note = published.source(suite.name, name).get("note", "")
        if comparable:
            lines.append(f"papers: {name}, {len(comparable)} rows comparable: {note}".rstrip(": "))
        else:
            lines.append(f"{NOT_COMPARABLE}: {name}, {len(group)} rows: {group[0]['reason']}")
    return lines


def _protocol_lines(suite: SuiteCard) -> list[str]:
    scorer = f"; scorer: {suite.profile}" if suite.profile else ""
    lines = [f"protocol: {suite.protocol.label}{scorer}"]
    if suite.protocol.upper_bound:
        lines.append(f"  upper bound: {suite.protocol.upper_bound}")
    lines += [f"  note: {note}" for note in suite.protocol.notes]
    return lines


def _source_line(card: SuiteCard) -> str:
    origin = ", bundled sample (not the benchmark)" if card.is_sample else ""
    return f"{card.title}: {card.items} {_unit(card)}{origin}"


def _system_lines(card: Scorecard) -> list[str]:
    system = card.system
    lines = [f"system: {system['label']}"]
    if system.get("default"):
        lines.append("  (no --ambig-system given: this is the bundled lexical baseline, not your system)")
    if system.get("inputs"):
        lines.append(f"  receives: {', '.join(system['inputs'])}")
    if system.get("gold_inputs"):
        lines.append(f"  gold inputs ({', '.join(system['gold_inputs'])}): scores are an upper bound")
    if card.config.get("device_used"):
        lines.append(
            f"  local models (reader, dense embedder) ran on {card.config['device_used']} "
            f"(--ambig-device={card.config.get('device', 'auto')})"
        )
    calls = system.get("model_calls")
    if calls:
        priced = (card.config.get("llm_price") or None) is not None
        cost = f"${calls['cost']:.4f}" if priced else "no prices given (--ambig-llm-price)"
        tokens_in, tokens_out = calls["prompt_tokens_per_item"], calls["completion_tokens_per_item"]
        lines.append(
            f"  model calls (llm:{calls['method']}, {calls['model']}): {calls['calls_per_item']:.1f} "
            f"per item ({calls.get('cached_per_item', 0):.1f} from llm.sqlite), {tokens_in:,.0f} tokens "
            f"in / {tokens_out:,.0f} out per item, cost {cost}; "
            f"latency {calls['latency_mean']:.2f} s mean, {calls['latency_median']:.2f} s median, "
            f"over {calls['items']} answered items"
        )
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
    lines = [
        f"judge: {judge['model']} at {judge['base_url']}{samples}",
        f"  templates {templates}; system fingerprints: {fingerprints}",
        f"  requests {usage['requests']} (+{usage['cached']} from cache), retries {usage['retries']}, "
        f"re-asked {usage['reasks']}, tokens {usage['prompt_tokens']:,} in / "
        f"{usage['completion_tokens']:,} out, cost {cost}",
    ]
    deepeval = judge.get("deepeval") or {}
    if deepeval.get("geval_templates"):
        lines.append(
            f"  G-Eval: deepeval {deepeval['version']} (templates {deepeval['geval_templates']}); "
            f"CondAmbigQA's published scores used deepeval {deepeval['released_with']}"
        )
    return lines


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
        setting = _headline(suite.name)
        rows = _rows(suite)
        lines += ["", _source_line(suite)]
        lines.append(f"  data: {suite.source} (sha256 {suite.sha256[:12]})")
        lines += [f"  {line}" for line in _protocol_lines(suite)]
        lines += [f"  data warning: {warning}" for warning in suite.data_warnings]
        lines.append(f"  errors {suite.errors}, missing {suite.missing}")
        table = [["metric", "score", "95% CI", "scored", "papers"]]
        for metric, s in suite.metrics.items():
            table.append(
                [
                    METRICS[metric].label,
                    _score(s),
                    _interval(s),
                    _scored(s) if s.n else "",
                    paper_range(rows, metric, setting),
                ]
            )
        lines += _table(table, "lrlrl")
        lines += [f"  {line}" for line in _published_lines(suite, rows)]
        if suite.slices:
            shown = [m for m in suite.metrics if any(sl.metrics[m].mean is not None for sl in suite.slices)]
            papers = next(
                (m for m in shown if any(m in r and r["setting"] == "semantic" for r in rows)), None
            )
            table = [[_slice_title(suite), _unit(suite), *(METRICS[m].label for m in shown)]]
            if papers:
                table[0].append(f"papers {METRICS[papers].label}")
            for sl in suite.slices:
                row = [sl.name, str(sl.items), *(_score(sl.metrics[m]) for m in shown)]
                if papers:
                    row.append(paper_range(rows, papers, sl.name).split(" (")[0])
                table.append(row)
            lines += [""] + _table(table, "lr" + "r" * len(shown) + ("l" if papers else ""))
        if suite.variance:
            lines += [""] + _variance_lines(suite)
        for title, table, align in _interactive_tables(suite, full=False):
            lines += ["", f"  {title}"] + (_table(table, align, "    ") if table else [])
        if suite.evidence:
            lines += [""] + _evidence_lines(card, suite)
        missing = [r.key for r in card.results if r.suite == suite.name and r.status == "missing"]
        if missing:
            more = f" (+{len(missing) - 10} more)" if len(missing) > 10 else ""
            lines.append(f"  missing: {', '.join(missing[:10])}{more}")
    if card.comparison is not None:
        lines += comparison_lines(card.comparison)
    lines.append("")
    lines += [f"gate FAILED: {s}" for s in card.shortfalls]
    if card.gates_deferred:
        lines.append(f"gates deferred: {card.gates_deferred}")
    return lines


def _rows(suite: SuiteCard) -> list[dict[str, Any]]:
    """The suite's published rows beside this run; an interactive run has its own context
    rows (in its section), and no single-shot row says anything about it."""
    return [] if suite.interactive is not None else published.compare(suite.name, suite.protocol)


def _unit(suite: SuiteCard) -> str:
    return "episodes" if suite.interactive is not None else "items"


def _slice_title(suite: SuiteCard) -> str:
    return "queries" if suite.interactive is not None else "ambiguity type"


def _value(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _interactive_tables(suite: SuiteCard, full: bool = True) -> list[tuple[str, list[list[str]], str]]:
    """The interactive section as (title, table, column alignment): action sequences, the
    costs (Figure 6), the reference policies and oracle (Tables 2-3), steerability
    (Table 4), and the papers' rows as context (``full``; else one line naming them). An
    empty table: the title says it all."""
    section = suite.interactive
    if section is None:
        return []
    out: list[tuple[str, list[list[str]], str]] = []
    sequences = section["sequences"]
    names = list(dict.fromkeys(s for counts in sequences.values() for s in counts))
    if names:
        table = [["queries", *names]] + [
            [split, *(str(c.get(s, 0)) for s in names)] for split, c in sequences.items()
        ]
        out.append(("action sequences (scored episodes)", table, "l" + "r" * len(names)))
    metrics = ("reward", "episode_f1", "clarify_rate", "multi_answer_rate", "answer_words")
    table = [["alpha", "beta", "episodes", *(METRICS[m].label for m in metrics)]]
    for row in section["costs"]:
        factor = {m: METRICS[m].factor for m in metrics}
        table.append(
            [f"{row['alpha']:g}", f"{row['beta']:g}", f"{row['scored']}/{row['episodes']}"]
            + [_value(None if row[m] is None else row[m] * factor[m]) for m in metrics]
        )
    out.append(("by cost pair (corpus-level steerability)", table, "rrr" + "r" * len(metrics)))
    for reason, n in section["unscored"].items():
        out.append((f"unscored: {n} episode(s): {reason}", [], ""))
    reference = section["reference"]
    if "reason" in reference:
        out.append((f"reference policies, oracle and steerability: n/a ({reference['reason']})", [], ""))
    else:
        table = [["policy", "ambig. reward", "ambig. F1", "unambig. reward", "unambig. F1"]]
        for plan, splits in reference["policies"].items():
            cells = []
            for split in ("ambiguous", "unambiguous"):
                got = splits.get(split, {})
                cells += [_value(got.get("reward")), _value(got.get("f1"))]
            table.append([plan, *cells])
        out.append(("forced-action policies of this system, and the hindsight-best oracle", table, "lrrrr"))
        for change, got in reference["steerability"].items():
            if "reason" in got:
                out.append((f"steerability ({change}): n/a ({got['reason']})", [], ""))
            else:
                out.append(
                    (
                        f"prompt-level steerability, {change} {got['from']:g} → {got['to']:g}: recall "
                        f"{got['recall']:.2f}, precision {got['precision']:.2f}, F1 {got['f1']:.2f} "
                        f"({reference['queries']} query-cost pairs)",
                        [],
                        "",
                    )
                )
    context = published.protocol_rows("interactive")
    shown = [r for r in context if r["setting"] in ("ambiguous", "unambiguous")]
    if shown and not full:
        sources = ", ".join(dict.fromkeys(f"{r['source']} ({r['dataset']})" for r in shown))
        out.append((f"{NOT_COMPARABLE}, context only, in scorecard.md: {sources}", [], ""))
    elif shown:
        title = f"published rows, context only ({NOT_COMPARABLE}: other items, another policy model)"
        table = [["source", "method / model", "queries", "Reward", "F1", "% Clar.", "% MA"]]
        for r in shown:
            values = [f"{r[m]:g}" for m in ("reward", "episode_f1", "clarify_rate", "multi_answer_rate")]
            table.append([f"{r['source']} ({r['dataset']})", _row_label(r), r["setting"], *values])
        out.append((title, table, "lllrrrr"))
        steer = [r for r in context if r["setting"] == "steerability"]
        if steer:
            parts = [f"{c}_{m}" for c in ("alpha", "beta") for m in ("recall", "precision", "f1")]
            table = [["source", "method / model", *(p.replace("_", " ") for p in parts)]]
            table += [
                [f"{r['source']} ({r['dataset']})", _row_label(r), *(f"{r[p]:g}" for p in parts)]
                for r in steer
            ]
            out.append(
                (f"published steerability, context only ({NOT_COMPARABLE})", table, "ll" + "r" * len(parts))
            )
    return out


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


_BIDI_CONTROLS = (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x61C)
_MD_ENTITIES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
    # control characters shown as their pictures (a NUL makes grep call the file binary) ...
    | {chr(c): chr(0x2400 + c) for c in range(0x20)}
    | {"\x7f": "\u2421"}
    | dict.fromkeys(map(chr, range(0x80, 0xA0)), "\ufffd")
    # ... and bidi controls by name, so that none reorders the text around it
    | {chr(c): f"[U+{c:04X}]" for c in _BIDI_CONTROLS}
)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")


def _md(text: object) -> str:
    """Inert Markdown for any string that came from outside (a system, a model, a file):
    scrubbed, one line, no HTML, emphasis, link syntax, code or table breaks (GitHub step
    summaries render it; bare URLs may still be linked)."""
    flat = " ".join(safe_output(str(text)).split()).translate(_MD_ENTITIES)
    return _MD_SPECIAL.sub(r"\\\1", flat)


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(_md(c) for c in cells) + " |"


def markdown(card: Scorecard) -> str:
    out = ["# ambigqa scorecard", ""]
    out += [line.strip() and f"- {_md(line)}" for line in _system_lines(card) + _judge_lines(card)]
    for suite in card.suites:
        out += [
            "",
            f"## {suite.title}",
            "",
            _md(f"{_source_line(suite)}; errors {suite.errors}, missing {suite.missing}."),
            "",
        ]
        out += [_md(f"Data: {suite.source} (sha256 {suite.sha256})"), ""]
        out += [f"- {_md(line)}" for line in _protocol_lines(suite)]
        out += [f"- data warning: {_md(warning)}" for warning in suite.data_warnings] + [""]
        out += ["| metric | score | 95% CI | scored | papers |", "|---|---:|---|---:|---|"]
        setting = _headline(suite.name)
        rows = _rows(suite)
        for metric, s in suite.metrics.items():
            out.append(
                _md_row(
                    [
                        METRICS[metric].label,
                        _score(s),
                        _interval(s),
                        _scored(s),
                        paper_range(rows, metric, setting),
                    ]
                )
            )
        out += [""] + [f"- {_md(line)}" for line in _published_lines(suite, rows)]
        if suite.slices:
            shown = list(suite.metrics)
            out += ["", f"By {_slice_title(suite)}:", ""]
            out.append(_md_row([_slice_title(suite), _unit(suite), *(METRICS[m].label for m in shown)]))
            out.append("|---|---:|" + "---:|" * len(shown))
            for sl in suite.slices:
                out.append(_md_row([sl.name, str(sl.items), *(_score(sl.metrics[m]) for m in shown)]))
        for title, table, align in _interactive_tables(suite):
            out += ["", _md(title[0].upper() + title[1:]), ""]
            if table:
                out.append(_md_row(table[0]))
                out.append("|" + "|".join("---:" if a == "r" else "---" for a in align) + "|")
                out += [_md_row(row) for row in table[1:]]
        if suite.variance:
            out += [""] + [f"- {_md(line)}" for line in _variance_lines(suite)]
        if suite.evidence:
            out += ["", _md(f"{_evidence_title(card)[0].upper()}{_evidence_title(card)[1:]}:"), ""]
            out += ["| slice | items | original question | 95% CI | clarified questions | 95% CI |"]
            out += ["|---|---:|---:|---|---:|---|"]
            out += [_md_row(row) for row in _evidence_rows(suite)]
        headline = [r for r in rows if r.get("setting") == setting]
        metrics = [m for m in suite.metrics if any(m in r for r in headline)]
        if headline and metrics:
            out += ["", "<details><summary>Published rows</summary>", ""]
            out.append(
                _md_row(
                    [
                        "source",
                        "method / model",
                        "protocol",
                        *(METRICS[m].label for m in metrics),
                        "comparable",
                    ]
                )
            )
            out.append("|---|---|---|" + "---:|" * len(metrics) + "---|")
            for r in headline:
                values = [f"{r[m]:g}" if m in r else "" for m in metrics]
                verdict = "yes" if r["comparable"] else "no"
                out.append(_md_row([r["source"], _row_label(r), r["protocol"], *values, verdict]))
            out += ["", "</details>"]
        errored = [r for r in card.results if r.suite == suite.name and r.status != "ok"]
        if errored:
            out += ["", "Items without an answer:", ""]
            out += [f"- {_md(r.key)} ({r.status}): {_md(r.error)}" for r in errored]
    if card.comparison is not None:
        out += comparison_markdown(card.comparison)
    out += ["", "## Gates", ""]
    out += [f"- FAILED: {_md(s)}" for s in card.shortfalls] or [
        f"- deferred: {_md(card.gates_deferred)}" if card.gates_deferred else "- passed"
    ]
    unanswered = sum(s.errors + s.missing for s in card.suites)
    if unanswered:
        out.append(f"- {unanswered} item(s) errored or missing: their tests fail, and so does the run")
    return "\n".join(out) + "\n"


# ---- the comparison with a baseline run (report/compare.py)


def _p(value: float | None) -> str:
    if value is None:
        return ""
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _change(row: Row) -> list[str]:
    """base, new, change, its interval, test p, Holm p, W/T/L of one row."""
    if row.diff is None:
        return ["", "", f"n/a ({row.reason})", "", "", "", ""]
    test = {"mcnemar": "McNemar", "permutation": "perm."}.get(row.test or "", "")
    wtl = f"{row.wins}/{row.ties}/{row.losses}" if row.wins is not None else ""
    digits = len(_num(row.base, row.metric).partition(".")[2])  # as the scorecard prints the metric
    return [
        _num(row.base, row.metric),
        _num(row.new, row.metric),
        f"{row.diff:+.{digits}f}",
        f"[{row.low:+.{digits}f}, {row.high:+.{digits}f}]",
        f"{_p(row.p)} ({test})",
        _p(row.p_holm),
        wtl,
    ]


_CHANGE_HEAD = ["base", "new", "change", "95% CI", "p (test)", "Holm p", "W/T/L"]


def _comparison_head(comparison: Comparison) -> list[str]:
    base = comparison.base
    tests = sum(r.p is not None for r in comparison.rows)
    where = f" ({base['scorecard']})" if base.get("scorecard") else ""
    lines = [
        f"compared with the base run{where}: system {base.get('system')}, {base.get('items')} items",
        f"  paired by item; change = new - base with a seeded paired bootstrap 95% CI (stratified by "
        f"type); p: exact McNemar for 0/1 metrics, else a sign-flip permutation test; Holm-corrected "
        f"over the {tests} tests shown; W/T/L: items better / same / worse in this run",
    ]
    for note in comparison.notes:
        lines.append(f"  note: {note}")
    for name, keys in (("the base run", comparison.only_base), ("this run", comparison.only_new)):
        if keys:
            more = f" (+{len(keys) - 10} more)" if len(keys) > 10 else ""
            lines.append(f"  {len(keys)} item(s) only in {name}, not compared: {', '.join(keys[:10])}{more}")
    return lines


def _one_sided(rows: list[Row]) -> list[str]:
    """Why a row's n is below the items in both runs: items scored in one run only."""
    return [
        f"{METRICS[r.metric].label}: {r.one_sided} item(s) scored in one run only, left out of its rows"
        for r in rows
        if r.one_sided
    ]


def _regression_line(r: Regression) -> str:
    drops = ", ".join(
        f"{METRICS[m].label} {_num(before * METRICS[m].factor, m)} -> {_num(after * METRICS[m].factor, m)}"
        for m, (before, after) in r.drops.items()
    )
    status = f" (now {r.new_status})" if r.new_status != r.base_status else ""
    return f"{r.key}: {drops or 'no answer'}{status}"


def _diff_text(diff: list[tuple[str, str]], limit: int = 60) -> str:
    """A word diff in one line: [-removed-] {+added+}, long kept runs shortened."""
    parts = []
    for op, words in diff:
        if op == "=":
            kept = words.split()
            parts.append(words if len(kept) <= 8 else " ".join([*kept[:3], "...", *kept[-3:]]))
        else:
            parts.append(f"[-{words}-]" if op == "-" else f"{{+{words}+}}")
    text = " ".join(parts)
    return text if len(text) <= limit * 6 else text[: limit * 6] + " ..."


def comparison_lines(comparison: Comparison) -> list[str]:
    lines = ["", *_comparison_head(comparison)]
    for suite in dict.fromkeys(r.suite for r in comparison.rows):
        rows = [r for r in comparison.rows if r.suite == suite and r.slice == "all"]
        n = max((r.n for r in rows), default=0)
        lines += ["", f"  {suite}: {n} items in both runs"]
        table = [["metric", "n", *_CHANGE_HEAD]]
        table += [[METRICS[r.metric].label, str(r.n), *_change(r)] for r in rows if r.diff is not None]
        lines += _table(table, "lrrrrllrr")
        skipped: dict[str | None, list[str]] = {}
        for r in rows:
            if r.diff is None:
                skipped.setdefault(r.reason, []).append(METRICS[r.metric].label)
        lines += [f"  not compared: {', '.join(labels)} ({reason})" for reason, labels in skipped.items()]
        lines += [f"  {note}" for note in _one_sided(rows)]
        worse = [r for r in comparison.regressions if r.suite == suite]
        if worse:
            lines.append(f"  regressions ({len(worse)}, worst first):")
            lines += [f"    {_regression_line(r)}" for r in worse[:REGRESSIONS_SHOWN]]
            if len(worse) > REGRESSIONS_SHOWN:
                lines.append(
                    f"    ... {len(worse) - REGRESSIONS_SHOWN} more in scorecard.json and report.html"
                )
    return lines


def comparison_markdown(comparison: Comparison) -> list[str]:
    out = ["", "## Compared with the base run", ""]
    out += [f"- {_md(line.strip())}" for line in _comparison_head(comparison)]
    for suite in dict.fromkeys(r.suite for r in comparison.rows):
        out += ["", f"### {_md(suite)}", ""]
        out.append(_md_row(["slice", "metric", "n", *_CHANGE_HEAD]))
        out.append("|---|---|---:|---:|---:|---:|---|---|---:|---:|")
        for r in comparison.rows:
            if r.suite == suite:
                out.append(_md_row([r.slice, METRICS[r.metric].label, str(r.n), *_change(r)]))
        notes = _one_sided([r for r in comparison.rows if r.suite == suite and r.slice == "all"])
        out += [""] + [f"- {_md(note)}" for note in notes] if notes else []
        worse = [r for r in comparison.regressions if r.suite == suite]
        if worse:
            out += ["", f"Regressions ({len(worse)}, worst first):", ""]
            for r in worse[:REGRESSIONS_SHOWN]:
                out.append(f"- {_md(_regression_line(r))}")
                out.append(f"  - word diff: {_md(_diff_text(r.diff))}")
            if len(worse) > REGRESSIONS_SHOWN:
                out.append(f"- {len(worse) - REGRESSIONS_SHOWN} more in scorecard.json and report.html")
    return out
