"""The scorecard's format, in one place: ``scorecard.json`` as :func:`write` makes it, the
records a file read back is checked against (``readback``; the answer store's rows too) and
their JSON Schema (:func:`json_schema`, on the docs' reference page).

A file says its ``schema_version``; one written by an older version is brought to this one
by ``card/migrations.py``, one step a version, before anything reads it; a newer one is refused.
Writing builds plain dicts, no model per item (checking 20,000 items takes as long again as
writing them, 0.7 s; the file is checked when it is read back), under the field names the
records declare: ``tests/test_scorecard_model.py`` holds every written file to the schema.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .compare import Comparison
    from .scorecard import Scorecard, SuiteCard

SCHEMA_VERSION = 2

# No score, cost or count this plugin writes comes near this; a value beyond it (1e308)
# would overflow a sum of items, or is damage.
MAX_MAGNITUDE = 1e12


def write(
    card: Scorecard,
    sections: Callable[[SuiteCard], dict[str, Any]],
    duration: float | None = None,
    stream: bool = False,
) -> dict[str, Any]:
    """The scorecard as ``scorecard.json`` holds it; ``sections``: a suite's protocol sections
    by protocol name (the protocols' own records, apart from this one); ``stream``: its items
    an iterator, each made when it is read (``output.json_chunks`` writes them so). No I/O:
    what is compared with the papers was computed when the card was built."""
    items: Iterator[dict[str, Any]] = (r.to_dict() for r in card.results)
    return {
        "schema_version": SCHEMA_VERSION,
        "system": card.system,
        "config": card.config,
        "versions": card.versions,
        "retrieval": card.retrieval,
        "judge": card.judge,
        **({"sample": card.sample} if card.sample else {}),  # only for a sample: as before
        "suites": [_suite(suite, sections(suite)) for suite in card.suites],
        "gates": {
            "passed": not card.shortfalls,
            "shortfalls": list(card.shortfalls),
            "checks": [asdict(c) for c in card.checks],
            "deferred": card.gates_deferred,
        },
        **({"sequential": card.sequential} if card.sequential is not None else {}),
        "comparison": _comparison(card.comparison) if card.comparison is not None else None,
        # only where --ambig-human-labels was given: other runs' files stay as they were
        **({"calibration": asdict(card.calibration)} if card.calibration is not None else {}),
        "items": items if stream else list(items),
        "timing": {"duration": duration, "started": card.started},
    }


_APART = (  # a suite card's fields written below in their own way
    *("metrics", "slices", "evidence", "variance", "panel", "protocol", "section", "repeats"),
    *("revision", "files", "release", "published"),
)


def _suite(card: SuiteCard, sections: dict[str, Any]) -> dict[str, Any]:
    return {
        **{k: v for k, v in asdict(card).items() if k not in _APART},
        # Where an hf:// source's data came from (its commit and files) and the known release
        # the data is: only when there is one, so a run on local files writes its card as before.
        **({"revision": card.revision} if card.revision else {}),
        **({"files": [list(f) for f in card.files]} if card.revision and card.files else {}),
        **({"release": card.release} if card.release else {}),
        **sections,
        "protocol": asdict(card.protocol),
        "metrics": {m: asdict(s) for m, s in card.metrics.items()},
        "slices": [
            {"name": s.name, "items": s.items, "metrics": {m: asdict(v) for m, v in s.metrics.items()}}
            for s in card.slices
        ],
        "evidence": [asdict(e) for e in card.evidence],
        "variance": {m: asdict(v) for m, v in card.variance.items()},
        **({"panel": {m: asdict(v) for m, v in card.panel.items()}} if card.panel else {}),
        **({"repeats": asdict(card.repeats)} if card.repeats else {}),
        "published": card.published,
    }


def _comparison(comparison: Comparison) -> dict[str, Any]:
    """Against --ambig-baseline (``card/compare.py``): written, not read back."""
    return {
        "base": comparison.base,
        "rows": [asdict(r) for r in comparison.rows],
        "only_base": comparison.only_base,
        "only_new": comparison.only_new,
        "regressions": [asdict(r) | {"key": r.key} for r in comparison.regressions],
        "notes": comparison.notes,
    }


# --- the records -------------------------------------------------------------------------


def json_schema() -> dict[str, Any]:
    """The JSON Schema of ``scorecard.json`` (this version's), its items with the schema each
    item is checked with: published on the docs' reference page."""
    adapters = models()
    card = adapters["card"].json_schema()
    item = adapters["item"].json_schema()
    definitions = dict(card.pop("$defs", {}))
    for name, schema in item.pop("$defs", {}).items():
        if name in definitions and definitions[name] != schema:
            raise ValueError(f"two records named {name} in the scorecard's schema")
        definitions[name] = schema
    definitions["Item"] = item
    card["properties"]["items"] = {"items": {"$ref": "#/$defs/Item"}, "title": "Items", "type": "array"}
    card["$defs"] = dict(sorted(definitions.items()))
    return card


_BUILDING = threading.Lock()
_BUILT: list[dict[str, Any]] = []  # the records once built


def models() -> dict[str, Any]:
    """The records, built once (pydantic imported here, never by an idle run): what
    :func:`write` and ``Answer.to_dict`` write, and what a file read back is checked against.
    The first build is serialised: ``functools.cache`` alone let each of a resume's 32 threads
    build its own (a third of the resumed controller's time, issue 44)."""
    if not _BUILT:  # built: no lock on the hot path
        with _BUILDING:
            if not _BUILT:
                _BUILT.append(_models())
    return _BUILT[0]


def _models() -> dict[str, Any]:
    from typing import Annotated, Literal

    from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

    from ..schedulers import BASES, SCHEDULERS

    number = Annotated[float, Field(allow_inf_nan=False, ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE)]
    fraction = Annotated[float, Field(allow_inf_nan=False, ge=0, le=1)]
    count = Annotated[int, Field(ge=0)]

    class Model(BaseModel):
        model_config = ConfigDict(strict=True, extra="allow")

    class Interpretation(Model):
        answer: str
        question: str | None = None
        condition: str | None = None
        citations: list[str] = []

    class Answer(Model):
        model_config = ConfigDict(strict=True, extra="forbid")
        text: str
        interpretations: list[Interpretation] = []
        citations: list[str] = []
        is_ambiguous: bool | None = None
        ambiguity_type: str | None = None
        clarifying_question: str | None = None
        metadata: dict[str, Any] = {}

    class EpisodeInfo(Model):
        item: str
        query: str
        ambiguous: bool
        alpha: number
        beta: number

    class Forced(Model):
        sequence: str | None = None
        reward: Annotated[float, Field(allow_inf_nan=False, ge=-MAX_MAGNITUDE, le=100)] | None = None
        f1: Annotated[float, Field(allow_inf_nan=False, ge=0, le=100)] | None = None  # 0-100, as printed
        unscored: str | None = None
        error: str | None = None

    class Usage(Model):
        requests: count = 0
        cached: count = 0
        retries: count = 0
        reasks: count = 0
        prompt_tokens: count = 0
        completion_tokens: count = 0
        cost: number = 0.0
        cached_tokens: count = 0
        batched: count = 0
        saved: number = 0.0
        fingerprints: list[str] = []

    class Calls(Usage):
        """What the model calls of a system that failed cost (``SystemFailure.calls``)."""

        model: str
        calls: count
        latency: number = 0.0
        method: str | None = None
        last_reply: str | None = None

    class Failure(Model):
        """An error row of the answer store."""

        error: str
        calls: Calls | None = None

    class Details(Model):
        episode: EpisodeInfo | None = None
        sequence: str | None = None
        forced: dict[str, Forced] | None = None
        calls: Calls | None = None

    class Recall(Model):
        """An item's evidence recall (retrieval/evidence.py): two fractions and the count of
        interpretations with gold passages they average over."""

        original: fraction
        clarified: fraction
        interpretations: Annotated[float, Field(allow_inf_nan=False, ge=1, le=MAX_MAGNITUDE)]

    class Item(Model):
        suite: str
        item_id: str
        status: Literal["ok", "error", "missing"]
        ambiguity_type: str | None = None
        scores: dict[str, number] = {}
        unscored: dict[str, str] = {}
        error: str | None = None
        trace: str | None = None
        answer: Answer | None = None
        duration: Annotated[float, Field(allow_inf_nan=False, ge=0, le=MAX_MAGNITUDE)] = 0.0
        evidence: Recall | None = None
        samples: dict[str, list[number]] = {}
        units: dict[str, list[number]] = {}
        details: Details = Details()
        usage: Usage | None = None
        index: count = 0
        cached: bool = False
        reused: bool = False
        panel: dict[str, list[number]] = {}
        trial: count = 0
        trials: list[Any] = []  # each an Item, checked one by one (_check_item)

    class Summary(Model):
        metric: str
        n: count
        unscored: count
        reason: str | None
        mean: number | None
        low: number | None
        high: number | None
        failed: count = 0

    class Slice(Model):
        name: str
        items: count
        metrics: dict[str, Summary]

    class Evidence(Model):
        name: str
        items: count
        original: Summary
        clarified: Summary

    class Panel(Model):
        """A panel's agreement on one metric (``card.scorecard.PanelAgreement``)."""

        model_config = ConfigDict(strict=True, extra="forbid")  # read back as a PanelAgreement
        metric: str
        judges: list[str]
        items: count
        level: Literal["ordinal", "interval"]
        alpha: number | None
        low: number | None
        high: number | None
        reason: str | None
        threshold: Annotated[float, Field(allow_inf_nan=False, ge=0, le=MAX_MAGNITUDE)]
        disputed: list[str]

    class TrialMetric(Model):
        """One metric over repeated trials (``card.trials.TrialMetric``)."""

        model_config = ConfigDict(strict=True, extra="forbid")  # read back as a TrialMetric
        metric: str
        items: count
        variance: Annotated[float, Field(allow_inf_nan=False, ge=0, le=MAX_MAGNITUDE)]
        max_variance: Annotated[float, Field(allow_inf_nan=False, ge=0, le=MAX_MAGNITUDE)]
        pass_at: list[number] | None = None
        pass_all: list[number] | None = None
        pass_at_interval: Annotated[list[number], Field(min_length=2, max_length=2)] | None = None
        pass_all_interval: Annotated[list[number], Field(min_length=2, max_length=2)] | None = None
        flaky: list[str] | None = None

    class Repeats(Model):
        model_config = ConfigDict(strict=True, extra="forbid")  # read back as Repeats
        k: Annotated[int, Field(ge=2)]
        trials: count
        errored: count
        metrics: dict[str, TrialMetric]

    class Stratum(Model):
        suite: str
        type: str | None
        population: Annotated[int, Field(ge=1)]
        sampled: Annotated[int, Field(ge=1)]

    class Sample(Model):
        """What ``--ambig-sample`` drew (``suites.sample.Sample.to_json``)."""

        items: Annotated[int, Field(ge=1)]
        population: Annotated[int, Field(ge=1)]
        seed: int
        asked: number
        design: str
        estimator: str
        strata: list[Stratum]

    class Variance(Model):
        """How much a judge's K samples of one metric disagree (``card.scorecard.Variance``)."""

        metric: str
        items: count
        mean_spread: number
        max_spread: number
        agreement: fraction
        straddling: list[str]

    class Protocol(Model):
        """How the suite's items were put to the system (``suites.base.Setup``)."""

        name: str
        label: str
        upper_bound: str | None = None
        notes: list[str] = []
        reads_as: str | None = None
        evidence: str = "retriever"
        chosen: str | None = None
        received: list[str] = []
        unlike: str | None  # why the data is not the papers' (None: it is); version 2 always says
        easier: str | None = None

    class Suite(Model):
        name: str
        title: str | None = None
        source: str | None = None
        sha256: str
        is_sample: bool = False
        items_in_file: count | None = None
        revision: str | None = None  # absent from scorecards before hf:// sources
        files: list[Annotated[list[str], Field(min_length=2, max_length=2)]] = []
        release: str | None = None
        items: count
        errors: count
        missing: count
        metrics: dict[str, Summary]
        slices: list[Slice] = []
        evidence: list[Evidence] = []
        panel: dict[str, Panel] = {}
        repeats: Repeats | None = None
        evidence_short: count = 0
        variance: dict[str, Variance] = {}
        protocol: Protocol  # its protocol's section is under the protocol's name
        profile: str | None = None
        outside: dict[str, str] = {}
        data_warnings: list[str] = []
        published: list[dict[str, Any]] = []  # card/published.py's rows beside this run

    rate = Annotated[float, Field(allow_inf_nan=False, ge=0, le=1)]

    class Scheduler(Model):
        """``--ambig-shard=auto``'s record (``schedulers.py``)."""

        model_config = ConfigDict(strict=True, extra="forbid")
        scheduler: Literal[tuple(SCHEDULERS)]  # type: ignore[valid-type]
        index: count

    class Selection(Model):
        """What the run's collection kept of the items its options selected (``session/selection.py``)."""

        model_config = ConfigDict(strict=True, extra="forbid")
        items: count
        selected: count
        by: list[str]

        @model_validator(mode="after")
        def _within(self) -> Selection:
            if self.selected > self.items:
                raise ValueError(f"{self.selected} selected of {self.items} items")
            return self

    class Config(Model):
        suites: list[str]
        data: dict[str, Any]
        seed: int = 0
        gate: str = "mean"
        fail_under: list[str] = []
        item_min: list[str] = []
        fail_if_worse: list[str] = []
        max_error_rate: rate | None = None
        max_unscored_rate: rate | None = None
        shard: Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=2, max_length=2)] | None = None
        shard_scheduler: Scheduler | None = None
        metrics: list[str] | None = None
        protocol: str | None = None
        costs: list[Annotated[list[number], Field(min_length=2, max_length=2)]] | None = None
        baseline: str | None = None
        repeats: Annotated[int, Field(ge=2)] | None = None
        sample: number | None = None
        selection: Selection | None = None  # absent from scorecards before issue 39

        @model_validator(mode="after")
        def _one_shard(self) -> Config:
            """The shard a scheduler named is the shard recorded, where its index fixes it."""
            named = self.shard_scheduler
            if named is None:
                return self
            if self.shard is None or not 1 <= self.shard[0] <= self.shard[1]:
                raise ValueError("a scheduler's shard without a valid shard I/N")
            base = BASES.get(named.scheduler)
            if base is not None and named.index != self.shard[0] - 1 + base:
                raise ValueError(
                    f"{named.scheduler}'s index {named.index} is not shard {self.shard[0]}/{self.shard[1]}"
                )
            return self

    class System(Model):
        label: str
        inputs: list[str] = []

    class Check(Model):
        model_config = ConfigDict(strict=True, extra="forbid")  # read back as a Check
        gate: str
        suite: str
        statistic: str
        metric: str | None
        value: number | None
        bound: number
        higher: bool
        passed: bool
        failure: str | None = None

    class Gates(Model):
        passed: bool | None = None
        shortfalls: list[str]
        checks: list[Check] = []
        deferred: str | None = None

    class SequentialGate(Model):
        gate: str
        suite: str
        metric: str
        decision: Literal["pass", "fail"] | None
        after: count | None
        seen: count
        population: count
        lower: number
        upper: number
        bound: number
        unusable: str | None

    class Sequential(Model):
        """Where ``--ambig-sequential`` stopped the run (``session/sequential.py``)."""

        alpha: Annotated[float, Field(allow_inf_nan=False, gt=0, lt=1)]
        stopped_after: count | None
        evaluated: count
        skipped: count
        calls_saved_estimate: count
        cost_saved_estimate: Annotated[float, Field(allow_inf_nan=False, ge=0, le=MAX_MAGNITUDE)]
        gates: list[SequentialGate]

    class Statistic(Model):
        """A ``stats.agreement.Statistic``: a value with its interval, or n/a and why."""

        model_config = ConfigDict(strict=True, extra="forbid")  # read back as a Statistic
        value: number | None
        low: number | None = None
        high: number | None = None
        n: count = 0
        reason: str | None = None

    class MetricCalibration(Model):
        model_config = ConfigDict(strict=True, extra="forbid")  # read back as a MetricCalibration
        suite: str
        metric: str
        labelled: count
        pairs: count
        unpaired: list[str]
        level: Literal["ordinal", "interval"]
        spearman: Statistic
        alpha: Statistic
        kappa: Statistic | None
        judge_mean: number | None
        judged: count
        left_out: list[str]
        ppi: Statistic
        lam: fraction

    class Calibration(Model):
        model_config = ConfigDict(strict=True, extra="forbid")  # read back as a Calibration
        source: str
        rows: count
        system: str
        other_systems: count
        not_in_run: count
        not_in_run_ids: list[str]
        not_judged: list[str]
        metrics: list[MetricCalibration]

    class ComparedRow(Model):
        """One metric over one slice of one suite against the base run (``card.compare.Row``)."""

        suite: str
        slice: str
        metric: str
        n: count
        base: number | None
        new: number | None
        diff: number | None
        low: number | None
        high: number | None
        test: str | None
        p: fraction | None
        p_holm: fraction | None
        wins: count | None
        ties: count | None
        losses: count | None
        one_sided: count = 0
        reason: str | None = None

    class Regression(Model):
        """An item whose score dropped (``card.compare.Regression``)."""

        suite: str
        item_id: str
        key: str
        drops: dict[str, Annotated[list[number], Field(min_length=2, max_length=2)]]  # base, new
        base_status: str
        new_status: str
        diff: list[Annotated[list[str], Field(min_length=2, max_length=2)]]  # (op, words): -, +, =

    class Comparison(Model):
        """Against ``--ambig-baseline``: written for reports, not read back."""

        base: dict[str, Any]
        rows: list[ComparedRow]
        only_base: list[str]
        only_new: list[str]
        regressions: list[Regression]
        notes: list[str] = []

    class Timing(Model):
        duration: number | None = None
        started: str | None = None  # ISO 8601 UTC (``utc_stamp``)

    class Card(Model):
        schema_version: Literal[SCHEMA_VERSION]  # type: ignore[valid-type]
        system: System
        config: Config
        versions: dict[str, str] = {}
        retrieval: dict[str, Any] | None = None
        judge: dict[str, Any] | None = None
        suites: list[Suite]
        gates: Gates
        sample: Sample | None = None
        sequential: Sequential | None = None
        comparison: Comparison | None = None
        calibration: Calibration | None = None  # only where --ambig-human-labels was given
        items: list[Any]  # checked one by one: an error names the item
        timing: Timing = Timing()

    return {
        "card": TypeAdapter(Card),
        "item": TypeAdapter(Item),
        "answer": TypeAdapter(Answer),
        "failure": TypeAdapter(Failure),
    }
