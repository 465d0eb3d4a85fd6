"""Methods that lay out the readings (or the parts) of a question before they retrieve.

- ``diva``: diversify, verify, adapt (In et al. 2025, as MARCH section 5.1 describes it):
  the question becomes several clarified readings, each is searched once (top 10), the model
  labels each reading's passages useful / partially useful / useless, and the answer adapts:
  it reads the passages that helped, or answers from the model's own knowledge when none did.
- ``clarion``: MARCH's method (Park et al. 2025, section 4, Appendix H and J): a planning
  agent of two prompts, detection and typing (Figure 15), then exactly two clarified
  questions (Figure 16), before anything is searched (an unambiguous question goes on as it
  is); an acting agent then runs a ReAct loop per reading (search, top 10; plan: add a missed
  reading; or answer), and the long answer covers every reading. Appendix H sets "the agent's
  maximum search iteration" to 5, one budget: the readings share 5 turns, taken in order, so a
  reading met after they are spent is answered without evidence of its own (section 4: the
  answer covers all interpretations "or as many as possible under the iteration budget").
  Passages the protocol hands over are the loop's first observation.
  ``clarion-no-clarification`` keeps detection and typing but acts on the original question;
  ``clarion-no-detection`` has no planning agent at all (MARCH Table 3's two ablations).
- ``treerare``: TreeRare (Zhang et al. 2025, arXiv 2506.00331, sections 3.1-3.4 and Appendix
  A): the question's syntax tree, bottom up, each node not pruned (a non-informative type:
  punctuation, determiners, conjunctions; or fewer than three tokens) gets up to five queries
  (three kept) conditioned on what its children found, BM25's top 15 per query merged, and a
  short answer to its queries, its evidence (section 3.3); the final answer aggregates the
  nodes' evidence, not their passages (section 3.4). The tree is the model's parse: Stanza's
  parser is not available offline, so the label says so.

MARCH Appendix H's decoding (temperature 0, at most 512 new tokens) for DIVA and CLARION;
TreeRare states none (temperature 0, no limit here).
"""

from __future__ import annotations

import re
from typing import Any

from pytest_ambigqa.schema import Answer, Passage

from . import prompts
from .methods import KINDS, REACT_BUDGET, TOP_K, ambiguity_type, answer, to_answer
from .model import Decoding, Model

MAX_READINGS = 5  # readings a method acts on (the plan's, plus any the acting agent adds)
KEPT = 20  # at most this many of a model's listed readings or phrases go into the answer's metadata
TREERARE_K = 15  # TreeRare Appendix A: BM25's top 15 paragraphs per query
TREERARE_QUERIES = 3  # TreeRare Appendix A: up to five candidate queries, the top three kept
MIN_TOKENS = 3  # TreeRare Appendix A: nodes whose sub-phrase is shorter are pruned
# TreeRare Appendix A: "syntactic types typically considered non-informative (e.g.,
# punctuation, determiners, conjunctions)", as Penn Treebank and Universal Dependencies name them.
NON_INFORMATIVE = frozenset(
    {"DT", "PDT", "WDT", "DET", "CC", "CONJ", "CCONJ", "PUNCT", ".", ",", ":", "``", "''", "-LRB-", "-RRB-"}
)
TREERARE_DECODING = Decoding(0.0, None, "TreeRare states none")
_WORD = re.compile(r"\w+")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def check_readings(data: Any) -> str | None:
    if not isinstance(data, dict) or not _strings(data.get("readings")) or not data["readings"]:
        return "readings must be a non-empty list of questions"
    return None


def check_labels(data: Any) -> str | None:
    labels = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(labels, list) or not all(
        isinstance(x, dict) and isinstance(x.get("id"), str) and str(x.get("label")).lower() in prompts.LABELS
        for x in labels
    ):
        return f"labels must be a list of {{id, label}} with a label of: {', '.join(prompts.LABELS)}"
    return None


def check_detection(data: Any) -> str | None:
    if not isinstance(data, dict) or not isinstance(data.get("ambiguous"), bool):
        return "ambiguous must be true or false"
    kind = data.get("ambiguity_type")
    if kind is not None and not (
        isinstance(kind, str) and kind.strip().lower() in (*KINDS, "none", "null", "")
    ):
        return "ambiguity_type must be syntactic, constraint, semantic or none"
    return None


def check_clarification(data: Any) -> str | None:
    keys = ("clarified_question_1", "clarified_question_2")
    if not isinstance(data, dict) or not _strings([data.get(k) for k in keys]):
        return "clarified_question_1 and clarified_question_2 must be non-empty questions"
    return None


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
        if not isinstance(children, list) or not all(isinstance(c, int) and c >= 0 for c in children):
            return f"phrase {n}: children must be indices of phrases"
    return None


