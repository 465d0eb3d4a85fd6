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


# -- DIVA, CLARION, TreeRare-lite ------------------------------------------------------------

DIVERSIFIER = (
    "A question may be read in several ways. List its distinct plausible readings, each "
    "rewritten as a clarified question that can be answered on its own. Reply with a JSON "
    "object and nothing else."
)
DIVERSIFY_FORM = {"readings": ["a clarified question"]}

VERIFIER = (
    "Judge whether each passage helps answer the question: useful (it answers it), partially "
    "useful (it helps but does not answer it), or useless. Reply with a JSON object and "
    "nothing else."
)
VERIFY_FORM = {"labels": {"passage id": "useful, partially useful or useless"}}
LABELS = ("useful", "partially useful", "useless")

PLANNER = (
    "Before anything is searched, analyse the question. Decide whether it is ambiguous. If it "
    "is, say which kind of ambiguity it has (semantic: a word or entity with several meanings; "
    "syntactic: several ways to attach or group its parts; constraint: a missing condition such "
    "as a time, place or version) and rewrite it into clarified questions, one per reading. If "
    "it is not, return it unchanged as the only clarified question. Reply with a JSON object "
    "and nothing else."
)
PLAN_FORM = {
    "ambiguous": "true or false",
    "ambiguity_type": "semantic, syntactic, constraint, or null",
    "clarified_questions": ["a clarified question"],
}
DETECTOR = (
    "Before anything is searched, decide whether the question is ambiguous and, if it is, which "
    "kind of ambiguity it has (semantic, syntactic or constraint). Do not rewrite it. Reply "
    "with a JSON object and nothing else."
)
DETECT_FORM = {"ambiguous": "true or false", "ambiguity_type": "semantic, syntactic, constraint, or null"}

INTERPRETATION_ACTOR = (
    "You gather evidence for one reading of an ambiguous question by alternating thought and "
    "action. Each turn, either search the corpus with a short query, add a reading the plan "
    "missed (plan), or stop because the evidence suffices (answer). Reply with a JSON object "
    "and nothing else."
)
PLANNED_ACT_FORM = {
    "thought": "what you know and what is missing",
    "action": "search, plan or answer",
    "query": "a search query (search)",
    "new_readings": ["a clarified question (plan)"],
}

PARSER = (
    "Break the question into its constituent phrases, as a syntax tree would: the smallest "
    "meaningful phrases first, then the phrases built from them, the whole question last. For "
    "each phrase give the indices of the earlier phrases it contains. Reply with a JSON object "
    "and nothing else."
)
PARSE_FORM = {"phrases": [{"text": "a phrase of the question", "children": [0]}]}
QUERIER = (
    "Write short search queries that would resolve what is uncertain in one phrase of a "
    "question, using what is already known about its parts. Reply with a JSON object and "
    "nothing else."
)
QUERY_FORM = {"queries": ["a short search query"]}
SUMMARISER = (
    "From the passages, write the evidence that bears on one phrase of a question, briefly, "
    "citing passage ids in square brackets. Reply with a JSON object and nothing else."
)
SUMMARY_FORM = {"evidence": "one or two sentences", "citations": ["id"]}


def readings_prompt(question: str, shape: dict) -> str:
    return f"Question: {question}\n\n{form(shape)}"


def verify_prompt(question: str, passages: Sequence[Passage]) -> str:
    return f"Passages:\n{passages_block(passages)}\n\nQuestion: {question}\n\n{form(VERIFY_FORM)}"


def planned_act_prompt(
    question: str, reading: str, trail: Sequence[tuple[str, str, Sequence[Passage]]], budget: int
) -> str:
    turns = "".join(
        f"Thought: {thought}\nSearch: {query}\nObservation:\n{passages_block(found)}\n\n"
        for thought, query, found in trail
    )
    return (
        f"Question: {question}\nReading to gather evidence for: {reading}\n\n{turns}"
        f"Turns left: {budget - len(trail)}\n\n{form(PLANNED_ACT_FORM)}"
    )


def evidence_prompt(question: str, evidence: Sequence[tuple[str, Sequence[Passage]]], shape: dict) -> str:
    """The final step of the planned methods: the passages found for each reading or phrase."""
    blocks = "\n\n".join(f"For: {label}\n{passages_block(found)}" for label, found in evidence)
    return f"Evidence:\n{blocks}\n\nQuestion: {question}\n\n{form(shape)}"


def node_prompt(question: str, phrase: str, known: Sequence[str], shape: dict, passages=None) -> str:
    parts = "".join(f"- {k}\n" for k in known) or "- nothing yet\n"
    evidence = "" if passages is None else f"Passages:\n{passages_block(passages)}\n\n"
    return f"{evidence}Question: {question}\nPhrase: {phrase}\nKnown about its parts:\n{parts}\n{form(shape)}"


# -- CondAmbigQA's condition-then-answer pipeline ---------------------------------------------

CONDITION_FINDER = (
    "The answer to the question depends on conditions (a time, a place, a sense of a word, a "
    "version). From the passages, list the distinct conditions under which the question has "
    "different answers. Reply with a JSON object and nothing else."
)
CONDITIONS_FORM = {"conditions": ["a condition, in a few words"]}
CONDITIONAL_ANSWERER = (
    "Answer the question once for each condition, citing the passages that support each answer "
    "by their ids in square brackets, and write one long answer that covers them all. Reply "
    "with a JSON object and nothing else."
)
CONDITIONAL_FORM = {
    "long_answer": "a few sentences covering every condition",
    "interpretations": [{"condition": "a condition", "answer": "its short answer", "citations": ["id"]}],
    "ambiguous": "true or false",
    "ambiguity_type": "null",
    "clarifying_question": "what you would ask the user, or null",
}


def conditional_prompt(question: str, passages: Sequence[Passage] | None, conditions: Sequence[str]) -> str:
    evidence = "" if passages is None else f"Passages:\n{passages_block(passages)}\n\n"
    given = "".join(f"- {c}\n" for c in conditions)
    listed = f"Conditions:\n{given}\n" if conditions else "Find the conditions yourself.\n\n"
    return f"{evidence}Question: {question}\n{listed}{form(CONDITIONAL_FORM)}"
