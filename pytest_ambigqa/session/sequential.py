"""``--ambig-sequential``: the run's gates decided as the items' results arrive, and the items
left skipped once every gate is decided (issue 29).

The items run in an order drawn from the seed (:func:`seeded_order`), the same in every
process. On the controller, :class:`SequentialGate` feeds each gated statistic's confidence
sequence (``stats/sequential.py``) with the items' values *in that order*: a result that
arrives early (another xdist worker, a faster call) waits until those before it are in, so the
values the sequence sees are a uniformly random draw without replacement whatever the timing,
which is what makes it valid. When every gate is decided it writes a :class:`StopSignal`,
which each process's runner reads before an item's test: an item whose call has not started is
skipped ("gate decided after n items"), one already in flight finishes and counts.

What it assumes, and checks: an item's score must not depend on when it is asked (the values
are a random draw in a random order only then). Errors are how a quota or an outage shows, so
no gate passes early while any item has errored (an early fail stands: errors only lower a
mean), and a pass decided before an error that came in flight is withdrawn. Before any gate
stops early, Kendall's test of its values against the order the items were asked in (one-sided,
in the direction that would make the decision wrong: falling scores for a pass, rising for a
fail) must not reject at the gate's alpha; where it does, the gate is left to the full run.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..card.scorecard import Check, Scorecard
from ..metrics import METRICS
from ..schema import AmbigItem, ItemResult
from ..stats.sequential import Bounds, ConfidenceSequence, Trend, decide
from ..suites.sample import seeded_rank

SKIPPED = "ambigqa: gate decided after"  # how a skipped item's reason begins


def seeded_order(items: Iterable[AmbigItem], seed: int) -> list[AmbigItem]:
    """``items`` in an order drawn from ``seed`` and their keys alone: the same on every
    machine and in every process, whatever the hash seed or the data's order."""
    return sorted(items, key=lambda i: seeded_rank(seed, i.key))


class StopSignal:
    """The controller's decision to stop, as a file in the run's cache directory, which
    every process of the run shares (xdist workers read it; nothing else carries it to them).
    The controller, which decides, reads its own decision from memory: a file check before
    each item took 0.145 s of a 5,000-item run (issue 44, target 6)."""

    def __init__(self, cache_dir: Path, run_id: str, in_worker: bool) -> None:
        self.path = cache_dir / f"ambigqa-stop-{run_id}"
        self._reason: str | None = None
        self._read = in_worker  # whether the decision comes from another process

    def give(self, reason: str) -> None:
        self._reason = reason
        try:
            self.path.write_text(reason, encoding="utf-8")
        except OSError:  # the controller's own runner still reads _reason; workers run on
            pass

    def reason(self) -> str | None:
        """Why the run stopped, or None while it goes on (a file read only until it is there)."""
        if self._reason is None and self._read and self.path.exists():
            try:
                self._reason = self.path.read_text(encoding="utf-8") or f"{SKIPPED} a decision"
            except OSError:
                return None
        return self._reason

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