def earlier_children(phrases: list[dict[str, Any]]) -> list[str]:
    """Each phrase's children kept to earlier phrases (what the parse's schema cannot say):
    a later or own index is dropped, and said in the notes returned."""
    notes = []
    for n, phrase in enumerate(phrases):
        children = phrase.get("children", [])
        dropped = [c for c in children if c >= n]
        if dropped:
            phrase["children"] = [c for c in children if c < n]
            notes.append(f"phrase {n}: children {dropped} are not earlier phrases, dropped")
    return notes


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
        schema=prompts.DIVERSIFY_FORM,
    )["readings"]
    readings = list(dict.fromkeys(r.strip() for r in readings))[:MAX_READINGS]
    searches: list[str] = []
    groups, labels = [], {}
    for n, reading in enumerate(readings, 1):
        found = list(passages) if passages else _search(retriever, reading, TOP_K, searches)
        verdict = episode.ask(
            f"verify {n}",
            prompts.VERIFIER,
            prompts.verify_prompt(reading, found),
            check_labels,
            schema=prompts.VERIFY_FORM,
        )
        marks = {x["id"].strip("[] "): str(x["label"]).lower() for x in verdict["labels"]}
        labels[reading] = marks
        helpful = [p for p in found if marks.get(p.id) in ("useful", "partially useful")]
        groups.append((reading, helpful))
    evidence = _merged(groups)
    if evidence:  # adapt: answer from the passages that helped
        user, strategy = prompts.evidence_prompt(question, groups, prompts.ANSWER_FORM), "retrieved evidence"
    else:  # adapt: nothing helped, so the model answers from its own knowledge
        user, strategy = prompts.answer_prompt(question, None, prompts.ANSWER_FORM), "own knowledge"
    data = answer(episode, "adapt and answer", user)
    metadata = episode.metadata(
        readings=readings,
        searches=searches,
        labels=labels,
        strategy=strategy,
        retrieved=[p.id for p in evidence],
    )
    return to_answer(data, evidence, metadata)


def _act(
    episode,
    question: str,
    reading: str,
    n: int,
    passages: list,
    retriever: Any,
    searches: list[str],
    left: int,
    waiting: int,
):
    """One reading's ReAct loop, within the ``left`` turns the readings share: its passages
    (the handed-over ones first, read as its first observation), the readings it adds to the
    plan, the turns it took, and whether it stopped because they ran out."""
    trail: list[tuple[str, str, list[Passage]]] = (
        [("", "(the passages given)", list(passages))] if passages else []
    )
    added: list[str] = []
    found_all: dict[str, Passage] = {p.id: p for p in passages}
    for turn in range(1, left + 1):
        user = prompts.planned_act_prompt(question, reading, trail, left - turn + 1, waiting)
        step = episode.ask(
            f"act {n}.{turn}",
            prompts.INTERPRETATION_ACTOR,
            user,
            check_planned_act,
            schema=prompts.PLANNED_ACT_FORM,
        )
        if step["action"] == "answer":
            return list(found_all.values()), added, turn, False
        if step["action"] == "plan":
            added += step["new_readings"]
            trail.append((str(step.get("thought", "")), "(plan)", []))
            continue
        found = _search(retriever, step["query"], TOP_K, searches)
        for p in found:
            found_all.setdefault(p.id, p)
        trail.append((str(step.get("thought", "")), step["query"], found))
    return list(found_all.values()), added, left, True


def _detect(episode, question: str) -> dict[str, Any]:
    """The planning agent's first prompt (MARCH Figure 15): is the question ambiguous, and how."""
    return episode.ask(
        "detect",
        prompts.DETECTOR,
        prompts.readings_prompt(question, prompts.DETECT_FORM),
        check_detection,
        schema=prompts.DETECT_FORM,
    )


