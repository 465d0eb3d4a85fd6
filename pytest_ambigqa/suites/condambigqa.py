"""CondAmbigQA: conditional ambiguous QA (Li et al. 2025, arXiv 2502.01523), 200 and 2K releases.

Each item comes with 20 retrieved fragments (``ctxs``); a gold citation names its
fragment by a 1-based number in its title ("2. Title" is ``ctxs[1]``), which we turn
into the passage id ``F2``. The four settings of the paper (``metrics.conditional.SETTINGS``)
decide what systems are given, what the judge sees and how items are scored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..judge import Judgement
from ..metrics.conditional import (
    SETTINGS,
    PairScores,
    Setting,
    citation_precision,
    count_difference,
    fragment_id,
    gold_fragment,
    greedy_match,
    is_official_citation,
    item_scores,
)
from ..metrics.text import word_count
from ..models.usage import Usage
from ..schema import AmbigItem, Answer, GeneratedInterpretation, Interpretation, Passage
from .base import LoadOptions, Protocol, Scored, Scorers, Suite, add_judgement, add_self_report
from .records import Record, read_records

JUDGED = SETTINGS["main"].metrics  # every judged metric; the other settings report fewer
CITING = ("citation", "unofficial_citations")  # what a setting without citations does not report


class CondAmbigQA(Suite):
    name = "condambigqa"
    title = "CondAmbigQA"
    metrics = (
        "condition",
        "answer",
        "citation_matched",
        "combined",
        "balanced",
        "balanced_combined",
        "citation",
        "unofficial_citations",
        "answer_count",
        "count_diff",
        "ambiguity_detected",
        "length",
    )
    sample_file = "condambigqa_sample.json"
    judge_packages = ("deepeval",)  # G-Eval, as the paper scores conditions and answers

    def parse(self, path: Path, text: str, options: LoadOptions) -> list[tuple[str, AmbigItem]]:
        return [(rec.where, _item(rec)) for rec in read_records(path, text)]

    def inputs(self, item: AmbigItem, scorers: Scorers) -> dict[str, Any]:
        setting = SETTINGS[scorers.condambigqa_setting]
        inputs: dict[str, Any] = {
            "passages": list(item.passages) if setting.passages else [],
            "conditions": item.conditions if setting.gold_conditions else [],
        }
        if not setting.passages:
            inputs["retriever"] = None  # closed book: no evidence of any kind
        return inputs

    def protocol(self, scorers: Scorers, inputs: Sequence[str], has_passages: bool) -> Protocol:
        setting = SETTINGS[scorers.condambigqa_setting]
        return Protocol(setting.name, f"{setting.name}: {setting.gives} [{setting.source}]")

    def score(self, item: AmbigItem, answer: Answer, scorers: Scorers) -> Scored:
        """The no-judge citation score pools every cited fragment against every gold one.

        The paper's Citation Score is the mean over matched condition-answer pairs
        (``citation_matched``); matching needs the judge's condition and answer scores.
        """
        setting = SETTINGS[scorers.condambigqa_setting]
        pairs = generated_pairs(answer)
        scored = Scored(
            {
                "answer_count": float(len(pairs)),
                "count_diff": float(count_difference(len(pairs), len(item.interpretations))),
                "length": float(word_count(answer.text)),
            },
            scorers.unavailable(self.metrics),
        )
        if setting.passages:
            # a bare-text answer's pair already carries the answer's citations
            cited = list(answer.citations) if answer.interpretations else []
            cited += [c for p in pairs for c in p.citations]
            gold = {pid for interp in item.interpretations for pid in interp.passage_ids}
            scored.scores["citation"] = citation_precision(cited, gold)
            scored.scores["unofficial_citations"] = float(sum(not is_official_citation(c) for c in cited))
        add_self_report(scored, item, answer)
        if scorers.judge is not None and scorers.wants(*setting.metrics):
            add_judgement(
                scored,
                setting.metrics,
                lambda usage: judge_pairs(scorers.judge, setting, item, pairs, usage),
            )
        scored.unscored.update(self.outside_setting(scorers))
        return scored

    def outside_setting(self, scorers: Scorers) -> dict[str, str]:
        setting = SETTINGS[scorers.condambigqa_setting]
        outside = [m for m in JUDGED if m not in setting.metrics]
        if not setting.passages:
            outside += CITING
        return dict.fromkeys(outside, f"not part of the {setting.name} setting")


def generated_pairs(answer: Answer) -> tuple[GeneratedInterpretation, ...]:
    """The answer's condition-answer pairs; a bare text answer is one pair citing its citations."""
    if answer.interpretations or not answer.text.strip():
        return answer.interpretations
    return (GeneratedInterpretation(answer=answer.text, citations=answer.citations),)


