"""The reference methods (MARCH, Park et al. 2025, "MARCH: Evaluating the Intersection of
Ambiguity Interpretation and Multi-hop Inference", section 5.1 baselines):

- ``closed-book``: the model alone;
- ``cot``: chain-of-thought, no retrieval (Wei et al. 2022);
- ``naive-rag``: retrieve the top 10 passages for the original question, then read them
  (Lewis et al. 2020; k = 10 as in MARCH);
- ``cot-rag``: chain-of-thought over the same passages;
- ``react``: thought, search, observation, at most 5 turns, the answer forced at the budget
  (Yao et al. 2023; MARCH's budget for its agents).

Passages the protocol hands over (CondAmbigQA's fragments, MARCH's oracle evidence) are read
instead of a search. Each returns an :class:`Answer` with every field the metrics read.
"""

from __future__ import annotations

from typing import Any

from pytest_ambigqa.schema import Answer, GeneratedInterpretation, Passage

from . import prompts
from .model import Model

KINDS = ("semantic", "syntactic", "constraint")  # MARCH Table 1's ambiguity types
TOP_K = 10  # NaiveRAG and CoT with RAG: MARCH's top-10 of the original question
REACT_BUDGET = 5  # MARCH's iteration limit for its agents
REACT_K = 5  # passages per ReAct search (ours: MARCH does not say)


def ambiguity_type(data: dict[str, Any]) -> str | None:
    """The reply's ambiguity type, one of the three kinds, or None (also when not ambiguous)."""
    kind = data.get("ambiguity_type")
    kind = kind.strip().lower() if isinstance(kind, str) else None
    return kind if data.get("ambiguous") is not False and kind in KINDS else None


def check_answer(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "it must be a JSON object"
    if not isinstance(data.get("long_answer"), str):
        return "long_answer must be a string"
    found = data.get("interpretations", [])
    if not isinstance(found, list) or not all(isinstance(i, dict) for i in found):
        return "interpretations must be a list of objects"
    for n, i in enumerate(found, 1):
        if not all(isinstance(i.get(key) or "", str) for key in ("question", "condition", "answer")):
            return f"interpretation {n}: question, condition and answer must be strings"
        if not isinstance(i.get("citations", []), list):
            return f"interpretation {n}: citations must be a list"
    if not isinstance(data.get("ambiguous", False), bool):
        return "ambiguous must be true or false"
    return None


def check_reasoned(data: Any) -> str | None:
    if isinstance(data, dict) and not isinstance(data.get("reasoning"), str):
        return "reasoning must be a string"
    return check_answer(data)


def check_act(data: Any) -> str | None:
    if not isinstance(data, dict) or data.get("action") not in ("search", "answer"):
        return 'it must be an object whose action is "search" or "answer"'
    if data["action"] == "search" and not (isinstance(data.get("query"), str) and data["query"].strip()):
        return "a search needs a non-empty query"
    return None


def to_answer(data: dict[str, Any], passages: list[Passage], metadata: dict[str, Any]) -> Answer:
    """The model's final reply as an :class:`Answer`; citations to passages it was not given
    are dropped (and counted in the metadata)."""
    known = {p.id for p in passages}
    dropped = 0
    interpretations = []
    for raw in data.get("interpretations") or []:
        if not (raw.get("answer") or "").strip():
            continue  # a reading without an answer answers nothing
        cited = [str(c).strip("[] ") for c in raw.get("citations") or []]
        dropped += sum(c not in known for c in cited)
        interpretations.append(
            GeneratedInterpretation(
                answer=raw.get("answer") or "",
                question=raw.get("question") or None,
                condition=raw.get("condition") or None,
                citations=tuple(c for c in cited if c in known),
            )
        )
    clarifying = data.get("clarifying_question")
    return Answer(
        text=data["long_answer"],
        interpretations=tuple(interpretations),
        citations=tuple(dict.fromkeys(c for i in interpretations for c in i.citations)),
        is_ambiguous=data.get("ambiguous"),
        ambiguity_type=ambiguity_type(data),
        clarifying_question=clarifying if isinstance(clarifying, str) and clarifying else None,
        metadata={**metadata, "unknown_citations": dropped} if dropped else metadata,
    )


def gather(question: str, passages: list[Passage], retriever: Any, k: int) -> tuple[list[Passage], str]:
    """The protocol's passages, else the retriever's top ``k`` for the question.

    The searching methods declare ``retriever`` without a default, so a run without one
    (``--ambig-retriever=none``, CondAmbigQA's closed book) refuses them with the reason
    rather than letting them answer from nothing."""
    if passages:
        return list(passages), "given"
    return list(retriever(question, k)), "retrieved"


def closed_book(question: str, *, model: Model) -> Answer:
    episode = model.episode()
    data = episode.ask(
        "answer", prompts.ANSWERER, prompts.answer_prompt(question, None, prompts.ANSWER_FORM), check_answer
    )
    return to_answer(data, [], episode.metadata())


def cot(question: str, *, model: Model) -> Answer:
    episode = model.episode()
    user = prompts.answer_prompt(question, None, prompts.REASONED_FORM)
    data = episode.ask("reason and answer", prompts.ANSWERER, user, check_reasoned)
    return to_answer(data, [], episode.metadata(reasoning=data["reasoning"]))


def _rag(question: str, passages: list[Passage], retriever: Any, model: Model, reasoned: bool) -> Answer:
    episode = model.episode()
    evidence, source = gather(question, passages, retriever, TOP_K)
    shape = prompts.REASONED_FORM if reasoned else prompts.ANSWER_FORM
    user = prompts.answer_prompt(question, evidence, shape)
    step = "reason and answer" if reasoned else "answer"
    data = episode.ask(step, prompts.ANSWERER, user, check_reasoned if reasoned else check_answer)
    extra = {"reasoning": data["reasoning"]} if reasoned else {}
    metadata = episode.metadata(evidence=source, retrieved=[p.id for p in evidence], **extra)
    return to_answer(data, evidence, metadata)


def naive_rag(question: str, passages: list, retriever: Any, *, model: Model) -> Answer:
    return _rag(question, passages, retriever, model, reasoned=False)


def cot_rag(question: str, passages: list, retriever: Any, *, model: Model) -> Answer:
    return _rag(question, passages, retriever, model, reasoned=True)


def react(question: str, passages: list, retriever: Any, *, model: Model) -> Answer:
    """Thought, search, observation, until the model answers or the budget is spent; the
    answer step then reads every passage the searches found (or the protocol's passages)."""
    episode = model.episode()
    trail: list[tuple[str, str, list[Passage]]] = []
    seen: dict[str, Passage] = {p.id: p for p in passages}
    forced = True
    while len(trail) < REACT_BUDGET:
        turn = episode.ask(
            f"act {len(trail) + 1}",
            prompts.ACTOR,
            prompts.act_prompt(question, trail, REACT_BUDGET),
            check_act,
        )
        if turn["action"] == "answer":
            forced = False
            break
        found = list(retriever(turn["query"], REACT_K))
        for p in found:
            seen.setdefault(p.id, p)
        trail.append((str(turn.get("thought", "")), turn["query"], found))
    evidence = list(seen.values())
    step = "answer (forced at the budget)" if forced else "answer"
    data = episode.ask(
        step, prompts.ANSWERER, prompts.answer_prompt(question, evidence, prompts.ANSWER_FORM), check_answer
    )
    metadata = episode.metadata(
        searches=[query for _, query, _ in trail], retrieved=[p.id for p in evidence], forced_answer=forced
    )
    return to_answer(data, evidence, metadata)
