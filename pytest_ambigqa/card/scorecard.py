"""From per-item results to the scorecard: per suite, per ambiguity type, with intervals.

Built on the controller from whatever reached it (serially or from xdist workers), in
item order, so ``-n 0`` and ``-n 2`` give the same numbers. Errored and missing items
stay in every correctness denominator as 0.
"""

from __future__ import annotations

import dataclasses
import math
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..metrics import METRICS
from ..metrics.coverage import vacuous_answers
from ..models.usage import Usage
from ..protocols import PROTOCOLS, protocol_of
from ..schema import EVIDENCE_SHORT, AmbigItem, ItemResult
from ..stats.bootstrap import bootstrap_interval, cluster_interval, rouge_bootstrap_mid, stable_seed
from ..stats.strata import interval as stratified_interval
from ..stats.strata import stratified_bootstrap, stratified_mean, weighted_columns
from ..suites import LoadedSuite, Scorers, Setup, Suite
from ..suites.base import OPEN_RETRIEVAL
from ..suites.sample import Sample
from . import migrations, model, published
from .trials import Repeats, TrialMetric
from .trials import repeats as trial_section

if TYPE_CHECKING:
    import numpy as np

    from .calibration import Calibration
    from .compare import Comparison

MISSING = "never reported (crashed worker or interrupted run)"
# Config fields that may differ between shards of one run (shards may run on different machines):
# `merge` checks the rest, and an MLflow shard set is named by the rest.
PER_SHARD = ("shard", "shard_scheduler", "device", "device_used", "selection")


@dataclass(frozen=True)
class MetricSummary:
    metric: str
    n: int  # items with a score
    unscored: int  # items without one
    reason: str | None  # why items are unscored (the most common reason)
    mean: float | None  # on the printed scale
    low: float | None
    high: float | None
    failed: int = 0  # of the n, items without an answer (errors, missing) counted as 0


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
class Variance:
    """How much K judge samples of one metric disagree, over a suite's items."""

    metric: str
    items: int
    mean_spread: float  # mean over items of (max - min) of the samples, item scale
    max_spread: float
    agreement: float  # share of items whose samples are all equal
    straddling: list[str]  # items whose samples fall on both sides of an --ambig-item-min


@dataclass(frozen=True)
class PanelAgreement:
    """How a panel of judges agreed on one metric over a suite's items (``judge/panel.py``).

    Krippendorff's alpha across the judges, at the ordinal level when every judge's score is
    a whole number (MARCH's 0-5 criteria with one sample), else at the interval level, with
    a percentile-bootstrap interval over the items (``stats/agreement.py``); n/a, with the
    reason, where it is undefined. ``disputed``: the items whose judges differ by at least
    ``threshold`` on the item scale (``--ambig-judge-disagreement`` times its range)."""

    metric: str
    judges: list[str]
    items: int  # items the panel scored
    level: str
    alpha: float | None
    low: float | None
    high: float | None
    reason: str | None
    threshold: float
    disputed: list[str]


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
    evidence_short: int = 0  # items given less evidence than the protocol promises (details say what)
    slices: list[Slice] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    variance: dict[str, Variance] = field(default_factory=dict)  # judge metrics sampled K > 1 times
    panel: dict[str, PanelAgreement] = field(default_factory=dict)  # judge metrics scored by a panel
    protocol: Setup = OPEN_RETRIEVAL  # how the items were put to the system
    profile: str | None = None  # the official scorer the long-answer metrics followed
    outside: dict[str, str] = field(default_factory=dict)  # metrics the run's setting does not report
    data_warnings: list[str] = field(default_factory=list)  # what in the data makes a number odd
    section: dict[str, Any] | None = None  # its protocol's own part, under the protocol's name
    repeats: Repeats | None = None  # --ambig-repeats: pass@k, pass^k, variance, flaky items
    revision: str | None = None  # the commit an hf:// source was read at
    files: tuple[tuple[str, str], ...] = ()  # (name, sha256) of every file read
    release: str | None = None  # the known release the data is (suites/sources.py), if identified
    # card/published.py's rows beside this run, compared when the card is built (or read)
    published: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Check:
    """One gate as it was evaluated, passed or not (card/gates.py evaluates them): every
    gate a run sets is listed with what it compared, so a green run shows how close it came."""

    gate: str  # the option and its entry: "--ambig-fail-under=march:str_em=30"
    suite: str
    statistic: str  # what was compared with the bound: "STR-EM mean", "error rate", ...
    metric: str | None  # whose printed scale value and bound are on (None: a rate or a count)
    value: float | None  # None: nothing to compare (n/a, not a finite number)
    bound: float
    higher: bool  # it passes when value >= bound (else when value <= bound)
    passed: bool
    failure: str | None = None  # the gate FAILED line

    @property
    def margin(self) -> float | None:
        """How far the value lies on the passing side of the bound (negative: failed by)."""
        if self.value is None:
            return None
        return self.value - self.bound if self.higher else self.bound - self.value


