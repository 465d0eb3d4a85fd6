"""CondAmbigQA: conditional ambiguous QA (Li et al. 2025, arXiv 2502.01523), 200 and 2K releases.

Each item comes with 20 retrieved fragments (``ctxs``); a gold citation names its
fragment by a 1-based number in its title ("2. Title" is ``ctxs[1]``), which we turn
into the passage id ``F2``. The four settings of the paper (``metrics.conditional.SETTINGS``)
decide what systems are given, what the judge sees and how items are scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..metrics.conditional import SETTINGS, fragment_id, gold_fragment, setting_of
from ..schema import AmbigItem, Interpretation, Passage
from .base import LoadOptions, Scorers, Setup, Suite
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
    evidence_hint = (
        "the released files give each item its 20 retrieved fragments (ctxs): "
        "--ambig-data=hf://Apocalypse-AGI-DAO/CondAmbigQA (gated: a token and accepted terms)"
    )
    settings = tuple(SETTINGS)
    stored_setting_key = "setting"  # its answers were stored under it before settings were any suite's

    def parse(self, path: Path, text: str, options: LoadOptions) -> list[tuple[str, AmbigItem]]:
        return [(rec.where, _item(rec)) for rec in read_records(path, text)]

    def gold_inputs(self, scorers: Scorers) -> tuple[str, ...]:
        return ("conditions",) if setting_of(scorers).gold_conditions else ()

    def inputs(self, item: AmbigItem, scorers: Scorers) -> dict[str, Any]:
        setting = setting_of(scorers)
        inputs: dict[str, Any] = {
            "passages": list(item.passages) if setting.passages else [],
            "conditions": item.conditions if setting.gold_conditions else [],
        }
        if not setting.passages:
            inputs["retriever"] = None  # closed book: no evidence of any kind
        return inputs

    def protocol(self, scorers: Scorers, inputs: Sequence[str], has_passages: bool) -> Setup:
        setting = setting_of(scorers)
        label = f"{setting.name}: {setting.gives} [{setting.source}]"
        return Setup(setting.name, label, evidence="passages" if setting.passages else "none")

    def outside_setting(self, scorers: Scorers) -> dict[str, str]:
        setting = setting_of(scorers)
        outside = [m for m in JUDGED if m not in setting.metrics]
        if not setting.passages:
            outside += CITING
        return dict.fromkeys(outside, f"not part of the {setting.name} setting")


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
