"""What a judge returns for one item."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..metrics.spec import Scored


@dataclass(frozen=True)
class Judgement:
    """Judge metrics of one item: each metric's samples (one per seed), and the units of
    pooled metrics (averaged over the seeds)."""

    samples: dict[str, list[float]]
    units: dict[str, list[float]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)  # what was judged, for the report
    panel: dict[str, list[float]] = field(default_factory=dict)  # each panel judge's score (panel.py)

    def means(self) -> dict[str, float]:
        return {m: sum(v) / len(v) for m, v in self.samples.items()}

    def scored(self) -> Scored:
        """As a scorer's result: the item score of each metric is the mean of its samples."""
        return Scored(
            self.means(), samples=self.samples, units=self.units, details=self.details, panel=self.panel
        )
