"""The CondAmbigQA judge: generated condition-answer pairs matched to the gold properties
by G-Eval scores (Li et al. 2025, arXiv 2502.01523, section 4; the released
``main_experiment.py`` and its siblings, one per setting), once per judge seed."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..metrics.conditional import PairScores, Setting, citation_precision, greedy_match, item_scores
from ..models.batch import Deferrals
from ..models.usage import Usage
from ..schema import AmbigItem, GeneratedInterpretation
from .geval import ANSWER, CONDITION
from .judgement import Judgement

if TYPE_CHECKING:
    from . import Judge


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


def judgement(
    judge: Judge,
    setting: Setting,
    item: AmbigItem,
    pairs: tuple[GeneratedInterpretation, ...],
    usage: Usage,
) -> Judgement:
    """Match the generated pairs to the gold properties with G-Eval, once per judge seed.

    Each seed's item scores are one sample; closed-book answer units are averaged over the
    seeds pair by pair.
    """
    gold = item.interpretations
    source = judge_input(item, setting)
    cites = sum(len(p.citations) for p in pairs) / len(pairs) if pairs else 0.0
    samples: dict[str, list[float]] = {}
    units: list[list[float]] = []
    matched: list[dict[str, Any]] = []
    # Batch judging records, per seed, the calls of the first generated pair whose scores are
    # not in the cache yet; the pairs after it depend on its match, so wait for a later round.
    seeds = Deferrals()
    for seed in judge.seeds:
        row = Deferrals()

        def score(g: int, k: int, seed: int = seed, row: Deferrals = row) -> PairScores:
            row.before(g)
            pair, prop = pairs[g], gold[k]
            condition = 0.0
            if setting.weights[0]:
                condition = row.call(
                    judge.geval,
                    CONDITION,
                    source,
                    pair.condition or "",
                    prop.condition or "",
                    seed,
                    usage,
                    default=0.0,
                    at=g,
                )
            answer = row.call(
                judge.geval,
                ANSWER,
                source,
                pair.answer,
                prop.short_answers[0],
                seed,
                usage,
                default=0.0,
                at=g,
            )
            return PairScores(condition, answer, citation_precision(pair.citations, prop.passage_ids))

        def matched_all(
            score: Callable[[int, int], PairScores] = score, row: Deferrals = row
        ) -> list[tuple[int | None, PairScores | None]]:
            found = greedy_match(setting, len(pairs), len(gold), score)
            row.close()
            return found

        matches = seeds.call(matched_all)
        if matches is None:
            continue
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
    seeds.close()
    pooled = {"answer": [sum(u) / len(u) for u in zip(*units, strict=True)]} if units else {}
    return Judgement(samples, pooled, {"matches": matched})
