"""Every metric the plugin can report, by the one name used in options and reports.

Each module of this package declares its metrics (``SPECS``, next to the functions that
compute them); they are registered here in this order, and plugins add more
(``pytest_ambigqa_metrics``).
"""

from __future__ import annotations

from importlib import import_module

from ..registry import Registry
from .spec import AGGREGATIONS, MetricSpec, Scored, Scorer

__all__ = ["AGGREGATIONS", "METRICS", "NOT_CONFIGURED", "MetricSpec", "Scored", "Scorer"]

METRICS: Registry[MetricSpec] = Registry("metric")
for _module in ("coverage", "rouge", "qa", "judged", "self_report", "conditional", "text", "interactive"):
    for _spec in import_module(f"{__name__}.{_module}").SPECS:
        METRICS.register(_spec.name, _spec)

NOT_CONFIGURED = {
    "reader": "no reader configured (--ambig-reader)",
    "judge": "no judge configured (--ambig-judge)",
}
