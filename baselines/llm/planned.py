"""Methods that lay out the readings (or the parts) of a question before they retrieve.

- ``diva``: diversify, verify, adapt (In et al. 2025, as MARCH section 5.1 describes it):
  the question becomes several clarified readings, each is searched once, the model labels
  each reading's passages useful / partially useful / useless, and the answer adapts: it
  reads the passages that helped, or answers from the model's own knowledge when none did.
- ``clarion``: MARCH's method (Park et al. 2025, section 4): a planning agent detects
  ambiguity, classifies its type (semantic, syntactic, constraint) and writes clarified
  questions before anything is searched; an acting agent then runs a bounded ReAct loop (5
  turns) per reading (search, plan: add a missed reading, or answer), and the long answer
  covers every reading. ``clarion-no-clarification`` keeps detection and typing but acts on
  the original question; ``clarion-no-detection`` has no planning agent at all (MARCH
  Table 3's two ablations).
- ``treerare``: TreeRare-lite (Zhang et al. 2025, arXiv 2506.00331, sections 3.1-3.3): the
  model parses the question into constituent phrases (an LLM parse: no parser model is
  installed here), then bottom-up each phrase gets queries conditioned on what its parts
  found, a search per query and a short evidence summary; the answer aggregates them.
"""

from __future__ import annotations

from typing import Any

from pytest_ambigqa.schema import Answer, Passage

from . import prompts
from .methods import KINDS, REACT_BUDGET, REACT_K, TOP_K, ambiguity_type, check_answer, to_answer
from .model import Model

MAX_READINGS = 5  # readings a method acts on (the plan's, plus any the acting agent adds)
KEPT = 20  # at most this many of a model's listed readings or phrases go into the answer's metadata
MAX_PHRASES = 5  # TreeRare-lite: phrases of the parse that are searched
PHRASE_K = 3  # passages per TreeRare-lite query


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def check_readings(data: Any) -> str | None:
    if not isinstance(data, dict) or not _strings(data.get("readings")) or not data["readings"]:
        return "readings must be a non-empty list of questions"
    return None


def check_labels(data: Any) -> str | None:
    labels = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(labels, dict) or not all(str(v).lower() in prompts.LABELS for v in labels.values()):
        return f"labels must map passage ids to one of: {', '.join(prompts.LABELS)}"
    return None


def check_detection(data: Any) -> str | None:
    if not isinstance(data, dict) or not isinstance(data.get("ambiguous"), bool):
        return "ambiguous must be true or false"
    kind = data.get("ambiguity_type")
    if kind is not None and not (isinstance(kind, str) and kind.strip().lower() in (*KINDS, "null", "")):
        return "ambiguity_type must be semantic, syntactic, constraint or null"
    return None


def check_plan(data: Any) -> str | None:
    problem = check_detection(data)
    if (
        problem is None
        and data["ambiguous"]
        and not (_strings(data.get("clarified_questions")) and data["clarified_questions"])
    ):
        return "an ambiguous question needs clarified_questions, a non-empty list of questions"
    return problem


def check_planned_act(data: Any) -> str | None:
    action = data.get("action") if isinstance(data, dict) else None
    if action not in ("search", "plan", "answer"):
        return 'it must be an object whose action is "search", "plan" or "answer"'
    if action == "search" and not (isinstance(data.get("query"), str) and data["query"].strip()):
        return "a search needs a non-empty query"
    if action == "plan" and not _strings(data.get("new_readings")):
        return "a plan needs new_readings, a list of questions"
    return None


def check_parse(data: Any) -> str | None:
    phrases = data.get("phrases") if isinstance(data, dict) else None
    if not isinstance(phrases, list) or not phrases:
        return "phrases must be a non-empty list"
    for n, phrase in enumerate(phrases):
        if not isinstance(phrase, dict) or not isinstance(phrase.get("text"), str):
            return f"phrase {n}: it must be an object with a text"
        children = phrase.get("children", [])
        if not isinstance(children, list) or not all(isinstance(c, int) and 0 <= c < n for c in children):
            return f"phrase {n}: children must be indices of earlier phrases"
    return None


