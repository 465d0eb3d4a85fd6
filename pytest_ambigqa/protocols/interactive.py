"""The interactive clarification protocol: episodes, simulated users, one episode played,
and the scorecard section (action sequences, costs, reference policies, steerability).

Berant, Chen, Fisch et al. 2025, "Learning Steerable Clarification Policies with
Collaborative Self-play": an episode puts one gold interpretation i of a query q to a
simulated user, who sends q; the assistant answers, answers every interpretation at once
(multi-answer), or asks a clarifying question the user answers (section 3.1, Table 1);
after an answer the user writes the final answer a from the assistant's text and i alone.
The paper's cost grid is alpha in {0, 2, 20}, beta in {0.1, 0.7, 5.0} (section 4.2); the
metrics are in ``metrics/interactive.py``; steerability follows Appendix D.
"""

from __future__ import annotations

import dataclasses
import math
import re
import statistics
import time
import typing
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import options
from ..errors import PolicyError, SystemFailure, UserFailure
from ..metrics.interactive import METRIC_NAMES, accuracy, reward, words
from ..metrics.qa import token_f1
from ..metrics.text import normalize_answer
from ..models.usage import Usage
from ..options import number, refuse
from ..schema import AmbigItem, Answer, ItemResult, Status
from .base import Protocol

if TYPE_CHECKING:
    import pytest

    from ..evaluate import Evaluator
    from ..store.pool import Scoring
    from ..systems import System

ACTION_KEY = "ambigqa.action"  # a turn's action, stored in its answer's metadata

COST_GRID: tuple[tuple[float, float], ...] = tuple((a, b) for a in (0.0, 2.0, 20.0) for b in (0.1, 0.7, 5.0))
ACTIONS = ("clarify", "answer", "multi-answer")
AMBIGUOUS_TO_ONE = 2  # the paper keeps ambiguous : unambiguous queries at 2 : 1 (section 4.1)
SPLITS = ("ambiguous", "unambiguous")
# The forced-action reference policies (Tables 2 and 3): the action allowed at each turn.
PLANS: dict[str, tuple[str, ...]] = {
    "ANSWER": ("answer",),
    "CLARIFY": ("clarify", "answer"),
    "MULTI-ANSWER": ("multi-answer",),
    "CLARIFY-AND-MA": ("clarify", "multi-answer"),
}
# Ties between equally good sequences go to the first of these (fewest turns and words first).
SEQUENCES = ("QAF", "QCRAF", "QMF", "QCRMF")


def cost_text(value: float) -> str:
    """A cost as node ids spell it: plain decimals, at most six places (0.1, 20, 0.000001)."""
    return f"{value:.6f}".rstrip("0").rstrip(".") or "0"


@dataclass(frozen=True)
class Episode:
    """One (query, interpretation, cost pair): one test, enumerated, never sampled."""

    item: str  # the item's key
    interpretation: int  # index into the item's interpretations
    ambiguous: bool  # False: the query is one gold clarified question (one interpretation)
    question: str  # what the user sends
    alpha: float
    beta: float
    max_clarifications: int = 1  # the paper's setting

    @property
    def suffix(self) -> str:
        """What the episode adds to its item's key: reading, then costs."""
        kind = "i" if self.ambiguous else "u"
        return f"{kind}{self.interpretation}-a{cost_text(self.alpha)}-b{cost_text(self.beta)}"

    @property
    def key(self) -> str:
        return f"{self.item}-{self.suffix}"

    @property
    def query(self) -> str:
        """The query the episode belongs to (the same for every interpretation and cost)."""
        return f"{self.item}-{'amb' if self.ambiguous else f'u{self.interpretation}'}"

    def describe(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "query": self.query,
            "interpretation": self.interpretation,
            "ambiguous": self.ambiguous,
            "question": self.question,
            "alpha": self.alpha,
            "beta": self.beta,
            "max_clarifications": self.max_clarifications,
        }


_SUFFIX = re.compile(r"-(?P<kind>[iu])(?P<n>\d+)-a(?P<alpha>[^-]+)-b(?P<beta>[^-]+)$")


def from_key(key: str, question: str = "") -> Episode | None:
    """The episode an episode item's key names (for results that never reported)."""
    found = _SUFFIX.search(key)
    if found is None:
        return None
    return Episode(
        key[: found.start()],
        int(found["n"]),
        found["kind"] == "i",
        question,
        float(found["alpha"]),
        float(found["beta"]),
    )


