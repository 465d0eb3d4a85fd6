"""An episode's result: scored, unscored (the user spoiled it) or failed, and what a failed
one counts."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence

from ...metrics.interactive import METRIC_NAMES
from ...schema import AmbigItem, Answer, ItemResult, Status
from .episodes import Episode, cost_text, from_key

PRICED = "counted at the worst reward its row scored at its cost pair when the suite is scored"


def failed_result(
    item: AmbigItem, status: Status, error: str, duration: float = 0.0, episode: Episode | None = None
) -> ItemResult:
    """An episode without a finished answer: F1 counts 0 and its reward is set with the
    suite's (:func:`settled`), so it stays in the denominator; the rates and words are
    unscored. ``episode``: the one the run expanded; a scorecard built or merged from saved
    results, where an episode never reported, reads it from the key the run gave its test."""
    reason = "system error" if status == "error" else error
    episode = episode or from_key(item.key, item.question)
    return ItemResult(
        suite=item.suite,
        item_id=item.id,
        status=status,
        ambiguity_type=item.ambiguity_type,
        scores={"episode_f1": 0.0},
        unscored={"reward": f"{reason}: {PRICED}"}
        | {m: reason for m in METRIC_NAMES if m not in ("reward", "episode_f1")},
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


def _pair(episode: dict) -> tuple[float, float]:
    return (float(episode["alpha"]), float(episode["beta"]))


def error_rewards(results: Iterable[ItemResult], plan: str | None = None) -> dict[tuple[float, float], float]:
    """The reward of a failed play at each cost pair (alpha, beta) in one row: the system's
    own plays (``plan`` None) or a forced policy's: a crash never beats an answer.

    The reward is R = 100 x F1 - alpha x clarifications - beta x words (section 3.1), and a
    failed play has F1 0. Words have no upper bound, so no fixed value lies below every
    answer; this one is the lowest of (a) every reward the row scored at the pair and (b) what
    a wrong one-word answer after every clarification the episode allows earns,
    -alpha x budget - beta. By (a) no scored play of the row is below it; by (b) a crash earns
    no more than a wrong answer even where the row scored little. Each row reads only its
    own plays, so the system's errors count the same with ``--ambig-steerability`` as
    without. ``results``: the episodes in the row (none :func:`spoiled`; for the reference
    table, none :func:`left_out`).
    """
    worst: dict[tuple[float, float], float] = {}
    for r in results:
        episode = r.details.get("episode")
        if not episode:
            continue
        pair = _pair(episode)
        alpha, beta = pair
        seen = [-alpha * int(episode.get("max_clarifications", 1)) - beta]
        if plan is None and r.status == "ok" and "reward" in r.scores:
            seen.append(r.scores["reward"])
        played = (r.details.get("forced") or {}).get(plan or "", {})
        if "reward" in played:
            seen.append(played["reward"])
        worst[pair] = min(worst.get(pair, math.inf), *seen)
    return worst


def spoiled(result: ItemResult) -> str | None:
    """Why the system's own play of an episode is unscored (the user's reply gave the answer
    away), or None. Only the system's own play decides its headline, so the headline is the
    same with ``--ambig-steerability`` as without."""
    if result.status == "ok" and "reward" in result.unscored:
        return result.unscored["reward"]
    return None


def left_out(result: ItemResult) -> str | None:
    """Why an episode is left out of the reference table (the system's row there, the forced
    policies' and the ORACLE's), or None: the user spoiled a play of it, the system's own or
    a forced one (``--ambig-steerability``). Whether the user spoils a play depends on the
    play's actions, so an episode kept in one row and dropped from another would compare the
    rows over episodes each selected by its own actions (Tables 2-3 compare rows over one set)."""
    own = spoiled(result)
    if own is not None:
        return own
    for plan, played in (result.details.get("forced") or {}).items():
        if "unscored" in played:
            return f"the user spoiled the forced {plan} play: {played['unscored']}"
    return None


def settled(results: Sequence[ItemResult]) -> list[ItemResult]:
    """The suite's results as the headline counts them: an episode the user :func:`spoiled`
    unscored with the reason, and each failed episode's reward set (:func:`error_rewards`)."""
    why = [spoiled(r) for r in results]
    floors = error_rewards(r for r, w in zip(results, why, strict=True) if w is None)
    out = []
    for r, w in zip(results, why, strict=True):
        episode = r.details.get("episode")
        if w is not None:
            r = dataclasses.replace(r, scores={}, unscored=dict.fromkeys(METRIC_NAMES, w))
        elif r.status != "ok" and episode:
            scores = {**r.scores, "reward": floors[_pair(episode)], "episode_f1": 0.0}
            unscored = {k: v for k, v in r.unscored.items() if k != "reward"}
            r = dataclasses.replace(r, scores=scores, unscored=unscored)
        out.append(r)
    return out


def group_of(result: ItemResult) -> str:
    """The query and cost pair an episode belongs to: its readings together weigh as one
    query (the paper samples one reading per query, section 3.1), so a query with four
    readings weighs no more than one with two."""
    episode = result.details.get("episode")
    if not episode:
        return result.key
    return f"{episode['query']}-a{cost_text(episode['alpha'])}-b{cost_text(episode['beta'])}"


def query_of(result: ItemResult) -> str:
    """The query an episode belongs to, at every cost pair: its readings and cost pairs are
    one draw of the data (the same question, the same system), so an interval resamples
    queries whole (``stats.bootstrap.cluster_interval``)."""
    episode = result.details.get("episode")
    return episode["query"] if episode else result.key