def check_queries(data: Any) -> str | None:
    if not isinstance(data, dict) or not _strings(data.get("queries")) or not data["queries"]:
        return "queries must be a non-empty list of strings"
    return None


def check_summary(data: Any) -> str | None:
    if not isinstance(data, dict) or not isinstance(data.get("evidence"), str):
        return "evidence must be a string"
    return None


def _search(retriever: Any, query: str, k: int, searches: list[str]) -> list[Passage]:
    searches.append(query)
    return list(retriever(query, k))


def _merged(groups: list[tuple[str, list[Passage]]]) -> list[Passage]:
    seen: dict[str, Passage] = {}
    for _, found in groups:
        for p in found:
            seen.setdefault(p.id, p)
    return list(seen.values())


def diva(question: str, passages: list, retriever: Any, *, model: Model) -> Answer:
    episode = model.episode()
    readings = episode.ask(
        "diversify",
        prompts.DIVERSIFIER,
        prompts.readings_prompt(question, prompts.DIVERSIFY_FORM),
        check_readings,
    )["readings"]
    readings = list(dict.fromkeys(r.strip() for r in readings))[:MAX_READINGS]
    searches: list[str] = []
    groups, labels = [], {}
    for n, reading in enumerate(readings, 1):
        found = list(passages) if passages else _search(retriever, reading, TOP_K, searches)
        verdict = episode.ask(
            f"verify {n}", prompts.VERIFIER, prompts.verify_prompt(reading, found), check_labels
        )
        marks = {pid.strip("[] "): str(label).lower() for pid, label in verdict["labels"].items()}
        labels[reading] = marks
        helpful = [p for p in found if marks.get(p.id) in ("useful", "partially useful")]
        groups.append((reading, helpful))
    evidence = _merged(groups)
    if evidence:  # adapt: answer from the passages that helped
        user, strategy = prompts.evidence_prompt(question, groups, prompts.ANSWER_FORM), "retrieved evidence"
    else:  # adapt: nothing helped, so the model answers from its own knowledge
        user, strategy = prompts.answer_prompt(question, None, prompts.ANSWER_FORM), "own knowledge"
    data = episode.ask("adapt and answer", prompts.ANSWERER, user, check_answer)
    metadata = episode.metadata(
        readings=readings,
        searches=searches,
        labels=labels,
        strategy=strategy,
        retrieved=[p.id for p in evidence],
    )
    return to_answer(data, evidence, metadata)


def _act(episode, question: str, reading: str, n: int, passages: list, retriever: Any, searches: list[str]):
    """One reading's bounded ReAct loop: its passages, and any readings it adds to the plan."""
    trail: list[tuple[str, str, list[Passage]]] = []
    added: list[str] = []
    found_all: dict[str, Passage] = {p.id: p for p in passages}
    for turn in range(1, REACT_BUDGET + 1):
        user = prompts.planned_act_prompt(question, reading, trail, REACT_BUDGET)
        step = episode.ask(f"act {n}.{turn}", prompts.INTERPRETATION_ACTOR, user, check_planned_act)
        if step["action"] == "answer":
            return list(found_all.values()), added, False
        if step["action"] == "plan":
            added += step["new_readings"]
            trail.append((str(step.get("thought", "")), "(plan)", []))
            continue
        found = _search(retriever, step["query"], REACT_K, searches)
        for p in found:
            found_all.setdefault(p.id, p)
        trail.append((str(step.get("thought", "")), step["query"], found))
    return list(found_all.values()), added, True