def episodes(
    items: Sequence[AmbigItem],
    costs: Sequence[tuple[float, float]] = COST_GRID,
    max_clarifications: int = 1,
) -> list[Episode]:
    """Every episode of ``items``: each interpretation of each ambiguous query, and
    unambiguous queries made from gold clarified questions, one per interpretation, as many
    as keep the 2 : 1 ratio (taken round-robin over the items, in file order)."""
    ambiguous = [item for item in items if len(item.interpretations) > 1]
    clarified = [
        (item, n)
        for depth in range(max((len(i.interpretations) for i in items), default=0))
        for item in items
        for n, interpretation in enumerate(item.interpretations)
        if n == depth and (interpretation.question or interpretation.condition)
    ]
    wanted = -(-len(ambiguous) // AMBIGUOUS_TO_ONE)  # ceil, in integers (a float ratio rounds up 10 / 2)
    out = []
    for alpha, beta in costs:
        for item in ambiguous:
            for n in range(len(item.interpretations)):
                out.append(Episode(item.key, n, True, item.question, alpha, beta, max_clarifications))
        for item, n in clarified[:wanted]:
            reading = item.interpretations[n]
            question = reading.question or f"{item.question} ({reading.condition})"
            out.append(Episode(item.key, n, False, question, alpha, beta, max_clarifications))
    return out


def sequence(actions: Sequence[str]) -> str:
    """The action sequence as the paper writes it: Q, then C R per clarification, then A
    (answer) or M (multi-answer), then F: QAF, QCRAF, QMF, QCRMF."""
    letters = {"clarify": "CR", "answer": "A", "multi-answer": "M"}
    return "Q" + "".join(letters[a] for a in actions) + "F"


# -- simulated users -------------------------------------------------------------------------


class User(typing.Protocol):
    name: str

    def bind(self, usage: Usage) -> User:
        """This user for one episode, counting its model calls into ``usage``."""
        ...

    def reply(self, item: AmbigItem, episode: Episode, clarification: str) -> str: ...

    def finalize(self, item: AmbigItem, episode: Episode, assistant_text: str, action: str) -> str: ...


def meaning(item: AmbigItem, episode: Episode) -> str:
    """What the interpretation means, in words: its clarified question, else its condition."""
    reading = item.interpretations[episode.interpretation]
    return reading.question or reading.condition or item.question


class OfflineUser:
    """The deterministic user, for tests and runs without a model: it replies with what the
    interpretation means and, from a multi-answer, keeps the part (line, else sentence,
    else clause) that best matches it, and of a "reading: answer" part, the answer."""

    name = "offline"

    def bind(self, usage: Usage) -> OfflineUser:
        return self

    def reply(self, item: AmbigItem, episode: Episode, clarification: str) -> str:
        return meaning(item, episode)

    def finalize(self, item: AmbigItem, episode: Episode, assistant_text: str, action: str) -> str:
        if action != "multi-answer":
            return assistant_text
        parts = _parts(assistant_text)
        if not parts:
            return assistant_text
        wanted = meaning(item, episode)
        part = max(parts, key=lambda part: (token_f1(part, wanted), -parts.index(part)))
        label, sep, answer = part.partition(": ")  # "reading: answer" keeps the answer
        return answer.strip() if sep and label.strip() and answer.strip() else part


def _parts(text: str) -> list[str]:
    for separator in ("\n", ". ", "; "):
        parts = [p.strip() for p in text.split(separator) if p.strip()]
        if len(parts) > 1:
            return parts
    return [text.strip()] if text.strip() else []


def leaks(reply: str, golds: Sequence[str]) -> bool:
    """A user reply that gives away the interpretation's gold answer (the episode is then
    unscored: the user did the assistant's work)."""
    said = f" {normalize_answer(reply)} "
    return any(g.strip() and normalize_answer(g) and f" {normalize_answer(g)} " in said for g in golds)


def ignores(final: str, assistant_text: str) -> bool:
    """A final answer with more than half its tokens absent from the assistant's answer:
    the user answered from its own knowledge (the paper's rule, section 4.2)."""
    tokens = normalize_answer(final).split()
    if not tokens:
        return False
    seen = set(normalize_answer(assistant_text).split())
    return sum(t not in seen for t in tokens) > len(tokens) / 2


# -- one episode -----------------------------------------------------------------------------

# policy(question, history, alpha, beta, allowed) -> (action, text); history holds the
# (clarifying question, user reply) pairs so far.
Policy = Callable[[str, tuple[tuple[str, str], ...], float, float, tuple[str, ...]], tuple[str, str]]


@dataclass(frozen=True)
class Outcome:
    """One scored episode."""

    episode: Episode
    actions: tuple[str, ...]  # the assistant's actions, in order
    f1: float  # acc, 0-100
    final_words: int
    reward: float

    @property
    def sequence(self) -> str:
        return sequence(self.actions)

    def scores(self) -> dict[str, float]:
        """The episode's item scores (``metrics/interactive.py``)."""
        return {
            "reward": self.reward,
            "episode_f1": self.f1 / 100,
            "clarify_rate": float("clarify" in self.actions),
            "multi_answer_rate": float(self.actions[-1] == "multi-answer"),
            "answer_words": float(self.final_words),
        }


def allowed_actions(turn: int, clarified: int, budget: int, plan: Sequence[str] | None) -> tuple[str, ...]:
    """What the assistant may do at ``turn``: one action under a forced plan, else any,
    clarifying only while the budget lasts."""
    if plan is not None:
        return (plan[min(turn, len(plan) - 1)],)
    return ACTIONS if clarified < budget else ACTIONS[1:]


def play(
    item: AmbigItem,
    episode: Episode,
    policy: Policy,
    user: User | None = None,
    plan: Sequence[str] | None = None,
    transcript: list[dict] | None = None,
) -> tuple[Outcome | None, str | None, list[dict]]:
    """One episode: (outcome, why it is unscored, transcript).

    ``plan`` forces the action of each turn (a forced-action reference policy); the turns
    are appended to ``transcript`` as they happen (so a failure keeps those so far). An episode
    the user spoils (a reply that gives the answer away, a final answer that ignores the
    assistant) or cannot finish (:class:`UserFailure`) is unscored, never 0; an action the
    episode does not allow raises :class:`PolicyError`.
    """
    user = user or OfflineUser()
    golds = item.interpretations[episode.interpretation].short_answers
    history: list[tuple[str, str]] = []
    actions: list[str] = []
    transcript = transcript if transcript is not None else []
    transcript.append({"role": "user", "action": "query", "text": episode.question})
    while True:
        allowed = allowed_actions(len(actions), len(history), episode.max_clarifications, plan)
        action, text = policy(episode.question, tuple(history), episode.alpha, episode.beta, allowed)
        if action not in allowed:
            raise PolicyError(f"the system chose '{action}', not one of {', '.join(allowed)}")
        actions.append(action)
        transcript.append({"role": "assistant", "action": action, "text": text})
        try:
            if action == "clarify":
                reply = user.reply(item, episode, text)
            else:
                final = user.finalize(item, episode, text, action)
        except UserFailure as exc:
            return None, f"the simulated user failed: {exc}", transcript
        if action == "clarify":
            transcript.append({"role": "user", "action": "respond", "text": reply})
            if leaks(reply, golds):
                return None, "the user's reply gives the answer away", transcript
            history.append((text, reply))
            continue
        transcript.append({"role": "user", "action": "finalize", "text": final})
        if ignores(final, text):
            return None, "the user's final answer ignores the assistant's", transcript
        acc = accuracy(final, golds)
        spent = reward(acc, len(history), words(text), episode.alpha, episode.beta)
        return Outcome(episode, tuple(actions), acc, words(text), spent), None, transcript


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


# -- the scorecard section -------------------------------------------------------------------


def split_of(result: ItemResult) -> str | None:
    episode = result.details.get("episode")
    return None if not episode else ("ambiguous" if episode["ambiguous"] else "unambiguous")


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


def parse_costs(text: str | None) -> tuple[tuple[float, float], ...]:
    """``--ambig-costs``: ALPHA:BETA pairs, each cost at least 0, no pair twice."""
    if not text:
        return COST_GRID
    pairs: list[tuple[float, float]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        alpha, sep, beta = part.partition(":")
        if not sep:
            refuse(f"--ambig-costs: expected ALPHA:BETA, got '{part}'")
        pair = (
            float(number("--ambig-costs", alpha.strip(), low=0, high=1e6)),
            float(number("--ambig-costs", beta.strip(), low=0, high=1e6)),
        )
        spelled = [(cost_text(a), cost_text(b)) for a, b in pairs]
        if (cost_text(pair[0]), cost_text(pair[1])) in spelled:
            refuse(f"--ambig-costs: {part} is given twice (costs count to 6 decimal places)")
        pairs.append(pair)
    if not pairs:
        refuse("--ambig-costs: no cost pair given")
    return tuple(pairs)


class Interactive(Protocol):
    """Interactive clarification (seeds/003): one test per (item, reading, cost pair); the
    system may answer, multi-answer or ask, and a simulated user replies."""

    name = "interactive"
    judges_suites = False  # the judge model, if any, plays the user
    own_options = ("--ambig-costs", "--ambig-clarifications", "--ambig-user", "--ambig-steerability")
    single_shot_options = ("--ambig-reader", "--ambig-retrieval-report", "--ambig-judge-samples")

    @classmethod
    def check_options(cls, config: pytest.Config) -> None:
        given = [o for o in cls.single_shot_options if options.given(config, o)]
        if given:
            refuse(
                f"{', '.join(given)}: an interactive run scores episodes with the protocol's own metrics; "
                "it has no reader, evidence report or judge metrics"
            )
        llm_user = options.choice(config, "--ambig-user") == "llm"
        if llm_user and not options.value(config, "--ambig-judge"):
            refuse("--ambig-user=llm: the simulated user is the judge model; set --ambig-judge")
        if not llm_user and options.given(config, "--ambig-judge"):
            refuse(
                "--ambig-judge: an interactive run judges nothing; "
                "the model plays the user with --ambig-user=llm"
            )

    @classmethod
    def check_rescore(cls) -> None:
        refuse(
            "--ambig-rescore replays single-shot answers; an interactive episode's turns depend on "
            "the user's replies: run it again with --ambig-resume, which reuses every stored turn"
        )

    def __init__(
        self,
        costs: Sequence[tuple[float, float]] = COST_GRID,
        clarifications: int = 1,
        user_name: str = "offline",
        steerability: bool = False,
        user: User | None = None,
    ) -> None:
        self.costs, self.clarifications = tuple(costs), clarifications
        self.user_name, self.steerability, self.user = user_name, steerability, user
        self.episodes: dict[str, tuple[AmbigItem, Episode]] = {}  # test key: (the file's item, its episode)

    @classmethod
    def configured(cls, cfg: Any, user: Callable[[], Any]) -> Protocol:
        return cls(cfg.costs, cfg.clarifications, cfg.user, cfg.steerability, user())

    def expand(self, items: tuple[AmbigItem, ...]) -> tuple[AmbigItem, ...]:
        """The episodes of the selected items, in order, as items the tests and the scorecard
        carry: ``<suite>-<id>-<reading>-a<alpha>-b<beta>``, asking the episode's question."""
        by_key = {item.key: item for item in items}
        out: list[AmbigItem] = []
        for episode in episodes(items, self.costs, self.clarifications):
            base = by_key[episode.item]
            copy = dataclasses.replace(
                base, id=f"{base.id}-{episode.suffix}", question=episode.question, index=len(out)
            )
            self.episodes[copy.key] = (base, episode)
            out.append(copy)
        return tuple(out)

    def base_key(self, item: AmbigItem) -> str:
        return self.episodes[item.key][0].key

    def metrics(self, suite: Any) -> tuple[str, ...]:
        return METRIC_NAMES

    def setup(self, inputs: Any) -> Any:
        """Episodes over the suite's inputs (its setting still says what a system is given);
        compared with no published row of the suite."""
        costs = ", ".join(f"{a:g}/{b:g}" for a, b in self.costs)
        label = (
            f"interactive clarification (Berant et al. 2025): {self.user_name} user, at most "
            f"{self.clarifications} clarification(s), alpha/beta {costs}; inputs as in {inputs.label}"
        )
        return dataclasses.replace(inputs, name="interactive", label=label, reads_as=None)

    def ask(
        self, evaluator: Evaluator, item: AmbigItem, system: System, extras: dict[str, Any], evidence: Any
    ) -> Scoring:
        """Play the item's episode (and, with ``--ambig-steerability``, the forced-action
        policies) with the system; each turn is asked once and stored like an answer."""
        base, episode = self.episodes[item.key]
        started = time.perf_counter()
        cached: list[bool] = []
        finals: list[Answer] = []
        calls: list[dict[str, Any]] = []  # a reference policy's model calls, turn by turn
        usage = Usage()
        assert self.user is not None  # a run's protocol has its user
        user = self.user.bind(usage)

        def policy(question, history, alpha, beta, allowed):
            turn = extras | {
                "id": base.id,
                "history": [{"question": q, "answer": a} for q, a in history],
                "alpha": alpha,
                "beta": beta,
                "actions": list(allowed),
            }
            answer, error, trace, from_store = evaluator.answer(item, system, turn, allowed)
            cached.append(from_store)
            if answer is None:
                raise SystemFailure(error, trace)
            action = answer.metadata.get(ACTION_KEY, "answer")
            answer = dataclasses.replace(
                answer, metadata={k: v for k, v in answer.metadata.items() if k != ACTION_KEY}
            )
            finals.append(answer)
            if isinstance(answer.metadata.get("llm"), dict):
                calls.append(answer.metadata["llm"])
            return action, answer.text

        def played(plan: tuple[str, ...] | None, transcript: list[dict]):
            try:
                outcome, why, _ = play(base, episode, policy, user, plan, transcript)
                return outcome, why, None, None
            except SystemFailure as exc:  # a PolicyError too: an action the turn does not allow
                return None, None, str(exc), exc.trace

        transcript: list[dict] = []
        outcome, why, error, trace = played(None, transcript)
        final = finals[-1] if finals and outcome is not None else None
        forced: dict[str, dict[str, Any]] = {}
        if self.steerability:
            for name, plan in PLANS.items():
                o, w, e, _ = played(plan, [])
                forced[name] = (
                    {"sequence": o.sequence, "reward": o.reward, "f1": o.f1}
                    if o is not None
                    else {"unscored": w}
                    if w is not None
                    else {"error": e}
                )
        duration = time.perf_counter() - started
        details: dict[str, Any] = {"episode": episode.describe(), "transcript": transcript}
        if outcome is not None:
            details["sequence"] = outcome.sequence
        if forced:
            details["forced"] = forced
        if error is not None:
            result = failed_result(item, "error", error, duration)
            result = dataclasses.replace(result, trace=trace)
        elif outcome is None:
            result = unscored_result(item, why or "unscored", duration)
        else:
            if final is not None and len(calls) > 1:  # the cost line counts every turn, forced ones too
                final = dataclasses.replace(final, metadata={**final.metadata, "llm": summed(calls)})
            result = scored_result(item, evaluator.run.scorers.keep(outcome.scores()), final, duration)
        used = usage.to_dict() if usage.requests or usage.cached else None  # the LLM user's calls
        done = dataclasses.replace(result, details=details, evidence=evidence, cached=any(cached), usage=used)
        return lambda: done

    def failed(
        self, suite: Any, item: AmbigItem, scorers: Any, status: Status, error: str, duration: float = 0.0
    ) -> ItemResult:
        return failed_result(item, status, error, duration)

    def slices(self, suite: Any, results: Sequence[ItemResult]) -> list[tuple[str, list[ItemResult]]]:
        parts = [(s, [r for r in results if split_of(r) == s]) for s in SPLITS]
        return [(s, part) for s, part in parts if part]

    def section(self, results: Sequence[ItemResult], steered: bool) -> dict[str, Any] | None:
        return section(results, steered)


def summed(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The model calls of an episode's turns as one record (``baselines/llm/model.py``'s form)."""
    total = dict(calls[-1])
    for name in ("calls", "requests", "cached", "prompt_tokens", "completion_tokens", "cost", "latency"):
        try:
            total[name] = sum(call[name] for call in calls)
        except (KeyError, TypeError):
            return calls[-1]  # not the reference systems' record: leave the system's own as it is
    total["steps"] = [step for call in calls for step in call.get("steps", [])]
    total["fingerprints"] = sorted({f for call in calls for f in call.get("fingerprints", [])})
    return total
