"""Session gates: a suite score under its threshold, or too many errors, fails the run."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import options
from ..metrics import METRICS, NOT_CONFIGURED, printed_range
from ..options import number, pairs, refuse
from ..protocols import PROTOCOLS, protocol_of
from ..readback import finite
from ..schema import ItemResult
from .compare import Margin
from .scorecard import Check, MetricSummary, SuiteCard

PASS_ALL = "^k"  # a --ambig-fail-under metric with it gates on pass^k of repeated trials, not their mean


@dataclass(frozen=True)
class Threshold:
    """A ``--ambig-fail-under`` or ``--ambig-item-min`` entry: ``[suite:]metric=value``, or
    ``[suite:]metric^k=value``, a bound on pass^k of a 0/1 metric over ``--ambig-repeats``."""

    suite: str | None  # None: every selected suite that has the metric
    metric: str
    value: float
    of_trials: bool = False  # pass^k of the repeated trials (stats/trials.py), not the mean

    def __str__(self) -> str:
        scope = f"{self.suite}:" if self.suite else ""
        return f"{scope}{self.metric}{PASS_ALL if self.of_trials else ''}={self.value:g}"


def evaluate(
    cards: Sequence[SuiteCard],
    fail_under: Sequence[Threshold],
    gate: str,
    max_error_rate: float | None,
    max_unscored_rate: float | None = None,
    item_min: Sequence[Threshold] = (),
    results: Sequence[ItemResult] = (),
) -> tuple[list[Check], list[str]]:
    """Every gate the options set, evaluated (each with its value, bound and margin), and one
    line per failure, naming suite, metric, score and threshold: those of the checks, and
    those no option sets (a configured model that scored nothing, the protocol's own)."""
    checks: list[Check] = []
    lines: list[str] = []

    def check(c: Check) -> None:
        checks.append(c)
        if c.failure:
            lines.append(c.failure)

    for card in cards:
        answered = card.items - card.errors - card.missing
        lines += _scored_nothing(card) + protocol_of(card.protocol.name).shortfalls(
            card.name, card.items, answered, card.section, max_unscored_rate
        )
        for t in fail_under:
            if (t.suite and t.suite != card.name) or t.metric not in card.metrics:
                continue
            check(_fail_under(card, t, gate))
        if max_unscored_rate is not None and card.items:
            for c in _unscored(card, max_unscored_rate):
                check(c)
        if max_error_rate is not None and card.items:
            rate = (card.errors + card.missing) / card.items
            failure = None
            if rate > max_error_rate:
                failure = (
                    f"{card.name} error rate {rate:.1%} ({card.errors} errors, {card.missing} missing "
                    f"of {card.items}) > {max_error_rate:g}"
                )
            entry, statistic = f"--ambig-max-error-rate={max_error_rate:g}", "errored or missing items, share"
            check(Check(entry, card.name, statistic, None, rate, max_error_rate, False, not failure, failure))
        for t in item_min:
            if t.suite in (None, card.name) and t.metric in card.metrics:
                mine = [r for r in results if r.suite == card.name and t.metric in r.scores]
                below = len([r for r in mine if item_shortfalls(r.scores, card.name, (t,))])
                statistic = f"items with {METRICS[t.metric].label} below {t.value:g}, of {len(mine)}"
                checks.append(  # each such item's test fails: that is its failure line
                    Check(f"--ambig-item-min={t}", card.name, statistic, None, below, 0, False, not below)
                )
    return checks, lines


def _fail_under(card: SuiteCard, t: Threshold, gate: str) -> Check:
    s = card.metrics[t.metric]
    label = METRICS[t.metric].label
    if t.of_trials:
        s, label = _pass_all(card, t.metric), f"{label} pass^{card.repeats.k if card.repeats else 'k'}"
    value, what = (s.low, "lower 95% CI") if gate == "lower-ci" else (s.mean, "mean")
    if s.mean is not None and value is None:  # a total or the official bootstrap mid: no interval
        value, what = s.mean, "value (no interval)"
    failure: str | None = None
    if s.mean is None or value is None:
        failure = f"{card.name} {t.metric}: n/a ({s.reason}), cannot meet {t.value:g}"
    elif not finite(value):
        failure = (
            f"{card.name} {t.metric} ({label}) {what} is {value}, not a finite number: "
            f"cannot meet {t.value:g}"
        )
    elif value < t.value:
        failure = f"{card.name} {t.metric} ({label}) {what} {value:.2f} < {t.value:g}"
    shown = value if s.mean is not None and finite(value) else None
    entry = f"--ambig-fail-under={t}"
    return Check(entry, card.name, f"{label} {what}", t.metric, shown, t.value, True, not failure, failure)


def _pass_all(card: SuiteCard, metric: str) -> MetricSummary:
    """pass^K of ``metric`` over the suite's repeated trials, as a summary a gate reads."""
    trials = card.repeats.metrics.get(metric) if card.repeats else None
    if trials is None or trials.pass_all is None or trials.pass_all_interval is None:
        why = "no repeated trials" if card.repeats is None else "no item has every trial scored 0 or 1"
        return MetricSummary(metric, 0, card.items, why, None, None, None)
    low, high = trials.pass_all_interval
    unscored = card.items - trials.items
    return MetricSummary(metric, trials.items, unscored, None, trials.pass_all[-1], low, high)


def _unscored(card: SuiteCard, max_unscored_rate: float) -> list[Check]:
    """Metrics a configured model could not score: one check per group of metrics that
    share a count and a cause."""
    groups: dict[tuple[int, str | None], list[str]] = {}
    for metric, s in card.metrics.items():
        unconfigured = s.n == 0 and s.reason in NOT_CONFIGURED.values()
        measured = METRICS[metric].needs and not unconfigured and metric not in card.outside
        if measured:
            groups.setdefault((s.unscored, s.reason), []).append(metric)
    checks = []
    for (unscored, reason), metrics in groups.items():
        rate = unscored / card.items
        failure = None
        if rate > max_unscored_rate:
            failure = (
                f"{card.name} {', '.join(metrics)}: {unscored} of {card.items} items unscored "
                f"({rate:.0%}) > {max_unscored_rate:g}: {reason}"
            )
        labels = ", ".join(METRICS[m].label for m in metrics)
        entry = f"--ambig-max-unscored-rate={max_unscored_rate:g}"
        statistic = f"unscored items, share ({labels})"
        checks.append(
            Check(entry, card.name, statistic, None, rate, max_unscored_rate, False, not failure, failure)
        )
    return checks


def item_shortfalls(scores: dict[str, float], suite: str, item_min: Sequence[Threshold]) -> list[str]:
    """``--ambig-item-min`` checks for one item (item scale); a score that is not a finite
    number meets no threshold."""
    return [
        f"{t.metric} = {scores[t.metric]:.3g} < {t.value:g}"
        for t in item_min
        if (t.suite is None or t.suite == suite)
        and t.metric in scores
        and not (finite(scores[t.metric]) and scores[t.metric] >= t.value)
    ]


def _scored_nothing(card: SuiteCard) -> list[str]:
    """A configured model that scored no item fails the run, whatever the options: a dead or
    misconfigured judge or reader must not leave CI green with every model metric n/a."""
    groups: dict[str | None, list[str]] = {}
    for metric, s in card.metrics.items():
        configured = s.reason not in NOT_CONFIGURED.values()
        if METRICS[metric].needs and configured and s.n == 0 and card.items and metric not in card.outside:
            groups.setdefault(s.reason, []).append(metric)
    return [
        f"{card.name} {', '.join(metrics)}: the configured model scored no item: {reason}"
        for reason, metrics in groups.items()
    ]


def parse_thresholds(
    option: str,
    text: str | None,
    suites: tuple[str, ...],
    *,
    item_scale: bool,
    metrics_of: Callable[[str], Sequence[str]],
    metrics: tuple[str, ...] | None = None,
) -> tuple[Threshold, ...]:
    """``[SUITE:]METRIC=V,...``: gates on a suite score (printed scale) or on each item
    (``item_scale``); ``metrics_of`` says what a suite reports under the run's protocol."""
    if not text:
        return ()
    out = []
    for key, raw in pairs(option, text):
        scope, _, metric = key.rpartition(":")
        of_trials = metric.endswith(PASS_ALL)
        metric = metric.removesuffix(PASS_ALL)
        if of_trials and item_scale:
            refuse(f"{option}: {metric}{PASS_ALL} (pass^k) is a suite's statistic, not an item's")
        suite = scope.lower() or None
        if suite is not None and suite not in suites:
            refuse(f"{option}: suite '{suite}' is not selected ({', '.join(suites)})")
        candidates = [suite] if suite else list(suites)
        valid = sorted({m for s in candidates for m in metrics_of(s)})
        if metrics is not None and metric in valid and metric not in metrics:
            refuse(f"{option}: {metric} is not computed in this run (--ambig-metrics)")
        if metric not in valid:
            refuse(
                f"{option}: unknown metric '{metric}' for {', '.join(candidates)} (valid: {', '.join(valid)})"
            )
        value = number(option, raw)
        spec = METRICS[metric]
        if of_trials and not spec.binary:
            refuse(f"{option}: {metric}{PASS_ALL}: pass^k is of a 0/1 metric, and {spec.label} is not one")
        if item_scale and spec.suite_level:
            refuse(f"{option}: {metric} is computed for a whole suite, not per item")
        if item_scale and spec.item_range:
            low, high = spec.item_range
            if not low <= value <= high:
                refuse(
                    f"{option}: {metric}={raw} is outside the item scale [{low:g}, {high:g}]"
                    + (
                        " (item scores are fractions; the suite prints them x100)"
                        if spec.factor == 100
                        else ""
                    )
                )
        out.append(Threshold(suite, metric, value, of_trials))
    return tuple(out)


def on_printed_scale(option: str, metric: str, value: float, given: str, *, width: bool = False) -> None:
    """Refuse a suite threshold ``given`` (``width``: a margin of change) that cannot mean
    what it says on the metric's printed scale, suggesting what it likely meant: a fraction
    for a percentage (``str_em=0.3``), a percentage of a 0-1 or 0-5 score (``citation=50``);
    or anything beyond the scale, which no run can reach, or every run does."""
    spec, scale = METRICS[metric], printed_range(metric)
    if not width and spec.factor == 100 and 0 < value <= 1:
        refuse(
            f"{option}: {given} is on the printed 0-100 scale (a percentage); "
            f"did you mean {metric}={value * 100:g}?"
        )
    if scale is None:  # a count or a total: any value can be meant
        return
    low, high = scale
    where = f"{spec.label}'s printed scale [{low:g}, {high:g}]"
    if width:
        if value <= high - low:
            return
        problem = f"is wider than {where}: no change could cross it"
    elif low <= value <= high:
        return
    else:
        verdict = "no run could pass it" if value > high else "every run passes it"
        problem = f"is outside {where}: {verdict}"
    guess = ""
    span = high - low
    if math.isfinite(span) and span < 100 and 1 < value <= 100:  # a percentage of a 0-1 or 0-5 score
        sep = ":" if width else "="
        meant = value / 100 * span + (0 if width else low)
        guess = f"; did you mean {given.rpartition(sep)[0]}{sep}{meant:g} ({value:g}% of the scale)?"
    refuse(f"{option}: {given} {problem}{guess}")


def parse_margins(
    option: str, text: str | None, suites: tuple[str, ...], metrics_of: Callable[[str], Sequence[str]]
) -> tuple[Margin, ...]:
    """``[SUITE:]METRIC:MARGIN,...``: the margins of a non-inferiority gate, printed scale."""
    out = []
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        scope, sep, raw = part.rpartition(":")
        named, _, metric = scope.rpartition(":")
        suite, metric = named.strip().lower() or None, metric.strip()
        if not sep or not metric or not raw.strip():
            refuse(f"{option}: expected [SUITE:]METRIC:MARGIN, got '{part}'")
        if suite is not None and suite not in suites:
            refuse(f"{option}: suite '{suite}' is not in this run ({', '.join(suites)})")
        candidates = [suite] if suite else list(suites)
        valid = sorted({m for s in candidates for m in metrics_of(s)})
        if metric not in valid:
            refuse(
                f"{option}: unknown metric '{metric}' for {', '.join(candidates)} (valid: {', '.join(valid)})"
            )
        spec = METRICS[metric]
        if spec.higher_is_better is None or spec.aggregation == "sum":
            refuse(f"{option}: {metric} ({spec.label}) has no better direction to be worse in")
        margin = Margin(suite, metric, number(option, raw.strip(), low=0))
        on_printed_scale(option, metric, margin.margin, str(margin), width=True)
        out.append(margin)
    return tuple(out)


@dataclass(frozen=True)
class GateConfig:
    """What fails a run or an item: thresholds on suite scores and on each item, the rates of
    errored and unscored items, and a paired comparison with a baseline run."""

    fail_under: tuple[Threshold, ...] = ()
    gate: str = "mean"  # what fail_under compares: the mean, or the lower end of its 95% interval
    item_min: tuple[Threshold, ...] = ()
    max_error_rate: float | None = None
    max_unscored_rate: float | None = None
    baseline: Path | None = None  # --ambig-baseline: read by the controller only
    fail_if_worse: tuple[Margin, ...] = ()
    in_shards: bool = False  # --ambig-shard-gates: each shard gates on its own part
    sequential: float | None = None  # --ambig-sequential: its alpha (session/sequential.py)

    @classmethod
    def read(
        cls,
        config: Any,
        base: Path,
        suites: tuple[str, ...],
        metrics_of: Callable[[str], Sequence[str]],
        metrics: tuple[str, ...] | None,
    ) -> GateConfig:
        def thresholds(flag: str, item_scale: bool) -> tuple[Threshold, ...]:
            text = options.value(config, flag)
            return parse_thresholds(
                flag, text, suites, item_scale=item_scale, metrics_of=metrics_of, metrics=metrics
            )

        def rate(flag: str) -> float | None:
            text = options.value(config, flag)
            return options.number(flag, text, low=0, high=1) if text else None

        fail_under = thresholds("--ambig-fail-under", False)
        for t in fail_under:
            on_printed_scale("--ambig-fail-under", t.metric, t.value, str(t))
        baseline = options.value(config, "--ambig-baseline")
        margins = parse_margins(
            "--ambig-fail-if-worse", options.value(config, "--ambig-fail-if-worse"), suites, metrics_of
        )
        if margins and not baseline:
            refuse("--ambig-fail-if-worse: name the run to compare with, --ambig-baseline=SCORECARD")
        sequential = None
        if options.value(config, "--ambig-sequential") is not None:
            sequential = _sequential(config, fail_under, margins)
        return cls(
            fail_under=fail_under,
            gate=options.choice(config, "--ambig-gate"),
            item_min=thresholds("--ambig-item-min", True),
            max_error_rate=rate("--ambig-max-error-rate"),
            max_unscored_rate=rate("--ambig-max-unscored-rate"),
            baseline=base / Path(baseline).expanduser() if baseline else None,
            fail_if_worse=margins,
            in_shards=options.value(config, "--ambig-shard-gates") is not None,
            sequential=sequential,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "fail_under": [str(t) for t in self.fail_under],
            "gate": self.gate,
            "item_min": [str(t) for t in self.item_min],
            "max_error_rate": self.max_error_rate,
            "max_unscored_rate": self.max_unscored_rate,
            "baseline": str(self.baseline) if self.baseline else None,
            "fail_if_worse": [str(m) for m in self.fail_if_worse],
            **({"sequential_alpha": self.sequential} if self.sequential is not None else {}),
        }


def _sequential(config: Any, fail_under: Sequence[Threshold], margins: Sequence[Margin]) -> float:
    """``--ambig-sequential``'s alpha, once its gates are known to be decidable as items come:
    a suite value that is the mean of item scores on a bounded scale."""
    flag = "--ambig-sequential"
    if not fail_under and not margins:
        refuse(f"{flag}: no gate to decide; give --ambig-fail-under or --ambig-fail-if-worse")
    if options.value(config, "--ambig-shard"):
        refuse(f"{flag}: a shard sees part of the items; decide on one run (it can use -n)")
    if (options.value(config, "--ambig-gate") or "mean").lower() == "lower-ci":
        refuse(f"{flag}: its sequence is the interval already; leave --ambig-gate at mean")
    if not PROTOCOLS[options.choice(config, "--ambig-protocol")].suite_values_are_item_means:
        refuse(f"{flag}: only the single-shot protocol's suite values are means over its items")
    for t in fail_under:
        if t.of_trials:
            refuse(f"{flag}: {t.metric}{PASS_ALL} (pass^k) is no mean of item scores; gate it without it")
    for metric in [t.metric for t in fail_under] + [m.metric for m in margins]:
        spec = METRICS[metric]
        if (
            spec.aggregation != "mean"
            or spec.item_range is None
            or not all(map(math.isfinite, spec.item_range))
        ):
            refuse(
                f"{flag}: {metric} ({spec.label}) cannot be gated as items come: its suite value is "
                "not the mean of bounded item scores"
            )
    alpha = options.text(config, "--ambig-sequential-alpha")
    return number("--ambig-sequential-alpha", alpha, low=1e-6, high=0.5)
