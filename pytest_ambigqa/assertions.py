"""``assert_ambig``: metric assertions that say which metric, what was expected and what is missing."""

from __future__ import annotations

from typing import Any

import pytest

from .errors import SystemFailure
from .metrics import METRICS
from .metrics.coverage import exact_presence
from .output import excerpt, for_terminal
from .schema import AmbigItem, Answer
from .suites import SUITES, Scorers
from .systems import to_answer

_SHOW = 200


def missing_answers(item: AmbigItem, text: str) -> list[str]:
    """The gold interpretations whose short answers do not appear in ``text``."""
    return [
        f"{i.short_answers[0]!r} ({i.question or i.condition})"
        for i in item.interpretations
        if not exact_presence(i.short_answers, text)
    ]


def explain(item: AmbigItem, answer: Answer, failures: list[str]) -> str:
    lines = [f"ambigqa {item.key}: {len(failures)} metric(s) below threshold"]
    lines += [f"  {f}" for f in failures]
    missing = missing_answers(item, answer.text)
    if missing:
        lines.append(f"  missing gold answers: {', '.join(missing)}")
    shown = answer.text if len(answer.text) <= _SHOW else excerpt(answer.text, _SHOW) + "..."
    lines.append(f"  answer: {shown!r}")
    return "\n".join(lines)


def assert_ambig(answer: Any, item: AmbigItem, **thresholds: float) -> dict[str, float]:
    """Fail the test unless each named metric of ``answer`` on ``item`` reaches its threshold.

    Thresholds are on the item scale (fractions for percentage metrics:
    ``str_em=0.5`` asks for half of the interpretations). A metric that some suite has but
    not this item's is skipped, so one test can cover several suites; a name no suite has is
    a mistake. Returns the item's scores.
    """
    suite = SUITES[item.suite]
    unknown = [m for m in thresholds if m not in METRICS]
    if unknown:
        raise ValueError(f"assert_ambig: {', '.join(unknown)} is no metric (valid: {', '.join(METRICS)})")
    thresholds = {m: v for m, v in thresholds.items() if m in suite.reported()}
    try:
        normalised = to_answer(answer)
    except SystemFailure as exc:
        pytest.fail(for_terminal(f"ambigqa {item.key}: {exc}"), pytrace=False)
    scored = suite.score(item, normalised, Scorers())
    scores, unscored = scored.scores, scored.unscored
    failures = []
    for metric, expected in thresholds.items():
        if metric in unscored:
            failures.append(f"{metric}: expected >= {expected:g}, but it is n/a ({unscored[metric]})")
        elif metric not in scores:
            failures.append(f"{metric}: expected >= {expected:g}, but it is only a suite score")
        elif scores[metric] < expected:
            failures.append(
                f"{metric} ({METRICS[metric].label}): expected >= {expected:g}, got {scores[metric]:.3g}"
            )
    if failures:
        pytest.fail(for_terminal(explain(item, normalised, failures)), pytrace=False)
    return scores
