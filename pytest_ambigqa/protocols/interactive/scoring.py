"""An episode's result: scored, unscored (the user spoiled it) or failed."""

from __future__ import annotations

import dataclasses

from ...metrics.interactive import METRIC_NAMES
from ...schema import AmbigItem, Answer, ItemResult, Status
from .episodes import from_key


def failed_result(item: AmbigItem, status: Status, error: str, duration: float = 0.0) -> ItemResult:
    """An episode without a finished answer: reward and F1 count 0 (it stays in the
    denominator), the rates and words are unscored."""
    reason = "system error" if status == "error" else error
    episode = from_key(item.key, item.question)
    return ItemResult(
        suite=item.suite,
        item_id=item.id,
        status=status,
        ambiguity_type=item.ambiguity_type,
        scores={"reward": 0.0, "episode_f1": 0.0},
        unscored={m: reason for m in METRIC_NAMES if m not in ("reward", "episode_f1")},
        error=error,
        duration=duration,
        details={"episode": episode.describe()} if episode else {},
        index=item.index,
    )


def scored_result(
    item: AmbigItem, scores: dict[str, float], answer: Answer | None, duration: float
) -> ItemResult:
    """A finished episode: its scores, and the assistant's final answer."""
    return ItemResult(
        suite=item.suite,
        item_id=item.id,
        status="ok",
        ambiguity_type=item.ambiguity_type,
        scores=scores,
        answer=answer,
        duration=duration,
        index=item.index,
    )


def unscored_result(item: AmbigItem, why: str, duration: float = 0.0) -> ItemResult:
    """An episode the user spoiled: every metric unscored with the reason, never 0."""
    return dataclasses.replace(
        scored_result(item, {}, None, duration), unscored=dict.fromkeys(METRIC_NAMES, why)
    )


def split_of(result: ItemResult) -> str | None:
    episode = result.details.get("episode")
    return None if not episode else ("ambiguous" if episode["ambiguous"] else "unambiguous")
