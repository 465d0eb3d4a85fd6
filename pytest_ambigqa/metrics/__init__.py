"""Every metric the plugin can report, by the one name used in options and reports.

Each module of this package that declares metrics (``SPECS``, next to the functions that
compute them) is registered here, found by name (so a new module is one file); plugins add
more (``pytest_ambigqa_metrics``), after these.
"""

from __future__ import annotations

import pkgutil
from importlib import import_module

from ..registry import Registry
from .spec import AGGREGATIONS, MetricSpec, Scored, Scorer

__all__ = ["AGGREGATIONS", "METRICS", "NOT_CONFIGURED", "MetricSpec", "Scored", "Scorer", "printed_range"]

METRICS: Registry[MetricSpec] = Registry("metric")
NOT_CONFIGURED = {
    "reader": "no reader configured (--ambig-reader)",
    "judge": "no judge configured (--ambig-judge)",
}
for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    for _spec in getattr(import_module(f"{__name__}.{_module}"), "SPECS", ()):
        METRICS.register(_spec.name, _spec)


def printed_range(metric: str) -> tuple[float, float] | None:
    """The metric's range on the printed (suite) scale: its items' range times its factor,
    or for a suite-level metric (ROUGE-Lsum's mid, DR) the range of what it is made from;
    None for counts and totals, which have none. A bound may be infinite (a reward has no
    floor)."""
    spec = METRICS[metric]
    if spec.item_range is not None:
        low, high = spec.item_range
        return low * spec.factor, high * spec.factor
    return printed_range(spec.of[0]) if spec.of else None
