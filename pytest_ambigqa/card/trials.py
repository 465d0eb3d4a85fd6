"""Repeated trials of one system on the same items (``--ambig-repeats=K``): pass@k, pass^k,
how much an item's trials vary, and which items are flaky.

A suite's metrics are already the mean over items of each item's trial mean, with intervals
that resample items (each item's trials are one cluster): ``evaluate.combine_trials`` makes an
item's scores its trials' mean. This module adds what only the trials show. For a 0/1 metric
(``MetricSpec.binary``: STR-Hit, Disambig-Hit), it gives pass@k (Chen et al. 2021) and pass^k
(tau-bench, Yao et al. 2024) for k = 1..K, each averaged over items of the unbiased estimator
from an item's c passing of its K trials (``stats/trials.py`` says what they are).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..metrics import METRICS
from ..schema import ItemResult
from ..stats.bootstrap import bootstrap_interval, stable_seed
from ..stats.trials import pass_at_k, pass_hat_k, variance


@dataclass(frozen=True)
class TrialMetric:
    """One metric over a suite's repeated trials. ``items``: those whose every trial has a
    score of it (the statistics here are over them; a metric no item has is left out);
    ``variance``: the mean over them of the variance of an item's trial scores, item scale;
    for a 0/1 metric, ``pass_at`` and ``pass_all`` (pass^k) for k = 1..K on the printed
    scale, with the 95% bootstrap interval (resampling items) of pass@K and pass^K, and
    ``flaky``: the items whose trials disagree."""

    metric: str
    items: int
    variance: float
    max_variance: float
    pass_at: list[float] | None = None
    pass_all: list[float] | None = None
    pass_at_interval: list[float] | None = None  # [low, high] of pass@K
    pass_all_interval: list[float] | None = None  # [low, high] of pass^K
    flaky: list[str] | None = None


@dataclass(frozen=True)
class Repeats:
    """A suite's repeated trials: K per item, how many there were and how many errored."""

    k: int
    trials: int
    errored: int
    metrics: dict[str, TrialMetric]


def runs_of(result: ItemResult, k: int) -> tuple[ItemResult, ...]:
    """An item's trials; one that never reached its system (missing, or failed before any
    call) counts as K trials alike, each as its result does."""
    return result.trials or (result,) * k


def repeats(results: Sequence[ItemResult], metrics: Sequence[str], k: int, seed: int, suite: str) -> Repeats:
    """The section of a suite whose items were each asked ``k`` times."""
    runs = [runs_of(r, k) for r in results]
    out = {}
    for metric in metrics:
        spec = METRICS[metric]
        if spec.suite_level:
            continue
        complete = [(r, t) for r, t in zip(results, runs, strict=True) if all(metric in x.scores for x in t)]
        values = [[x.scores[metric] for x in t] for _, t in complete]
        if not values:
            continue  # n/a in the suite's table already, with the reason
        spreads = [variance(v) for v in values]
        binary = spec.binary and all(v in (0.0, 1.0) for vs in values for v in vs)
        entry = TrialMetric(metric, len(complete), math.fsum(spreads) / len(spreads), max(spreads))
        if binary:
            passes = [int(sum(v)) for v in values]
            at = [[pass_at_k(k, c, j) for c in passes] for j in range(1, k + 1)]
            every = [[pass_hat_k(k, c, j) for c in passes] for j in range(1, k + 1)]
            factor, where = (
                spec.factor,
                stable_seed(seed, suite, "trials", metric),
            )  # one draw of items for both
            entry = TrialMetric(
                *(entry.metric, entry.items, entry.variance, entry.max_variance),
                pass_at=[math.fsum(v) / len(v) * factor for v in at],
                pass_all=[math.fsum(v) / len(v) * factor for v in every],
                pass_at_interval=_interval(at[-1], factor, where),
                pass_all_interval=_interval(every[-1], factor, where),
                flaky=[r.key for (r, _), c in zip(complete, passes, strict=True) if 0 < c < k],
            )
        out[metric] = entry
    trials = sum(len(t) for t in runs)
    errored = sum(x.status != "ok" for t in runs for x in t)
    return Repeats(k, trials, errored, out)


def _interval(per_item: list[float], factor: float, seed: int) -> list[float]:
    """The 95% bootstrap interval of the mean of per-item values (items resampled), printed scale."""
    low, high = bootstrap_interval(per_item, seed)
    return [low * factor, high * factor]
