"""What the plugin reads back from its own files, checked before anything uses it.

A ``scorecard.json`` (``compare``, ``--ambig-baseline``, ``merge``'s shards,
``--ambig-rescore``) and a row of the answer store are data from disk, written by this
version, another one, or a hand that edited them: a ``NaN`` score read back made every mean
``nan`` and let a gate pass. So each is checked against a schema (pydantic, strict: numbers
are numbers, every float finite and within ``MAX_MAGNITUDE``) and every item score against
its metric's item scale; the first problem is one line naming the item and the field.
Nothing is repaired: a file that fails is refused whole.

pydantic is imported (and the models built) on the first read, never by an idle run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from typing import Any

from .errors import Invalid
from .output import safe_output

# No score, cost or count this plugin writes comes near this; a value beyond it (1e308)
# would overflow a sum of items, or is damage.
MAX_MAGNITUDE = 1e12


@cache
def _models() -> dict[str, Any]:
    """The schemas, built once: what ``Scorecard.to_json`` and ``Answer.to_dict`` write."""
    from typing import Annotated, Literal

    from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

    from .schedulers import BASES, SCHEDULERS

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

    class Suite(Model):
        name: str
        sha256: str
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

    class Card(Model):
        schema_version: int
        system: System
        config: Config
        versions: dict[str, str] = {}
        suites: list[Suite]
        gates: Gates
        sample: Sample | None = None
        sequential: Sequential | None = None
        calibration: Calibration | None = None  # only where --ambig-human-labels was given
        items: list[Any]  # checked one by one: an error names the item

    return {
        "card": TypeAdapter(Card),
        "item": TypeAdapter(Item),
        "answer": TypeAdapter(Answer),
        "failure": TypeAdapter(Failure),
    }


def _problem(error: Mapping[str, Any]) -> tuple[str, str]:
    """(field path, what is wrong) of pydantic's first error, in our words."""
    field = ".".join(str(part) for part in error["loc"]) or "(the record)"
    value = error.get("input")
    shown = safe_output(repr(value)) if not isinstance(value, (dict, list)) else type(value).__name__
    if len(shown) > 60:  # scrubbed before it is cut
        shown = shown[:57] + "..."
    kind = error["type"]
    bound = next(iter((error.get("ctx") or {}).values()), None)
    if kind in ("less_than_equal", "greater_than_equal") and bound in (MAX_MAGNITUDE, -MAX_MAGNITUDE):
        return field, f"{shown} is beyond the magnitude any score can have ({MAX_MAGNITUDE:g})"
    if kind == "finite_number":
        return field, f"{shown} is not a finite number"
    if kind == "missing":
        return field, "missing"
    if kind == "extra_forbidden":
        return field, "not a field of this record"
    return field, f"{error['msg'].lower()} (got {shown})"


def _validate(adapter: Any, data: Any, item: str | None = None) -> None:
    from pydantic import ValidationError

    try:
        adapter.validate_python(data)
    except ValidationError as exc:
        field, problem = _problem(exc.errors(include_url=False)[0])
        raise Invalid(field, problem, item) from None
    except RecursionError:
        raise Invalid("(the record)", "nested too deeply", item) from None


def _on_scale(
    where: str, value: float | None, span: tuple[float, float] | None, what: str, item: str | None = None
) -> None:
    if span is None or value is None:
        return
    low, high = span
    slack = 1e-9 * max(1.0, *(abs(x) for x in span if math.isfinite(x)))
    if not low - slack <= value <= high + slack:
        raise Invalid(where, f"{value!r} is outside the metric's {what} {low:g} to {high:g}", item)


def _item_scale(metric: str, scales: Mapping[str, Any]) -> tuple[float, float] | None:
    spec = scales.get(metric)
    return spec.item_range if spec is not None else None


def printed_scale(metric: str, scales: Mapping[str, Any]) -> tuple[float, float] | None:
    """The range of a suite value of ``metric`` as printed (None: a count or total, or a
    metric this process does not know): its item scale times its factor, DR's the root of
    its parts' product."""
    spec = scales.get(metric)
    if spec is None or spec.aggregation == "sum":
        return None
    if spec.aggregation == "geometric":
        parts = [printed_scale(m, scales) for m in spec.of]
        if any(p is None or p[0] < 0 for p in parts):
            return None
        return 0.0, math.sqrt(math.prod(p[1] for p in parts if p is not None))
    span = _item_scale(spec.item_metric, scales)
    return None if span is None else (span[0] * spec.factor, span[1] * spec.factor)


