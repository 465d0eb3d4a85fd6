"""The reference methods (MARCH, Park et al. 2025, "MARCH: Evaluating the Intersection of
Ambiguity Interpretation and Multi-hop Inference", section 5.1 baselines), each prompted as
MIRAGE (Park et al. 2025, "MIRAGE: Multi-hop Reasoning with Ambiguity Evaluation for Illusory
Questions", the earlier version of MARCH, section 5, whose rows MARCH Table 3 reprints)
describes it; none is told that the question may have several readings:

- ``closed-book``: the model alone, asked to answer accurately and concisely;
- ``cot``: chain-of-thought, no retrieval (Wei et al. 2022): step by step, then the answer;
- ``naive-rag``: retrieve the top 10 passages for the original question, then read them,
  relying on them where they hold the answer, else on the model's knowledge (Lewis et al. 2020);
- ``cot-rag``: chain-of-thought grounded in the same passages;
- ``react``: thought, then search or answer; at most 5 searches, after which the agent must
  answer (Yao et al. 2023; MARCH section 4 and Appendix J, Figure 17, without its planning
  action). Its answer is its own ANSWER action.

MARCH Appendix H fixes the retrieval (top 10 per query, for every system: Appendix D says all
share the retriever and its hyperparameters) and the decoding (temperature 0, at most 512 new
tokens). Passages the protocol hands over (CondAmbigQA's fragments, MARCH's oracle evidence)
are read instead of a search; ReAct reads them as its first observation.

The papers' output of these methods is a long answer in prose: the answer step asks for it in
a JSON form (``TEXT_FORM``) and takes a reply without JSON as that long answer alone; its
citations are the passage ids it marks in square brackets. It carries no interpretations and
no ambiguity report, so the metrics that need them are n/a with that reason.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_ambigqa.schema import Answer, GeneratedInterpretation, Passage

from . import prompts
from .model import Decoding, Model

KINDS = prompts.KINDS
TOP_K = 10  # MARCH Appendix H (Table 17): top-10 per query, for every system
REACT_BUDGET = 5  # MARCH Appendix H: the agents' maximum search iterations
DECODING = Decoding(0.0, 512, "MARCH appendix H")
PROSE = "prose"  # the key marking an answer step's data made from a reply without JSON
_CITED = re.compile(r"\[([^\[\]]+)\]")


def ambiguity_type(data: dict[str, Any]) -> str | None:
    """The reply's ambiguity type, one of the three kinds, or None (also when not ambiguous)."""
    kind = data.get("ambiguity_type")
    kind = kind.strip().lower() if isinstance(kind, str) else None
    return kind if data.get("ambiguous") is not False and kind in KINDS else None


def prose_answer(text: str) -> dict[str, Any]:
    """An answer step's data from a reply without JSON: the text is the long answer."""
    return {"long_answer": text, PROSE: True}


def check_answer(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "it must be a JSON object"
    if not isinstance(data.get("long_answer"), str) or not data["long_answer"].strip():
        return "long_answer must be a non-empty string"
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


def check_text(data: Any) -> str | None:
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("long_answer"), str)
        or not data["long_answer"].strip()
    ):
        return "long_answer must be a non-empty string"
    return None


def check_reasoned(data: Any) -> str | None:
    if isinstance(data, dict) and not data.get(PROSE) and not isinstance(data.get("reasoning"), str):
        return "reasoning must be a string"
    return check_text(data)


def check_act(allowed: tuple[str, ...]):
    def check(data: Any) -> str | None:
        if not isinstance(data, dict) or data.get("action") not in allowed:
            return f"it must be an object whose action is {' or '.join(allowed)}"
        field = "query" if data["action"] == "search" else "answer"
        if not (isinstance(data.get(field), str) and data[field].strip()):
            return f"{'a search' if field == 'query' else 'an answer'} needs a non-empty {field}"
        return None

    return check


def _null(value: Any) -> str | None:
    """A text field's value, None when the model wrote it empty or as the word null."""
    text = value.strip() if isinstance(value, str) else ""
    return text if text and text.lower() not in ("null", "none") else None


def cited_in(text: str, passages: list[Passage]) -> tuple[str, ...]:
    """The given passages a text marks in square brackets (``[id]``), in order of first mark."""
    known = {p.id for p in passages}
    marked = (m.strip() for group in _CITED.findall(text) for m in group.split(","))
    return tuple(dict.fromkeys(m for m in marked if m in known))


def to_answer(data: dict[str, Any], passages: list[Passage], metadata: dict[str, Any]) -> Answer:
    """The model's final reply as an :class:`Answer`; citations to passages it was not given
    are dropped (and counted in the metadata). A prose reply is the long answer alone, with
    the passages it marks as its citations."""
    if data.get(PROSE):
        return text_answer(data["long_answer"], passages, {**metadata, "reply": "prose"}, data)
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
                question=_null(raw.get("question")),
                condition=_null(raw.get("condition")),
                citations=tuple(c for c in cited if c in known),
            )
        )
    return Answer(
        text=data["long_answer"],
        interpretations=tuple(interpretations),
        citations=tuple(dict.fromkeys(c for i in interpretations for c in i.citations)),
        is_ambiguous=data.get("ambiguous"),
        ambiguity_type=ambiguity_type(data),
        clarifying_question=_null(data.get("clarifying_question")),
        metadata={**metadata, "unknown_citations": dropped} if dropped else metadata,
    )