@dataclass(frozen=True)
class Scorecard:
    system: dict[str, Any]
    config: dict[str, Any]
    suites: list[SuiteCard]
    results: list[ItemResult]
    versions: dict[str, str]
    retrieval: dict[str, Any] | None = None  # retriever, k and corpus of the evidence report
    judge: dict[str, Any] | None = None  # model, templates, usage and cost of the judge
    shortfalls: list[str] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)  # every gate evaluated, passed or not
    gates_deferred: str | None = None  # a shard's suite gates wait for the merge
    comparison: Comparison | None = None  # against --ambig-baseline (card/compare.py)
    sample: dict[str, Any] | None = None  # --ambig-sample: what was drawn from what (suites/sample.py)
    started: str | None = None  # when the run began, ISO 8601 UTC: orders runs in a history
    sequential: dict[str, Any] | None = None  # --ambig-sequential: where its gates were decided
    calibration: Calibration | None = None  # the judge against --ambig-human-labels (card/calibration.py)
    # The items as the data file has them (question, gold), by key, for report.html's
    # drill-down; not written to scorecard.json, which holds results only.
    gold: Mapping[str, AmbigItem] = field(default_factory=dict, repr=False, compare=False)
    gold_absent: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)  # suite: why

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Scorecard:
        """A scorecard as :func:`model.write` wrote it, this version's or, migrated, an older
        one's (``card.saved`` reads the file); the published rows are not read back, they are
        compared again. KeyError, TypeError or ValueError: not a scorecard this version reads."""
        data = migrations.migrate(dict(data))
        return cls(
            system=dict(data["system"]),
            config=dict(data["config"]),
            suites=[_suite_card(card) for card in data["suites"]],
            results=[ItemResult.from_dict(item) for item in data["items"]],
            versions=dict(data["versions"]),
            retrieval=data.get("retrieval"),
            judge=data.get("judge"),
            shortfalls=list(data["gates"]["shortfalls"]),
            checks=[Check(**c) for c in data["gates"].get("checks", ())],
            gates_deferred=data["gates"].get("deferred"),
            started=_started((data.get("timing") or {}).get("started")),
            sample=data.get("sample"),
            sequential=data.get("sequential"),
            calibration=_calibration(data.get("calibration")),
        )

    def to_json(self, duration: float | None = None, stream: bool = False) -> dict[str, Any]:
        """The scorecard as ``scorecard.json`` holds it (:func:`model.write`)."""
        return model.write(self, _sections, duration, stream)


def _sections(card: SuiteCard) -> dict[str, Any]:
    """Every protocol with a section has its key in a suite's card: the card's protocol its
    section, the others null."""
    own = protocol_of(card.protocol.name).name
    return {p.name: card.section if p.name == own else None for p in PROTOCOLS.values() if p.has_section}


