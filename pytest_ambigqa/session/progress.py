"""Live progress for long runs: one status line under pytest's output (``--ambig-progress``).

    ambigqa 120/500 | 2 errors | 1:05 elapsed | ETA 4:10 | 3 in flight | 41.2k tokens, $0.0214
    | march STR-EM 42.1 [35.0, 49.2] vs base -1.2 [-3.4, +0.9]

On the controller only (the one process of a plain run, or xdist's controller), from the
results the test reports carry there (``ScorecardPlugin`` tells it of each), so ``-n`` shows
one line for the whole run. The metric of each suite is its scorecard's headline (the first
metric it reports, the one report.html sorts by; the next when that one is n/a), computed by
the scorecard's own ``summarize`` over the items done so far, errored ones counted as 0; the
change is ``compare``'s paired row of it against ``--ambig-baseline``, over the items both
runs have, so at the end of a run both are the numbers of the summary. The statistics are
computed again at most once a second and at most 5% of the time, the line drawn at most 4
times a second: per item there is only counting. ``statusline.py`` draws it.
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import pytest

from ..card.compare import running_row
from ..card.scorecard import MetricSummary, SuiteCard, model_calls, summarize
from ..metrics import METRICS
from ..models.usage import Usage
from ..options import choice, runs_no_tests
from ..report import view
from ..schema import ItemResult
from ..suites import LoadedSuite
from .collection import key_of
from .run import Run
from .runner import RUNNER_KEY
from .scorecard import ScorecardPlugin
from .statusline import StatusLine

REDRAW = 0.25  # seconds between two draws at least: 4 a second at most
RECOMPUTE = 1.0  # seconds between two computations of the running statistics at least,
STATS_SHARE = 0.02  # and at most this share of the controller's time (issue 44: the line within 3%)
PACE_WINDOW = 50  # the ETA's pace: the last this many items
Spent = tuple[tuple[int, int], tuple[float, float]]  # (judge, system) tokens, (judge, system) dollars


def mode(config: pytest.Config) -> str:
    """``--ambig-progress``: auto, on or off (a UsageError for anything else)."""
    return choice(config, "--ambig-progress")


def shown_by_default(config: pytest.Config, reporter: Any) -> bool:
    """``auto``: a terminal pytest writes to with its escape codes (not TERM=dumb, NO_COLOR or
    ``--color=no``), at its usual verbosity or more, whose tests do not write to it themselves
    (``-s``)."""
    return (
        bool(reporter.isatty())
        and reporter.hasmarkup
        and config.option.verbose >= 0
        and getattr(config.option, "capture", "fd") not in ("no", "tee-sys")
    )


_UNCHECKED: Any = object()  # a suite's baseline not looked at yet (at its first result)


@dataclass
class _Suite:
    loaded: LoadedSuite
    metrics: tuple[str, ...]  # as its scorecard reports them, the headline first
    dirty: bool = False  # results arrived since its text was made
    text: str = ""
    base: SuiteCard | None = field(default=_UNCHECKED)  # the baseline's card, when comparable

    @property
    def name(self) -> str:
        return self.loaded.suite.name


class Progress:
    """Counts what arrives and draws the line; registered on the controller unless
    ``--ambig-progress=off``, it draws from the session's start when ``on``, or ``auto`` on a
    terminal (:func:`shown_by_default`)."""

    def __init__(self, run: Run, scorecard: ScorecardPlugin, forced: bool) -> None:
        self.run = run
        self.scorecard = scorecard
        self.forced = forced
        self.line: StatusLine | None = None
        self._suites = {
            s.suite.name: _Suite(s, run.scorers.selected(run.protocol.metrics(s.suite))) for s in run.loaded
        }
        base = scorecard.baseline
        self._base_cards = {c.name: c for c in base.suites} if base is not None else {}
        self._base_results = {r.key: r for r in base.results} if base is not None else {}
        self._started = time.monotonic()
        self._first: float | None = None  # when the first item started
        self._finished: deque[float] = deque(maxlen=PACE_WINDOW + 1)
        self._running: set[str] = set()  # builtin tests started, not finished
        self._pools: dict[str, int] = {}  # xdist worker -> the calls its pool had in flight, last said
        self._status: dict[str, str] = {}  # item key -> status
        self._errors = 0
        self._spent: dict[str, Spent] = {}  # item key -> what it cost
        self._tokens = [0, 0]
        self._cost = [0.0, 0.0]
        self._drawn = 0.0
        self._stats_due = 0.0
        self._text = ""

    # -- hooks

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        config = session.config
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or runs_no_tests(config):
            return
        if self.forced or shown_by_default(config, reporter):
            self.line = StatusLine(config.get_terminal_writer())
            self.scorecard.listeners.append(self.add)

    @pytest.hookimpl(trylast=True)  # after the terminal reporter wrote
    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        if self.line is None:
            return
        if key_of(nodeid):
            self._running.add(nodeid)
            if self._first is None:
                self._first = time.monotonic()
        self._refresh()

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.line is not None:
            self._refresh()

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        if self.line is not None:
            self._running.discard(nodeid)
            self._refresh()

    @pytest.hookimpl(tryfirst=True)  # before the terminal reporter's summary
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.line is not None:
            self.line.close()
            self.line = None

    # -- what arrives

    def add(self, result: ItemResult, report: pytest.TestReport, payload: dict[str, Any]) -> None:
        """One builtin item's result (a rerun's replaces the first one's)."""
        key = result.key
        suite = self._suites.get(result.suite)
        if suite is not None:
            suite.dirty = True
            if suite.base is _UNCHECKED:
                suite.base = self._comparable(suite, payload)
        before = self._status.get(key)
        self._errors += (result.status == "error") - (before == "error")
        self._status[key] = result.status
        old_tokens, old_cost = self._spent.get(key, ((0, 0), (0.0, 0.0)))
        tokens, cost = self._spent[key] = _spent(result)
        for i in (0, 1):
            self._tokens[i] += tokens[i] - old_tokens[i]
            self._cost[i] += cost[i] - old_cost[i]
        self._finished.append(time.monotonic())
        node = getattr(report, "node", None)  # the xdist worker it came from
        if node is not None and "in_flight" in payload:
            self._pools[str(getattr(node.gateway, "id", node))] = int(payload["in_flight"])

    def _comparable(self, suite: _Suite, payload: dict[str, Any]) -> SuiteCard | None:
        """The baseline's card of the suite, if the two runs put its items to the system
        alike (``compare`` compares no other)."""
        base = self._base_cards.get(suite.name)
        if base is None:
            return None
        inputs = json.loads(payload["system"]).get("inputs") or []
        setup = self.run.setup(suite.loaded, inputs)
        return base if base.protocol.name == setup.name else None

    # -- the line

    def _refresh(self) -> None:
        line = self.line
        assert line is not None
        now = time.monotonic()
        if now - self._drawn >= REDRAW:
            if now >= self._stats_due and any(s.dirty for s in self._suites.values()):
                self._recompute()
                now = time.monotonic()
            self._text = self.text(now)
            self._drawn = now
            line.draw(self._text)
        elif not line.shown:  # pytest went on to a new line: the same text there
            line.draw(self._text)

    def _recompute(self) -> None:
        started = time.monotonic()
        results = self.scorecard.results
        for suite in self._suites.values():
            if suite.dirty:
                suite.dirty = False
                done = [results[i.key] for i in suite.loaded.items if i.key in results]
                suite.text = self._headline(suite, done) if done else ""
        took = time.monotonic() - started
        self._stats_due = started + max(RECOMPUTE, took / STATS_SHARE)

    def _headline(self, suite: _Suite, done: list[ItemResult]) -> str:
        seed = self.run.cfg.seed
        known: dict[str, MetricSummary] = {}
        for metric in suite.metrics:
            summary = known[metric] = summarize(metric, done, seed, suite.name, known=known)
            if summary.mean is not None:
                break
        else:
            return f"{suite.name} {METRICS[suite.metrics[0]].label} n/a" if suite.metrics else ""
        text = f"{suite.name} {METRICS[metric].label} {view.score(summary)}"
        interval = view.interval(summary)
        if interval:
            text += f" {interval}"
        return text + self._change(suite, metric, done)

    def _change(self, suite: _Suite, metric: str, done: list[ItemResult]) -> str:
        base = suite.base
        if base is None or base is _UNCHECKED or metric not in base.metrics:
            return ""
        if base.metrics[metric].mean is None:
            return ""
        pairs = [(self._base_results[r.key], r) for r in done if r.key in self._base_results]
        if not pairs:
            return ""
        strata = [self.run.protocol.slice_of(b) for b, _ in pairs]
        row = running_row(suite.name, metric, pairs, strata, self.run.cfg.seed)
        if row.diff is None:
            return ""
        cells = view.change(row)
        return f" vs base {cells[2]} {cells[3]}"

    def text(self, now: float) -> str:
        """The status line as it reads at ``now``."""
        expected = self.scorecard.expected
        total = len(expected) if expected is not None else len(self.run.items)
        done = len(self._status)
        parts = [f"ambigqa {done}/{total}"]
        if self._errors:
            parts.append(f"{self._errors} error{'' if self._errors == 1 else 's'}")
        parts.append(f"{_clock(now - self._started)} elapsed")
        eta = self._eta(now, total - done)
        parts.append(f"ETA {_clock(eta)}" if eta is not None else "ETA --")
        runner = self.run.config.stash.get(RUNNER_KEY, None)
        pools = sum(self._pools.values()) + (runner.in_flight() if runner is not None else 0)
        in_flight = min(max(len(self._running), pools), total - done)  # a worker's count may be old
        parts.append(f"{max(in_flight, 0)} in flight")
        spent = self._money()
        if spent:
            parts.append(spent)
        parts += [s.text for s in self._suites.values() if s.text]
        return " | ".join(parts)

    def _eta(self, now: float, remaining: int) -> float | None:
        """The time the remaining items take at the pace of the last ones (``PACE_WINDOW``,
        so a resumed run's stored answers do not make it look fast for long)."""
        if remaining <= 0:
            return 0.0
        done = len(self._status)
        if not done or self._first is None:
            return None
        if len(self._finished) <= PACE_WINDOW:  # every item so far
            span, count = now - self._first, done
        else:
            span, count = now - self._finished[0], len(self._finished) - 1
        return remaining * span / count

    def _money(self) -> str:
        """Tokens so far, and dollars for the models given a price; which model has none."""
        tokens = sum(self._tokens)
        if not tokens:
            return ""
        models = self.run.cfg.models
        unpriced = [
            flag
            for flag, used, price in (
                ("--ambig-judge-price", self._tokens[0], models.judge_price),
                ("--ambig-llm-price", self._tokens[1], models.llm_price),
            )
            if used and price is None
        ]
        text = f"{_count(tokens)} tokens"
        if len(unpriced) < sum(1 for t in self._tokens if t):
            text += f", {_dollars(sum(self._cost))}"
        if unpriced:
            text += f", no price ({', '.join(unpriced)})"
        return text


def _spent(result: ItemResult) -> Spent:
    """The judge's and the system's tokens, then their dollars, on one item (``Usage`` and
    the ``llm:`` systems' calls, as the scorecard's cost lines count them)."""
    judge = Usage.from_dict(result.usage) if result.usage else None
    calls = model_calls([result])
    return (
        (
            judge.prompt_tokens + judge.completion_tokens if judge else 0,
            int(calls["prompt_tokens_per_item"] + calls["completion_tokens_per_item"]) if calls else 0,
        ),
        (judge.cost if judge else 0.0, float(calls["cost"]) if calls else 0.0),
    )


def _clock(seconds: float) -> str:
    whole = int(seconds + 0.5)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _count(tokens: int) -> str:
    if tokens < 1000:
        return str(tokens)
    return f"{tokens / 1000:.1f}k" if tokens < 1_000_000 else f"{tokens / 1_000_000:.1f}M"


def _dollars(cost: float) -> str:
    return f"${cost:.4f}" if cost < 1 else f"${cost:,.2f}"
