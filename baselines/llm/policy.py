"""The interactive protocol's reference policies over any OpenAI-compatible model
(Berant, Chen, Fisch et al. 2025, "Learning Steerable Clarification Policies with
Collaborative Self-play", section 4.2 baselines):

- ``policy``: the prompted policy (PROMPTED), told the costs alpha and beta and the
  actions it may take, choosing clarify, answer or multi-answer each turn;
- ``policy-answer``, ``policy-clarify``, ``policy-multi-answer``, ``policy-clarify-and-ma``:
  the forced-action policies (ANSWER, CLARIFY, MULTI-ANSWER, CLARIFY-AND-MA of Tables 2
  and 3), the same model allowed one action per turn.

A single-shot run (no history, only "answer" allowed) gets an answer from each.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pytest_ambigqa.protocols.interactive import PLANS
from pytest_ambigqa.schema import Passage

from .model import Model
from .prompts import form, passages_block

POLICY = (
    "You are an assistant answering a user's question, which may be ambiguous: it can have "
    "several readings with different answers. Each turn you take one of the allowed actions: "
    "clarify (ask the user one short clarifying question), answer (one short answer) or "
    "multi-answer (a short answer for each plausible reading, one per line, as 'reading: "
    "answer'). You are scored by how well the answer the user takes away matches what they "
    "meant (100 times its token F1), minus alpha for each clarifying question and minus beta "
    "for each word of your final answer: weigh asking against guessing and long answers "
    "against short ones with these costs. Reply with a JSON object and nothing else."
)
POLICY_FORM = {
    "action": "one of the allowed actions",
    "text": "your clarifying question, your answer, or your answers one per line",
}


def _check(allowed: Sequence[str]):
    def check(data: Any) -> str | None:
        if not isinstance(data, dict) or data.get("action") not in allowed:
            return f"action must be one of {', '.join(allowed)}"
        if not isinstance(data.get("text"), str) or not data["text"].strip():
            return "text must be a non-empty string"
        return None

    return check


def _prompt(question, history, alpha, beta, allowed, passages: Sequence[Passage]) -> str:
    turns = "".join(f"You asked: {h['question']}\nThe user replied: {h['answer']}\n" for h in history)
    evidence = f"Passages:\n{passages_block(passages)}\n\n" if passages else ""
    costs = json.dumps({"alpha": alpha, "beta": beta})
    return (
        f"{evidence}Question: {question}\n{turns}\nCosts: {costs}\n"
        f"Allowed actions: {', '.join(allowed)}\n\n{form(POLICY_FORM)}"
    )


def _act(question, history, alpha, beta, actions, passages, model: Model, plan: Sequence[str] | None):
    offered = list(actions)
    if plan is not None:
        forced = plan[min(len(history), len(plan) - 1)]
        offered = [forced] if forced in offered else offered
    episode = model.episode()
    shown_costs = (alpha if alpha is not None else 0, beta if beta is not None else 0)
    user = _prompt(question, history, *shown_costs, offered, passages or [])
    step = f"turn {len(history) + 1}"
    data = episode.ask(step, POLICY, user, _check(offered))
    return {"action": data["action"], "text": data["text"].strip(), "metadata": episode.metadata()}


def _method(plan: Sequence[str] | None):
    def method(question, history=(), alpha=None, beta=None, actions=("answer",), passages=(), *, model):
        return _act(question, history, alpha, beta, actions, passages, model, plan)

    return method


prompted = _method(None)
forced = {name: _method(plan) for name, plan in PLANS.items()}
