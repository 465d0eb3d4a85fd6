"""The prompts of the reference methods, written for this project (not the papers' texts).

Every step asks for one JSON object. Its form is a JSON schema (``*_FORM``): the prompt
shows an example built from it (:func:`form`), and the client sends it as the server's
structured output where the server takes one (``pytest_ambigqa.models.structured``); the
checks in ``methods.py``, ``planned.py``, ``conditional.py`` and ``policy.py`` hold the model
to it. Each schema states all its check needs (enums, counts, strings written, one object per
action), so that any reply the schema allows passes; what a schema cannot say (TreeRare's
children are earlier phrases) the method mends, with a note on the step.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pytest_ambigqa.schema import Passage


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _said(field: dict[str, Any]) -> dict[str, Any]:
    """``field`` as its check needs it written: a string not empty, a list of at least one
    such string. (No ``pattern`` for "not only spaces": llama.cpp's grammars refuse one that
    is not anchored, and cannot compile ``\\S``, so the whole request would fail.)"""
    if field["type"] == "array":
        return {**field, "minItems": max(1, field.get("minItems", 0)), "items": _said(field["items"])}
    return {**field, "minLength": 1}


def _or_null(field: dict[str, Any]) -> dict[str, Any]:
    """``field``, or null (an enum's values gain null too)."""
    enum = {"enum": [*field["enum"], None]} if "enum" in field else {}
    return {**field, "type": [field["type"], "null"], **enum}


def _flag(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


def _list(item: dict[str, Any], fewest: int = 0, most: int | None = None) -> dict[str, Any]:
    counted = {"minItems": fewest} if fewest else {}
    return {"type": "array", "items": item, **counted, **({"maxItems": most} if most else {})}


def _action(*actions: str, description: str | None = None) -> dict[str, Any]:
    return {"type": "string", "enum": list(actions), "description": description or " or ".join(actions)}


def _form(title: str, **fields: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema of an object with every field required (structured decoding then writes
    them all; a field that does not apply is written empty)."""
    return {"title": title, **_object(**fields)}


def _object(**fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": fields, "required": list(fields)}


def _choice(form: dict[str, Any], needs: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    """``form`` whose ``action`` says which fields must be written (``needs``): one whole
    object per action, so that a server that reads ``anyOf`` alone still gets complete
    objects. The prompt shows ``form``'s own fields; with one action, that action's object."""
    fields = form["properties"]
    branches = [
        _object(
            **{
                **fields,
                "action": _action(action),
                **{name: _said(fields[name]) for name in needs.get(action, ())},
            }
        )
        for action in fields["action"]["enum"]
    ]
    return {**form, "anyOf": branches} if len(branches) > 1 else {**form, **branches[0]}


def example(schema: dict[str, Any]) -> Any:
    """The example object a prompt shows for ``schema``: each field's description in place."""
    if schema["type"] == "object":
        return {key: example(value) for key, value in schema["properties"].items()}
    if schema["type"] == "array":
        return [example(schema["items"])]
    return schema["description"]


def form(shape: dict[str, Any]) -> str:
    """The prompt's form: the example of ``shape``, a JSON schema."""
    return "Reply with only a JSON object of this form:\n" + json.dumps(example(shape), indent=1)


KINDS = ("semantic", "syntactic", "constraint")  # MARCH Table 1's ambiguity types
KIND = _or_null(_action(*KINDS, description="semantic, syntactic, constraint, or null"))

# -- MARCH's baselines, each as its paper describes it -------------------------------------------
# MARCH section 5.1 names them; MIRAGE (the earlier version of MARCH, section 5), whose rows
# MARCH Table 3 reprints, says how each was prompted; neither prints the prompts. None is told
# that a question may have several readings: laying the readings out is what CLARION adds.

NO_RETRIEVAL = (
    "Answer the question from your own knowledge, accurately and concisely. Reply with a JSON "
    "object and nothing else."
)
REASONER = (
    "Answer the question from your own knowledge. Think it through step by step first, then "
    "give your answer. Reply with a JSON object and nothing else."
)
READER = (
    "Answer the question. Where the passages clearly contain the answer, rely on them and cite "
    "the ones you use by their ids in square brackets; otherwise answer from your own "
    "knowledge. Reply with a JSON object and nothing else."
)
REASONING_READER = (
    "Answer the question using the passages. Think it through step by step first, grounding "
    "each step in the passages, then give your answer, citing the passages you use by their "
    "ids in square brackets. Reply with a JSON object and nothing else."
)
TEXT_FORM = _form("text_answer", long_answer=_said(_text("your answer")))
REASONED_TEXT_FORM = _form(
    "reasoned_text_answer",
    reasoning=_text("your step-by-step reasoning, first"),
    long_answer=_said(_text("your answer")),
)

# -- the planned methods' final answer (DIVA, CLARION, TreeRare): it covers their readings ----

ANSWERER = (
    "You answer questions that may be ambiguous: a question can have several reasonable "
    "readings, each with its own answer. Cover every reading you can support, each as an "
    "interpretation with its own clarified question and short answer, and write one long "
    "answer that explains them all. Cite passages only by their ids in square brackets, "
    "and only passages you were given. Reply with a JSON object and nothing else."
)
_ANSWER_FIELDS = {
    "long_answer": _said(_text("a few sentences covering every interpretation")),
    "interpretations": _list(
        _object(
            question=_text("a clarified question"),
            answer=_text("its short answer"),
            citations=_list(_text("id")),
        )
    ),
    "ambiguous": _flag("true or false: does the question have more than one reading?"),
    "ambiguity_type": KIND,
    "clarifying_question": _or_null(_text("what you would ask the user, or null")),
}
ANSWER_FORM = _form("answer", **_ANSWER_FIELDS)

ACTOR = (  # ReAct (Yao et al. 2023), as MARCH App. J Fig. 17 prompts it, without its planning action
    "You answer a question by reasoning and acting. Each turn, think about the next best step, "
    "then either search the corpus with a specific query when you need more evidence (never a "
    "query you have already searched), or answer once the evidence suffices: a concise, "
    "well-supported answer citing passages by their ids in square brackets. When no searches "
    "are left you must answer. Reply with a JSON object and nothing else."
)
_ACT_FIELDS = {
    "thought": _text("what you know and what is missing"),
    "query": _text("a search query (search), else empty"),
    "answer": _text("your final answer (answer), else empty"),
}


def act_form(allowed: Sequence[str]) -> dict[str, Any]:
    """ReAct's step: the actions ``allowed`` (only the answer once the searches are spent),
    each with the field it needs written."""
    fields = {"thought": _ACT_FIELDS["thought"], "action": _action(*allowed), **_ACT_FIELDS}
    return _choice(_form("act", **fields), {"search": ("query",), "answer": ("answer",)})


def passages_block(passages: Sequence[Passage]) -> str:
    if not passages:
        return "No passages."
    return "\n".join(f"[{p.id}] {p.title}: {p.text}" for p in passages)


def answer_prompt(question: str, passages: Sequence[Passage] | None, shape: dict) -> str:
    """The final step of the retrieve-then-read methods: the question, the evidence if any,
    the answer form."""
    evidence = "" if passages is None else f"Passages:\n{passages_block(passages)}\n\n"
    return f"{evidence}Question: {question}\n\n{form(shape)}"


def _trail(trail: Sequence[tuple[str, str, Sequence[Passage]]]) -> str:
    return "".join(
        f"Thought: {thought}\nSearch: {query}\nObservation:\n{passages_block(found)}\n\n"
        for thought, query, found in trail
    )


def act_prompt(
    question: str, trail: Sequence[tuple[str, str, Sequence[Passage]]], left: int, allowed: Sequence[str]
) -> str:
    """One ReAct turn: the question, every earlier thought, query and observation (the
    passages handed over first, if any), the searches left and the actions allowed (only
    answer once the searches are spent)."""
    return (
        f"Question: {question}\n\n{_trail(trail)}Searches left: {left}\n"
        f"Allowed actions: {', '.join(allowed)}\n\n{form(act_form(allowed))}"
    )


# -- DIVA, CLARION, TreeRare ------------------------------------------------------------------

DIVERSIFIER = (
    "A question may be read in several ways. List its distinct plausible readings, each "
    "rewritten as a clarified question that can be answered on its own. Reply with a JSON "
    "object and nothing else."
)
DIVERSIFY_FORM = _form("readings", readings=_said(_list(_text("a clarified question"))))

VERIFIER = (
    "Judge whether each passage helps answer the question: useful (it answers it), partially "
    "useful (it helps but does not answer it), or useless. Reply with a JSON object and "
    "nothing else."
)
VERIFY_FORM = _form(
    "labels",
    labels=_list(_object(id=_text("a passage id"), label=_action("useful", "partially useful", "useless"))),
)
LABELS = ("useful", "partially useful", "useless")

DETECTOR = (
    "Before anything is searched, analyse the question: reason briefly, decide whether it is "
    "ambiguous, name what makes it so and what would clarify it, and classify the ambiguity "
    "(syntactic: several grammatical parses, such as attachment, scope or coordination; "
    "constraint: an over-specific question whose broader, closely related form better matches "
    "the need; semantic: a clear syntax whose meaning admits several readings; or none). "
    "Reply with a JSON object and nothing else."
)
DETECT_FORM = _form(
    "detection",
    reasoning=_text("brief reasoning"),
    ambiguous=_flag("true or false"),
    ambiguity_type=_action(
        "syntactic", "constraint", "semantic", "none", description="syntactic, constraint, semantic, or none"
    ),
    aspects=_list(_text("what makes it ambiguous")),
    clarification_needed=_text("what would clarify it"),
)
CLARIFIER = (
    "Given a question and an analysis of its ambiguity, rewrite the question into exactly two "
    "specific, faithful clarified questions, each resolving the ambiguity one way. Reply with "
    "a JSON object and nothing else."
)
CLARIFY_FORM = _form(
    "clarification",
    reasoning=_text("why these two resolve the ambiguity"),
    clarified_question_1=_said(_text("the first clarified question")),
    clarified_question_2=_said(_text("the second clarified question")),
)

INTERPRETATION_ACTOR = (
    "You gather evidence for one reading of an ambiguous question by alternating thought and "
    "action, within a number of turns shared by all the readings. Each turn, either search the "
    "corpus with a short query, add a reading the plan missed (plan), or stop because the "
    "evidence for this reading suffices (answer). Reply with a JSON object and nothing else."
)
PLANNED_ACT_FORM = _choice(
    _form(
        "planned_act",
        thought=_text("what you know and what is missing"),
        action=_action("search", "plan", "answer"),
        query=_text("a search query (search), else empty"),
        new_readings=_list(_text("a clarified question the plan missed (plan)")),
    ),
    {"search": ("query",), "plan": ("new_readings",)},
)

PARSER = (
    "Parse the question into a syntax tree of its constituents, as a constituency parser "
    "would: the smallest constituents first, each with its phrase type (NP, VP, PP, ADJP, "
    "ADVP, SBAR, WHNP, S, or a word class such as DT, CC, IN, PUNCT for single words), then "
    "the constituents built from them, the whole question last. For each constituent give the "
    "indices of the earlier constituents it directly contains. Reply with a JSON object and "
    "nothing else."
)
PARSE_FORM = _form(
    "parse",
    phrases=_list(
        _object(
            text=_text("a constituent of the question, word for word"),
            type=_text("its phrase type"),
            # an earlier constituent's index: what a schema cannot say, the method mends
            children=_list({"type": "integer", "minimum": 0, "description": "0"}),
        ),
        fewest=1,
    ),
)
QUERIER = (
    "Write up to five short search queries that would resolve what is uncertain in one "
    "constituent of a question, using what is already known about its parts, the most useful "
    "first. Reply with a JSON object and nothing else."
)
QUERY_FORM = _form("queries", queries=_said(_list(_text("a short search query"), most=5)))
SUMMARISER = (
    "From the passages, answer the queries about one constituent of a question, briefly, "
    "resolving what its parts leave open and citing passage ids in square brackets. Reply "
    "with a JSON object and nothing else."
)
SUMMARY_FORM = _form("evidence", evidence=_text("one or two sentences"), citations=_list(_text("id")))


def readings_prompt(question: str, shape: dict) -> str:
    return f"Question: {question}\n\n{form(shape)}"


def clarify_prompt(question: str, analysis: dict[str, Any]) -> str:
    return f"Question: {question}\nAmbiguity analysis: {json.dumps(analysis)}\n\n{form(CLARIFY_FORM)}"


def verify_prompt(question: str, passages: Sequence[Passage]) -> str:
    return f"Passages:\n{passages_block(passages)}\n\nQuestion: {question}\n\n{form(VERIFY_FORM)}"


def planned_act_prompt(
    question: str,
    reading: str,
    trail: Sequence[tuple[str, str, Sequence[Passage]]],
    left: int,
    waiting: int,
) -> str:
    """One turn of CLARION's acting agent on one reading: its trail (the passages handed
    over first, if any), the turns left for every reading, and how many readings wait."""
    return (
        f"Question: {question}\nReading to gather evidence for: {reading}\n\n{_trail(trail)}"
        f"Turns left, for this reading and the {waiting} still to come: {left}\n\n"
        f"{form(PLANNED_ACT_FORM)}"
    )


def evidence_prompt(question: str, evidence: Sequence[tuple[str, Sequence[Passage]]], shape: dict) -> str:
    """The final step of DIVA and CLARION: the passages found for each reading."""
    blocks = "\n\n".join(f"For: {label}\n{passages_block(found)}" for label, found in evidence)
    return f"Evidence:\n{blocks}\n\nQuestion: {question}\n\n{form(shape)}"


def aggregate_prompt(question: str, notes: Sequence[str], shape: dict) -> str:
    """TreeRare's final answer generation (arXiv 2506.00331, section 3.4): the question and
    every node's evidence, not the passages behind it."""
    noted = "".join(f"- {n}\n" for n in notes)
    return f"Evidence:\n{noted}\nQuestion: {question}\n\n{form(shape)}"


def node_prompt(
    question: str, phrase: str, known: Sequence[str], shape: dict, passages=None, queries: Sequence[str] = ()
) -> str:
    parts = "".join(f"- {k}\n" for k in known) or "- nothing yet\n"
    evidence = "" if passages is None else f"Passages:\n{passages_block(passages)}\n\n"
    asked = f"Queries: {'; '.join(queries)}\n" if queries else ""
    return (
        f"{evidence}Question: {question}\nPhrase: {phrase}\n{asked}Known about its parts:\n{parts}\n"
        f"{form(shape)}"
    )


# -- CondAmbigQA ------------------------------------------------------------------------------

CONDITIONAL_ANSWERER = (
    "The answer to a question can depend on conditions (a time, a place, a sense of a word, a "
    "version). Identify up to five key conditions of the question based only on the passages, "
    "give a detailed answer for each, and cite by their ids the passages that support each "
    "condition and answer. Reply with a JSON object and nothing else."
)
GIVEN_CONDITIONS_ANSWERER = (
    "Answer the question once for each of the conditions given, based on the passages, citing "
    "by their ids the passages that support each answer. Reply with a JSON object and nothing "
    "else."
)
CONDITIONS_FORM = _form(
    "conditions",
    conditions=_list(
        _object(
            condition=_said(_text("a condition")),
            answer=_said(_text("the detailed answer under it")),
            citations=_list(_text("id")),
        )
    ),
)
PLAIN_ANSWERER = (
    "Answer the question based only on the passages, citing by their ids up to five passages "
    "that support your answer. Reply with a JSON object and nothing else."
)
ANSWERS_FORM = _form(
    "answers", answers=_list(_object(answer=_said(_text("an answer")), citations=_list(_text("id"))))
)
CLOSED_BOOK_ANSWERER = (  # CondAmbigQA section 5.6: the closed-book baseline, plain answers
    "Answer the question from your general knowledge alone. If it has more than one valid "
    "answer, give each as its own answer. Reply with a JSON object and nothing else."
)
CLOSED_BOOK_ANSWERS_FORM = _form("closed_book_answers", answers=_list(_object(answer=_text("an answer"))))


def conditional_prompt(
    question: str, passages: Sequence[Passage] | None, conditions: Sequence[str], shape: dict
) -> str:
    evidence = "" if passages is None else f"Passages:\n{passages_block(passages)}\n\n"
    given = "".join(f"Condition {n}: {c}\n" for n, c in enumerate(conditions, 1))
    listed = f"Conditions to address:\n{given}\n" if conditions else "\n"
    return f"{evidence}Question: {question}\n{listed}{form(shape)}"


# -- the interactive policies (their prompts: policy.py) ---------------------------------------


def policy_form(offered: Sequence[str], reasoned: bool) -> dict[str, Any]:
    """A policy's turn: one of the actions ``offered``, its text written, and for PROMPTED-COT
    the thought first."""
    thought = _text("the reward you expect from each allowed action, worked out")
    return _form(
        "policy_turn",
        **({"thought": thought} if reasoned else {}),
        action=_action(*offered, description="one of the allowed actions"),
        text=_said(_text("your clarifying question, your answer, or your answers one per line")),
    )
