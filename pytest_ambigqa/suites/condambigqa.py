"""CondAmbigQA: conditional ambiguous QA (Li et al. 2025, seeds/004), 200 and 2K releases.

Each item comes with 20 retrieved fragments (``ctxs``); a gold citation names its
fragment by a 1-based number in its title ("2. Title" is ``ctxs[1]``), which we turn
into the passage id ``F2``.
"""

from __future__ import annotations

from pathlib import Path

from ..metrics.conditional import citation_precision, count_difference, fragment_id, gold_fragment
from ..metrics.text import word_count
from ..schema import AmbigItem, Answer, Interpretation, Passage
from .base import LoadOptions, Scored, Scorers, Suite, add_judgement
from .records import Record, read_records


class CondAmbigQA(Suite):
    name = "condambigqa"
    title = "CondAmbigQA"
    metrics = (
        "condition",
        "answer",
        "citation",
        "citation_matched",
        "combined",
        "balanced",
        "answer_count",
        "count_diff",
        "length",
    )
    sample_file = "condambigqa_sample.json"

    def parse(self, path: Path, text: str, options: LoadOptions) -> list[tuple[str, AmbigItem]]:
        return [(rec.where, _item(rec)) for rec in read_records(path, text)]

    def score(self, item: AmbigItem, answer: Answer, scorers: Scorers) -> Scored:
        """Citation precision here pools every fragment the answer cites against every gold one.

        The paper's citation score is the mean over matched condition-answer pairs
        (``citation_matched``); matching needs the judge's condition and answer scores.
        """
        cited = set(answer.citations).union(*(i.citations for i in answer.interpretations))
        gold = {pid for interp in item.interpretations for pid in interp.passage_ids}
        n = len(answer.interpretations)
        scored = Scored(
            {
                "citation": citation_precision(cited, gold),
                "answer_count": float(n),
                "count_diff": float(count_difference(n, len(item.interpretations))),
                "length": float(word_count(answer.text)),
            },
            scorers.unavailable(self.metrics),
        )
        if scorers.judge is not None:
            setting = scorers.condambigqa_setting
            judged = ["condition", "answer", "citation_matched", "combined", "balanced"]
            add_judgement(
                scored, judged, lambda usage: scorers.judge.condambigqa(item, answer, setting, usage)
            )
            for metric in judged:
                if metric not in scored.scores and metric not in scored.unscored:
                    scored.unscored[metric] = f"not part of the {setting} setting"
        return scored


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
                condition=prop.string("condition"),
                short_answers=(prop.string("groundtruth"),),
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
