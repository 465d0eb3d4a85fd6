"""The interactive clarification protocol, its pure parts: episodes, the offline user,
reward, the per-split metrics and prompt-level steerability.

Berant, Chen, Fisch et al. 2025, "Learning Steerable Clarification Policies with
Collaborative Self-play": an episode puts one gold interpretation i of a query q to a
simulated user, who sends q; the assistant answers, answers every interpretation at once
(multi-answer), or asks a clarifying question the user answers (section 3.1, Table 1);
after an answer the user writes the final answer a from the assistant's text and i alone.
Reward R = acc(a, a*) - alpha * clarifications - beta * words of the assistant's final
answer, with acc = 100 x token F1 (SQuAD normalisation, best alias); the paper's grid is
alpha in {0, 2, 20}, beta in {0.1, 0.7, 5.0} (section 4.2). Metrics (section 4.3): mean
reward and F1, shares of episodes with a clarification and with a multi-answer, words per
final answer, the action sequences, by ambiguous and unambiguous queries; steerability
as Appendix D computes it.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..metrics.qa import best_over_aliases, token_f1
from ..metrics.text import normalize_answer
from ..schema import AmbigItem

COST_GRID: tuple[tuple[float, float], ...] = tuple((a, b) for a in (0.0, 2.0, 20.0) for b in (0.1, 0.7, 5.0))
ACTIONS = ("clarify", "answer", "multi-answer")
AMBIGUOUS_SHARE = 2 / 3  # the paper keeps ambiguous : unambiguous queries at 2 : 1 (section 4.1)


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
    def key(self) -> str:
        kind = "i" if self.ambiguous else "u"
        return f"{self.item}-{kind}{self.interpretation}-a{self.alpha:g}-b{self.beta:g}"

    @property
    def query(self) -> str:
        """The query the episode belongs to (the same for every interpretation and cost)."""
        return f"{self.item}-{'amb' if self.ambiguous else f'u{self.interpretation}'}"


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
    wanted = math.ceil(len(ambiguous) * (1 - AMBIGUOUS_SHARE) / AMBIGUOUS_SHARE)
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


def accuracy(answer: str, golds: Sequence[str]) -> float:
    """acc(a, a*): 100 x token F1 against the best gold alias (SQuAD normalisation)."""
    return 100 * best_over_aliases(answer, golds)[0] if golds else 0.0


def words(text: str) -> int:
    """Whitespace-separated words (section 4.3)."""
    return len(text.split())


def reward(acc: float, clarifications: int, final_words: int, alpha: float, beta: float) -> float:
    return acc - alpha * clarifications - beta * final_words


def sequence(actions: Sequence[str]) -> str:
    """The action sequence as the paper writes it: Q, then C R per clarification, then A
    (answer) or M (multi-answer), then F: QAF, QCRAF, QMF, QCRMF."""
    letters = {"clarify": "CR", "answer": "A", "multi-answer": "M"}
    return "Q" + "".join(letters[a] for a in actions) + "F"


# -- the offline user ------------------------------------------------------------------------


def user_reply(item: AmbigItem, episode: Episode) -> str:
    """The deterministic user's answer to a clarifying question: what the interpretation
    means (its clarified question, or its condition), never its answer."""
    reading = item.interpretations[episode.interpretation]
    return reading.question or reading.condition or item.question


def user_final(assistant_text: str, action: str, item: AmbigItem, episode: Episode) -> str:
    """The deterministic user's final answer: the whole answer, or, from a multi-answer, the
    part (line, else sentence, else clause) that best matches the interpretation."""
    if action != "multi-answer":
        return assistant_text
    parts = _parts(assistant_text)
    if not parts:
        return assistant_text
    meaning = user_reply(item, episode)
    return max(parts, key=lambda part: (token_f1(part, meaning), -parts.index(part)))


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
    return any(g.strip() and f" {normalize_answer(g)} " in said for g in golds)


def ignores(final: str, assistant_text: str) -> bool:
    """A final answer with more than half its tokens absent from the assistant's answer:
    the user answered from its own knowledge (the paper's rule, section 4.2)."""
    tokens = normalize_answer(final).split()
    if not tokens:
        return False
    seen = set(normalize_answer(assistant_text).split())
    return sum(t not in seen for t in tokens) > len(tokens) / 2


# -- one episode -----------------------------------------------------------------------------

Policy = Callable[[str, tuple[tuple[str, str], ...], float, float, tuple[str, ...]], tuple[str, str]]


def play(item: AmbigItem, episode: Episode, policy: Policy) -> tuple[Outcome | None, str | None, list[dict]]:
    """One episode with the offline user: (outcome, why it is unscored, transcript).

    ``policy(question, history, alpha, beta, allowed)`` returns (action, text); history is
    the (clarifying question, user reply) pairs so far, and "clarify" is allowed while the
    episode's clarification budget lasts. An episode the user spoils (a reply that gives
    the answer away, a final answer that ignores the assistant) is unscored, never 0.
    """
    golds = item.interpretations[episode.interpretation].short_answers
    history: list[tuple[str, str]] = []
    actions: list[str] = []
    transcript: list[dict] = [{"role": "user", "action": "query", "text": episode.question}]
    while True:
        allowed = ACTIONS if len(history) < episode.max_clarifications else ACTIONS[1:]
        action, text = policy(episode.question, tuple(history), episode.alpha, episode.beta, allowed)
        if action not in allowed:
            raise ValueError(f"the policy chose '{action}', not one of {', '.join(allowed)}")
        actions.append(action)
        transcript.append({"role": "assistant", "action": action, "text": text})
        if action == "clarify":
            reply = user_reply(item, episode)
            transcript.append({"role": "user", "action": "respond", "text": reply})
            if leaks(reply, golds):
                return None, "the user's reply gives the answer away", transcript
            history.append((text, reply))
            continue
        final = user_final(text, action, item, episode)
        transcript.append({"role": "user", "action": "finalize", "text": final})
        if ignores(final, text):
            return None, "the user's final answer ignores the assistant's", transcript
        acc = accuracy(final, golds)
        spent = reward(acc, len(history), words(text), episode.alpha, episode.beta)
        return Outcome(episode, tuple(actions), acc, words(text), spent), None, transcript


# -- metrics ---------------------------------------------------------------------------------


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


def summary(outcomes: Iterable[Outcome]) -> dict[str, dict[str, object]]:
    """Section 4.3's metrics, for ambiguous and unambiguous queries apart (and all)."""
    groups: dict[str, list[Outcome]] = {"all": [], "ambiguous": [], "unambiguous": []}
    for o in outcomes:
        groups["all"].append(o)
        groups["ambiguous" if o.episode.ambiguous else "unambiguous"].append(o)
    out: dict[str, dict[str, object]] = {}
    for name, group in groups.items():
        if not group:
            continue
        n = len(group)
        out[name] = {
            "episodes": n,
            "reward": sum(o.reward for o in group) / n,
            "f1": sum(o.f1 for o in group) / n,
            "clarify_rate": 100 * sum("clarify" in o.actions for o in group) / n,
            "multi_answer_rate": 100 * sum(o.actions[-1] == "multi-answer" for o in group) / n,
            "words": sum(o.final_words for o in group) / n,
            "sequences": dict(sorted(Counter(o.sequence for o in group).items())),
        }
    return out


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
    prediction counting only when it equals the gold change; averaged over the fixed costs.

    ``optimal`` and ``predicted`` map (query, alpha, beta) to an action sequence.
    """
    letter, moving = ("C", 1) if change == "alpha" else ("M", 2)
    fixed_values = sorted({key[3 - moving] for key in optimal})
    scores = []
    for fixed in fixed_values:
        gold, guess = [], []
        for query in sorted({key[0] for key in optimal}):
            first, second = (
                ((query, low, fixed), (query, high, fixed))
                if moving == 1
                else ((query, fixed, low), (query, fixed, high))
            )
            if not all(k in optimal and k in predicted for k in (first, second)):
                continue
            gold.append(_change(optimal[first], optimal[second], letter))
            guess.append(_change(predicted[first], predicted[second], letter))
        hits = sum(g == p != "N" for g, p in zip(gold, guess, strict=True))
        predicted_changes, gold_changes = sum(p != "N" for p in guess), sum(g != "N" for g in gold)
        precision = hits / predicted_changes if predicted_changes else 0.0
        recall = hits / gold_changes if gold_changes else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        scores.append((precision, recall, f1))
    if not scores:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    return {
        "precision": 100 * statistics.fmean(s[0] for s in scores),
        "recall": 100 * statistics.fmean(s[1] for s in scores),
        "f1": 100 * statistics.fmean(s[2] for s in scores),
    }
