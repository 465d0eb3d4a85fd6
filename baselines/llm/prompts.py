"""The prompts of the reference methods, written for this project (not the papers' texts).

Every step asks for one JSON object; ``*_FORM`` is the form the reply must take, and the
checks in ``methods.py`` hold the model to it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pytest_ambigqa.schema import Passage

ANSWERER = (
    "You answer questions that may be ambiguous: a question can have several reasonable "
    "readings, each with its own answer. Cover every reading you can support, each as an "
    "interpretation with its own clarified question and short answer, and write one long "
    "answer that explains them all. Cite passages only by their ids in square brackets, "
    "and only passages you were given. Reply with a JSON object and nothing else."
)

ANSWER_FORM = {
    "long_answer": "a few sentences covering every interpretation",
    "interpretations": [
        {"question": "a clarified question", "answer": "its short answer", "citations": ["id"]}
    ],
    "ambiguous": "true or false: does the question have more than one reading?",
    "ambiguity_type": "semantic, syntactic, constraint, or null",
    "clarifying_question": "what you would ask the user, or null",
}
REASONED_FORM = {"reasoning": "your step-by-step reasoning, first", **ANSWER_FORM}

ACTOR = (
    "You answer a possibly ambiguous question by alternating thought and action. Each turn, "
    "think about what you still need, then either search the corpus with a short query or "
    "stop searching and answer. Reply with a JSON object and nothing else."
)
ACT_FORM = {
    "thought": "what you know and what is missing",
    "action": "search or answer",
    "query": "a search query",
}


def form(shape: dict) -> str:
    return "Reply with only a JSON object of this form:\n" + json.dumps(shape, indent=1)


def passages_block(passages: Sequence[Passage]) -> str:
    if not passages:
        return "No passages."
    return "\n".join(f"[{p.id}] {p.title}: {p.text}" for p in passages)


def answer_prompt(question: str, passages: Sequence[Passage] | None, shape: dict) -> str:
    """The final step of every method: the question, the evidence if any, the answer form."""
    evidence = "" if passages is None else f"Passages:\n{passages_block(passages)}\n\n"
    return f"{evidence}Question: {question}\n\n{form(shape)}"


def act_prompt(question: str, trail: Sequence[tuple[str, str, Sequence[Passage]]], budget: int) -> str:
    """One ReAct turn: the question and every earlier thought, query and observation."""
    turns = "".join(
        f"Thought: {thought}\nSearch: {query}\nObservation:\n{passages_block(found)}\n\n"
        for thought, query, found in trail
    )
    left = budget - len(trail)
    return f"Question: {question}\n\n{turns}Turns left: {left}\n\n{form(ACT_FORM)}"
