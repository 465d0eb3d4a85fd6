"""``--ambig-otel``'s hooks, on every process: an xdist worker is handed the W3C
``traceparent`` of each suite's span (its items' spans are their children, in the
controller's trace); at the session's end the scorecard's numbers go on the suite and session
spans, and every span is exported before pytest exits (``telemetry/otel.py``)."""

from __future__ import annotations

import contextlib
import warnings
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import AmbigQAWarning
from ..telemetry import CARRIER_INPUT

if TYPE_CHECKING:
    from ..card.scorecard import Scorecard
    from .run import Run


FAILED_OUTPUT = "ambigqa_otel_failed"  # workeroutput: why a worker's receiver failed


class Tracing:
    def __init__(self, run: Run) -> None:
        self.run = run
        self._failures: list[str] = []  # the workers' (a dead receiver is said once for the run)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[CARRIER_INPUT] = self.run.tracer.carrier()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        failed = getattr(node, "workeroutput", {}).get(FAILED_OUTPUT)
        if failed:
            self._failures.append(failed)

    @pytest.hookimpl(trylast=True)  # after the scorecard's, which may change the exit status
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        tracer = self.run.tracer
        scorecard = getattr(session.config.pluginmanager.get_plugin("ambigqa-scorecard"), "scorecard", None)
        if scorecard is not None:
            tracer.summarise(numbers(scorecard), {"ambigqa.exit_status": int(session.exitstatus)})
        failed = tracer.close()
        if self.run.in_worker:
            if failed:  # workeroutput: set by xdist on its workers only
                session.config.workeroutput[FAILED_OUTPUT] = failed  # type: ignore[attr-defined]
            return
        failures = [*self._failures, *([failed] if failed else [])]
        if failures:  # a warning, which never becomes the run's error (not even under -W error)
            more = f" (and in {len(failures) - 1} more process(es))" if len(failures) > 1 else ""
            with contextlib.suppress(Warning):
                warnings.warn(AmbigQAWarning(failures[0] + more), stacklevel=1)


def numbers(card: Scorecard) -> dict[str, dict[str, Any]]:
    """Each suite's numbers as its span's attributes: the items, errors, and each metric's
    mean, interval and count as scorecard.json has them."""
    found: dict[str, dict[str, Any]] = {}
    for suite in card.suites:
        values: dict[str, Any] = {"ambigqa.items": suite.items, "ambigqa.errors": suite.errors}
        for name, summary in suite.metrics.items():
            values |= {
                f"ambigqa.metric.{name}.mean": summary.mean,
                f"ambigqa.metric.{name}.low": summary.low,
                f"ambigqa.metric.{name}.high": summary.high,
                f"ambigqa.metric.{name}.n": summary.n,
                f"ambigqa.metric.{name}.unscored": summary.unscored,
            }
        found[suite.name] = values
    return found
