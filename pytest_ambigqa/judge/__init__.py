"""The LLM judge: MARCH's 0-5 criteria, CondAmbigQA's G-Eval pairs, and the LLM reader.

One :class:`Judge` per process wraps the client (cache, retries, JSON checks, cost). With
``samples`` K > 1 every judgement is made K times with seeds seed, seed+1, ... and the item
score is their mean; the spread between samples is kept to report judge variance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..metrics.conditional import (
    balanced_answer,
    citation_precision,
    combined_score,
    count_adjustment,
    greedy_match,
)
from ..schema import AmbigItem, Answer
from . import march
from .cache import CallCache
from .client import JudgeClient, JudgeSettings, JudgeUnavailable, Usage

__all__ = ["Judge", "JudgeSettings", "JudgeUnavailable", "LLMReader", "Usage"]

CACHE_FILE = "judge.sqlite"

# CondAmbigQA's settings (seeds/004 section 4.2) and the weights its released code uses to
# pair generated condition-answer pairs with gold properties: (condition, answer, citation).
SETTINGS = {
    "main": (0.3, 0.5, 0.2),
    "gold-conditions": (0.0, 0.6, 0.4),
    "no-conditions": (0.0, 0.7, 0.3),
}


@dataclass(frozen=True)
class Judgement:
    """Judge metrics of one item: each metric's samples (one per seed)."""

    samples: dict[str, list[float]]

    def means(self) -> dict[str, float]:
        return {m: sum(v) / len(v) for m, v in self.samples.items()}


class Judge:
    def __init__(self, settings: JudgeSettings, cache_dir: Path | None, samples: int = 1) -> None:
        cache = CallCache(cache_dir / CACHE_FILE) if cache_dir is not None else None
        self.client = JudgeClient(settings, cache)
        self.samples = samples

    @property
    def seeds(self) -> list[int]:
        return [self.client.settings.seed + k for k in range(self.samples)]

    def describe(self) -> dict[str, Any]:
        from ..systems import redact
        from .geval import TEMPLATE_HASH as GEVAL_HASH

        settings = self.client.settings
        return {
            "model": settings.model,
            "base_url": redact(self.client.base_url),
            "templates": {"march": march.TEMPLATE_HASH, "geval": GEVAL_HASH},
            "samples": self.samples,
            "seed": settings.seed,
            "prices_per_million": [settings.price_in, settings.price_out],
        }

    def march(self, item: AmbigItem, text: str, usage: Usage) -> Judgement:
        samples: dict[str, list[float]] = {}
        for seed in self.seeds:
            data, _ = self.client.chat_json(march.messages(item, text), march.check, usage, seed=seed)
            for metric, value in march.scores(data).items():
                samples.setdefault(metric, []).append(value)
        return Judgement(samples)

    def condambigqa(self, item: AmbigItem, answer: Answer, setting: str, usage: Usage) -> Judgement:
        """Condition, answer, matched-citation, combined and balanced scores (CondAmbigQA 4.1).

        Each generated pair is scored against every gold property with G-Eval, matched
        greedily (in output order) to the unused property with the best weighted score, and
        the item takes means over matched pairs. An answer with no pairs scores 0, where the
        released code drops the item: nothing is dropped here.
        """
        from .geval import ANSWER, CONDITION, GEvalScorer

        geval = GEvalScorer(self.client)
        weights = SETTINGS[setting]
        generated, gold = answer.interpretations, item.interpretations
        samples: dict[str, list[float]] = {}
        for seed in self.seeds:
            cond = [[0.0] * len(gold) for _ in generated]
            ans = [[0.0] * len(gold) for _ in generated]
            cit = [[0.0] * len(gold) for _ in generated]
            for g, pair in enumerate(generated):
                for k, prop in enumerate(gold):
                    if weights[0]:
                        cond[g][k] = geval.score(
                            CONDITION, item.question, pair.condition or "", prop.condition or "", seed, usage
                        )
                    ans[g][k] = geval.score(
                        ANSWER, item.question, pair.answer, prop.short_answers[0], seed, usage
                    )
                    cit[g][k] = citation_precision(pair.citations, prop.passage_ids)

            def weighted(g: int, k: int) -> float:
                return weights[0] * cond[g][k] + weights[1] * ans[g][k] + weights[2] * cit[g][k]  # noqa: B023

            matched = [(g, k) for g, k in greedy_match(len(generated), len(gold), weighted) if k is not None]
            values = _item_values(matched, cond, ans, cit, generated, len(gold), setting)
            for metric, value in values.items():
                samples.setdefault(metric, []).append(value)
        return Judgement(samples)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _item_values(matched, cond, ans, cit, generated, n_gold: int, setting: str) -> dict[str, float]:
    condition = _mean([cond[g][k] for g, k in matched])
    answer = _mean([ans[g][k] for g, k in matched])
    citation = _mean([cit[g][k] for g, k in matched])
    adjustment = count_adjustment(len(generated), n_gold, answer)
    values = {"answer": answer, "citation_matched": citation, "balanced": balanced_answer(answer, adjustment)}
    if setting == "main":
        per_pair = _mean([len(p.citations) for p in generated])
        values["condition"] = condition
        values["combined"] = combined_score(condition, answer, citation, per_pair, adjustment)
    return values


LLM_READER_SYSTEM = (
    "You extract answers from a text. Copy the shortest span of the context that answers the "
    "question, exactly as written. If the context does not answer it, use an empty string. "
    'Reply with only a JSON object: {"answer": "<span>"}.'
)


class LLMReader:
    """``--ambig-reader=llm``: the judge model extracts a verbatim span (or none)."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge

    def read(self, questions: Sequence[str], context: str, usage: Usage | None = None) -> list[str]:
        usage = usage if usage is not None else Usage()
        answers = []
        for question in questions:
            messages = [
                {"role": "system", "content": LLM_READER_SYSTEM},
                {"role": "user", "content": f"Context: {context}\n\nQuestion: {question}"},
            ]
            data, _ = self.judge.client.chat_json(messages, _check_answer, usage)
            span = data["answer"].strip()
            answers.append(span if span and span in context else "")  # not in the context: no answer
        return answers


def _check_answer(data: Any) -> str | None:
    if not isinstance(data, dict) or not isinstance(data.get("answer"), str):
        return "it must be an object with a string 'answer'"
    return None
