"""The interactive section of a suite's scorecard: action sequences, costs, the forced-action
policies and the hindsight-best oracle, and Appendix D's steerability."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...metrics.interactive import METRIC_NAMES
from ...schema import ItemResult
from .episodes import SEQUENCES, SPLITS, sequence
from .play import PLANS
from .scoring import error_rewards, group_of, left_out, split_of, spoiled


def _query_mean(values: Iterable[tuple[str, float]]) -> float | None:
    """The mean over queries of each query's mean (``scoring.group_of``: a query at one cost
    pair): every query weighs the same, however many readings it has (section 3.1)."""
    by: dict[str, list[float]] = {}
    for group, value in values:
        by.setdefault(group, []).append(value)
    return statistics.fmean(statistics.fmean(v) for v in by.values()) if by else None


def _by_cost(results: Sequence[ItemResult]) -> list[dict[str, Any]]:
    """Corpus-level steerability (Figure 6): the rates, words and reward at each cost pair,
    over the episodes that have each (a failed one: reward and F1, as in the headline)."""
    groups: dict[tuple[float, float], list[ItemResult]] = {}
    for r in results:
        episode = r.details.get("episode")
        if episode:
            groups.setdefault((episode["alpha"], episode["beta"]), []).append(r)
    rows = []
    for (alpha, beta), group in sorted(groups.items()):
        scored = [r for r in group if r.status == "ok" and spoiled(r) is None]
        rows.append(
            {
                "alpha": alpha,
                "beta": beta,
                "episodes": len(group),
                "scored": len(scored),
                **{
                    m: _query_mean((group_of(r), r.scores[m]) for r in group if m in r.scores)
                    for m in METRIC_NAMES
                },
            }
        )
    return rows


def _sequences(results: Sequence[ItemResult]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for name in ("all", *SPLITS):
        chosen = [r for r in results if name == "all" or split_of(r) == name]
        found = Counter(
            r.details["sequence"] for r in chosen if "sequence" in r.details and spoiled(r) is None
        )
        if found:
            out[name] = {s: found[s] for s in SEQUENCES if s in found} | {
                s: n for s, n in sorted(found.items()) if s not in SEQUENCES
            }
    return out


def _first(candidates: Iterable[str]) -> str:
    ranked = sorted(candidates, key=lambda s: (SEQUENCES.index(s) if s in SEQUENCES else len(SEQUENCES), s))
    return ranked[0]


def optimal_sequences(rewards: Mapping[str, Sequence[float]]) -> set[str]:
    """The approximately optimal action sequences: the highest mean reward (Appendix D step 2)."""
    means = {s: statistics.fmean(r) for s, r in rewards.items() if r}
    best = max(means.values())
    return {s for s, m in means.items() if math.isclose(m, best, abs_tol=1e-9)}


def _change(first: str, second: str, letter: str) -> str:
    """'+C' / '-C' (or '+M' / '-M'): the action appears / disappears; 'N': no change."""
    before, after = letter in first, letter in second
    return f"+{letter}" if after and not before else f"-{letter}" if before and not after else "N"


Key = tuple[str, float, float]  # (query, alpha, beta)


def _ends(query: str, change: str, fixed: float, low: float, high: float) -> tuple[Key, Key]:
    """The (query, alpha, beta) keys of a query before and after one cost moves."""
    if change == "alpha":
        return (query, low, fixed), (query, high, fixed)
    return (query, fixed, low), (query, fixed, high)


def fixed_costs(
    optimal: Mapping[tuple[str, float, float], str],
    predicted: Mapping[tuple[str, float, float], str],
    change: str,
    low: float,
    high: float,
) -> list[float]:
    """The values of the other cost at which some query was played at both ``low`` and
    ``high`` of ``change``, by the forced policies (``optimal``) and the system (``predicted``)."""
    position = 2 if change == "alpha" else 1
    values = {float(key[position]) for key in optimal}
    return sorted(
        v
        for v in values
        if any(
            all(k in optimal and k in predicted for k in _ends(q, change, v, low, high)) for q, *_ in optimal
        )
    )


def steerability(
    optimal: Mapping[tuple[str, float, float], str],
    predicted: Mapping[tuple[str, float, float], str],
    change: str,
    low: float,
    high: float,
) -> dict[str, float]:
    """Appendix D's prompt-level steerability when one cost moves ``low -> high`` with the
    other fixed: per query, the change in the optimal sequence (gold) and in the policy's
    (predicted) are labelled +X / -X / N, X being C for alpha (clarifications) and M for
    beta (multi-answers); precision and recall treat +X and -X as the positive classes, a
    prediction counting only when it equals the gold change (step 3); averaged over every
    value of the fixed cost (step 4, and Table 4's caption: "averages across the three
    possible values"). Fractions (0-1), as Table 4 prints them; a ratio with nothing to
    divide by (no change predicted, or none optimal) is 0, as scikit-learn's
    ``zero_division=0``. Empty when no query has both costs at any value (:func:`fixed_costs`).

    ``optimal`` and ``predicted`` map (query, alpha, beta) to an action sequence.
    """
    letter = "C" if change == "alpha" else "M"
    scores = []
    for fixed in fixed_costs(optimal, predicted, change, low, high):
        gold, guess = [], []
        for query in sorted({key[0] for key in optimal}):
            first, second = _ends(query, change, fixed, low, high)
            if all(k in optimal and k in predicted for k in (first, second)):
                gold.append(_change(optimal[first], optimal[second], letter))
                guess.append(_change(predicted[first], predicted[second], letter))
        hits = sum(g == p != "N" for g, p in zip(gold, guess, strict=True))
        predicted_changes, gold_changes = sum(p != "N" for p in guess), sum(g != "N" for g in gold)
        precision = hits / predicted_changes if predicted_changes else 0.0
        recall = hits / gold_changes if gold_changes else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        scores.append((precision, recall, f1))
    if not scores:
        return {}
    return {
        "precision": statistics.fmean(s[0] for s in scores),
        "recall": statistics.fmean(s[1] for s in scores),
        "f1": statistics.fmean(s[2] for s in scores),
    }


Play = tuple[float, float, bool]  # a forced play's reward, F1 (0-100) and whether it failed


def _forced_plays(kept: Sequence[ItemResult]) -> list[tuple[ItemResult, dict[str, Play]]]:
    """Each episode's four forced plays. ``kept``: the episodes in the reference table
    (``scoring.left_out`` none: the user spoiled no play of them).

    A play the system refused (an action its turn does not allow), crashed, or never made
    (the episode failed before it) is that policy's error: F1 0 and the worst reward its row
    scored at the cost pair (``scoring.error_rewards``)."""
    floors = {plan: error_rewards(kept, plan) for plan in PLANS}
    out = []
    for r in kept:
        forced = r.details.get("forced") or {}
        pair = (float(r.details["episode"]["alpha"]), float(r.details["episode"]["beta"]))
        plays: dict[str, Play] = {}
        for plan in PLANS:
            played = forced.get(plan, {})
            if "reward" in played:
                plays[plan] = (played["reward"], played["f1"], False)
            else:
                plays[plan] = (floors[plan][pair], 0.0, True)
        out.append((r, plays))
    return out


def _reference(results: Sequence[ItemResult]) -> dict[str, Any]:
    """The forced-action policies (run with ``--ambig-steerability``) by split, the
    hindsight-best policy per query and cost pair (the oracle), and Appendix D's
    prompt-level steerability of the system against that optimum.

    Every row, the system's (``SYSTEM``: its own plays) and the oracle's too, is over one set
    of episodes, those ``scoring.left_out`` keeps (the user spoiled no play of them), each
    query weighing the same. ``SYSTEM`` equals the headline when no forced play was spoiled;
    the headline itself reads the system's plays only, so it does not move with this table.
    The oracle takes, per query and cost pair, the policy of highest mean reward (Tables 2-3's
    SGP-ORACLE, section 4.2), so it is never below a policy it chooses among."""
    in_rows = [r for r in results if r.details.get("episode") and left_out(r) is None]
    kept = _forced_plays(in_rows)
    by_group: dict[str, list[tuple[ItemResult, dict[str, Play]]]] = {}
    for r, plays in kept:
        by_group.setdefault(group_of(r), []).append((r, plays))
    optimal: dict[tuple[str, float, float], str] = {}
    best: dict[str, str] = {}  # group: the oracle's policy
    sequences = {plan: sequence(actions) for plan, actions in PLANS.items()}
    for group, members in by_group.items():
        rewards = {sequences[plan]: [plays[plan][0] for _, plays in members] for plan in PLANS}
        chosen = _first(optimal_sequences(rewards))
        best[group] = next(plan for plan, s in sequences.items() if s == chosen)
        e = members[0][0].details["episode"]
        optimal[(e["query"], e["alpha"], e["beta"])] = chosen
    policies: dict[str, dict[str, Any]] = {plan: {} for plan in ("SYSTEM", *PLANS, "ORACLE")}
    for split in SPLITS:
        rows = [(r, plays) for r, plays in kept if split_of(r) == split]
        if not rows:
            continue
        policies["SYSTEM"][split] = {  # settled: a failed episode is at its headline's reward
            "episodes": len(rows),
            "errors": sum(r.status != "ok" for r, _ in rows),
            "reward": _query_mean((group_of(r), r.scores["reward"]) for r, _ in rows),
            "f1": _query_mean((group_of(r), 100 * r.scores["episode_f1"]) for r, _ in rows),
        }
        for plan in (*PLANS, "ORACLE"):

            def play(r: ItemResult, plays: dict[str, Play], plan: str = plan) -> Play:
                return plays[best[group_of(r)] if plan == "ORACLE" else plan]

            policies[plan][split] = {
                "episodes": len(rows),
                "errors": sum(play(r, plays)[2] for r, plays in rows),
                "reward": _query_mean((group_of(r), play(r, plays)[0]) for r, plays in rows),
                "f1": _query_mean((group_of(r), play(r, plays)[1]) for r, plays in rows),
            }
        oracle = policies["ORACLE"][split]["reward"]
        assert all(oracle >= policies[plan][split]["reward"] - 1e-9 for plan in PLANS), (split, policies)
    predicted: dict[tuple[str, float, float], str] = {}
    for key, episodes in _by_query(in_rows).items():
        found = Counter(r.details["sequence"] for r in episodes if "sequence" in r.details)
        if found:
            most = max(found.values())
            predicted[key] = _first(s for s, n in found.items() if n == most)
    steer: dict[str, Any] = {}
    for change, position in (("alpha", 1), ("beta", 2)):
        values: list[float] = sorted({float(key[position]) for key in optimal})
        if len(values) < 2:
            steer[change] = {"reason": f"the cost grid has one {change}: nothing to move"}
            continue
        low, high = values[0], values[-1]
        other = "beta" if change == "alpha" else "alpha"
        measured: dict[str, Any] = dict(steerability(optimal, predicted, change, low, high))
        if measured:
            measured["over"] = fixed_costs(optimal, predicted, change, low, high)
        else:
            measured = {"reason": _no_pair(optimal, predicted, change, low, high, other)}
        steer[change] = {"from": low, "to": high, **measured}
    forced_only = Counter(left_out(r) for r in results if spoiled(r) is None and left_out(r) is not None)
    return {
        "policies": {plan: splits for plan, splits in policies.items() if splits},
        "left_out": dict(forced_only.most_common()),  # beyond the headline's unscored ones
        "error_rewards": {
            plan: [
                {"alpha": alpha, "beta": beta, "reward": reward}
                for (alpha, beta), reward in sorted(error_rewards(in_rows, plan).items())
            ]
            for plan in PLANS
        },
        "steerability": steer,
        "queries": len(optimal),
    }


def _no_pair(
    optimal: Mapping[tuple[str, float, float], str],
    predicted: Mapping[tuple[str, float, float], str],
    change: str,
    low: float,
    high: float,
    other: str,
) -> str:
    """Why no query gives a change of ``change``: the values of the other cost each end was
    played at (by the forced policies and the system's scored plays both)."""
    position, moving = (2, 1) if change == "alpha" else (1, 2)

    def at(end: float) -> str:
        found = sorted({float(k[position]) for k in optimal if k in predicted and float(k[moving]) == end})
        return f"{change} {end:g} with {other} {', '.join(f'{v:g}' for v in found) or 'none'}"

    both = f"{change} {low:g} and {high:g}"
    return f"no query was played at both {both} with one {other}: at {at(low)}, at {at(high)}"


def _by_query(results: Sequence[ItemResult]) -> dict[tuple[str, float, float], list[ItemResult]]:
    out: dict[tuple[str, float, float], list[ItemResult]] = {}
    for r in results:
        e = r.details.get("episode")
        if e:
            out.setdefault((e["query"], e["alpha"], e["beta"]), []).append(r)
    return out


def section(results: Sequence[ItemResult]) -> dict[str, Any]:
    """The suite's interactive section: sequences, costs, why episodes are unscored (the
    user spoiled the system's play: ``scoring.spoiled``), the
    episodes whose final answer ignores the assistant's (the paper's training filter,
    counted, not applied: ``users.ignores``), the reward a failed play counts at each cost
    pair, and (with the forced-action runs) the reference policies, oracle and steerability.
    ``results`` are settled (``scoring.settled``)."""
    unscored = Counter(why for why in map(spoiled, results) if why is not None)
    forced = [p for r in results for p in (r.details.get("forced") or {}).values()]
    out: dict[str, Any] = {
        "episodes": len(results),
        "failed": sum(r.status != "ok" for r in results),
        "sequences": _sequences(results),
        "costs": _by_cost(results),
        "unscored": dict(unscored.most_common()),
        "ignores": {
            "episodes": sum(bool(r.details.get("ignores")) for r in results),
            "forced": sum(bool(p.get("ignores")) for p in forced),
        },
        "error_rewards": [
            {"alpha": alpha, "beta": beta, "reward": reward}
            for (alpha, beta), reward in sorted(
                error_rewards(r for r in results if spoiled(r) is None).items()
            )
        ],
    }
    if any("forced" in r.details for r in results):  # --ambig-steerability played them
        out["reference"] = _reference(results)
    else:
        out["reference"] = {"reason": "the forced-action policies were not run (--ambig-steerability)"}
    return out