def judge_input(item: AmbigItem, setting: Setting) -> str:
    """What G-Eval sees as the test case input.

    The released main and no-conditions runs pass the whole generation prompt (question and
    fragments); the gold-conditions and closed-book runs pass the bare question. The task
    lines are ours; the fragments are laid out as the released prompts lay them out.
    """
    if not setting.judge_sees_prompt:
        return item.question
    fragments = "\n".join(f"Fragment {n} - {p.title}:\n{p.text}" for n, p in enumerate(item.passages, 1))
    task = (
        "Using only these fragments, find the conditions under which the question has different "
        "answers, answer it under each condition, and cite the fragments behind each answer."
        if setting.name == "main"
        else "Using only these fragments, answer the question, with separate answers where it has "
        "several, and cite the fragments behind each answer."
    )
    return f"Question: {item.question}\nRetrieved fragments:\n{fragments}\n\nTask: {task}"


def judge_pairs(
    judge: Any,
    setting: Setting,
    item: AmbigItem,
    pairs: tuple[GeneratedInterpretation, ...],
    usage: Usage,
) -> Judgement:
    """Match the generated pairs to the gold properties with G-Eval, once per judge seed.

    Each seed's item scores are one sample; closed-book answer units are averaged over the
    seeds pair by pair.
    """
    from ..judge.geval import ANSWER, CONDITION

    gold = item.interpretations
    source = judge_input(item, setting)
    cites = sum(len(p.citations) for p in pairs) / len(pairs) if pairs else 0.0
    samples: dict[str, list[float]] = {}
    units: list[list[float]] = []
    matched: list[dict[str, Any]] = []
    for seed in judge.seeds:

        def score(g: int, k: int, seed: int = seed) -> PairScores:
            pair, prop = pairs[g], gold[k]
            condition = 0.0
            if setting.weights[0]:
                condition = judge.geval(
                    CONDITION, source, pair.condition or "", prop.condition or "", seed, usage
                )
            answer = judge.geval(ANSWER, source, pair.answer, prop.short_answers[0], seed, usage)
            return PairScores(condition, answer, citation_precision(pair.citations, prop.passage_ids))

        matches = greedy_match(setting, len(pairs), len(gold), score)
        if not matched:  # the first seed's matching, for the report
            matched = [
                {"pair": g, "gold": k, **({} if s is None else dataclasses.asdict(s))}
                for g, (k, s) in enumerate(matches)
            ]
        scores = item_scores(setting, matches, len(gold), cites)
        for metric, value in scores.values.items():
            samples.setdefault(metric, []).append(value)
        if "answer" in scores.units:
            units.append(scores.units["answer"])
    pooled = {"answer": [sum(u) / len(u) for u in zip(*units, strict=True)]} if units else {}
    return Judgement(samples, pooled, {"matches": matched})


def _item(rec: Record) -> AmbigItem:
    item_id = rec.string("id")
    rec.where = f"{rec.where} (item '{item_id}')"
    passages = tuple(
        Passage(
            id=fragment_id(n),
            title=ctx.string("title", default=""),
            text=ctx.string("text"),
            score=_score(ctx),
        )
        for n, ctx in enumerate(rec.records("ctxs", required=False), start=1)
    )
    interpretations = []
    for prop in rec.records("properties", nonempty=True):
        cited = (gold_fragment(c.string("title")) for c in prop.records("citations", required=False))
        interpretations.append(
            Interpretation(
                question=None,
                condition=prop.text("condition"),
                short_answers=(prop.text("groundtruth"),),
                # Titles without a fragment number are ignored, as the official scorer does.
                passage_ids=tuple(dict.fromkeys(c for c in cited if c)),
            )
        )
    return AmbigItem(
        suite="condambigqa",
        id=item_id,
        question=rec.string("question"),
        interpretations=tuple(interpretations),
        passages=passages,
    )


def _score(ctx: Record) -> float | None:
    value = ctx.data.get("score")
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None
