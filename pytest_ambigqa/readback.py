"""What the plugin reads back from its own files, checked before anything uses it.

A ``scorecard.json`` (``compare``, ``--ambig-baseline``, ``merge``'s shards,
``--ambig-rescore``) and a row of the answer store are data from disk, written by this
version, another one, or a hand that edited them: a ``NaN`` score read back made every mean
``nan`` and let a gate pass. So each is checked against its records (``card/model.py``:
pydantic, strict: numbers are numbers, every float finite and within ``MAX_MAGNITUDE``) and
every item score against its metric's item scale; the first problem is one line naming the item and the field.
Nothing is repaired: a file that fails is refused whole.

pydantic is imported (and the models built) on the first read, never by an idle run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .card.model import MAX_MAGNITUDE, models
from .errors import Invalid
from .output import safe_output


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
    _validate(models()["item"], raw, key)
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

    _validate(models()["card"], data)
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
    _validate(models()["answer"], data)


def check_failure(data: Any) -> None:
    """A stored error (``{"error", "calls"}``), as the answer store keeps it."""
    _validate(models()["failure"], data)


def finite(value: float | None) -> bool:
    """Whether a statistic can decide a gate: a number, and a finite one."""
    return value is not None and math.isfinite(value)
