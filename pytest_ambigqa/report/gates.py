"""Session gates: a suite score under its threshold, or too many errors, fails the run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import options
from ..metrics import METRICS, NOT_CONFIGURED
from ..options import number, pairs, refuse
from ..protocols import protocol_of
from ..readback import finite
from .compare import Margin, parse_margins
from .scorecard import SuiteCard


@dataclass(frozen=True)
class Threshold:
    """A ``--ambig-fail-under`` or ``--ambig-item-min`` entry: ``[suite:]metric=value``."""

    suite: str | None  # None: every selected suite that has the metric
    metric: str
    value: float

    def __str__(self) -> str:
        scope = f"{self.suite}:" if self.suite else ""
        return f"{scope}{self.metric}={self.value:g}"


def shortfalls(
    cards: Sequence[SuiteCard],
    fail_under: Sequence[Threshold],
    gate: str,
    max_error_rate: float | None,
    max_unscored_rate: float | None = None,
) -> list[str]:
    """One line per failed gate, naming suite, metric, score and threshold."""
    lines = []
    for card in cards:
        lines += _scored_nothing(card) + protocol_of(card.protocol.name).shortfalls(card, max_unscored_rate)
        for t in fail_under:
            if (t.suite and t.suite != card.name) or t.metric not in card.metrics:
                continue
            s = card.metrics[t.metric]
            label = METRICS[t.metric].label
            if s.mean is None:
                lines.append(f"{card.name} {t.metric}: n/a ({s.reason}), cannot meet {t.value:g}")
                continue
            value, what = (s.low, "lower 95% CI") if gate == "lower-ci" else (s.mean, "mean")
            if value is None:  # a total or the official bootstrap mid: a number without an interval
                value, what = s.mean, "value (no interval)"
            if not finite(value):
                lines.append(f"{card.name} {t.metric} ({label}) {what} is {value}, not a finite number: "
                             f"cannot meet {t.value:g}")  # fmt: skip
                continue
            if value < t.value:
                lines.append(f"{card.name} {t.metric} ({label}) {what} {value:.2f} < {t.value:g}")
        if max_unscored_rate is not None and card.items:
            # Metrics a configured model could not score, grouped when they share a cause.
            groups: dict[tuple[int, str | None], list[str]] = {}
            for metric, s in card.metrics.items():
                unconfigured = s.n == 0 and s.reason in NOT_CONFIGURED.values()
                measured = METRICS[metric].needs and not unconfigured and metric not in card.outside
                if measured and s.unscored / card.items > max_unscored_rate:
                    groups.setdefault((s.unscored, s.reason), []).append(metric)
            for (unscored, reason), metrics in groups.items():
                lines.append(
                    f"{card.name} {', '.join(metrics)}: {unscored} of {card.items} items unscored "
                    f"({unscored / card.items:.0%}) > {max_unscored_rate:g}: {reason}"
                )
        if max_error_rate is not None and card.items:
            rate = (card.errors + card.missing) / card.items
            if rate > max_error_rate:
                lines.append(
                    f"{card.name} error rate {rate:.1%} ({card.errors} errors, {card.missing} missing "
                    f"of {card.items}) > {max_error_rate:g}"
                )
    return lines


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
        out.append(Threshold(suite, metric, value))
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
            if METRICS[t.metric].factor == 100 and 0 < t.value <= 1:
                refuse(
                    f"--ambig-fail-under: {t} is on the printed 0-100 scale (a percentage); "
                    f"did you mean {t.metric}={t.value * 100:g}?"
                )
        baseline = options.value(config, "--ambig-baseline")
        margins = parse_margins(
            "--ambig-fail-if-worse", options.value(config, "--ambig-fail-if-worse"), suites, metrics_of
        )
        if margins and not baseline:
            refuse("--ambig-fail-if-worse: name the run to compare with, --ambig-baseline=SCORECARD")
        return cls(
            fail_under=fail_under,
            gate=options.choice(config, "--ambig-gate"),
            item_min=thresholds("--ambig-item-min", True),
            max_error_rate=rate("--ambig-max-error-rate"),
            max_unscored_rate=rate("--ambig-max-unscored-rate"),
            baseline=base / Path(baseline).expanduser() if baseline else None,
            fail_if_worse=margins,
            in_shards=options.value(config, "--ambig-shard-gates") is not None,
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
        }
