"""Two runs of a system on the same items, compared item by item.

Items are aligned by suite and id; an item in one run only is listed, never dropped. Each
metric of each slice (all items, then each ambiguity type or the protocol's own) gets the
mean difference new - base on the printed scale, a seeded paired bootstrap 95% interval
(items resampled within their ambiguity type), a two-sided test (exact McNemar for the 0/1
metrics, a sign-flip permutation test otherwise), Holm's correction across every row shown,
and win/tie/loss counts. The pairing is the point: lm-evaluation-harness compares runs with
an unpaired z-test (EleutherAI/lm-evaluation-harness#3831), which ignores that both runs
answered the same questions.

Every metric is compared as the statistic of its item columns, so the figures agree with
the scorecard's: a plain mean; CondAmbigQA's pooled closed-book mean as a ratio of summed
units; ASQA's DR as sqrt(QA-F1 x ROUGE-Lsum) of means; an interactive run's means with each
query weighing the same (a ratio of weighted sums, each episode weighing one over its
query's episodes). ROUGE-Lsum's bootstrap mid (``rouge_lsum_mid``) is compared as the mean
of its item values, its ``rouge_lsum`` twin.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..metrics import METRICS
from ..protocols import protocol_of
from ..readback import finite
from ..schema import ItemResult
from ..stats import paired
from ..stats.bootstrap import stable_seed
from ..suites import loader_options
from .scorecard import Check, Scorecard, SuiteCard

if TYPE_CHECKING:
    import numpy as np

REGRESSIONS_SHOWN = 10  # in the terminal and scorecard.md; scorecard.json and report.html hold all


@dataclass(frozen=True)
class Row:
    """One metric over one slice of one suite, on the printed scale."""

    suite: str
    slice: str  # "all", an ambiguity type, or a slice of the run's protocol
    metric: str
    n: int  # items scored in both runs
    base: float | None
    new: float | None
    diff: float | None  # new - base
    low: float | None  # the paired bootstrap 95% interval of diff
    high: float | None
    test: str | None  # "mcnemar" or "permutation"
    p: float | None
    p_holm: float | None
    wins: int | None  # items the new run does better on (by the metric's direction), ties, losses
    ties: int | None
    losses: int | None
    one_sided: int = 0  # aligned items scored in one run only
    reason: str | None = None  # why there is no comparison


@dataclass(frozen=True)
class Regression:
    """An item whose score dropped: on which metrics, from what to what, and how the answer changed."""

    suite: str
    item_id: str
    drops: dict[str, tuple[float, float]]  # metric -> (base, new), item scale
    base_status: str
    new_status: str
    diff: list[tuple[str, str]]  # word diff of the answers: ("=", "-" or "+", words)

    @property
    def key(self) -> str:
        return f"{self.suite}-{self.item_id}"


@dataclass(frozen=True)
class Comparison:
    base: dict[str, Any]  # the base run: system label, scorecard path, seed
    rows: list[Row]
    only_base: list[str]  # item keys in the base run only
    only_new: list[str]
    regressions: list[Regression]
    notes: list[str] = field(default_factory=list)  # suites not compared and why, data that differs
    # Suites of this run not compared: why, and the metrics each reports (a gate on them fails)
    left_out: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict, repr=False)
    base_results: dict[str, ItemResult] = field(default_factory=dict, repr=False)  # for the report

    def row(self, suite: str, metric: str, slice_: str = "all") -> Row | None:
        return next((r for r in self.rows if (r.suite, r.metric, r.slice) == (suite, metric, slice_)), None)


def sign(metric: str) -> int:
    """+1 when a higher value is better, -1 when lower is, 0 when neither (a length)."""
    better = METRICS[metric].higher_is_better
    return 0 if better is None else (1 if better else -1)


def compare(base: Scorecard, new: Scorecard, seed: int, path: Path | None = None) -> Comparison:
    """``new`` against ``base`` (read from ``path``): every suite of ``new`` that ``base`` ran
    under the same protocol. Nothing is left out unsaid: a suite in one run only, or under
    another protocol, is named in the notes, and so is every difference of configuration
    that can move the numbers (:func:`differences`)."""
    by_key = {r.key: r for r in base.results}
    new_keys = {r.key for r in new.results}
    base_suites = {s.name: s for s in base.suites}
    new_suites = {s.name for s in new.suites}
    rows: list[Row] = []
    regressions: list[Regression] = []
    notes: list[str] = []
    compared: list[str] = []
    paired_items = 0
    left_out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for card in new.suites:
        other = base_suites.get(card.name)
        why = None
        if other is None:
            why = "in this run only"
            notes.append(f"{card.name}: {why} ({card.items} items), not compared")
        elif other.protocol.name != card.protocol.name:
            why = "the runs' protocols differ"
            notes.append(
                f"{card.name}: not compared: the base run's protocol is {other.protocol.label}; this "
                f"run's, {card.protocol.label}"
            )
        if why is not None:
            left_out[card.name] = (why, tuple(card.metrics))
            continue
        assert other is not None
        compared.append(card.name)
        differs = data_difference(other, card)
        if differs:
            notes.append(f"{card.name}: the runs read different data ({differs}); items are aligned by id")
        pairs = [(by_key[r.key], r) for r in new.results if r.suite == card.name and r.key in by_key]
        paired_items += len(pairs)
        rows += _suite_rows(card, other, pairs, seed)
        regressions += _regressions(card, other, pairs)
    notes += [
        f"{s.name}: in the base run only ({s.items} items), not compared"
        for s in base.suites
        if s.name not in new_suites
    ]
    notes += differences(base, new, compared)
    p_holm = paired.holm([r.p for r in rows])
    rows = [_with(r, p_holm=p) for r, p in zip(rows, p_holm, strict=True)]
    only_base = [r.key for r in base.results if r.suite in compared and r.key not in new_keys]
    only_new = [r.key for r in new.results if r.suite in compared and r.key not in by_key]
    return Comparison(
        base={
            "scorecard": str(path) if path else None,
            "system": base.system.get("label"),
            "items": sum(r.suite in compared for r in base.results),
            "paired": paired_items,  # items in both runs: what the comparison is over
            "items_in_run": len(base.results),
            "suites": compared,
            "config": {k: base.config.get(k) for k in ("suites", "seed", "protocol", "limit", "shard")},
        },
        rows=rows,
        only_base=only_base,
        only_new=only_new,
        regressions=regressions,
        notes=notes,
        base_results={k: by_key[k] for k in by_key if k in new_keys},
        left_out=left_out,
    )


# What in a run's configuration can move its numbers, as the notes name it.
MOVES = {
    "settings": "the suites' settings (--ambig-setting)",
    "protocol": "the protocol (--ambig-protocol)",
    "costs": "the interactive costs (--ambig-costs)",
    "clarifications": "the clarifying questions allowed (--ambig-clarifications)",
    "user": "the simulated user (--ambig-user)",
    "steerability": "the forced-action policies (--ambig-steerability)",
    "profile": "the scorer profile (--ambig-scorer-profile)",
    "metrics": "the metrics computed (--ambig-metrics)",
    "reader": "the reader (--ambig-reader)",
    "judge": "the judge model (--ambig-judge)",
    "judge_base_url": "the judge's server (--ambig-judge-base-url)",
    "judge_samples": "the judge's samples (--ambig-judge-samples)",
    "llm_model": "the model of the llm: system (--ambig-llm-model)",
    "llm_base_url": "the llm: system's server (--ambig-llm-base-url)",
    "seed": "the seed (--ambig-seed: the --ambig-limit sample, the models' seed)",
    "timeout": "the system's timeout (--ambig-timeout)",
}
# Then the suites' loader options, as each names them (``LoaderOption.moves``), and:
LATER_MOVES = {
    "limit": "the item sample (--ambig-limit)",
    "sample": "the stratified item sample (--ambig-sample)",
    "repeats": "the trials per item (--ambig-repeats)",
    "device_used": "where the local models ran (a GPU's logits may differ in the last bits)",
}
# What only matters when a system searched: the retriever and what it searched.
RETRIEVAL_MOVES = {
    "retriever": "the retriever (--ambig-retriever)",
    "embedder": "the dense embedder (--ambig-embedder)",
}


def differences(base: Scorecard, new: Scorecard, compared: Sequence[str]) -> list[str]:
    """Every difference between the runs' configurations that can move the numbers, in
    words: the protocol and settings, the scorer profile, the metrics computed, the models,
    the retriever and its corpus (the same system moved 11.5 points on MARCH when the other
    suites' passages were pooled into its corpus), the package's version. The comparison
    goes on (a difference may be the point of it), and says each."""
    lines = []
    loaders = {key: option.moves for key, option in loader_options().items()}
    keys = {**MOVES, **loaders, **LATER_MOVES}
    searched = any("retriever" in (card.system.get("inputs") or ()) for card in (base, new))
    if searched:
        keys |= RETRIEVAL_MOVES
    profiled = any(s.profile for card in (base, new) for s in card.suites if s.name in compared)
    for key, what in keys.items():
        if key == "profile" and not profiled:
            continue
        before, after = base.config.get(key), new.config.get(key)
        if before != after:
            lines.append(
                f"{what}: {_setting(key, before)} in the base run, {_setting(key, after)} in this one"
            )
    if searched:
        before, after = _corpus(base), _corpus(new)
        if before[0] != after[0]:
            lines.append(
                f"the retrieval corpus differs: {before[1]} in the base run, {after[1]} in this one: "
                "what the system finds, and every score after it, can move"
            )
    version = "pytest-ambigqa"
    if (
        base.versions.get(version)
        and new.versions.get(version)
        and base.versions[version] != new.versions[version]
    ):
        lines.append(
            f"{version} {base.versions[version]} scored the base run, {new.versions[version]} this one: "
            "a metric's implementation may differ"
        )
    return [f"configuration differs: {line}" for line in lines]


def data_difference(base: SuiteCard, new: SuiteCard) -> str | None:
    """How two runs' data of one suite differ, by revision, by the files read and their sha256,
    or by the sha256 of what was parsed; None when they read the same."""
    if base.revision != new.revision and (base.revision or new.revision):
        return f"revision {(base.revision or 'none')[:12]} against {(new.revision or 'none')[:12]}"
    if base.files and new.files and base.files != new.files:
        old, now = dict(base.files), dict(new.files)
        changed = sorted(n for n in {*old, *now} if old.get(n) != now.get(n))
        return f"files {', '.join(changed[:3])}{' and more' if len(changed) > 3 else ''} differ"
    if base.sha256 != new.sha256:
        return f"sha256 {base.sha256[:12]} against {new.sha256[:12]}"
    return None


def _setting(key: str, value: Any) -> str:
    if value is None:
        return "every metric" if key == "metrics" else "none"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    return str(value)


def _corpus(card: Scorecard) -> tuple[Any, str]:
    """What a run's retriever searched: (its identity, how to name it). The session records
    the corpus's fingerprint; an older scorecard is named by the option or the suites pooled."""
    recorded = card.config.get("retrieval_corpus")
    if isinstance(recorded, dict) and recorded.get("sha256"):
        sha = recorded["sha256"]
        return sha, f"{recorded.get('source')} ({recorded.get('passages')} passages, sha256 {sha[:12]})"
    source = card.config.get("corpus") or "suites: " + ", ".join(card.config.get("suites") or ())
    return source, source


def _with(row: Row, **changes: Any) -> Row:
    return Row(**(asdict(row) | changes))


def _slices(card: SuiteCard, pairs: list[tuple[ItemResult, ItemResult]]) -> list[tuple[str, list]]:
    """The slices the scorecard shows: all items, then its protocol's (MARCH's types)."""
    label = _stratum(card)
    names = [s.name for s in card.slices]
    return [("all", pairs), *((name, [p for p in pairs if label(p[1]) == name]) for name in names)]


def _stratum(card: SuiteCard) -> Callable[[ItemResult], str | None]:
    return protocol_of(card.protocol.name).slice_of


def _group(card: SuiteCard) -> Callable[[ItemResult], str]:
    """What an item weighs as one with in the scorecard's means (``Protocol.group``)."""
    return protocol_of(card.protocol.name).group


def _cluster(card: SuiteCard) -> Callable[[ItemResult], str]:
    """What is resampled whole, as the scorecard's interval does (``Protocol.cluster``)."""
    return protocol_of(card.protocol.name).cluster


def _suite_rows(
    card: SuiteCard, other: SuiteCard, pairs: list[tuple[ItemResult, ItemResult]], seed: int
) -> list[Row]:
    rows = []
    stratum = _stratum(card)
    for name, part in _slices(card, pairs):
        for metric in card.metrics:
            reason = _unavailable(metric, card, other)
            if reason is not None:
                rows.append(_na(card.name, name, metric, reason))
                continue
            scope = (card.name, name, metric)
            seed_ = stable_seed(seed, "paired", *scope)
            strata = [stratum(b) for b, _ in part]
            rows.append(_row(scope, part, strata, seed_, _group(card), _cluster(card)))
    return rows


def _unavailable(metric: str, card: SuiteCard, other: SuiteCard) -> str | None:
    """Why ``metric`` cannot be compared at all (not computed, n/a in a run), or None."""
    if metric not in other.metrics:
        return "not computed in the base run"
    for run, summary in (("this run", card.metrics[metric]), ("the base run", other.metrics[metric])):
        if summary.mean is None:
            return f"n/a in {run}: {summary.reason}"
    return None


def _na(suite: str, slice_: str, metric: str, reason: str, n: int = 0, one_sided: int = 0) -> Row:
    return Row(suite, slice_, metric, n, None, None, None, None, None, None, None, None, None, None, None,
               one_sided, reason)  # fmt: skip


def _columns(metric: str, result: ItemResult, pooled: bool) -> tuple[float, ...] | None:
    """The item's columns for ``metric`` (None: unscored), on the printed scale; ``pooled``:
    the metric's units are pooled across items (then each item is a (sum, count) pair, an item
    without units one unit, as the scorecard's ``_summarize_pooled`` counts them)."""
    spec = METRICS[metric]
    if spec.aggregation == "geometric":
        parts = [METRICS[m] for m in spec.of]
        if not all(p.item_metric in result.scores for p in parts):
            return None
        return tuple(result.scores[p.item_metric] * p.factor for p in parts)
    source = spec.item_metric
    if source not in result.scores:
        return None
    if pooled:
        units = result.units.get(metric, [result.scores[source]])
        return (math.fsum(units) * spec.factor, float(len(units)))
    return (result.scores[source] * spec.factor,)


def _statistic(metric: str, width: int) -> Callable | None:
    spec = METRICS[metric]
    if spec.aggregation == "geometric":
        import numpy as np

        return lambda means: np.sqrt(np.prod(means, axis=-1))
    if width == 2:  # pooled units: (sum, count)
        import numpy as np

        return lambda means: np.divide(
            means[..., 0], means[..., 1], out=np.zeros_like(means[..., 1]), where=means[..., 1] > 0
        )
    return None


def _row(
    scope: tuple[str, str, str],
    part: list,
    strata: list,
    seed: int,
    group: Callable[[ItemResult], str] | None = None,
    cluster: Callable[[ItemResult], str] | None = None,
) -> Row:
    import numpy as np

    suite, name, metric = scope
    spec = METRICS[metric]
    if spec.aggregation == "sum":
        return _na(suite, name, metric, "a total, not a per-item score")
    pooled = any(r.units.get(metric) for pair in part for r in pair)
    columns = [(_columns(metric, b, pooled), _columns(metric, n, pooled)) for b, n in part]
    both = [
        (b, n, s, new)
        for (b, n), s, (_, new) in zip(columns, strata, part, strict=True)
        if b is not None and n is not None
    ]
    one_sided = sum((b is None) != (n is None) for b, n in columns)
    if not both:
        reason = "no item scored in both runs" if part else "no aligned items"
        return _na(suite, name, metric, reason, one_sided=one_sided)
    if group is not None and not pooled and len(both[0][0]) == 1:
        sizes = Counter(group(r) for *_, r in both)
        whole = cluster or group
        if len(sizes) < len(both) or len({whole(r) for *_, r in both}) < len(sizes):
            # each item weighs one over its group's items, (w x, w), summed over its cluster:
            # the pair is then one query, resampled and sign-flipped whole (stats.bootstrap.cluster_interval)
            summed: dict[str, list] = {}
            for old, now, label, result in both:
                w = 1 / sizes[group(result)]
                got = summed.setdefault(whole(result), [0.0, 0.0, 0.0, 0.0, label, result])
                got[0] += old[0] * w
                got[1] += w
                got[2] += now[0] * w
                got[3] += w
            both = [((b, bw), (n, nw), s, r) for b, bw, n, nw, s, r in summed.values()]
    base = np.array([b for b, _, _, _ in both], dtype=float)
    new = np.array([n for _, n, _, _ in both], dtype=float)
    width = base.shape[1]
    if width == 1:
        base, new = base[:, 0], new[:, 0]
    statistic = _statistic(metric, width)
    value = (lambda x: float(x.mean())) if statistic is None else (lambda x: float(statistic(x.mean(axis=0))))
    low, high = paired.paired_bootstrap(base, new, [s for _, _, s, _ in both], seed, statistic)
    # An item's trial mean (--ambig-repeats) is no longer 0 or 1: then the permutation test.
    binary = spec.binary and width == 1
    binary = binary and bool(np.isin(np.concatenate([base, new]) / spec.factor, (0, 1)).all())
    if binary:
        b, c = paired.discordant(base / spec.factor, new / spec.factor)
        test, p = "mcnemar", paired.mcnemar_exact(b, c)
    else:
        test, p = "permutation", paired.sign_flip_p(base, new, seed, statistic)
    wins = ties = losses = None
    if spec.aggregation != "geometric" and sign(metric):  # DR has no value per item, a length no better
        per_base = base if width == 1 else _unit_means(base)
        per_new = new if width == 1 else _unit_means(new)
        delta = (per_new - per_base) * (sign(metric) or 1)
        wins, ties, losses = int((delta > 0).sum()), int((delta == 0).sum()), int((delta < 0).sum())
    b_value, n_value = value(base), value(new)
    return Row(
        suite, name, metric, len(both), b_value, n_value, n_value - b_value, low, high, test, p, None,
        wins, ties, losses, one_sided,
    )  # fmt: skip


def running_row(suite: str, metric: str, pairs: list, strata: list, seed: int) -> Row:
    """``metric`` over all the (base, new) ``pairs`` of one suite so far, as :func:`compare`
    puts it in its "all" row: live progress shows the change while a run goes on."""
    scope = (suite, "all", metric)
    return _row(scope, pairs, strata, stable_seed(seed, "paired", *scope))


def _unit_means(columns: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.divide(columns[:, 0], columns[:, 1], out=np.zeros(len(columns)), where=columns[:, 1] > 0)


# ---- regressions


_WORD = re.compile(r"\S+")


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """The word-level edit from ``before`` to ``after``: ("=", kept), ("-", removed), ("+", added)."""
    a, b = _WORD.findall(before), _WORD.findall(after)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("=", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("-", " ".join(a[i1:i2])))
        if j2 > j1:
            out.append(("+", " ".join(b[j1:j2])))
    return out


def _text(result: ItemResult) -> str:
    return result.answer.text if result.answer is not None else ""


def _regressions(
    card: SuiteCard, other: SuiteCard, pairs: list[tuple[ItemResult, ItemResult]]
) -> list[Regression]:
    """Items whose score dropped on any per-item metric with a direction that both runs
    report (an errored item's 0 on a metric n/a in its run is no drop), worst first: by the
    drop in the suite's first such metric, then by how many metrics dropped."""
    metrics = [
        m
        for m in card.metrics
        if sign(m)
        and not METRICS[m].suite_level
        and METRICS[m].aggregation != "sum"
        and _unavailable(m, card, other) is None
    ]
    found = []
    for base, new in pairs:
        drops = {}
        for metric in metrics:
            source = METRICS[metric].item_metric
            if source in base.scores and source in new.scores:
                before, after = base.scores[source], new.scores[source]
                if (after - before) * sign(metric) < 0:
                    drops[metric] = (before, after)
        if drops or (base.status == "ok" and new.status != "ok"):
            found.append(
                Regression(
                    card.name, new.item_id, drops, base.status, new.status, word_diff(_text(base), _text(new))
                )
            )
    primary = metrics[0] if metrics else None

    def severity(r: Regression) -> tuple[float, int]:
        first = r.drops.get(primary) if primary else None
        item_range = METRICS[primary].item_range if primary else None
        scale = item_range[1] if item_range else 1
        return (-abs(first[0] - first[1]) / scale if first else 0.0, -len(r.drops))

    return sorted(found, key=severity)


# ---- the gate


@dataclass(frozen=True)
class Margin:
    """A ``--ambig-fail-if-worse`` entry: ``[suite:]metric:margin`` (printed scale)."""

    suite: str | None
    metric: str
    margin: float

    def __str__(self) -> str:
        return f"{self.suite + ':' if self.suite else ''}{self.metric}:{self.margin:g}"


def worse(comparison: Comparison, margins: Sequence[Margin]) -> list[Check]:
    """The non-inferiority gate of each margin, one check per suite that reports its metric:
    it fails when the 95% interval of the change, taken in the metric's better direction,
    lies wholly below -margin.

    The interval decides, unadjusted, and not the p values printed beside it: the gate asks
    of one metric named in advance whether the run is worse by more than the margin, while a
    row's p (and Holm's p, corrected across every row shown: all metrics of all slices) tests
    whether the change is 0 at all. They answer different questions and can disagree: an
    interval wholly below -margin beside a Holm p of 1.000 (40 tests), or a significant drop
    within the margin. Correcting the gate for the rows shown would weaken it with every
    metric the suite happens to report; each line says which statistic decided.
    """
    checks = []
    tests = sum(r.p is not None for r in comparison.rows)
    for m in margins:
        rows = [
            r
            for r in comparison.rows
            if r.metric == m.metric and r.slice == "all" and (m.suite is None or r.suite == m.suite)
        ]
        gate = f"--ambig-fail-if-worse={m}"
        statistic = "change, the better end of its 95% CI (paired bootstrap, unadjusted)"
        for suite, (why, metrics) in comparison.left_out.items():
            if m.metric in metrics and m.suite in (None, suite):
                unmet = (
                    f"{suite} {m.metric} ({METRICS[m.metric].label}): not compared ({why}), cannot show {m}"
                    + ("" if m.suite else f"; gate other suites alone with SUITE:{m}")
                )
                checks.append(Check(gate, suite, statistic, m.metric, None, -m.margin, True, False, unmet))
        if not rows and not any(c.gate == gate for c in checks):
            absent = f"fail-if-worse {m}: no suite of both runs reports {m.metric}"
            suite = m.suite or ""
            checks.append(Check(gate, suite, statistic, m.metric, None, -m.margin, True, False, absent))
        for r in rows:
            label = METRICS[r.metric].label
            bound: float | None = None
            failure: str | None = None
            if r.low is None or r.high is None:
                failure = f"{r.suite} {r.metric} ({label}): not compared ({r.reason}), cannot show {m}"
            elif not all(map(finite, (r.diff, r.low, r.high))):
                failure = (
                    f"{r.suite} {r.metric} ({label}): the change or its interval is not a finite number "
                    f"({r.diff}, [{r.low}, {r.high}]), cannot show {m}"
                )
            else:
                bound = r.high if sign(r.metric) > 0 else -r.low  # the best case of the change
                if bound < -m.margin:
                    d = _apart(bound, -m.margin)
                    p, holm = p_text(r.p) or "n/a", p_text(r.p_holm) or "n/a"
                    failure = (
                        f"{r.suite} {r.metric} ({label}) worse than the base run: change {r.diff:+.{d}f}, "
                        f"95% CI [{r.low:.{d}f}, {r.high:.{d}f}], beyond the margin {m.margin:g}; decided by "
                        f"that interval (paired bootstrap, unadjusted: a non-inferiority check of this "
                        f"metric alone), not by the row's p {p} (Holm {holm}), which test a change of 0 "
                        f"across the {tests} rows shown"
                    )
            checks.append(
                Check(gate, r.suite, statistic, r.metric, bound, -m.margin, True, failure is None, failure)
            )
    return checks


def p_text(value: float | None) -> str:
    """A p value as every report prints it ('' for none)."""
    if value is None:
        return ""
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _apart(value: float, limit: float) -> int:
    """Decimals enough (2 to 6) that ``value`` and ``limit`` do not print alike."""
    return next((d for d in range(2, 7) if f"{value:.{d}f}" != f"{limit:.{d}f}"), 6)