def _item_key(raw: Any, index: int) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("suite"), str) and isinstance(raw.get("item_id"), str):
        return f"{raw['suite']}-{raw['item_id']}"
    return f"#{index + 1}"


def _check_item(raw: Any, index: int, scales: Mapping[str, Any]) -> None:
    """One item of a scorecard (``ItemResult.to_dict``): its schema, then every score, sample
    and unit on its metric's item scale (``scales``: the metric registry; a metric it does
    not know, a plugin's not loaded here, is checked for finiteness only)."""
    key = _item_key(raw, index)
    _validate(_models()["item"], raw, key)
    for metric, value in raw.get("scores", {}).items():
        _on_scale(f"scores.{metric}", value, _item_scale(metric, scales), "item scale", key)
    for field in ("samples", "units", "panel"):
        for metric, values in raw.get(field, {}).items():
            for value in values:
                _on_scale(f"{field}.{metric}", value, _item_scale(metric, scales), "item scale", key)
    for n, trial in enumerate(raw.get("trials", ())):  # each repeated trial is a result of its own
        try:
            _check_item(trial, index, scales)
        except Invalid as exc:
            raise Invalid(f"trials.{n}.{exc.field}", exc.problem, key) from None


def check_scorecard(data: Any) -> None:
    """A whole ``scorecard.json`` as read: the first problem raises :class:`Invalid`."""
    from .metrics import METRICS

    models = _models()
    _validate(models["card"], data)
    for n, suite in enumerate(data["suites"]):
        summaries: list[tuple[str, Any, tuple[float, float] | None]] = [
            (f"suites.{n}.metrics", suite["metrics"], None)
        ]
        summaries += [
            (f"suites.{n}.slices.{i}.metrics", s["metrics"], None)
            for i, s in enumerate(suite.get("slices", ()))
        ]
        for i, e in enumerate(suite.get("evidence", ())):
            summaries += [
                (f"suites.{n}.evidence.{i}", {k: e[k] for k in ("original", "clarified")}, (0.0, 100.0))
            ]
        for where, metrics, fixed in summaries:
            for metric, summary in metrics.items():
                span = fixed or printed_scale(metric, METRICS)
                for field in ("mean", "low", "high"):
                    _on_scale(f"{where}.{metric}.{field}", summary[field], span, "printed scale")
        for metric, trials in ((suite.get("repeats") or {}).get("metrics") or {}).items():
            span = printed_scale(metric, METRICS)
            for field in ("pass_at", "pass_all", "pass_at_interval", "pass_all_interval"):
                for value in trials[field] or ():
                    _on_scale(f"suites.{n}.repeats.metrics.{metric}.{field}", value, span, "printed scale")
    sample = data.get("sample")
    if sample is not None:
        strata = sample["strata"]
        if (
            any(h["sampled"] > h["population"] for h in strata)
            or sum(h["sampled"] for h in strata) != sample["items"]
        ):
            raise Invalid("sample.strata", "the strata's sampled items do not add up to the sample's")
    first: dict[str, int] = {}
    for index, raw in enumerate(data["items"]):
        _check_item(raw, index, METRICS)
        key = _item_key(raw, index)
        if key in first:  # read into a mapping, the last would win: a regression could pass
            raise Invalid("items", f"listed twice (items #{first[key] + 1} and #{index + 1})", key)
        first[key] = index


def check_result(data: Any) -> None:
    """A stored scored result (``ItemResult.to_dict`` without its answer), as the answer
    store keeps it for a resumed run: its schema and every score on its metric's item scale."""
    from .metrics import METRICS

    _check_item(data, 0, METRICS)


def check_answer(data: Any) -> None:
    """A stored answer (``Answer.to_dict``), as the answer store and a scorecard keep it."""
    _validate(_models()["answer"], data)


def check_failure(data: Any) -> None:
    """A stored error (``{"error", "calls"}``), as the answer store keeps it."""
    _validate(_models()["failure"], data)


def finite(value: float | None) -> bool:
    """Whether a statistic can decide a gate: a number, and a finite one."""
    return value is not None and math.isfinite(value)