def utc_stamp(seconds: float | None = None) -> str:
    """A time (now, by default) as ``timing.started`` records when a run began: UTC, to the
    second, ISO 8601 (``2024-01-02T22:13:20Z``), so that such times sort as strings."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _started(value: Any) -> str | None:
    """``timing.started`` read back: a time as :func:`utc_stamp` writes it, else unknown."""
    if isinstance(value, str) and _STARTED.fullmatch(value):
        return value
    return None


_STARTED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _calibration(data: Mapping[str, Any] | None) -> Calibration | None:
    """The ``calibration`` key read back (absent from older scorecards and runs without labels)."""
    if data is None:
        return None
    from .calibration import Calibration

    return Calibration.from_json(data)


def _suite_card(data: Mapping[str, Any]) -> SuiteCard:
    def summaries(raw: Mapping[str, Any]) -> dict[str, MetricSummary]:
        return {m: MetricSummary(**v) for m, v in raw.items()}

    plain = {f.name for f in dataclasses.fields(SuiteCard)} - {
        "metrics",
        "slices",
        "evidence",
        "variance",
        "panel",
        "protocol",
        "section",
        "repeats",
        "published",
    }
    protocol = data["protocol"]  # every version-2 card has one (migrations.migrate_1_to_2)
    repeats = data.get("repeats")  # the parts after "metrics" are optional: older cards lack some
    setup = Setup(
        **{**protocol, "notes": tuple(protocol["notes"]), "received": tuple(protocol.get("received", ()))}
    )
    way = protocol_of(setup.name)
    read = {k: data[k] for k in plain if k in data}
    read["files"] = tuple((str(name), str(sha)) for name, sha in data.get("files") or ())  # JSON's lists
    return SuiteCard(
        **read,
        metrics=summaries(data["metrics"]),
        slices=[Slice(s["name"], s["items"], summaries(s["metrics"])) for s in data.get("slices", ())],
        evidence=[
            Evidence(e["name"], e["items"], MetricSummary(**e["original"]), MetricSummary(**e["clarified"]))
            for e in data.get("evidence", ())
        ],
        variance={m: Variance(**v) for m, v in data.get("variance", {}).items()},
        panel={m: PanelAgreement(**v) for m, v in data.get("panel", {}).items()},
        protocol=setup,
        published=published.compare(data["name"], setup),
        section=data.get(way.name) if way.has_section else None,
        repeats=Repeats(
            **{k: v for k, v in repeats.items() if k != "metrics"},
            metrics={m: TrialMetric(**v) for m, v in repeats["metrics"].items()},
        )
        if repeats
        else None,
    )


def _summary(
    name: str, values: list[float], total: int, reason: str | None, factor: float, seed: int, failed: int = 0
) -> MetricSummary:
    if not values:
        return MetricSummary(name, 0, total, reason, None, None, None)
    low, high = bootstrap_interval(values, seed)
    mean = sum(values) / len(values)
    return MetricSummary(
        name, len(values), total - len(values), reason, mean * factor, low * factor, high * factor, failed
    )


def _reason(results: Sequence[ItemResult], metric: str) -> str | None:
    reasons = Counter(r.unscored[metric] for r in results if metric in r.unscored)
    return reasons.most_common(1)[0][0] if reasons else None


def summarize(
    metric: str,
    results: Sequence[ItemResult],
    seed: int,
    *scope: str,
    known: Mapping[str, MetricSummary] | None = None,
    group: Callable[[ItemResult], str] | None = None,
    population: Mapping[tuple[str, str | None], int] | None = None,
    cluster: Callable[[ItemResult], str] | None = None,
) -> MetricSummary:
    """One metric over ``results`` by its spec's aggregation (see ``metrics.AGGREGATIONS``).

    Errored and missing items carry 0 for correctness metrics; but when no answered item
    could be scored (the system never reports what the metric reads, say), those zeros
    alone make no number: the metric is n/a with the answered items' reason. ``known``:
    the same results' summaries so far, which a metric built from others reuses. ``group``:
    what each result weighs as one with (the protocol's): a mean is then the mean of the
    groups' means. ``cluster``: what is resampled whole in its interval (the protocol's: an
    interactive query, every reading and cost pair of it together), by default the group.
    ``population``: the items of the data in
    each stratum (suite, ambiguity type) that ``results`` are a stratified sample of
    (``--ambig-sample``): the summary is then the whole data's estimate (:func:`_weighted`).
    """
    spec = METRICS[metric]
    if spec.aggregation == "geometric":
        return _summarize_geometric(metric, results, seed, *scope, known=known or {}, population=population)
    source = spec.item_metric
    scored = [r for r in results if source in r.scores]
    answered = [r for r in results if r.status == "ok"]
    reason = _reason(answered, source) or _reason(results, source)
    if not scored or (answered and not any(r.status == "ok" for r in scored)):
        return MetricSummary(metric, 0, len(results), reason, None, None, None)
    n, unscored = len(scored), len(results) - len(scored)
    failed = sum(r.status != "ok" for r in scored)
    item_seed = stable_seed(seed, *scope, metric)
    if population is not None:
        summary = _weighted(metric, scored, population, item_seed)
        return dataclasses.replace(summary, unscored=unscored, reason=reason, failed=failed)
    if spec.aggregation == "sum":
        total = sum(r.scores[source] for r in scored) * spec.factor
        return MetricSummary(metric, n, unscored, reason, total, None, None, failed)
    if spec.aggregation == "boot-mid":
        mid = rouge_bootstrap_mid([r.scores[source] for r in scored], item_seed) * spec.factor
        return MetricSummary(metric, n, unscored, reason, mid, None, None, failed)
    if any(r.units.get(metric) for r in scored):
        return dataclasses.replace(
            _summarize_pooled(metric, scored, unscored, reason, item_seed), failed=failed
        )
    if group is not None:
        groups: dict[str, list[float]] = {}
        clusters: dict[str, str] = {}
        for r in scored:
            groups.setdefault(group(r), []).append(r.scores[metric])
            clusters[group(r)] = (cluster or group)(r)
        if len(groups) < n or len(set(clusters.values())) < len(groups):
            means = [math.fsum(v) / len(v) for v in groups.values()]
            low, high = cluster_interval(means, list(clusters.values()), item_seed)
            mean = sum(means) / len(means) * spec.factor
            return MetricSummary(
                metric, n, unscored, reason, mean, low * spec.factor, high * spec.factor, failed
            )
    values = [r.scores[metric] for r in scored]
    return _summary(metric, values, len(results), reason, spec.factor, item_seed, failed)


def stratum(result: ItemResult) -> tuple[str, str | None]:
    """The stratum of ``--ambig-sample`` an item falls in: its suite and ambiguity type."""
    return result.suite, result.ambiguity_type


def _weighted(
    metric: str, scored: Sequence[ItemResult], population: Mapping[tuple[str, str | None], int], seed: int
) -> MetricSummary:
    """The whole data's value of ``metric`` estimated from a stratified sample (stats/strata.py):
    a mean (the official bootstrap mid's too) by the stratified mean with Cochran's interval; a
    total by Σ N_h ȳ_h; a pooled mean by the ratio of weighted unit sums and counts, with a
    stratified bootstrap interval."""
    spec = METRICS[metric]
    strata = [stratum(r) for r in scored]
    values = [r.scores[spec.item_metric] for r in scored]
    n = len(scored)
    if spec.aggregation == "sum":
        groups: dict[tuple[str, str | None], list[float]] = {}
        for value, h in zip(values, strata, strict=True):
            groups.setdefault(h, []).append(value)
        total = math.fsum(population[h] * math.fsum(v) / len(v) for h, v in groups.items())
        return MetricSummary(metric, n, 0, None, total * spec.factor, None, None)
    if any(r.units.get(metric) for r in scored):
        data = [(math.fsum(u), len(u)) for u in (r.units.get(metric, [r.scores[metric]]) for r in scored)]
        factor = spec.factor

        def ratio(means: np.ndarray) -> np.ndarray:
            import numpy as np

            counts = means[..., 1]
            return np.divide(means[..., 0], counts, out=np.zeros_like(counts), where=counts > 0) * factor

        value = float(ratio(weighted_columns(data, strata, population)))
        low, high = stratified_bootstrap(data, strata, population, seed, ratio)
        return MetricSummary(metric, n, 0, None, value, low, high)
    mean, var = stratified_mean(values, strata, population)
    bounds = stratified_interval(mean, var, spec.item_range)
    if bounds is None:
        return MetricSummary(metric, n, 0, None, mean * spec.factor, None, None)
    low, high = (bound * spec.factor for bound in bounds)
    return MetricSummary(metric, n, 0, None, mean * spec.factor, low, high)


def _summarize_pooled(
    metric: str, scored: Sequence[ItemResult], unscored: int, reason: str | None, seed: int
) -> MetricSummary:
    """The mean of every unit of every item.

    CondAmbigQA's released closed-book code averages answer scores over all generated
    pairs, not per item; the exact mean reproduces its summaries bit for bit. An answer
    with no pairs adds no unit, as there; an item without an answer (an error) is one unit,
    its score of 0, so that it stays in the denominator. The interval resamples items, the
    statistic staying a ratio of pooled sums.
    """
    import numpy as np

    units = [r.units[metric] if metric in r.units else [r.scores[metric]] for r in scored]
    factor = METRICS[metric].factor
    value = float(statistics.mean([u for item in units for u in item])) * factor
    data = np.array([(math.fsum(u), len(u)) for u in units], dtype=float)

    def ratio(means: np.ndarray) -> np.ndarray:
        counts = means[..., 1]
        return np.divide(means[..., 0], counts, out=np.zeros_like(counts), where=counts > 0) * factor

    low, high = bootstrap_interval(data, seed, ratio)
    return MetricSummary(metric, len(scored), unscored, reason, value, low, high)


def _summarize_geometric(
    metric: str,
    results: Sequence[ItemResult],
    seed: int,
    *scope: str,
    known: Mapping[str, MetricSummary],
    population: Mapping[tuple[str, str | None], int] | None = None,
) -> MetricSummary:
    """A suite score built from two suite values: DR = sqrt(QA-F1 x ROUGE-Lsum).

    As ASQA's ``scoring.py`` computes it, on the printed 0-100 scale, with its ROUGE-Lsum
    (the bootstrap mid). The interval resamples items (pairs) with plain means inside, which
    is cheaper than a bootstrap of bootstrap mids and differs from it by their difference.
    """
    import numpy as np

    spec = METRICS[metric]
    parts = [
        known[m] if m in known else summarize(m, results, seed, *scope, population=population)
        for m in spec.of
    ]
    missing = next((p for p in parts if p.mean is None), None)
    if missing is not None:
        return MetricSummary(metric, 0, len(results), missing.reason, None, None, None)
    items = [METRICS[m].item_metric for m in spec.of]
    paired = [r for r in results if all(m in r.scores for m in items)]
    pairs = [tuple(r.scores[m] for m in items) for r in paired]
    factors = np.array([METRICS[m].factor for m in items])

    def statistic(means: np.ndarray) -> np.ndarray:
        return np.sqrt(np.prod(means * factors, axis=-1))

    low = high = None
    if pairs:
        data = np.asarray(pairs, dtype=float)
        where = stable_seed(seed, *scope, metric)
        if population is not None:
            strata = [stratum(r) for r in paired]
            low, high = stratified_bootstrap(data, strata, population, where, statistic)
        else:
            low, high = bootstrap_interval(data, where, statistic)
    value = math.sqrt(math.prod(p.mean for p in parts if p.mean is not None))  # none is None here
    return MetricSummary(metric, len(pairs), len(results) - len(pairs), None, value, low, high)


def summarize_evidence(name: str, results: Sequence[ItemResult], seed: int, *scope: str) -> Evidence:
    measured = [r for r in results if r.evidence]
    reason = "no gold passages in the corpus"

    def part(kind: str) -> MetricSummary:
        values = [r.evidence[kind] for r in measured if r.evidence]
        return _summary(kind, values, len(results), reason, 100, stable_seed(seed, *scope, "evidence", kind))

    return Evidence(name, len(measured), part("original"), part("clarified"))


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
    judge: dict[str, Any] | None = None,
    item_min: Sequence[Any] = (),
    protocols: Mapping[str, Setup] | None = None,
    repeats: int = 1,
    sample: Sample | None = None,
) -> Scorecard:
    """``expected`` are the item keys selected for this run (None: every loaded item);
    ``protocols`` how each suite's items were put to the system (default: open retrieval);
    the protocol the setup names says what its tests are, which metrics and slices they are
    reported with, and its section. ``repeats``: the trials each item was asked
    (``--ambig-repeats``); ``sample``: the stratified sample the items are (``--ambig-sample``),
    whose estimates are weighted back to the whole data."""
    population = sample.counts if sample is not None else None
    loaded = list(loaded)
    wanted = None if expected is None else set(expected)
    cards: list[SuiteCard] = []
    ordered: list[ItemResult] = []
    for suite in loaded:
        name = suite.suite.name
        chosen = [i for i in suite.items if wanted is None or i.key in wanted or i.key in results]
        if not chosen:
            continue
        protocol = (protocols or {}).get(name, OPEN_RETRIEVAL)
        way = protocol_of(protocol.name)
        episodic = not way.judges_suites
        suite_results = way.settle(
            [results.get(i.key) or way.failed(suite.suite, i, scorers, "missing", MISSING) for i in chosen]
        )
        protocol = _as_ran(protocol, suite, suite_results, sample is not None, config.get("split"))
        ordered.extend(suite_results)
        parts = way.slices(suite.suite, suite_results)
        metrics = scorers.selected(way.metrics(suite.suite))
        evidence = []
        if any(r.evidence for r in suite_results):
            evidence = [
                summarize_evidence(part_name, part, seed, name, part_name)
                for part_name, part in [("all", suite_results), *parts]
            ]
        summaries = _summaries(
            metrics, suite_results, seed, name, group=way.group, cluster=way.cluster, population=population
        )
        answers = [t for r in suite_results for t in (r.trials or (r,))]  # each trial's, with repeats
        cards.append(
            SuiteCard(
                name=name,
                title=suite.suite.title,
                source=suite.source,
                sha256=suite.sha256,
                is_sample=suite.is_sample,
                items_in_file=suite.total,
                revision=suite.revision,
                files=suite.files,
                release=suite.release,
                items=len(suite_results),
                errors=sum(r.status == "error" for r in suite_results),
                missing=sum(r.status == "missing" for r in suite_results),
                evidence_short=sum(
                    r.mentions(EVIDENCE_SHORT) and EVIDENCE_SHORT in r.details for r in suite_results
                ),
                metrics=summaries,
                slices=[
                    Slice(
                        kind,
                        len(part),
                        _summaries(
                            *(metrics, part, seed, name, kind),
                            group=way.group,
                            cluster=way.cluster,
                            within=summaries,
                            population=population,
                        ),
                    )
                    for kind, part in parts
                ],
                evidence=evidence,
                variance=_variance(answers, name, item_min),
                panel=_panel(_per_item_panels(suite_results), (judge or {}).get("panel"), seed, name),
                protocol=protocol,
                profile=scorers.profile.title
                if scorers.profile is not None and suite.suite.uses_profile and not episodic
                else None,
                outside={} if episodic else scorers.keep(suite.suite.outside_setting(scorers)),
                data_warnings=[] if episodic else _data_warnings(suite.suite, chosen),
                published=published.compare(name, protocol),
                section=way.section(suite_results),
                repeats=trial_section(suite_results, metrics, repeats, seed, name) if repeats > 1 else None,
            )
        )
    keys = {r.key for r in ordered}
    if judge is not None:
        judge = {**judge, "usage": _total_usage(ordered)}
    calls = model_calls([t for r in ordered for t in (r.trials or (r,))])
    if calls is not None and repeats > 1:
        calls["unit"] = "trial"  # each trial's calls, as each item's are without repeats
    system = {k: v for k, v in system.items() if k != "model_calls"} | (
        {"model_calls": calls} if calls else {}
    )
    return Scorecard(
        system=system,
        config=config,
        suites=cards,
        results=ordered,
        versions=versions,
        retrieval=retrieval,
        judge=judge,
        gold={i.key: i for suite in loaded for i in suite.items if i.key in keys},
        sample=sample.to_json() if sample is not None else None,
    )


def _as_ran(
    protocol: Setup, suite: LoadedSuite, results: Sequence[ItemResult], sampled: bool, split: str | None
) -> Setup:
    """The suite's setup with the part of its data file that ran (``-k``, ``--ambig-limit``,
    a shard; a merge's shards together) and why its data is not the published benchmark's,
    decided here for a run and a merge alike. An episode counts as the data file's item it
    was made from."""
    ran = len(
        {r.mentions("episode") and (r.details.get("episode") or {}).get("item") or r.key for r in results}
    )
    if not suite.is_sample:
        protocol = protocol.with_subset(ran, suite.total)
    why = published.unlike(suite.suite.title, suite.is_sample, suite.release, ran, suite.total, sampled)
    papers = suite.suite.published_split
    if why is None and suite.release and papers and split and split != papers:
        where = suite.release.partition(",")[2].strip()
        why = f"the {split} split of {where}; the papers report {papers}"
    return dataclasses.replace(protocol, unlike=why)


def _summaries(
    metrics: Sequence[str],
    results: Sequence[ItemResult],
    seed: int,
    *scope: str,
    group: Callable[[ItemResult], str] | None = None,
    cluster: Callable[[ItemResult], str] | None = None,
    within: Mapping[str, MetricSummary] | None = None,
    population: Mapping[tuple[str, str | None], int] | None = None,
) -> dict:
    """Every metric of a suite over ``results``, in order, each computed once. ``within``:
    the whole suite's summaries, for a slice of it: a metric n/a for the suite (the system
    never reports what it reads) is n/a in every slice too, with the suite's reason, even
    where the slice holds only failed items whose zeros would otherwise make a 0.0."""
    done: dict[str, MetricSummary] = {}
    for metric in metrics:
        whole = (within or {}).get(metric)
        if whole is not None and whole.mean is None:
            done[metric] = MetricSummary(metric, 0, len(results), whole.reason, None, None, None)
            continue
        done[metric] = summarize(
            metric, results, seed, *scope, known=done, group=group, population=population, cluster=cluster
        )
    return done


def _data_warnings(suite: Suite, items: Sequence[AmbigItem]) -> list[str]:
    """Items whose gold answers make STR-EM a free hit: kept, as the official number is, but said."""
    if "str_em" not in suite.metrics:
        return []
    vacuous = {i.key: vacuous_answers([x.short_answers for x in i.interpretations]) for i in items}
    vacuous = {key: answers for key, answers in vacuous.items() if answers}
    if not vacuous:
        return []
    shown = ", ".join(
        f"{key} ({', '.join(map(repr, answers))})" for key, answers in list(vacuous.items())[:10]
    )
    more = f" and {len(vacuous) - 10} more" if len(vacuous) > 10 else ""
    return [
        f"{len(vacuous)} item(s) have a gold answer that normalises to nothing, which every answer "
        f"contains: STR-EM and COVER-EM count it a hit, as the official scorers do: {shown}{more}"
    ]


def _variance(results: Sequence[ItemResult], suite: str, item_min: Sequence[Any]) -> dict[str, Variance]:
    out = {}
    metrics = sorted({m for r in results for m, v in r.samples.items() if len(v) > 1})
    for metric in metrics:
        sampled = [r for r in results if len(r.samples.get(metric, ())) > 1]
        spreads = [max(r.samples[metric]) - min(r.samples[metric]) for r in sampled]
        cuts = [t.value for t in item_min if t.metric == metric and t.suite in (None, suite)]
        straddling = list(
            dict.fromkeys(  # an item once, however many of its trials straddle
                r.key
                for r in sampled
                if any(min(r.samples[metric]) < cut <= max(r.samples[metric]) for cut in cuts)
            )
        )
        out[metric] = Variance(
            metric,
            len(sampled),
            sum(spreads) / len(spreads),
            max(spreads),
            sum(s == 0 for s in spreads) / len(spreads),
            straddling,
        )
    return out


def _per_item_panels(results: Sequence[ItemResult]) -> list[ItemResult]:
    """Each item with its panel's scores; with repeated trials, each judge's mean over the
    trials, so that agreement's bootstrap resamples items, not an item's correlated trials."""
    out = []
    for r in results:
        if not r.trials:
            out.append(r)
            continue
        shared = set.intersection(*(set(t.panel) for t in r.trials))
        panel = {
            m: [statistics.fmean(column) for column in zip(*(t.panel[m] for t in r.trials), strict=True)]
            for m in sorted(shared)
            if len({len(t.panel[m]) for t in r.trials}) == 1
        }
        out.append(dataclasses.replace(r, panel=panel))
    return out


def _panel(
    results: Sequence[ItemResult], panel: Mapping[str, Any] | None, seed: int, suite: str
) -> dict[str, PanelAgreement]:
    """Each panel-judged metric's agreement over the suite's items (:class:`PanelAgreement`)."""
    if not panel:
        return {}
    from ..stats.agreement import krippendorff_alpha, level_of

    judges = [j["model"] for j in panel["judges"]]
    out = {}
    for metric in sorted({m for r in results for m in r.panel}):
        scored = [r for r in results if len(r.panel.get(metric, ())) == len(judges)]
        units = [r.panel[metric] for r in scored]
        level = level_of(v for u in units for v in u)
        spec = METRICS.get(metric)
        low_end, high_end = (spec.item_range if spec is not None else None) or (0.0, 1.0)
        threshold = panel["disagreement"] * (high_end - low_end)
        alpha = krippendorff_alpha(units, level, seed=stable_seed(seed, suite, "panel", metric))
        disputed = list(
            dict.fromkeys(r.key for r, u in zip(scored, units, strict=True) if max(u) - min(u) >= threshold)
        )
        out[metric] = PanelAgreement(
            metric,
            judges,
            len(scored),
            level,
            alpha.value,
            alpha.low,
            alpha.high,
            alpha.reason,
            threshold,
            disputed,
        )
    return out


def _total_usage(results: Sequence[ItemResult]) -> dict[str, Any]:
    total = Usage()
    for r in results:
        if r.usage:
            total.add(Usage.from_dict(r.usage))
    return total.to_dict()


def model_calls(results: Sequence[ItemResult]) -> dict[str, Any] | None:
    """What the model calls of an ``llm:<method>`` system cost per item: calls (and how many
    the cache answered), tokens, dollars and latency (MARCH Table 10 compares methods by
    latency), over the answered items (``metadata["llm"]``) and the errored ones, whose calls
    cost as much (``details["calls"]``, kept from the failure); how many of them a resumed run
    took from the response store, whose calls an earlier run made; how many made no call, the
    model given up before them (a dead server), and why. None when no item records a
    reference system's calls."""
    used: list[tuple[Any, ...]] = []
    errored = reused = given_up = 0
    why: str | None = None  # why the model was given up, as the first item that made no call says
    structured: set[str] = set()  # how the server took the steps that need structure
    prose = 0  # answers whose final reply was prose: the long answer alone
    for r in results:
        if not r.mentions("llm") and not r.mentions("calls"):
            continue  # not a reference system's answer (found without reading it)
        if r.answer is not None:
            llm: Any = r.answer.metadata.get("llm")
            method = r.answer.metadata.get("method")
        else:
            llm = r.details.get("calls")
            method = llm.get("method") if isinstance(llm, dict) else None
        try:
            fields = ("calls", "cached", "prompt_tokens", "completion_tokens", "cost", "latency")
            used.append((str(method), str(llm["model"]), *(float(llm[f]) for f in fields)))
        except (TypeError, KeyError, ValueError):
            continue  # not a reference system's answer
        errored += r.answer is None
        reused += r.cached
        if isinstance(llm.get("given_up"), str):
            given_up += 1
            why = why or llm["given_up"]
        if isinstance(llm.get("structured_output"), str):
            structured.add(llm["structured_output"])
        prose += r.answer is not None and r.answer.metadata.get("reply") == "prose"
    if not used:
        return None
    n = len(used)

    def mean(i: int) -> float:
        return sum(u[i] for u in used) / n

    return {
        "method": used[0][0],
        "model": used[0][1],
        "items": n,
        "errored": errored,
        "reused": reused,  # answers a resumed run took from the response store: an earlier run's calls
        "given_up": given_up,  # items that made no call: the model was given up before them
        "given_up_reason": why,
        "calls_per_item": mean(2),
        "cached_per_item": mean(3),
        "prompt_tokens_per_item": mean(4),
        "completion_tokens_per_item": mean(5),
        "cost": sum(u[6] for u in used),
        "latency_mean": mean(7),
        "latency_median": statistics.median(u[7] for u in used),
        "structured_output": sorted(structured),
        "prose_answers": prose,
    }
