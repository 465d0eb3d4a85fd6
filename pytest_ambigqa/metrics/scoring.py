"""How a run scores, and the one loop that scores an answer with a suite's metrics.

A suite lists the metrics it reports; each metric's spec names the :class:`~.spec.Scorer`
that computes it. :func:`score` runs every scorer those metrics need once, in the order the
suite lists them, checking each model a scorer needs once: so a metric registered by a
plugin runs on a built-in suite as on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..errors import ScorerUnavailable
from ..models.usage import Usage
from ..schema import AmbigItem, Answer, safe_str
from . import METRICS, NOT_CONFIGURED
from .profiles import PROFILES, ScorerProfile
from .spec import Scored, Scorer


@dataclass(frozen=True)
class Scorers:
    """How this run scores: its model-backed scorers (None: not configured) and protocols.

    ``reader`` answers clarified questions from the long answer (Disambig-F1); ``judge``
    is the LLM judge. Metrics that need a missing one are reported as n/a with the reason.
    ``profile`` is the official scorer the long-answer metrics follow (None: the whole
    answer, for suites the profiles are not about); ``settings`` which of its published
    settings each suite runs (``Suite.settings``; a suite not named runs its first).
    """

    reader: Any = None
    judge: Any = None
    settings: Mapping[str, str] = field(default_factory=dict)
    # ALCE's scorer: the option's default (tests/test_layout.py).
    profile: ScorerProfile | None = PROFILES["alce"]
    metrics: frozenset[str] | None = None  # --ambig-metrics: None is every metric

    def text(self, answer: Answer) -> str:
        """The part of the answer the long-answer metrics read (ALCE: the first line, no ``[n]``)."""
        return answer.text if self.profile is None else self.profile.prepare(answer.text)

    def selected(self, metrics: Sequence[str]) -> tuple[str, ...]:
        """The metrics among a suite's ``metrics`` that this run computes and reports."""
        return tuple(metrics) if self.metrics is None else tuple(m for m in metrics if m in self.metrics)

    def wants(self, *item_metrics: str) -> bool:
        """Whether any of these item scores feeds a selected metric (so is worth computing)."""
        return self.metrics is None or any(m in _needed(self.metrics) for m in item_metrics)

    def keep(self, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` (item scores, reasons) without those no selected metric reads."""
        return values if self.metrics is None else {k: v for k, v in values.items() if self.wants(k)}

    def unavailable(self, metrics: Sequence[str]) -> dict[str, str]:
        """The metrics among ``metrics`` that need a model this run does not have."""
        return {
            m: NOT_CONFIGURED[need]
            for m in metrics
            if self.wants(m) and (need := METRICS[m].needs) and getattr(self, need) is None
        }


@lru_cache(maxsize=8)
def _needed(selected: frozenset[str]) -> frozenset[str]:
    """The item scores the selected metrics are computed from (DR: QA-F1 and ROUGE-Lsum)."""
    needed = set(selected)
    for name in selected:
        spec = METRICS[name]
        needed.add(spec.item_metric)
        for part in spec.of:
            needed.update((part, METRICS[part].item_metric))
    return frozenset(needed)


def score(
    metrics: Sequence[str],
    item: AmbigItem,
    answer: Answer,
    scorers: Scorers,
    outside: Mapping[str, str] = {},  # noqa: B006 - read only
) -> Scored:
    """``metrics`` of one answer: each scorer they name run once, a scorer whose model the
    run lacks skipped (its metrics n/a), one that fails leaving only its own metrics
    unscored; ``outside`` (metrics the run's setting does not report) unscored with its
    reason. Scores and reasons come in the order of ``metrics``, as the scorecard lists them."""
    scored = Scored(unscored=scorers.unavailable(metrics))
    groups: dict[Scorer, list[str]] = {}
    for name in metrics:
        if (scorer := METRICS[name].scorer) is not None:
            groups.setdefault(scorer, []).append(name)
    for scorer, group in groups.items():
        if not scorers.wants(*group) or (scorer.needs and getattr(scorers, scorer.needs) is None):
            continue
        if scorer.needs is None:
            _merge(scored, scorer.compute(item, answer, scorers, Usage()))
            continue
        usage = Usage()
        try:
            _merge(scored, scorer.compute(item, answer, scorers, usage))
        except Exception as exc:  # noqa: BLE001 - whatever the model did, only its metrics go unscored
            scored.unscored.update(dict.fromkeys(group, _failure(exc)))
        total = Usage.from_dict(scored.usage) if scored.usage else Usage()
        total.add(usage)
        scored.usage = total.to_dict()
    scored.unscored.update(outside)
    order = {name: n for n, name in enumerate(metrics)}  # JUnit properties follow the scorecard's rows
    scored.scores = dict(sorted(scored.scores.items(), key=lambda kv: order.get(kv[0], len(order))))
    scored.unscored = dict(sorted(scored.unscored.items(), key=lambda kv: order.get(kv[0], len(order))))
    return scored


def _merge(scored: Scored, part: Scored) -> None:
    scored.scores.update(part.scores)
    scored.unscored.update(part.unscored)
    scored.samples.update(part.samples)
    scored.units.update(part.units)
    scored.details.update(part.details)


def _failure(exc: Exception) -> str:
    """The reason a model-backed scorer gives for not scoring: its own message when it is a
    judge's, else what went wrong where (a bug or a model library's error)."""
    if isinstance(exc, ScorerUnavailable):
        return str(exc)
    return f"scorer failed: {type(exc).__name__}: {safe_str(exc)[:200]}"
