"""``--ambig-otel``'s hooks, on every process: an xdist worker is handed the W3C
``traceparent`` of each suite's span (its items' spans are their children, in the
controller's trace); at the session's end the scorecard's numbers go on the suite and session
spans, and every span is exported before pytest exits (``telemetry/otel.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..telemetry import CARRIER_INPUT

if TYPE_CHECKING:
    from ..card.scorecard import Scorecard
    from .run import Run


class Tracing:
    def __init__(self, run: Run) -> None:
        self.run = run

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[CARRIER_INPUT] = self.run.tracer.carrier()

    @pytest.hookimpl(trylast=True)  # after the scorecard's, which may change the exit status
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        tracer = self.run.tracer
        scorecard = getattr(session.config.pluginmanager.get_plugin("ambigqa-scorecard"), "scorecard", None)
        if scorecard is not None:
            tracer.summarise(numbers(scorecard), {"ambigqa.exit_status": int(session.exitstatus)})
        tracer.close()


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