@dataclass
class Tracked:
    """One gated statistic: the mean of a metric over a suite's items (``--ambig-fail-under``),
    or of its paired change against the baseline (``--ambig-fail-if-worse``), on 0-1."""

    gate: str  # the option entry, as the gate's check names it
    suite: str
    metric: str
    bound: float  # on 0-1
    printed: tuple[float, float]  # 0-1 -> printed scale: value * printed[1] + printed[0]
    sequence: ConfidenceSequence
    base: dict[str, float] | None = None  # the baseline's item scores (paired), by key
    decision: str | None = None
    decided_at: int | None = None  # items seen when it was decided
    at_decision: Bounds | None = None
    unusable: str | None = None  # why it cannot be decided as items come (the full run decides)
    trend: Trend | None = None  # its values against the order the items were asked in
    held: str | None = None  # why it may not pass early (an item errored); it may still fail early
    withdrawn: str | None = None  # why its early pass does not stand (an error came after it)
    item_range: tuple[float, float] = (0.0, 1.0)  # the metric's item scale

    def value(self, key: str, result: ItemResult) -> float | None:
        """The value on 0-1 of ``result`` (item ``key``), None when it has none (an n/a, an
        item the base lacks)."""
        if self.metric not in result.scores:
            return None
        low, high = self.item_range
        x = (result.scores[self.metric] - low) / (high - low)
        if self.base is None:
            return min(max(x, 0.0), 1.0)
        if key not in self.base:
            return None
        change = x - (self.base[key] - low) / (high - low)
        if not METRICS[self.metric].higher_is_better:
            change = -change
        return min(max((change + 1) / 2, 0.0), 1.0)

    def check(self, alpha: float) -> Check:
        """The gate's check as the sequence decided it (it stands for the fixed-n check)."""
        spec, shown = METRICS[self.metric], self.at_decision or self.sequence.bounds()
        scale, offset = self.printed[1], self.printed[0]
        lower, upper, bound = (v * scale + offset for v in (shown.lower, shown.upper, self.bound))
        what = "change" if self.base is not None else "mean"
        statistic = (
            f"{spec.label} {what}, anytime-valid {1 - alpha:.0%} confidence sequence after "
            f"{self.decided_at} of {self.sequence.population} items"
        )
        failure = None
        if self.withdrawn is not None:
            failure = (
                f"{self.suite} {self.metric} ({spec.label}) {what}: {self.withdrawn} (--ambig-sequential)"
            )
        elif self.decision == "fail":
            failure = (
                f"{self.suite} {self.metric} ({spec.label}) {what}: its {1 - alpha:.0%} confidence sequence "
                f"[{lower:.2f}, {upper:.2f}] after {self.decided_at} of {self.sequence.population} items "
                f"lies below {bound:g} (--ambig-sequential)"
            )
        value = lower if self.decision == "pass" else upper
        if self.withdrawn is not None:
            statistic += ", withdrawn"
        return Check(
            self.gate, self.suite, statistic, self.metric, value, bound, True, failure is None, failure
        )

    def report(self) -> dict[str, Any]:
        shown = self.at_decision or self.sequence.bounds()
        scale, offset = self.printed[1], self.printed[0]
        return {
            "gate": self.gate,
            "suite": self.suite,
            "metric": self.metric,
            "decision": self.decision,
            "after": self.decided_at,
            "seen": self.sequence.n,
            "population": self.sequence.population,
            "lower": shown.lower * scale + offset,
            "upper": shown.upper * scale + offset,
            "bound": self.bound * scale + offset,
            "unusable": self.unusable or self.held,
            **({"withdrawn": self.withdrawn} if self.withdrawn else {}),
        }