def text_answer(
    text: str, passages: list[Passage], metadata: dict[str, Any], detected: dict[str, Any] | None = None
) -> Answer:
    """A long answer alone (the baselines' answer, ReAct's ANSWER action, a prose reply): its
    citations are the given passages it marks; no interpretations, and detection only where
    an earlier step reported it (``detected``: CLARION's planning agent)."""
    detected = detected or {}
    return Answer(
        text=text,
        citations=cited_in(text, passages),
        is_ambiguous=detected.get("ambiguous"),
        ambiguity_type=ambiguity_type(detected),
        metadata=metadata,
    )


def answer(episode, step: str, user: str) -> dict[str, Any]:
    """The final long answer of a planned method (DIVA, CLARION, TreeRare): the answer form,
    or prose."""
    return episode.ask(
        step, prompts.ANSWERER, user, check_answer, schema=prompts.ANSWER_FORM, prose=prose_answer
    )


def _baseline(
    episode, step: str, system: str, passages: list[Passage] | None, question: str
) -> dict[str, Any]:
    """A baseline's one call: its own system prompt, the passages if any, the text form (with
    the reasoning first for chain-of-thought), or prose."""
    reasoned = step == "reason and answer"
    shape = prompts.REASONED_TEXT_FORM if reasoned else prompts.TEXT_FORM
    user = prompts.answer_prompt(question, passages, shape)
    check = check_reasoned if reasoned else check_text
    return episode.ask(step, system, user, check, schema=shape, prose=prose_answer)


def _text_reply(text: str, passages: list[Passage], metadata: dict[str, Any], prose: bool) -> Answer:
    return text_answer(text, passages, {**metadata, "reply": "prose"} if prose else metadata)


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
    data = _baseline(episode, "answer", prompts.NO_RETRIEVAL, None, question)
    return _text_reply(data["long_answer"], [], episode.metadata(), data.get(PROSE, False))


def cot(question: str, *, model: Model) -> Answer:
    episode = model.episode()
    data = _baseline(episode, "reason and answer", prompts.REASONER, None, question)
    metadata = episode.metadata(reasoning=data.get("reasoning"))
    return _text_reply(data["long_answer"], [], metadata, data.get(PROSE, False))


def _rag(question: str, passages: list[Passage], retriever: Any, model: Model, reasoned: bool) -> Answer:
    episode = model.episode()
    evidence, source = gather(question, passages, retriever, TOP_K)
    if reasoned:
        data = _baseline(episode, "reason and answer", prompts.REASONING_READER, evidence, question)
    else:
        data = _baseline(episode, "answer", prompts.READER, evidence, question)
    extra = {"reasoning": data.get("reasoning")} if reasoned else {}
    metadata = episode.metadata(evidence=source, retrieved=[p.id for p in evidence], **extra)
    return _text_reply(data["long_answer"], evidence, metadata, data.get(PROSE, False))


def naive_rag(question: str, passages: list, retriever: Any, *, model: Model) -> Answer:
    return _rag(question, passages, retriever, model, reasoned=False)


def cot_rag(question: str, passages: list, retriever: Any, *, model: Model) -> Answer:
    return _rag(question, passages, retriever, model, reasoned=True)


def react(question: str, passages: list, retriever: Any, *, model: Model) -> Answer:
    """Thought, then search or answer, until the model answers; once the searches are spent
    the only action left is the answer (MARCH section 4: the agent "is compelled to execute
    the Answer action"). The protocol's passages, if any, are the first observation."""
    episode = model.episode()
    trail: list[tuple[str, str, list[Passage]]] = (
        [("", "(the passages given)", list(passages))] if passages else []
    )
    seen: dict[str, Passage] = {p.id: p for p in passages}
    searches: list[str] = []
    while True:
        allowed = ("search", "answer") if len(searches) < REACT_BUDGET else ("answer",)
        step = f"act {len(searches) + 1}" if "search" in allowed else "answer (forced at the budget)"
        forced = "search" not in allowed
        turn = episode.ask(
            step,
            prompts.ACTOR,
            prompts.act_prompt(question, trail, REACT_BUDGET - len(searches), allowed),
            check_act(allowed),
            schema=prompts.act_form(allowed),
            prose=(lambda text: {"action": "answer", "answer": text, PROSE: True}) if forced else None,
        )
        if turn["action"] == "answer":
            break
        found = list(retriever(turn["query"], TOP_K))
        for p in found:
            seen.setdefault(p.id, p)
        searches.append(turn["query"])
        trail.append((str(turn.get("thought", "")), turn["query"], found))
    evidence = list(seen.values())
    metadata = episode.metadata(searches=searches, retrieved=[p.id for p in evidence], forced_answer=forced)
    return _text_reply(turn["answer"], evidence, metadata, turn.get(PROSE, False))
