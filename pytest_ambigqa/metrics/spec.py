"""What a metric is: its name, label, source, scale, aggregation, needs and the scorer that
computes it (one spec each).

Item values are stored on the item scale (fractions for percentage metrics, as the
official per-item scores are); suites print them on the papers' scale. A spec also says
how a suite value is made from the items (``aggregation``), which matters: the official
scorers do not all take a plain mean of items.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..models.usage import Usage
    from ..schema import AmbigItem, Answer
    from .scoring import Scorers

# How a suite (or slice) value is made from its items:
#   mean       the mean of item values; when items report units (CondAmbigQA closed-book
#              answer pairs), the mean of all units, pooled across items
#   sum        the total over items (counts)
#   boot-mid   rouge-score's BootstrapAggregator "mid" of the ``of`` metric's item values
#   geometric  sqrt of the product of the ``of`` metrics' suite values (ASQA's DR)
AGGREGATIONS = ("mean", "sum", "boot-mid", "geometric")


@dataclass
class Scored:
    """What scoring one answer produced: scores, reasons for the rest, and judge details."""

    scores: dict[str, float] = field(default_factory=dict)
    unscored: dict[str, str] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)  # judge metrics, one value per seed
    units: dict[str, list[float]] = field(default_factory=dict)  # pooled metrics, one value per unit
    details: dict[str, Any] = field(default_factory=dict)  # what a scorer saw: reader spans, pair matches
    usage: dict[str, Any] | None = None  # what the judge calls cost (models.usage.Usage)
    panel: dict[str, list[float]] = field(default_factory=dict)  # judge metrics: one value per panel judge


class Compute(Protocol):
    """What a scorer's ``compute`` is: a pure function of the item and the answer, with the
    run's models in ``scorers`` and its calls' cost added to ``usage`` (mypy checks every
    scorer, built-in or a plugin's, against this signature)."""

    def __call__(self, item: AmbigItem, answer: Answer, scorers: Scorers, usage: Usage, /) -> Scored: ...


@dataclass(frozen=True, eq=False)
class Scorer:
    """One pass over an answer that computes a group of metrics: the metrics that share it
    (the reader's three, a judge's criteria) are computed once, together (Inspect AI's
    scorer/metric split). ``compute`` is pure but for the models the context carries; a
    scorer that ``needs`` a model is skipped, its metrics n/a, when the run has none, and
    one that fails leaves its metrics, and only them, unscored with the reason."""

    name: str
    compute: Compute
    needs: str | None = None  # "reader" or "judge"


@dataclass(frozen=True)
class MetricSpec:
    name: str
    label: str
    source: str
    factor: float = 1  # item scale -> printed suite scale
    correctness: bool = True  # an errored item counts as 0 (else it is unscored)
    higher_is_better: bool | None = True
    item_range: tuple[float, float] | None = (0, 1)  # for validating --ambig-item-min; None: not per item
    needs: str | None = None  # "reader" or "judge": a model the metric cannot do without
    aggregation: str = "mean"
    of: tuple[str, ...] = ()  # the metrics a suite-level aggregation is computed from
    binary: bool = False  # item values are 0 or 1: a paired comparison uses exact McNemar
    scorer: Scorer | None = field(default=None, compare=False)  # None: computed elsewhere or suite-level
    suites: tuple[str, ...] = ()  # suites that report it besides those listing it (a plugin's, on MARCH)
    failed_as: str = "0"  # what an errored item counts as, in words (the scorecard's "scored" column)

    def __post_init__(self) -> None:
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"{self.name}: unknown aggregation '{self.aggregation}'")

    @property
    def suite_level(self) -> bool:
        """No value per item: computed only for a whole suite or slice."""
        return bool(self.of)

    @property
    def item_metric(self) -> str:
        """The metric whose item values this one is made from (itself, unless suite-level)."""
        return self.of[0] if self.of else self.name


def percent(name: str, label: str, source: str, scorer: Scorer, binary: bool = False) -> MetricSpec:
    return MetricSpec(name, label, source, factor=100, needs=scorer.needs, binary=binary, scorer=scorer)


def judged(name: str, label: str, source: str, scorer: Scorer, scale: float = 1) -> MetricSpec:
    return MetricSpec(name, label, source, needs="judge", item_range=(0, scale), scorer=scorer)


def count(
    name: str,
    label: str,
    source: str,
    scorer: Scorer | None,
    aggregation: str = "mean",
    better: bool | None = None,
) -> MetricSpec:
    return MetricSpec(
        name,
        label,
        source,
        correctness=False,
        higher_is_better=better,
        item_range=None,
        aggregation=aggregation,
        scorer=scorer,
    )
