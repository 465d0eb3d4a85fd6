"""From per-item results to the scorecard: per suite, per ambiguity type, with intervals.

Built on the controller from whatever reached it (serially or from xdist workers), in
item order, so ``-n 0`` and ``-n 2`` give the same numbers. Errored and missing items
stay in every correctness denominator as 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..metrics import METRICS
from ..schema import AMBIGUITY_TYPES, ItemResult
from ..suites import LoadedSuite, Scorers
from . import published
from .stats import bootstrap_interval, stable_seed

SCHEMA_VERSION = 1
MISSING = "never reported (crashed worker or interrupted run)"


@dataclass(frozen=True)
class MetricSummary:
    metric: str
    n: int  # items with a score
    unscored: int  # items without one
    reason: str | None  # why items are unscored (the most common reason)
    mean: float | None  # on the printed scale
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Slice:
    name: str
    items: int
    metrics: dict[str, MetricSummary]


@dataclass(frozen=True)
class Evidence:
    """Evidence coverage of one slice: recall@k of gold passages, original vs clarified."""

    name: str
    items: int  # items with gold passages in the corpus
    original: MetricSummary
    clarified: MetricSummary


@dataclass(frozen=True)
class SuiteCard:
    name: str
    title: str
    source: str
    sha256: str
    is_sample: bool
    items_in_file: int
    items: int  # selected and expected to report
    errors: int
    missing: int
    metrics: dict[str, MetricSummary]
    slices: list[Slice] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)


@dataclass(frozen=True)
class Scorecard:
    system: dict[str, Any]
    config: dict[str, Any]
    suites: list[SuiteCard]
    results: list[ItemResult]
    versions: dict[str, str]
    retrieval: dict[str, Any] | None = None  # retriever, k and corpus of the evidence report
    shortfalls: list[str] = field(default_factory=list)

    def to_json(self, duration: float | None = None) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "system": self.system,
            "config": self.config,
            "versions": self.versions,
            "retrieval": self.retrieval,
            "suites": [
                {
                    **{k: v for k, v in asdict(card).items() if k not in ("metrics", "slices", "evidence")},
                    "metrics": {m: asdict(s) for m, s in card.metrics.items()},
                    "slices": [
                        {
                            "name": s.name,
                            "items": s.items,
                            "metrics": {m: asdict(v) for m, v in s.metrics.items()},
                        }
                        for s in card.slices
                    ],
                    "evidence": [asdict(e) for e in card.evidence],
                    "published": published.rows(card.name),
                }
                for card in self.suites
            ],
            "gates": {"passed": not self.shortfalls, "shortfalls": list(self.shortfalls)},
            "items": [r.to_dict() for r in self.results],
            "timing": {"duration": duration},
        }


def _summary(
    name: str, values: list[float], total: int, reason: str | None, factor: float, seed: int
) -> MetricSummary:
    if not values:
        return MetricSummary(name, 0, total, reason, None, None, None)
    low, high = bootstrap_interval(values, seed)
    mean = sum(values) / len(values)
    return MetricSummary(
        name, len(values), total - len(values), reason, mean * factor, low * factor, high * factor
    )


def summarize(metric: str, results: Sequence[ItemResult], seed: int, *scope: str) -> MetricSummary:
    values = [r.scores[metric] for r in results if metric in r.scores]
    reasons = Counter(r.unscored[metric] for r in results if metric in r.unscored)
    reason = reasons.most_common(1)[0][0] if reasons else None
    return _summary(
        metric, values, len(results), reason, METRICS[metric].factor, stable_seed(seed, *scope, metric)
    )


def summarize_evidence(name: str, results: Sequence[ItemResult], seed: int, *scope: str) -> Evidence:
    measured = [r for r in results if r.evidence]
    reason = "no gold passages in the corpus"

    def part(kind: str) -> MetricSummary:
        values = [r.evidence[kind] for r in measured]
        return _summary(kind, values, len(results), reason, 100, stable_seed(seed, *scope, "evidence", kind))

    return Evidence(name, len(measured), part("original"), part("clarified"))


def _parts(results: list[ItemResult], by_type: bool) -> list[tuple[str, list[ItemResult]]]:
    """The slices of a suite: MARCH's ambiguity types (Table 4), each one present."""
    if not by_type:
        return []
    parts = [(kind, [r for r in results if r.ambiguity_type == kind]) for kind in AMBIGUITY_TYPES]
    return [(kind, part) for kind, part in parts if part]


def build(
    loaded: Iterable[LoadedSuite],
    results: Mapping[str, ItemResult],
    expected: Iterable[str] | None,
    scorers: Scorers,
    seed: int,
    *,
    system: dict[str, Any],
    config: dict[str, Any],
    versions: dict[str, str],
    retrieval: dict[str, Any] | None = None,
) -> Scorecard:
    """``expected`` are the item keys selected for this run (None: every loaded item)."""
    wanted = None if expected is None else set(expected)
    cards: list[SuiteCard] = []
    ordered: list[ItemResult] = []
    for suite in loaded:
        name = suite.suite.name
        chosen = [i for i in suite.items if wanted is None or i.key in wanted or i.key in results]
        if not chosen:
            continue
        suite_results = [
            results.get(i.key) or suite.suite.failed_result(i, scorers, "missing", MISSING) for i in chosen
        ]
        ordered.extend(suite_results)
        parts = _parts(suite_results, suite.suite.sliced_by_type)
        evidence = []
        if any(r.evidence for r in suite_results):
            evidence = [
                summarize_evidence(part_name, part, seed, name, part_name)
                for part_name, part in [("all", suite_results), *parts]
            ]
        cards.append(
            SuiteCard(
                name=name,
                title=suite.suite.title,
                source=suite.source,
                sha256=suite.sha256,
                is_sample=suite.is_sample,
                items_in_file=suite.total,
                items=len(suite_results),
                errors=sum(r.status == "error" for r in suite_results),
                missing=sum(r.status == "missing" for r in suite_results),
                metrics={m: summarize(m, suite_results, seed, name) for m in suite.suite.metrics},
                slices=[
                    Slice(
                        kind,
                        len(part),
                        {m: summarize(m, part, seed, name, kind) for m in suite.suite.metrics},
                    )
                    for kind, part in parts
                ],
                evidence=evidence,
            )
        )
    return Scorecard(
        system=system, config=config, suites=cards, results=ordered, versions=versions, retrieval=retrieval
    )
