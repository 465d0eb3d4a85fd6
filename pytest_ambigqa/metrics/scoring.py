"""How a run scores, and the one loop that scores an answer with a suite's metrics.

A suite lists the metrics it reports; each metric's spec names the :class:`~.spec.Scorer`
that computes it. :func:`score` runs every scorer those metrics need once, in the order the
suite lists them, checking each model a scorer needs once: so a metric registered by a
plugin runs on a built-in suite as on its own.

The pure scorers of this package (:func:`offloadable`) may run in a scoring worker process
(``store/scoring.py``): :func:`compute` there, their parts handed back to :func:`score` as
``done``, which merges them where it would have computed them, so the result is the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from ..errors import ScorerUnavailable
from ..models.usage import Usage
from ..output import excerpt
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


def _groups(metrics: Sequence[str], scorers: Scorers) -> dict[Scorer, list[str]]:
    """The scorers that run for ``metrics``, each with its metrics, in the order of ``metrics``:
    one that no selected metric reads, or whose model the run lacks, does not."""
    groups: dict[Scorer, list[str]] = {}
    for name in metrics:
        if (scorer := METRICS[name].scorer) is not None:
            groups.setdefault(scorer, []).append(name)
    return {
        scorer: group
        for scorer, group in groups.items()
        if scorers.wants(*group) and not (scorer.needs and getattr(scorers, scorer.needs) is None)
    }


def offloadable(metrics: Sequence[str], scorers: Scorers) -> tuple[str, ...]:
    """The scorers of ``metrics`` a scoring worker process can run (their names): pure (no
    model: the reader and the judge stay with the run) and this package's own, which a
    worker imports (a plugin's scorer is registered in the run's process only)."""
    return tuple(
        scorer.name
        for scorer in _groups(metrics, scorers)
        if scorer.needs is None and scorer.compute.__module__.startswith(f"{__package__}.")
    )


class Failure(NamedTuple):
    """A pure scorer's exception as a worker process hands it back (an exception need not
    survive pickling): :func:`score` raises it again, under its type's name."""

    kind: str
    message: str

    def exception(self) -> Exception:
        return type(self.kind, (Exception,), {})(self.message)


def compute(
    names: Sequence[str], item: AmbigItem, answer: Answer, scorers: Scorers
) -> dict[str, Scored | Failure]:
    """In a scoring worker: the pure scorers ``names`` (:func:`offloadable`) of one answer, in
    order; the first that raises ends it, as it ends :func:`score`."""
    parts: dict[str, Scored | Failure] = {}
    for name in names:
        try:
            parts[name] = _built_in()[name].compute(item, answer, scorers, Usage())
        except Exception as exc:  # noqa: BLE001 - handed back: the item says so, as in-process
            parts[name] = Failure(type(exc).__name__, safe_str(exc))
            break
    return parts


@lru_cache(maxsize=1)
def _built_in() -> dict[str, Scorer]:
    return {spec.scorer.name: spec.scorer for spec in METRICS.values() if spec.scorer is not None}


def score(
    metrics: Sequence[str],
    item: AmbigItem,
    answer: Answer,
    scorers: Scorers,
    outside: Mapping[str, str] = {},
    done: Mapping[str, Scored | Failure] = {},
) -> Scored:
    """``metrics`` of one answer: each scorer they name run once, a scorer whose model the
    run lacks skipped (its metrics n/a), one that fails leaving only its own metrics
    unscored; ``outside`` (metrics the run's setting does not report) unscored with its
    reason; ``done``: pure scorers' parts a worker process computed (:func:`compute`), taken
    in their turn. Scores and reasons come in the order of ``metrics``, as the scorecard lists them."""
    scored = Scored(unscored=scorers.unavailable(metrics))
    for scorer, group in _groups(metrics, scorers).items():
        if scorer.needs is None:
            part = done.get(scorer.name)
            if isinstance(part, Failure):
                raise part.exception()
            _merge(scored, part if part is not None else scorer.compute(item, answer, scorers, Usage()))
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
    scored.panel.update(part.panel)


def _failure(exc: Exception) -> str:
    """The reason a model-backed scorer gives for not scoring: its own message when it is a
    judge's, else what went wrong where (a bug or a model library's error)."""
    if isinstance(exc, ScorerUnavailable):
        return str(exc)
    return f"scorer failed: {type(exc).__name__}: {excerpt(exc, 200)}"
