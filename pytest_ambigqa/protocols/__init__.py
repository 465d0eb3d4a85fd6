"""How an item is put to a system: single-shot (one call, one answer: the published
protocols, wired in ``session/`` and ``evaluate.py``) and interactive clarification
(``interactive.py``, its episodes played by ``evaluate.Evaluator``; ``users.py``, the LLM user)."""

from __future__ import annotations

from ..metrics.interactive import METRIC_NAMES
from ..suites import SUITES


def suite_metrics(suite: str, protocol: str) -> tuple[str, ...]:
    """The metrics a suite reports under a protocol: its own, or the interactive episode's."""
    if protocol == "interactive":
        return METRIC_NAMES
    return SUITES[suite].reported()