def _clarion(question: str, passages: list, retriever: Any, model: Model, variant: str) -> Answer:
    episode = model.episode()
    detected: dict[str, Any] = {"ambiguous": None, "ambiguity_type": None}
    readings = [question]
    if variant == "clarion":
        plan = episode.ask(
            "plan", prompts.PLANNER, prompts.readings_prompt(question, prompts.PLAN_FORM), check_plan
        )
        detected = {"ambiguous": plan["ambiguous"], "ambiguity_type": ambiguity_type(plan)}
        readings = plan["clarified_questions"] if plan["ambiguous"] else [question]
    elif variant == "clarion-no-clarification":
        detection = episode.ask(
            "detect",
            prompts.DETECTOR,
            prompts.readings_prompt(question, prompts.DETECT_FORM),
            check_detection,
        )
        detected = {"ambiguous": detection["ambiguous"], "ambiguity_type": ambiguity_type(detection)}
    planned = list(readings)
    searches: list[str] = []
    groups: list[tuple[str, list[Passage]]] = []
    forced = []
    queue = list(dict.fromkeys(readings))[:MAX_READINGS]
    n = 0
    while n < len(queue):
        found, added, at_budget = _act(episode, question, queue[n], n + 1, passages, retriever, searches)
        groups.append((queue[n], found))
        forced.append(at_budget)
        if variant == "clarion":  # the ablations have no clarification: nobody adds readings
            queue += [r for r in dict.fromkeys(added) if r not in queue][: MAX_READINGS - len(queue)]
        n += 1
    data = episode.ask(
        "answer",
        prompts.ANSWERER,
        prompts.evidence_prompt(question, groups, prompts.ANSWER_FORM),
        check_answer,
    )
    if detected["ambiguous"] is not None:  # the planning agent's verdict is the method's report
        data = {**data, "ambiguous": detected["ambiguous"], "ambiguity_type": detected["ambiguity_type"]}
    evidence = _merged(groups)
    metadata = episode.metadata(
        variant=variant,
        plan=planned[:KEPT],
        plan_size=len(planned),
        readings=queue,
        searches=searches,
        forced_at_budget=forced,
        retrieved=[p.id for p in evidence],
        **{k: v for k, v in detected.items() if v is not None},
    )
    return to_answer(data, evidence, metadata)


def clarion(question: str, passages: list, retriever: Any, *, model: Model) -> Answer:
    return _clarion(question, passages, retriever, model, "clarion")


def clarion_no_clarification(question: str, passages: list, retriever: Any, *, model: Model) -> Answer:
    return _clarion(question, passages, retriever, model, "clarion-no-clarification")


def clarion_no_detection(question: str, passages: list, retriever: Any, *, model: Model) -> Answer:
    return _clarion(question, passages, retriever, model, "clarion-no-detection")


def treerare(question: str, passages: list, retriever: Any, *, model: Model) -> Answer:
    episode = model.episode()
    parse = episode.ask(
        "parse", prompts.PARSER, prompts.readings_prompt(question, prompts.PARSE_FORM), check_parse
    )
    phrases = parse["phrases"]
    chosen = phrases[-MAX_PHRASES:]  # the larger phrases, the whole question last
    offset = len(phrases) - len(chosen)
    notes: dict[int, str] = {}
    searches: list[str] = []
    groups: list[tuple[str, list[Passage]]] = []
    for index, phrase in enumerate(chosen, offset):
        known = [notes[c] for c in phrase.get("children", []) if c in notes]
        queries = episode.ask(
            f"queries {index}",
            prompts.QUERIER,
            prompts.node_prompt(question, phrase["text"], known, prompts.QUERY_FORM),
            check_queries,
        )["queries"][:3]
        found = list(passages) if passages else []
        for query in queries if not passages else []:
            found += [
                p for p in _search(retriever, query, PHRASE_K, searches) if p.id not in {f.id for f in found}
            ]
        summary = episode.ask(
            f"evidence {index}",
            prompts.SUMMARISER,
            prompts.node_prompt(question, phrase["text"], known, prompts.SUMMARY_FORM, found),
            check_summary,
        )
        notes[index] = f"{phrase['text']}: {summary['evidence']}"
        groups.append((phrase["text"], found))
    aggregate = prompts.evidence_prompt(question, groups, prompts.ANSWER_FORM)
    aggregate = aggregate.replace(
        "Evidence:\n", "Evidence:\n" + "".join(f"- {n}\n" for n in notes.values()) + "\n", 1
    )
    data = episode.ask("aggregate", prompts.ANSWERER, aggregate, check_answer)
    evidence = _merged(groups)
    metadata = episode.metadata(
        phrases=[p["text"] for p in phrases][:KEPT],
        phrase_count=len(phrases),
        searches=searches,
        notes=list(notes.values()),
        retrieved=[p.id for p in evidence],
    )
    return to_answer(data, evidence, metadata)
