"""The scorecard as people read it, built once: blocks of already-formatted text.

Every number a person sees is formatted here, once (:func:`num`, :func:`interval`,
:func:`change`, ...), and the scorecard is walked here, once, into plain blocks
(``blocks.py``): headings, paragraphs, notes, tables of strings; a protocol's own section is
walked by its protocol (``Protocol.blocks``) into the same blocks. The writers only print
them: ``terminal.py`` as the terminal summary, ``markdown.py`` as ``scorecard.md``;
``html.py`` draws its page from the same helpers. Where the terminal and ``scorecard.md`` say
different things (a short hash against a full one, a brief table against a full one), the
block says which of them shows it (``only``): the two outputs are kept as they were
(tests/golden), and the difference is written down in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..blocks import (
    NOT_COMPARABLE,
    Block,
    Caption,
    Gap,
    Heading,
    Note,
    Notes,
    Para,
    Table,
    note_lines,
    row_label,
)
from ..card import published
from ..card.compare import REGRESSIONS_SHOWN, Comparison, Regression, Row, p_text, sign
from ..card.scorecard import Check, MetricSummary, Scorecard, SuiteCard
from ..metrics import METRICS, printed_range
from ..protocols import protocol_of
from ..schema import EVIDENCE_SHORT, ItemResult
from ..suites import SUITES, Setup

if TYPE_CHECKING:  # numpy's agreement.py loads only where a run has labels
    from ..card.calibration import Calibration
    from ..stats.agreement import Statistic

# ---- numbers, formatted once


def _decimals(metric: str) -> int | None:
    """Three decimals for a score on a 0-1 or 0-5 scale, one for the rest (percentages,
    rewards, counts and lengths; evidence recall, a percentage without a metric entry);
    totals as they are (None)."""
    spec = METRICS.get(metric)
    if spec is None:
        return 1
    if spec.aggregation == "sum":
        return None
    scale = printed_range(metric)
    return 3 if scale is not None and scale[1] - scale[0] <= 5 else 1


def num(value: float | None, metric: str) -> str:
    if value is None:
        return "n/a"
    digits = _decimals(metric)
    return f"{value:g}" if digits is None else f"{value:.{digits}f}"


def score(s: MetricSummary) -> str:
    return num(s.mean, s.metric)


def interval(s: MetricSummary) -> str:
    """'[low, high]'; the reason when there is no score; '' for a total or the official
    bootstrap mid (no interval of its own)."""
    if s.mean is None:
        return s.reason or ""
    if s.low is None:
        return ""
    return f"[{num(s.low, s.metric)}, {num(s.high, s.metric)}]"


def scored(s: MetricSummary) -> str:
    """Items scored from an answer, of all; the items without one that count as 0 (or as
    their metric's ``failed_as``) said apart."""
    text = f"{s.n - s.failed}/{s.n + s.unscored}"
    spec = METRICS.get(s.metric)
    return f"{text} +{s.failed} failed as {spec.failed_as if spec else '0'}" if s.failed else text


def item_value(value: float, metric: str) -> float:
    """An item's score on the printed scale."""
    spec = METRICS.get(metric)
    return value * spec.factor if spec is not None else value


def change(row: Row) -> list[str]:
    """base, new, change, its interval, test p, Holm p, W/T/L of one compared row."""
    if row.diff is None:
        return ["", "", f"n/a ({row.reason})", "", "", "", ""]
    test = {"mcnemar": "McNemar", "permutation": "perm."}.get(row.test or "", "")
    wtl = f"{row.wins}/{row.ties}/{row.losses}" if row.wins is not None else ""
    digits = len(num(row.base, row.metric).partition(".")[2])  # as the scorecard prints the metric
    return [
        num(row.base, row.metric),
        num(row.new, row.metric),
        f"{row.diff:+.{digits}f}",
        f"[{row.low:+.{digits}f}, {row.high:+.{digits}f}]",
        f"{p_text(row.p)} ({test})",
        p_text(row.p_holm),
        wtl,
    ]


_CHANGE_HEAD = ("base", "new", "change", "95% CI", "p (test)", "Holm p", "W/T/L")

SIGNIFICANT_BY = (
    "the paired 95% interval of the change leaves 0, unadjusted: the statistic --ambig-fail-if-worse reads"
)


def significance(row: Row, tests: int) -> tuple[str | None, str | None]:
    """Whether a change is significant, by the statistic the gate reads (its paired 95%
    interval leaves 0): 'better', 'worse' or None; and, where Holm's p says otherwise, why,
    in words (never the p beside the word, which reads as a contradiction)."""
    d = sign(row.metric)
    if row.diff is None or row.low is None or row.high is None or not d:
        return None, None
    leaves = not row.low <= 0 <= row.high
    word = ("better" if d * row.diff > 0 else "worse") if leaves else None
    holm = row.p_holm
    if holm is None or leaves == (holm < 0.05):
        return word, None
    if leaves:
        why = (
            f"its interval leaves 0, but Holm's correction across the {tests} tests shown does not "
            "confirm it: Holm asks whether any of them changed at all, the interval asks of this "
            "metric alone, as a gate named in advance does"
        )
    else:
        why = (
            "Holm's correction finds a change, but the interval holds 0: the exact test and the "
            "bootstrap interval disagree at the edge; the interval decides, as the gate's does"
        )
    return word, why


def drops(r: Regression, arrow: str = "->") -> str:
    """What an item lost, metric by metric, on the printed scale: 'STR-EM 100.0 -> 0.0, ...'."""
    return ", ".join(
        f"{METRICS[m].label} {num(item_value(before, m), m)} {arrow} {num(item_value(after, m), m)}"
        for m, (before, after) in r.drops.items()
    )


def one_sided(rows: list[Row]) -> list[str]:
    """Why a row's n is below the items in both runs: items scored in one run only."""
    return [
        f"{METRICS[r.metric].label}: {r.one_sided} item(s) scored in one run only, left out of its rows"
        for r in rows
        if r.one_sided
    ]


# ---- the published rows beside a run


def headline(suite: str) -> str:
    """The slice of published rows the "papers" column shows (MARCH Table 3, ASQA Table 11,
    CondAmbigQA Tables 2 and 3; MARCH's per-type rows use the type): the suite says which."""
    known = SUITES.get(suite)
    return known.headline_setting if known is not None else "all"


def published_rows(suite: SuiteCard) -> list[dict[str, Any]]:
    """The suite's published rows beside this run, where its protocol puts them there (the
    interactive protocol's are context, in its section)."""
    if not protocol_of(suite.protocol.name).papers_column:
        return []
    return suite.published


def _paper_range(rows: list[dict[str, Any]], metric: str, setting: str) -> str:
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
        text += f" (best {row_label(best)})"
    return text


def published_lines(suite: SuiteCard, rows: list[dict[str, Any]]) -> list[str]:
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


# ---- the scorecard


def scorecard(card: Scorecard) -> list[Block]:
    """The scorecard: in Markdown the verdict and the gates first, the tables after; in the
    terminal the gates last, the lines pytest's summary ends with."""
    notes = (*_system(card), *_judge(card), *_sequential(card))
    blocks: list[Block] = [
        Heading(f"ambigqa scorecard: {verdict(card)}", 1, only="markdown"),
        Heading("Gates", 2, only="markdown"),
        *_gates(card, "markdown"),
        Heading("Run", 2, only="markdown"),
        Notes(notes),
    ]
    for suite in card.suites:
        blocks += _suite(card, suite)
    if card.calibration is not None:
        blocks += calibration(card.calibration, {s.name: s.title for s in card.suites})
    if card.comparison is not None:
        blocks += comparison(card.comparison)
    blocks.append(Gap())
    blocks += _gates(card, "terminal")
    return blocks


def gates_evaluated(card: Scorecard) -> tuple[int, int]:
    """(failed, evaluated): every check, and each failure no option sets (a configured model
    that scored nothing, the protocol's own) as one more gate, failed."""
    from_checks = {c.failure for c in card.checks if c.failure}
    others = sum(1 for s in card.shortfalls if s not in from_checks)
    return sum(not c.passed for c in card.checks) + others, len(card.checks) + others


def unanswered(card: Scorecard) -> int:
    return sum(s.errors + s.missing for s in card.suites)


def verdict(card: Scorecard, marks: bool = True) -> str:
    """The run's verdict in one line, failures first: '❌ gates FAILED: 1 of 3; ❌ 2 items
    errored or missing', '✅ gates passed: 3 of 3', 'no gates set', '⏸ gates deferred'."""
    failed, evaluated = gates_evaluated(card)
    bad, good, wait = ("❌ ", "✅ ", "⏸ ") if marks else ("", "", "")
    if card.gates_deferred:
        said = f"{wait}gates deferred"
    elif failed:
        said = f"{bad}gates FAILED: {failed} of {evaluated}"
    elif evaluated:
        said = f"{good}gates passed: {evaluated} of {evaluated}"
    else:
        said = "no gates set"
    errored = unanswered(card)
    if errored:
        item = "item" if errored == 1 else "items"
        said = f"{bad}{errored} {item} errored or missing; {said}"
    return said


def _system(card: Scorecard) -> list[Note]:
    system = card.system
    notes = [Note(f"system: {system['label']}")]
    if system.get("default"):
        notes.append(
            Note("(no --ambig-system given: this is the bundled lexical baseline, not your system)", 1)
        )
    if system.get("inputs"):
        notes.append(Note(f"declares: {', '.join(system['inputs'])}", 1))
    if system.get("gold_inputs"):
        notes.append(Note(f"gold inputs ({', '.join(system['gold_inputs'])}): scores are an upper bound", 1))
    if card.config.get("device_used"):
        notes.append(
            Note(
                f"local models (reader, dense embedder) ran on {card.config['device_used']} "
                f"(--ambig-device={card.config.get('device', 'auto')})",
                1,
            )
        )
    calls = system.get("model_calls")
    if calls:
        notes.append(Note(_model_calls(calls, (card.config.get("llm_price") or None) is not None), 1))
        if calls.get("given_up"):  # one line for them all, where each item's test says it in short
            notes.append(
                Note(
                    f"model given up: {calls['given_up_reason']}; {calls['given_up']} of the "
                    f"{calls['items']} items made no call",
                    1,
                )
            )
        modes = ", ".join(calls.get("structured_output") or ()) or "none sent (or all from the cache)"
        notes.append(
            Note(
                f"structured output: {modes}; answers in prose (the long answer alone): "
                f"{calls.get('prose_answers', 0)} of {calls['items'] - calls.get('errored', 0)} answered",
                1,
            )
        )
    if card.sample:
        notes.append(Note(sample_line(card.sample), 1))
    stored = sum(r.cached for r in card.results)
    if stored:
        asked = sum(not r.cached and r.status != "missing" for r in card.results)
        notes.append(Note(f"answers: {stored} from the response store, {asked} asked now", 1))
        reused = sum(r.reused for r in card.results)
        if reused:
            scored = sum(r.status == "ok" and not r.reused for r in card.results)
            notes.append(
                Note(f"scores: {reused} reused (same answer, same scorers), {scored} computed now", 1)
            )
    return notes


def sample_line(sample: dict[str, Any]) -> str:
    """What ``--ambig-sample`` drew, and that the scores estimate the whole data's."""
    strata = ", ".join(
        f"{h['suite']}/{h['type'] or 'untyped'} {h['sampled']} of {h['population']}" for h in sample["strata"]
    )
    return (
        f"a stratified sample: {sample['items']} of {sample['population']} items (--ambig-sample="
        f"{sample['asked']:g}, seed {sample['seed']}); scores and intervals estimate all "
        f"{sample['population']} items, each stratum weighted by its share ({strata})"
    )


def _model_calls(calls: dict[str, Any], priced: bool) -> str:
    """What an ``llm:`` system's calls cost, per item and in all, each said alike: calls,
    tokens and dollars per item, then the same in all (never a per-item token count beside a
    run-total cost); the latency per item; the items it is over."""
    n, unit = calls["items"], calls.get("unit", "item")  # with --ambig-repeats, each trial's calls
    tokens_in, tokens_out = calls["prompt_tokens_per_item"], calls["completion_tokens_per_item"]
    per_item = (
        f"{calls['calls_per_item']:.1f} calls ({calls.get('cached_per_item', 0):.1f} from llm.sqlite), "
        f"{tokens_in:,.0f} tokens in / {tokens_out:,.0f} out"
    )
    in_all = (
        f"{calls['calls_per_item'] * n:,.0f} calls, {tokens_in * n:,.0f} tokens in / "
        f"{tokens_out * n:,.0f} out"
    )
    cost = ""
    if priced:
        per_item += f", ${calls['cost'] / n:.4f}"
        in_all += f", ${calls['cost']:.4f}"
    else:
        cost = "; cost: no prices given (--ambig-llm-price)"
    latency = f"latency {calls['latency_mean']:.2f} s mean, {calls['latency_median']:.2f} s median"
    return (
        f"model calls (llm:{calls['method']}, {calls['model']}): per {unit} {per_item}; "
        f"in all {in_all}{cost}; {latency}; over {_counted(calls)}"
    )


def _counted(calls: dict[str, Any]) -> str:
    """The items a cost line is over: the errored ones' calls cost too (issue 25); those a
    resumed run reused were an earlier run's calls."""
    errored, reused, items = calls.get("errored", 0), calls.get("reused", 0), calls["items"]
    unit = calls.get("unit", "item")
    text = (
        f"{items} answered {unit}s"
        if not errored
        else f"{items} {unit}s ({items - errored} answered, {errored} errored)"
    )
    if reused:
        share = f"all {reused}" if reused == items else str(reused)
        text += (
            f", {share} reused from the response store (their calls made, and paid for, by an earlier run)"
        )
    return text


def _judge(card: Scorecard) -> list[Note]:
    judge = card.judge
    if not judge:
        return []
    usage = judge["usage"]
    templates = ", ".join(f"{k} {v}" for k, v in judge["templates"].items())
    fingerprints = ", ".join(usage["fingerprints"]) or "none reported"
    panel = judge.get("panel")
    judges = panel["judges"] if panel else [judge]
    cost = (
        f"${usage['cost']:.4f}"
        if all(j["prices_per_million"][0] is not None for j in judges)
        else "no prices given (--ambig-judge-price)"
    )
    # Batch judging (models/batch.py) and the server's prompt cache, said only where they were used.
    batched = f" and {usage['batched']} in batches" if usage.get("batched") else ""
    cached = (
        f" ({usage['cached_tokens']:,} from the server's prompt cache)" if usage.get("cached_tokens") else ""
    )
    saved = ""
    if usage.get("batched") and judge["prices_per_million"][0] is not None:
        saved = f", ${usage.get('saved', 0.0):.4f} saved by the batch price"
    samples = (
        f", {judge['samples']} samples per judgement (seeds from {judge['seed']})"
        if judge["samples"] > 1
        else ""
    )
    who = f"judge: {judge['model']} at {judge['base_url']}"
    if panel:
        who = (
            f"judge panel: {', '.join(j['model'] + ' at ' + j['base_url'] for j in judges)}; "
            f"an item's score is the {panel['aggregation']} of the judges'"
        )
    notes = [
        Note(f"{who}{samples}"),
        Note(f"templates {templates}; system fingerprints: {fingerprints}", 1),
        Note(
            f"requests {usage['requests']} (+{usage['cached']} from cache){batched}, "
            f"retries {usage['retries']}, re-asked {usage['reasks']}, "
            f"tokens {usage['prompt_tokens']:,} in{cached} / {usage['completion_tokens']:,} out, "
            f"cost {cost}{saved}",
            1,
        ),
    ]
    deepeval = judge.get("deepeval") or {}
    if deepeval.get("geval_templates"):
        notes.append(
            Note(
                f"G-Eval: deepeval {deepeval['version']} (templates {deepeval['geval_templates']}); "
                f"CondAmbigQA's published scores used deepeval {deepeval['released_with']}",
                1,
            )
        )
    return notes


SEQUENTIAL_ASSUMES = (
    "assumes an item's score does not depend on when it is asked: no gate passes early once an item "
    "has errored, nor stops early while its scores trend with the order the items were asked in "
    "(Kendall's test, one-sided, at alpha)"
)


def _sequential(card: Scorecard) -> list[Note]:
    """Where a sequential gate stopped the run, and each gate's confidence sequence there."""
    record = card.sequential
    if not record:
        return []
    total = record["evaluated"] + record["skipped"]
    level = f"{1 - record['alpha']:.0%}"
    if record["stopped_after"] is None:
        head = f"sequential gates (alpha {record['alpha']:g}): not decided before the end; every item ran"
    else:
        cost = f", about ${record['cost_saved_estimate']:.4f}" if record["cost_saved_estimate"] else ""
        head = (
            f"sequential gates (alpha {record['alpha']:g}, items in a seeded random order): decided after "
            f"{record['stopped_after']} items; {record['evaluated']} of {total} evaluated, "
            f"{record['skipped']} skipped (about {record['calls_saved_estimate']} calls saved{cost})"
        )
    notes = [Note(head), Note(SEQUENTIAL_ASSUMES, 1)]
    for g in record["gates"]:
        where = f"{g['suite']} {g['gate']}"
        if g.get("withdrawn"):
            notes.append(Note(f"{where}: early PASS withdrawn: {g['withdrawn']}", 1))
            continue
        if g["decision"] is None:
            why = f": {g['unusable']}" if g["unusable"] else ""
            notes.append(
                Note(
                    f"{where}: undecided after {g['seen']} of {g['population']}{why}; the full run decides", 1
                )
            )
            continue
        notes.append(
            Note(
                f"{where}: {g['decision'].upper()} after {g['after']} of {g['population']} items, "
                f"{level} confidence sequence [{g['lower']:.2f}, {g['upper']:.2f}] against {g['bound']:g}",
                1,
            )
        )
    return notes


def received_line(setup: Setup) -> str:
    """What the system was given, as the ``receives:`` line says it (a run that gave it no
    evidence at all says so)."""
    if not setup.received:
        return "not recorded (a scorecard written before it was)"
    given = list(setup.received)
    evidence = [g for g in given if g.startswith(("retriever:", "passages:"))]
    if not evidence or all(g.endswith(": none") or ": none " in g for g in evidence):
        given.append("no evidence given")
    return "; ".join(given)


def short_line(suite: SuiteCard, results: Sequence[ItemResult]) -> str:
    """The items given less evidence than the protocol promises, in total and the first few."""
    short = [
        r
        for r in results
        if r.suite == suite.name and r.mentions(EVIDENCE_SHORT) and EVIDENCE_SHORT in r.details
    ]
    shown = ", ".join(f"{r.item_id} ({r.details[EVIDENCE_SHORT]})" for r in short[:3])
    more = f", and {len(short) - 3} more" if len(short) > 3 else ""
    return (
        f"evidence short: {suite.evidence_short} of {suite.items} items got less evidence than "
        f"the protocol promises: {shown}{more}"
    )


def _identity(suite: SuiteCard, width: int) -> str:
    """What identifies a run's data: the commit of an hf:// source, the sha256 of what was read."""
    revision = f"revision {suite.revision[:width]}, " if suite.revision else ""
    return f"{revision}sha256 {suite.sha256[:width]}"


def _suite(card: Scorecard, suite: SuiteCard) -> list[Block]:
    way = protocol_of(suite.protocol.name)
    setting = headline(suite.name)
    rows = published_rows(suite)
    origin = ", bundled sample (not the benchmark)" if suite.is_sample else ""
    source = f"{suite.title}: {suite.items} {way.unit}{origin}"
    errors = f"errors {suite.errors}, missing {suite.missing}"
    scorer = f"; scorer: {suite.profile}" if suite.profile else ""
    chosen = f" (chosen as {suite.protocol.chosen})" if suite.protocol.chosen else ""
    protocol = [Note(f"protocol: {suite.protocol.label}{chosen}{scorer}", 1)]
    protocol += [Note(f"receives: {received_line(suite.protocol)}", 1)]
    if suite.evidence_short:
        protocol.append(Note(short_line(suite, card.results), 1))
    if suite.protocol.upper_bound:
        protocol.append(Note(f"upper bound: {suite.protocol.upper_bound}", 2))
    protocol += [Note(f"note: {note}", 2) for note in suite.protocol.notes]
    protocol += [Note(f"data warning: {warning}", 1) for warning in suite.data_warnings]
    blocks: list[Block] = [
        Gap(),
        Heading(suite.title, 2),
        Para(source, only="terminal"),
        Para(f"{source}; {errors}.", only="markdown"),
        note_lines([f"data: {suite.source} ({_identity(suite, 12)})"], 1, "terminal"),
        Para(f"Data: {suite.source} ({_identity(suite, 64)})", only="markdown"),
        Notes(tuple(protocol)),
        note_lines([errors], 1, "terminal"),
    ]
    head = ("metric", "score", "95% CI", "scored", "papers")
    for only in ("terminal", "markdown"):  # the terminal leaves "scored" blank for a metric with no score
        table = [
            (
                METRICS[metric].label,
                score(s),
                interval(s),
                scored(s) if s.n or only == "markdown" else "",
                _paper_range(rows, metric, setting),
            )
            for metric, s in suite.metrics.items()
        ]
        blocks.append(Table(head, tuple(table), "lrlrl", only=only))
    blocks.append(note_lines(published_lines(suite, rows), 1))
    if suite.slices:
        blocks += _slices(suite, rows, way.unit, way.slice_heading)
    variance = note_lines(_variance_lines(suite) + _panel_lines(suite) + repeats_lines(suite), 1)
    own: list[Block] = []  # the protocol's section
    if suite.section is not None:
        own = way.blocks(suite.section, published.protocol_rows(way.name))
    judged = suite.variance or suite.panel or suite.repeats
    if judged:  # the terminal says it before the protocol's section, scorecard.md after
        blocks += [Gap(), variance] if not own else [Gap(), Notes(variance.notes, "terminal")]
    blocks += own
    if judged and own:
        blocks.append(Notes(variance.notes, "markdown"))
    if suite.evidence:
        title = _evidence_title(card)
        evidence = [
            (
                e.name,
                str(e.items),
                score(e.original),
                interval(e.original),
                score(e.clarified),
                interval(e.clarified),
            )
            for e in suite.evidence
        ]
        blocks += [
            Gap(),
            Para(title, 1, only="terminal"),
            Para(f"{title[0].upper()}{title[1:]}:", only="markdown"),
            Table(
                ("slice", "items", "original question", "95% CI", "clarified questions", "95% CI"),
                tuple(evidence),
                "lrrlrl",
            ),
        ]
    blocks += _published_table(suite, rows, setting)
    missing = [r.key for r in card.results if r.suite == suite.name and r.status == "missing"]
    if missing:
        more = f" (+{len(missing) - 10} more)" if len(missing) > 10 else ""
        blocks.append(note_lines([f"missing: {', '.join(missing[:10])}{more}"], 1, "terminal"))
    errored = [r for r in card.results if r.suite == suite.name and r.status != "ok"]
    if errored:
        blocks += [
            Para("Items without an answer:", only="markdown"),
            note_lines([f"{r.key} ({r.status}): {r.error}" for r in errored], only="markdown"),
        ]
    return blocks


def _slices(suite: SuiteCard, rows: list[dict[str, Any]], unit: str, heading: str) -> list[Block]:
    """By ambiguity type (or the protocol's slices, ``heading``, of its ``unit``): the
    terminal shows the metrics some slice has a score for and the papers' per-type range;
    scorecard.md every metric."""
    shown = [m for m in suite.metrics if any(sl.metrics[m].mean is not None for sl in suite.slices)]
    papers = next((m for m in shown if any(m in r and r["setting"] == "semantic" for r in rows)), None)
    head = [heading, unit, *(METRICS[m].label for m in shown)]
    if papers:
        head.append(f"papers {METRICS[papers].label}")
    brief = []
    for sl in suite.slices:
        row = [sl.name, str(sl.items), *(score(sl.metrics[m]) for m in shown)]
        if papers:
            row.append(_paper_range(rows, papers, sl.name).split(" (")[0])
        brief.append(tuple(row))
    every = list(suite.metrics)
    full = [(sl.name, str(sl.items), *(score(sl.metrics[m]) for m in every)) for sl in suite.slices]
    return [
        Gap(),
        Table(tuple(head), tuple(brief), "lr" + "r" * len(shown) + ("l" if papers else ""), only="terminal"),
        Para(f"By {heading}:", only="markdown"),
        Table(
            (heading, unit, *(METRICS[m].label for m in every)),
            tuple(full),
            "lr" + "r" * len(every),
            only="markdown",
        ),
    ]


def _variance_lines(suite: SuiteCard) -> list[str]:
    lines = []
    for v in suite.variance.values():
        line = (
            f"judge variance, {METRICS[v.metric].label}: mean spread {num(v.mean_spread, v.metric)}, "
            f"max {num(v.max_spread, v.metric)}, all samples agree on {v.agreement:.0%} of {v.items} items"
        )
        if v.straddling:
            line += f"; straddling --ambig-item-min: {', '.join(v.straddling)}"
        lines.append(line)
    return lines


def _panel_lines(suite: SuiteCard) -> list[str]:
    """Each panel-judged metric: Krippendorff's alpha across the judges, and the items they dispute."""
    lines = []
    for p in suite.panel.values():
        alpha = "n/a" if p.alpha is None else f"{p.alpha:.3f}"
        if p.alpha is not None and p.low is not None and p.high is not None:
            alpha += f" [{p.low:.3f}, {p.high:.3f}]"
        if p.reason:
            alpha += f" ({p.reason})"
        line = (
            f"judge panel, {METRICS[p.metric].label if p.metric in METRICS else p.metric}: "
            f"Krippendorff's alpha {alpha}, {p.level}, over {p.items} items; "
            f"{len(p.disputed)} items where the judges differ by {num(p.threshold, p.metric)} or more"
        )
        if p.disputed:
            more = f" and {len(p.disputed) - 10} more" if len(p.disputed) > 10 else ""
            line += f": {', '.join(p.disputed[:10])}{more}"
        lines.append(line)
    return lines


def repeats_lines(suite: SuiteCard) -> list[str]:
    """Repeated trials (``--ambig-repeats``): how many, then per metric the spread of an item's
    trials and, for a 0/1 metric, pass@k and pass^k for k = 1..K and the flaky items."""
    r = suite.repeats
    if r is None:
        return []
    errored = f", {r.errored} errored" if r.errored else ""
    lines = [
        f"repeated trials: {r.k} per item ({r.trials} in all{errored}); each score above is the mean "
        "over items of an item's trial mean, its interval resampling items"
    ]
    for t in r.metrics.values():
        label = METRICS[t.metric].label if t.metric in METRICS else t.metric
        line = (
            f"trials, {label}: per-item variance {t.variance:.4g} mean, {t.max_variance:.4g} max "
            f"(item scale), over {t.items} items"
        )
        if t.pass_at is not None and t.pass_all is not None:
            at = ", ".join(num(v, t.metric) for v in t.pass_at)
            every = ", ".join(num(v, t.metric) for v in t.pass_all)
            line += f"; pass@k for k=1..{r.k}: {at}; pass^k: {every}"
            if t.pass_all_interval is not None:
                low, high = t.pass_all_interval
                line += f" (pass^{r.k} 95% CI [{num(low, t.metric)}, {num(high, t.metric)}])"
        if t.flaky is not None:
            more = f" and {len(t.flaky) - 10} more" if len(t.flaky) > 10 else ""
            line += f"; flaky (trials disagree): {len(t.flaky)}" + (
                f": {', '.join(t.flaky[:10])}{more}" if t.flaky else ""
            )
        lines.append(line)
    return lines


def _evidence_title(card: Scorecard) -> str:
    info = card.retrieval or {}
    return (
        f"evidence coverage: recall@{info.get('k')} of gold passages, {info.get('retriever')} over "
        f"{info.get('passages')} passages ({info.get('corpus')})"
    )


def _published_table(suite: SuiteCard, rows: list[dict[str, Any]], setting: str) -> list[Block]:
    """The published rows of the headline setting, in scorecard.md, folded."""
    shown = [r for r in rows if r.get("setting") == setting]
    metrics = [m for m in suite.metrics if any(m in r for r in shown)]
    if not shown or not metrics:
        return []
    table = [
        (
            r["source"],
            row_label(r),
            r["protocol"],
            *(f"{r[m]:g}" if m in r else "" for m in metrics),
            "yes" if r["comparable"] else "no",
        )
        for r in shown
    ]
    head = ("source", "method / model", "protocol", *(METRICS[m].label for m in metrics), "comparable")
    return [
        Table(head, tuple(table), "lll" + "r" * len(metrics) + "l", fold="Published rows", only="markdown")
    ]


CHECK_HEAD = ("suite", "gate", "statistic", "value", "bound", "margin", "result")


def check(c: Check) -> tuple[str, ...]:
    """One evaluated gate's cells: its value against its bound on the metric's printed scale,
    and the margin, how far it lies on the passing side (negative: failed by that much)."""
    if c.metric is not None:
        value, digits = num(c.value, c.metric), _decimals(c.metric)
    else:  # a rate or a count of items
        value, digits = ("n/a" if c.value is None else f"{c.value:.3g}"), None
    margin = c.margin
    shown = "" if margin is None else f"{margin:+.{digits}f}" if digits is not None else f"{margin:+.3g}"
    bound = f"{'≥' if c.higher else '≤'} {c.bound:g}"
    return (c.suite, c.gate, c.statistic, value, bound, shown, "passed" if c.passed else "FAILED")


def checks(evaluated: list[Check], only: Literal["terminal", "markdown"]) -> list[Block]:
    """Every gate evaluated, passed or not, as a table (nothing when no gate was set)."""
    if not evaluated:
        return []
    failed = sum(not c.passed for c in evaluated)
    margin = "margin: how far the value lies inside its bound"
    title = f"gates: {len(evaluated)} evaluated, {failed} failed ({margin})"
    return [
        Caption(title, 0, only=only),
        Table(CHECK_HEAD, tuple(check(c) for c in evaluated), "lllrlrl", only=only),
    ]


def _gates(card: Scorecard, only: Literal["terminal", "markdown"]) -> list[Block]:
    table = checks(card.checks, only)
    if only == "terminal":
        lines = [f"gate FAILED: {s}" for s in card.shortfalls]
        if card.gates_deferred:
            lines.append(f"gates deferred: {card.gates_deferred}")
        return [*table, note_lines(lines, only=only)]
    lines = [f"FAILED: {s}" for s in card.shortfalls] or [
        f"deferred: {card.gates_deferred}"
        if card.gates_deferred
        else ("passed" if gates_evaluated(card)[1] else "no gates set")
    ]
    errored = unanswered(card)
    if errored:
        lines.insert(0, f"{errored} item(s) errored or missing: their tests fail, and so does the run")
    return [note_lines(lines, only=only), *table]  # what failed first, then every gate evaluated


# ---- the judge against human labels (card/calibration.py)


def statistic(s: Statistic, digits: int = 3) -> str:
    """'0.412 [0.031, 0.694]'; 'n/a (why)'; the value alone, and why, when only the interval is n/a."""
    if s.value is None:
        return f"n/a ({s.reason})"
    value = f"{s.value:.{digits}f}"
    if s.low is None or s.high is None:
        return f"{value} ({s.reason})" if s.reason else value
    return f"{value} [{s.low:.{digits}f}, {s.high:.{digits}f}]"


CALIBRATION_HEAD = ("suite", "metric", "pairs", "Spearman", "Krippendorff's alpha", "Cohen's kappa")
PPI_HEAD = ("suite", "metric", "judge mean", "human-scale mean (PPI)", "items: labelled + unlabelled")


Rows = list[tuple[str, ...]]


def calibration_rows(c: Calibration, titles: dict[str, str]) -> tuple[Rows, Rows]:
    """The agreement table's rows and the prediction-powered table's, as every writer shows them."""
    agreement: Rows = []
    ppi: Rows = []
    for m in c.metrics:
        label, suite = METRICS[m.metric].label, titles.get(m.suite, m.suite)
        kappa = statistic(m.kappa) if m.kappa is not None else "n/a (not both 0/1)"
        alpha = f"{statistic(m.alpha)} {m.level}"
        agreement.append((suite, label, f"{m.pairs}/{m.labelled}", statistic(m.spearman), alpha, kappa))
        digits = _decimals(m.metric) or 3
        judge = "n/a" if m.judge_mean is None else f"{m.judge_mean:.{digits}f}"
        ppi.append((suite, label, judge, statistic(m.ppi, digits), f"{m.pairs} + {m.judged - m.pairs}"))
    return agreement, ppi


def calibration_notes(c: Calibration) -> list[str]:
    """What of the labels file was matched, and what each metric left out and why."""
    absent = ""
    if c.not_in_run:
        more = " ..." if c.not_in_run > len(c.not_in_run_ids) else ""
        absent = f" ({', '.join(c.not_in_run_ids)}{more})"
    lines = [
        f"judge against human labels: {c.source}, {c.rows} rows; {c.other_systems} for other systems than "
        f"{c.system} (ignored); {c.not_in_run} not among this run's items{absent}",
        *c.not_judged,
    ]
    for m in c.metrics:
        where = f"{m.suite} {METRICS[m.metric].label}"
        if m.unpaired:
            lines.append(f"{where}: labelled but not paired: {'; '.join(m.unpaired)}")
        if m.left_out:
            lines.append(f"{where}: left out of the judge mean and PPI: {'; '.join(m.left_out)}")
    return lines


CALIBRATION_KEY = (
    "pairs: labelled items with a judge score / labelled items; 95% intervals: Spearman by Fisher's z "
    "(Bonett-Wright), alpha and kappa by a seeded bootstrap of items; alpha is ordinal where both sides "
    "are integers, else interval. PPI: the prediction-powered (PPI++) estimate of the mean a human would "
    "give, over the items answered and judged, the labels correcting the judge; the judge's mean is over "
    "the same items"
)


def calibration(c: Calibration, titles: dict[str, str]) -> list[Block]:
    agreement, ppi = calibration_rows(c, titles)
    first, *rest = calibration_notes(c)
    return [
        Gap(),
        Heading("Judge against human labels", 2),
        Notes((Note(first), *(Note(line, 1) for line in rest))),
        Table(CALIBRATION_HEAD, tuple(agreement), "llrlll"),
        Table(PPI_HEAD, tuple(ppi), "llrlr"),
        Para(CALIBRATION_KEY, 1),
    ]


# ---- the comparison with a base run (card/compare.py)


def compared_items(base: dict[str, Any]) -> str:
    """How many items the comparison paired (in both runs), in how many suites, and of how
    many in the base run: the count of what is compared, never of what was left out."""
    suites = base.get("suites")
    if suites is None:  # a comparison recorded before suites were counted
        return f"{base.get('items')} items"
    paired = base.get("paired")
    count, verb = (base.get("items"), "compared") if paired is None else (paired, "paired")
    text = f"{count} items in {len(suites)} suite{'' if len(suites) == 1 else 's'} {verb}"
    every = base.get("items_in_run")
    return text + (f" (of {every} in the base run)" if every is not None and every != count else "")


def comparison(comparison: Comparison) -> list[Block]:
    base = comparison.base
    tests = sum(r.p is not None for r in comparison.rows)
    where = f" ({base['scorecard']})" if base.get("scorecard") else ""
    head = [
        Note(f"compared with the base run{where}: system {base.get('system')}, {compared_items(base)}"),
        Note(
            "paired by item; change = new - base with a seeded paired bootstrap 95% CI (stratified by "
            "type); p: exact McNemar for 0/1 metrics, else a sign-flip permutation test; Holm-corrected "
            f"over the {tests} tests shown; W/T/L: items better / same / worse in this run",
            1,
        ),
    ]
    head += [Note(f"note: {note}", 1) for note in comparison.notes]
    for name, keys in (("the base run", comparison.only_base), ("this run", comparison.only_new)):
        if keys:
            more = f" (+{len(keys) - 10} more)" if len(keys) > 10 else ""
            head.append(
                Note(f"{len(keys)} item(s) only in {name}, not compared: {', '.join(keys[:10])}{more}", 1)
            )
    blocks: list[Block] = [Gap(), Heading("Compared with the base run", 2), Notes(tuple(head))]
    for suite in dict.fromkeys(r.suite for r in comparison.rows):
        blocks += _compared_suite(comparison, suite)
    return blocks


def _compared_suite(comparison: Comparison, suite: str) -> list[Block]:
    every = [r for r in comparison.rows if r.suite == suite]
    rows = [r for r in every if r.slice == "all"]
    n = max((r.n for r in rows), default=0)
    skipped: dict[str | None, list[str]] = {}
    for r in rows:
        if r.diff is None:
            skipped.setdefault(r.reason, []).append(METRICS[r.metric].label)
    shown = tuple((METRICS[r.metric].label, str(r.n), *change(r)) for r in rows if r.diff is not None)
    table = tuple((r.slice, METRICS[r.metric].label, str(r.n), *change(r)) for r in every)
    blocks: list[Block] = [
        Gap(),
        Heading(suite, 3),
        Para(f"{suite}: {n} items in both runs", 1, only="terminal"),
        Table(("metric", "n", *_CHANGE_HEAD), shown, "lrrrrllrr", only="terminal"),
        Table(("slice", "metric", "n", *_CHANGE_HEAD), table, "llrrrrllrr", only="markdown"),
        note_lines(
            [f"not compared: {', '.join(labels)} ({reason})" for reason, labels in skipped.items()],
            1,
            "terminal",
        ),
    ]
    notes = one_sided(rows)
    if notes:
        blocks.append(note_lines(notes, 1))
    worse = [r for r in comparison.regressions if r.suite == suite]
    if worse:
        brief: list[Note] = []
        whole: list[Note] = []
        for reg in worse[:REGRESSIONS_SHOWN]:
            status = f" (now {reg.new_status})" if reg.new_status != reg.base_status else ""
            line = f"{reg.key}: {drops(reg) or 'no answer'}{status}"
            brief.append(Note(line, 2))
            whole += [Note(line), Note(f"word diff: {_diff_text(reg.diff)}", nested=True)]
        if len(worse) > REGRESSIONS_SHOWN:
            more = f"{len(worse) - REGRESSIONS_SHOWN} more in scorecard.json and report.html"
            brief.append(Note(f"... {more}", 2))
            whole.append(Note(more))
        blocks += [
            Caption(f"regressions ({len(worse)}, worst first):"),
            Notes(tuple(brief), "terminal"),
            Notes(tuple(whole), "markdown"),
        ]
    return blocks


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
