"""One episode played: the turns a policy may take, the user's replies, the final answer
(section 3.1, Table 1), and the forced-action plans of Tables 2 and 3."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import PolicyError, UserFailure
from ...metrics.interactive import accuracy, reward, words
from ...schema import AmbigItem
from .episodes import ACTIONS, Episode, sequence
from .users import OfflineUser, User, ignores, leaks

# The forced-action reference policies (Tables 2 and 3): the action allowed at each turn.
PLANS: dict[str, tuple[str, ...]] = {
    "ANSWER": ("answer",),
    "CLARIFY": ("clarify", "answer"),
    "MULTI-ANSWER": ("multi-answer",),
    "CLARIFY-AND-MA": ("clarify", "multi-answer"),
}


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
    ignores: bool = False  # the final answer ignores the assistant's (counted, not dropped: users.ignores)

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
    the user spoils (a reply that gives the answer away) or cannot finish
    (:class:`UserFailure`) is unscored, never 0; one whose final answer ignores the
    assistant's is scored and marked (``Outcome.ignores``); an action the episode does not
    allow raises :class:`PolicyError`.
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
        acc = accuracy(final, golds)
        spent = reward(acc, len(history), words(text), episode.alpha, episode.beta)
        outcome = Outcome(episode, tuple(actions), acc, words(text), spent, ignores(final, text))
        return outcome, None, transcript


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
