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
from .episodes import SEQUENCES, SPLITS
from .play import PLANS
from .scoring import split_of


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _by_cost(results: Sequence[ItemResult]) -> list[dict[str, Any]]:
    """Corpus-level steerability (Figure 6): the rates, words and reward at each cost pair."""
    groups: dict[tuple[float, float], list[ItemResult]] = {}
    for r in results:
        episode = r.details.get("episode")
        if episode:
            groups.setdefault((episode["alpha"], episode["beta"]), []).append(r)
    rows = []
    for (alpha, beta), group in sorted(groups.items()):
        scored = [r for r in group if r.status == "ok" and "sequence" in r.details]
        rows.append(
            {
                "alpha": alpha,
                "beta": beta,
                "episodes": len(group),
                "scored": len(scored),
                **{m: _mean([r.scores[m] for r in scored if m in r.scores]) for m in METRIC_NAMES},
            }
        )
    return rows


def _sequences(results: Sequence[ItemResult]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for name in ("all", *SPLITS):
        chosen = [r for r in results if name == "all" or split_of(r) == name]
        found = Counter(r.details["sequence"] for r in chosen if "sequence" in r.details)
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
    prediction counting only when it equals the gold change; averaged over the fixed
    costs. Fractions (0-1), as Table 4 prints them; a ratio with nothing to divide by
    (no change predicted, or none optimal) is 0, as scikit-learn's ``zero_division=0``, and
    a fixed cost where neither the optimum nor the policy changes is left out of the mean.
    Empty when no query has both costs at any fixed value.

    ``optimal`` and ``predicted`` map (query, alpha, beta) to an action sequence.
    """
    letter, moving = ("C", 1) if change == "alpha" else ("M", 2)
    fixed_values: list[float] = sorted({float(key[3 - moving]) for key in optimal})
    scores = []
    for fixed in fixed_values:
        gold, guess = [], []
        for query in sorted({key[0] for key in optimal}):
            first: tuple[str, float, float]
            second: tuple[str, float, float]
            first, second = (
                ((query, low, fixed), (query, high, fixed))
                if moving == 1
                else ((query, fixed, low), (query, fixed, high))
            )
            if not all(k in optimal and k in predicted for k in (first, second)):
                continue
            gold.append(_change(optimal[first], optimal[second], letter))
            guess.append(_change(predicted[first], predicted[second], letter))
        if not gold or all(g == p == "N" for g, p in zip(gold, guess, strict=True)):
            continue  # nothing to steer at this cost, and nothing steered: no evidence either way
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


def _reference(results: Sequence[ItemResult]) -> dict[str, Any]:
    """The forced-action policies (run with ``--ambig-steerability``) by split, the
    hindsight-best sequence per query and cost pair (the oracle), and Appendix D's
    prompt-level steerability of the system against that optimum."""
    forced = [r for r in results if r.details.get("forced")]
    by_key: dict[tuple[str, float, float], list[ItemResult]] = {}
    for r in forced:
        e = r.details["episode"]
        by_key.setdefault((e["query"], e["alpha"], e["beta"]), []).append(r)
    optimal: dict[tuple[str, float, float], str] = {}
    oracle: dict[str, list[float]] = {s: [] for s in SPLITS}
    for key, group in by_key.items():
        rewards: dict[str, list[float]] = {}
        for r in group:
            for played in r.details["forced"].values():
                if "reward" in played:
                    rewards.setdefault(played["sequence"], []).append(played["reward"])
        if not rewards:
            continue
        best = _first(optimal_sequences(rewards))
        optimal[key] = best
        for r in group:
            played = next((p for p in r.details["forced"].values() if p.get("sequence") == best), None)
            if played is not None and "reward" in played:
                oracle[split_of(r) or "ambiguous"].append(played["reward"])
    policies: dict[str, dict[str, Any]] = {}
    for plan in PLANS:
        policies[plan] = {}
        for split in SPLITS:
            played = [r.details["forced"].get(plan, {}) for r in forced if split_of(r) == split]
            scored = [p for p in played if "reward" in p]
            if played:
                policies[plan][split] = {
                    "episodes": len(played),
                    "scored": len(scored),
                    "reward": _mean([p["reward"] for p in scored]),
                    "f1": _mean([p["f1"] for p in scored]),
                }
    policies["ORACLE"] = {
        split: {"episodes": len(v), "scored": len(v), "reward": _mean(v), "f1": None}
        for split, v in oracle.items()
        if v
    }
    predicted: dict[tuple[str, float, float], str] = {}
    for key, group in by_key.items():
        found = Counter(r.details["sequence"] for r in group if "sequence" in r.details)
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
        measured: dict[str, Any] = dict(steerability(optimal, predicted, change, low, high))
        if not measured:
            other = "beta" if change == "alpha" else "alpha"
            measured = {"reason": f"no query was played at {change} {low:g} and {high:g} with one {other}"}
        steer[change] = {"from": low, "to": high, **measured}
    return {"policies": policies, "steerability": steer, "queries": len(optimal)}


def section(results: Sequence[ItemResult], steered: bool) -> dict[str, Any]:
    """The suite's interactive section: sequences, costs, why episodes are unscored, and
    (with the forced-action runs) the reference policies, oracle and steerability."""
    unscored = Counter(r.unscored["reward"] for r in results if r.status == "ok" and "reward" in r.unscored)
    out: dict[str, Any] = {
        "episodes": len(results),
        "sequences": _sequences(results),
        "costs": _by_cost(results),
        "unscored": dict(unscored.most_common()),
    }
    if steered:
        out["reference"] = _reference(results)
    else:
        out["reference"] = {"reason": "the forced-action policies were not run (--ambig-steerability)"}
    return out
