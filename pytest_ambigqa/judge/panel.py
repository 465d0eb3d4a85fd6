"""A panel of judges: every criterion scored by each model, their scores made one.

Verga et al. 2024, "Replacing Judges with Juries: Evaluating LLM Generations with a Panel of
Diverse Models" (arXiv 2404.18796): a panel of smaller models from different families agrees
with humans better than one large judge, and pools by the mean of scores or by a majority vote.
Here each judge's item score is its mean over the seeds (``--ambig-judge-samples``); the item
score is the ``mean`` of the judges' or their ``median`` (a majority vote for a binary
criterion with an odd panel). The judges' own scores are kept (``Judgement.panel``) for the
scorecard's agreement, Krippendorff's alpha, and the items flagged as disputed
(``card/scorecard.py``).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from .judgement import Judgement

AGGREGATE: dict[str, Callable[[Sequence[float]], float]] = {
    "mean": statistics.fmean,
    "median": statistics.median,
}


def combine(judgements: Sequence[Judgement], how: str) -> Judgement:
    """One judgement of the panel from each judge's, in the panel's order.

    A sample k of a metric is the judges' sample k made one (so K samples keep measuring
    the variance over seeds); a pooled metric's units are made one unit by unit; the details
    are the first judge's (what it matched, for the report)."""
    pool = AGGREGATE[how]
    first = judgements[0]
    samples = {
        metric: [pool(column) for column in zip(*(j.samples[metric] for j in judgements), strict=True)]
        for metric in first.samples
    }
    units = {
        metric: [pool(column) for column in zip(*(j.units[metric] for j in judgements), strict=True)]
        for metric in first.units
    }
    panel = {metric: [j.means()[metric] for j in judgements] for metric in first.samples}
    return Judgement(samples, units, first.details, panel)