def _clarion(question: str, passages: list, retriever: Any, model: Model, variant: str) -> Answer:
    episode = model.episode()
    detected: dict[str, Any] = {"ambiguous": None, "ambiguity_type": None}
    readings = [question]
    if variant != "clarion-no-detection":
        analysis = _detect(episode, question)
        detected = {"ambiguous": analysis["ambiguous"], "ambiguity_type": ambiguity_type(analysis)}
        if variant == "clarion" and analysis["ambiguous"]:  # MARCH Figure 16: exactly two
            clarified = episode.ask(
                "clarify",
                prompts.CLARIFIER,
                prompts.clarify_prompt(question, analysis),
                check_clarification,
                schema=prompts.CLARIFY_FORM,
            )
            readings = [clarified["clarified_question_1"].strip(), clarified["clarified_question_2"].strip()]
    planned = list(readings)
    searches: list[str] = []
    groups: list[tuple[str, list[Passage]]] = []
    forced, turns = [], []
    queue = list(dict.fromkeys(readings))[:MAX_READINGS]
    left = REACT_BUDGET  # MARCH Appendix H: one budget for the item, shared by its readings
    for n, reading in enumerate(queue, 1):  # a reading met once it is spent acts no turn
        found, added, used, at_budget = _act(
            episode, question, reading, n, passages, retriever, searches, left, len(queue) - n
        )
        left -= used
        groups.append((reading, found))
        forced.append(at_budget)
        turns.append(used)
        if variant == "clarion":  # the ablations have no clarification: nobody adds readings
            queue += [r for r in dict.fromkeys(added) if r not in queue][: MAX_READINGS - len(queue)]
    data = answer(episode, "answer", prompts.evidence_prompt(question, groups, prompts.ANSWER_FORM))
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
        turns=turns,
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


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def kept_nodes(phrases: list[dict[str, Any]], question: str) -> list[int]:
    """The nodes TreeRare processes (Appendix A): not of a non-informative type, at least
    three tokens long; at most as many as the question has tokens (a syntax tree has fewer
    inner nodes than leaves, so only a parse that is no tree is cut)."""
    kept = [
        n
        for n, p in enumerate(phrases)
        if str(p.get("type", "")).strip().upper() not in NON_INFORMATIVE
        and len(_tokens(p["text"])) >= MIN_TOKENS
    ]
    return kept[: max(1, len(_tokens(question)))]


def top_queries(queries: list[str], phrase: str) -> list[str]:
    """TreeRare Appendix A keeps the top three of up to five queries "by heuristic rules
    prioritizing coverage and specificity"; ours: most of the phrase's words covered, then the
    most words, then the model's order."""
    words = set(_tokens(phrase))
    unique = list(dict.fromkeys(q.strip() for q in queries if q.strip()))[:5]
    ranked = sorted(
        enumerate(unique), key=lambda x: (-len(words & set(_tokens(x[1]))), -len(_tokens(x[1])), x[0])
    )
    return [q for _, q in ranked[:TREERARE_QUERIES]]


def treerare(question: str, passages: list, retriever: Any, *, model: Model) -> Answer:
    episode = model.episode()
    phrases = episode.ask(
        "parse",
        prompts.PARSER,
        prompts.readings_prompt(question, prompts.PARSE_FORM),
        check_parse,
        schema=prompts.PARSE_FORM,
    )["phrases"]
    for note in earlier_children(phrases):
        episode.note(note)
    kept = kept_nodes(phrases, question)
    notes: dict[int, list[str]] = {}  # each node's evidence, or a pruned node's children's
    searches: list[str] = []
    asked: list[list[str]] = []  # each node's kept queries
    groups: list[tuple[str, list[Passage]]] = []
    for index, phrase in enumerate(phrases):
        known = [note for c in phrase.get("children", []) for note in notes.get(c, [])]
        if index not in kept:
            notes[index] = known  # a pruned node passes its children's evidence up
            continue
        queries = episode.ask(
            f"queries {index}",
            prompts.QUERIER,
            prompts.node_prompt(question, phrase["text"], known, prompts.QUERY_FORM),
            check_queries,
            schema=prompts.QUERY_FORM,
        )["queries"]
        queries = top_queries(queries, phrase["text"])
        asked.append(queries)
        found: dict[str, Passage] = {p.id: p for p in passages}
        for query in queries if not passages else []:
            for p in _search(retriever, query, TREERARE_K, searches):
                found.setdefault(p.id, p)
        summary = episode.ask(
            f"evidence {index}",
            prompts.SUMMARISER,
            prompts.node_prompt(
                question, phrase["text"], known, prompts.SUMMARY_FORM, list(found.values()), queries
            ),
            check_summary,
            schema=prompts.SUMMARY_FORM,
        )
        marks = summary["citations"] if isinstance(summary.get("citations"), list) else []
        cited = "".join(f" [{c}]" for c in dict.fromkeys(str(m).strip("[] ") for m in marks) if c in found)
        notes[index] = [f"{phrase['text']}: {summary['evidence']}{cited}"]
        groups.append((phrase["text"], list(found.values())))
    node_notes = [notes[i][0] for i in kept]
    data = answer(episode, "aggregate", prompts.aggregate_prompt(question, node_notes, prompts.ANSWER_FORM))
    evidence = _merged(groups)
    metadata = episode.metadata(
        phrases=[p["text"] for p in phrases][:KEPT],
        phrase_count=len(phrases),
        nodes=[phrases[i]["text"] for i in kept][:KEPT],
        queries=asked[:KEPT],
        searches=searches,
        notes=node_notes,
        retrieved=[p.id for p in evidence],
    )
    return to_answer(data, evidence, metadata)
