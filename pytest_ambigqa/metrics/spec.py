"""What a metric is: its name, label, source, scale, aggregation and needs (one spec each).

Item values are stored on the item scale (fractions for percentage metrics, as the
official per-item scores are); suites print them on the papers' scale. A spec also says
how a suite value is made from the items (``aggregation``), which matters: the official
scorers do not all take a plain mean of items.
"""

from __future__ import annotations

from dataclasses import dataclass

# How a suite (or slice) value is made from its items:
#   mean       the mean of item values; when items report units (CondAmbigQA closed-book
#              answer pairs), the mean of all units, pooled across items
#   sum        the total over items (counts)
#   boot-mid   rouge-score's BootstrapAggregator "mid" of the ``of`` metric's item values
#   geometric  sqrt of the product of the ``of`` metrics' suite values (ASQA's DR)
AGGREGATIONS = ("mean", "sum", "boot-mid", "geometric")


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


def percent(name: str, label: str, source: str, needs: str | None = None, binary: bool = False) -> MetricSpec:
    return MetricSpec(name, label, source, factor=100, needs=needs, binary=binary)


def judged(name: str, label: str, source: str, scale: float = 1) -> MetricSpec:
    return MetricSpec(name, label, source, needs="judge", item_range=(0, scale))


def count(name: str, label: str, source: str, aggregation: str = "mean", better: bool | None = None):
    return MetricSpec(
        name,
        label,
        source,
        correctness=False,
        higher_is_better=better,
        item_range=None,
        aggregation=aggregation,
    )