@dataclass
class SequentialGate:
    """On the controller: the gates' confidence sequences, fed in the seeded order."""

    alpha: float
    signal: StopSignal
    order: list[str] = field(default_factory=list)  # the keys, in the order the values are taken
    tracked: list[Tracked] = field(default_factory=list)
    _waiting: dict[str, ItemResult] = field(default_factory=dict)
    _next: int = 0  # the place in ``order`` of the next value to take
    stopped_after: int | None = None
    _asked: dict[str, int] = field(default_factory=dict)  # each result's place in the order they came
    errored: list[str] = field(default_factory=list)  # the keys of the items that errored, as they came

    @classmethod
    def start(
        cls,
        alpha: float,
        signal: StopSignal,
        items: Sequence[AmbigItem],
        fail_under: Sequence[Any],
        margins: Sequence[Any],
        base: Sequence[ItemResult] = (),
    ) -> SequentialGate:
        """The gates over ``items`` (the run's expected items, in the seeded order)."""
        gate = cls(alpha, signal, [i.key for i in items])
        for suite in sorted({i.suite for i in items}):
            keys = [i.key for i in items if i.suite == suite]
            for t in fail_under:
                if t.suite in (None, suite):
                    gate._track(f"--ambig-fail-under={t}", suite, t.metric, t.value, len(keys), None, False)
            for m in margins:
                if m.suite in (None, suite):
                    scores = {
                        r.key: r.scores[m.metric] for r in base if r.suite == suite and m.metric in r.scores
                    }
                    paired = sum(k in scores for k in keys)
                    if paired:
                        gate._track(
                            f"--ambig-fail-if-worse={m}", suite, m.metric, -m.margin, paired, scores, True
                        )
        return gate

    def _track(
        self, entry: str, suite: str, metric: str, bound: float, n: int, base: dict | None, paired: bool
    ) -> None:
        spec = METRICS[metric]
        low, high = spec.item_range or (0.0, 1.0)
        width = (high - low) * spec.factor
        if paired:  # a change in [-width, width] -> [0, 1]
            printed, bound01 = (-width, 2 * width), (bound / width + 1) / 2
        else:
            printed, bound01 = (low * spec.factor, width), (bound - low * spec.factor) / width
        sequence = ConfidenceSequence(n, self.alpha)
        self.tracked.append(
            Tracked(
                entry, suite, metric, bound01, printed, sequence, base, trend=Trend(n), item_range=(low, high)
            )
        )

    def observe(self, result: ItemResult) -> None:
        """Take ``result``, and every waiting one it completes the order's prefix for."""
        key = result.key
        self._asked.setdefault(key, len(self._asked))  # results come in the order they are asked
        if result.status == "error":
            self.errored.append(key)
        if not self._waiting and self._next < len(self.order) and self.order[self._next] == key:
            self._take(key, result)  # the next in the order, as results usually come
            self._next += 1
        else:
            self._waiting[key] = result
        while self._next < len(self.order) and self.order[self._next] in self._waiting:
            key = self.order[self._next]
            self._take(key, self._waiting.pop(key))
            self._next += 1
        # A gate that cannot be decided as items come needs them all: then nothing stops early.
        if self.stopped_after is None and self.tracked and all(t.decision for t in self.tracked):
            self.stopped_after = self._next
            self.signal.give(f"{SKIPPED} {self._next} items")

    def _take(self, key: str, result: ItemResult) -> None:
        for t in self.tracked:
            if t.suite != result.suite or t.decision or t.unusable:
                continue
            if result.units.get(t.metric):
                t.unusable = "its suite value pools units across items, not a mean of item scores"
                continue
            x = t.value(key, result)
            if x is None:
                if t.base is None or key in t.base:
                    t.unusable = f"{key} has no {t.metric} score (n/a): the mean is over fewer items"
                continue
            if not math.isfinite(x):
                continue
            bounds = t.sequence.look(x, t.bound)  # None: provably undecided (stats/sequential.py)
            assert t.trend is not None
            t.trend.add(self._asked[key], x)
            decision = decide(bounds, t.bound) if bounds is not None else None
            if decision is None or bounds is None:
                continue
            p = t.trend.p_toward(falling=decision == "pass")
            if p < self.alpha:
                t.unusable = (
                    f"its values trend with the order the items were asked in (Kendall's tau "
                    f"{t.trend.tau():+.2f}, one-sided p {p:.3g} after {bounds.n} items): the sequence "
                    "assumes an item's score does not depend on when it is asked"
                )
                continue
            if decision == "pass" and self.errored:
                t.held = (
                    f"{len(self.errored)} item(s) errored ({self.errored[0]} first): no early pass while an "
                    "item has errored (errors are how a quota or an outage shows)"
                )
                continue
            t.decision, t.decided_at, t.at_decision = decision, bounds.n, bounds

    def apply(self, card: Scorecard, skipped: int) -> Scorecard:
        """``card`` with each decided gate's check replaced by the sequence's (a fixed-n check
        on the items a stopped run evaluated would not keep the error rate), and the record of
        where the run stopped: items evaluated and skipped, and the calls and cost that the
        skipped items would have taken at the evaluated items' average."""
        errored = self.errored + [
            r.key for r in card.results if r.status == "error" and r.key not in self.errored
        ]
        for tracked in self.tracked:  # an error that came after the pass was decided (in flight)
            if tracked.decision != "pass" or not errored:
                continue
            if self.stopped_after is None:  # every item ran: the full run's check decides
                tracked.decision = None
                tracked.held = f"{len(errored)} item(s) errored ({errored[0]} first) after it passed"
                continue
            tracked.withdrawn = (
                f"passed early after {tracked.decided_at} items, but {len(errored)} item(s) errored "
                f"({errored[0]} first) and the items skipped were never asked: an early pass stands "
                "only without errors; run it in full"
            )
        decided = {(t.gate, t.suite): t for t in self.tracked if t.decision}
        checks, dropped, added = [], set(), []
        for c in card.checks:
            t = decided.get((c.gate, c.suite))
            if t is None:
                checks.append(c)
                continue
            dropped.add(c.failure)
            checks.append(t.check(self.alpha))
            added += [checks[-1].failure] if checks[-1].failure else []
        shortfalls = [line for line in card.shortfalls if line not in dropped] + added
        evaluated = len([r for r in card.results if r.status != "missing"])
        calls = sum(
            (r.usage or {}).get("requests", 0) + (r.usage or {}).get("cached", 0) for r in card.results
        ) + sum(1 for r in card.results if r.status != "missing")
        cost = sum((r.usage or {}).get("cost", 0.0) for r in card.results)
        per = (lambda total: total / evaluated * skipped) if evaluated else (lambda total: 0.0)
        record = {
            "alpha": self.alpha,
            "order": "seeded random",
            "stopped_after": self.stopped_after,
            "evaluated": evaluated,
            "skipped": skipped,
            "calls_saved_estimate": round(per(calls)),
            "cost_saved_estimate": per(cost),
            "gates": [t.report() for t in self.tracked],
        }
        return dataclasses.replace(card, checks=checks, shortfalls=shortfalls, sequential=record)
