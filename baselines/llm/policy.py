"""The interactive protocol's reference policies over any OpenAI-compatible model
(Berant, Chen, Fisch et al. 2025, "Learning Steerable Clarification Policies with
Collaborative Self-play", section 4.2 baselines):

- ``policy``: the prompted policy (PROMPTED), told the reward, the costs alpha and beta and
  the actions it may take, with several examples (section 4.2: "a prompt that describes the
  task with the reward objective and several examples"; Appendix E.2 has five), choosing
  clarify, answer or multi-answer each turn;
- ``policy-cot``: PROMPTED-COT, the same with a thought first that estimates the reward of
  each allowed action and takes the highest (section 3.1, "Thoughts"; Appendix E.2's
  chain-of-thought prompt: instructions and worked examples);
- ``policy-answer``, ``policy-clarify``, ``policy-multi-answer``, ``policy-clarify-and-ma``:
  the forced-action policies (ANSWER, CLARIFY, MULTI-ANSWER, CLARIFY-AND-MA of Tables 2
  and 3), the same model allowed one action per turn.

Each turn reads the evidence the single-shot methods read (``methods.gather``): the
passages the protocol hands over, else the retriever's top 10 for the question, else none
(a closed-book setting). A single-shot run (no history, only "answer" allowed) gets an
answer from each.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pytest_ambigqa.protocols.interactive import PLANS
from pytest_ambigqa.schema import Passage

from .methods import TOP_K, gather
from .model import Model
from .prompts import form, passages_block, policy_form

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
THINKING = (
    " Before you act, think it through in the thought field: for each allowed action, "
    "estimate the accuracy you expect from it, the clarifying questions you will have asked "
    "in all and the words your final answer will take, work out the reward 100 x accuracy - "
    "alpha x questions - beta x words, and take the action with the highest."
)
ALL_ACTIONS = ("clarify", "answer", "multi-answer")
AFTER_ONE = ("answer", "multi-answer")  # the paper's budget: one clarification an episode

# Our own worked examples (section 4.2: PROMPTED has "several examples"; PROMPTED-COT
# "instructions and examples to decode a thought", five in Appendix E.2's prompt): each is
# (question, history, alpha, beta, allowed actions, thought, action, text), one for each way
# the costs can tip the choice: answer, clarify, multi-answer, answer after a clarification,
# and a guess when one reading is far likelier.
EXAMPLES: tuple[
    tuple[str, tuple[tuple[str, str], ...], float, float, tuple[str, ...], str, str, str], ...
] = (
    (
        "At what temperature in Celsius does water boil at sea level?",
        (),
        10,
        1,
        ALL_ACTIONS,
        "One reading. Answer '100' (1 word): 100 - 1 x 1 = 99. Asking first: 100 - 10 - 1 = 89. "
        "Nothing to list. Answer.",
        "answer",
        "100",
    ),
    (
        "Who wrote The Road?",
        (),
        1,
        10,
        ALL_ACTIONS,
        "Two readings, about as likely: Cormac McCarthy's novel and Jack London's memoir. "
        "Guessing one name (2 words): 50 - 10 x 2 = 30. Asking, then 2 words: 100 - 1 - 20 = 79. "
        "Both, about 8 words: 100 - 80 = 20. Clarify.",
        "clarify",
        "The novel or the memoir?",
    ),
    (
        "Who played the Joker in Batman?",
        (),
        20,
        0.1,
        ALL_ACTIONS,
        "Two readings: the 1989 film and the 1966 series. Guessing one (2 words): 50 - 0.2 = 49.8. "
        "Asking: 100 - 20 - 0.2 = 79.8. Both, about 10 words: 100 - 1 = 99. Multi-answer.",
        "multi-answer",
        "Batman (1989 film): Jack Nicholson\nBatman (1966 series): Cesar Romero",
    ),
    (
        "How many players does a rugby team field?",
        (("Rugby union or rugby league?", "rugby league"),),
        2,
        5,
        AFTER_ONE,
        "The reply leaves one reading, rugby league. Answer '13' (1 word): 100 - 2 - 5 = 93. "
        "Listing both codes, 4 words: 100 - 2 - 20 = 78. Answer.",
        "answer",
        "13",
    ),
    (
        "Which city hosted the 2016 Olympics?",
        (),
        20,
        5,
        ALL_ACTIONS,
        "The Summer Games are far likelier than the Youth Winter Games. Guessing 'Rio de Janeiro' "
        "(3 words): about 90 - 15 = 75. Asking: 100 - 20 - 15 = 65. Both, about 8 words: "
        "100 - 40 = 60. Answer.",
        "answer",
        "Rio de Janeiro",
    ),
)


def _examples(reasoned: bool) -> str:
    """The worked examples as the system prompt shows them, each as a turn is put."""
    shown = []
    for n, (question, history, alpha, beta, allowed, thought, action, text) in enumerate(EXAMPLES, 1):
        turns = "".join(f"You asked: {q}\nThe user replied: {a}\n" for q, a in history)
        costs = json.dumps({"alpha": alpha, "beta": beta})
        reply = ({"thought": thought} if reasoned else {}) | {"action": action, "text": text}
        shown.append(
            f"Example {n}:\nQuestion: {question}\n{turns}Costs: {costs}\n"
            f"Allowed actions: {', '.join(allowed)}\nReply: {json.dumps(reply)}"
        )
    return "\n\n".join(shown)


POLICY_COT = POLICY + THINKING + "\n\n" + _examples(True)
POLICY = POLICY + "\n\n" + _examples(False)


def _check(allowed: Sequence[str], reasoned: bool):
    def check(data: Any) -> str | None:
        if not isinstance(data, dict) or data.get("action") not in allowed:
            return f"action must be one of {', '.join(allowed)}"
        if not isinstance(data.get("text"), str) or not data["text"].strip():
            return "text must be a non-empty string"
        if reasoned and not isinstance(data.get("thought"), str):
            return "thought must be a string"
        return None

    return check


def _prompt(question, history, alpha, beta, allowed, passages: Sequence[Passage], shape: dict) -> str:
    turns = "".join(f"You asked: {h['question']}\nThe user replied: {h['answer']}\n" for h in history)
    evidence = f"Passages:\n{passages_block(passages)}\n\n" if passages else ""
    costs = json.dumps({"alpha": alpha, "beta": beta})
    return (
        f"{evidence}Question: {question}\n{turns}\nCosts: {costs}\n"
        f"Allowed actions: {', '.join(allowed)}\n\n{form(shape)}"
    )


def _act(question, history, alpha, beta, actions, passages, retriever, model: Model, plan, reasoned: bool):
    offered = list(actions)
    if plan is not None:
        forced = plan[min(len(history), len(plan) - 1)]
        offered = [forced] if forced in offered else offered
    episode = model.episode()
    evidence, source = (
        gather(question, list(passages or ()), retriever, TOP_K) if passages or retriever else ([], "none")
    )
    shown_costs = (alpha if alpha is not None else 0, beta if beta is not None else 0)
    shape = policy_form(offered, reasoned)
    user = _prompt(question, history, *shown_costs, offered, evidence, shape)
    step = f"turn {len(history) + 1}"
    system = POLICY_COT if reasoned else POLICY
    data = episode.ask(step, system, user, _check(offered, reasoned), schema=shape)
    extra = {"thought": data["thought"]} if reasoned else {}
    metadata = episode.metadata(evidence=source, retrieved=[p.id for p in evidence], **extra)
    return {"action": data["action"], "text": data["text"].strip(), "metadata": metadata}


def _method(plan: Sequence[str] | None, reasoned: bool = False):
    def method(
        question,
        history=(),
        alpha=None,
        beta=None,
        actions=("answer",),
        passages=(),
        retriever=None,
        *,
        model,
    ):
        return _act(question, history, alpha, beta, actions, passages, retriever, model, plan, reasoned)

    return method


prompted = _method(None)
prompted_cot = _method(None, reasoned=True)
forced = {name: _method(plan) for name, plan in PLANS.items()}
