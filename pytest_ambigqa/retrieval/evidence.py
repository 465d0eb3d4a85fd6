"""Evidence coverage: does the retriever reach each interpretation's gold passages?

MARCH's argument (Park et al. 2025, "MARCH: Evaluating the Intersection of Ambiguity
Interpretation and Multi-hop Inference", section 5): retrieving with the ambiguous question covers
the dominant reading and misses the other branch, while the clarified questions reach
both. For every gold interpretation with gold passages in the corpus we measure
recall@k of those passages when querying with (a) the original question and (b) the
interpretation's clarified question (CondAmbigQA: the question with its condition).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..schema import AmbigItem, Interpretation
from .corpus import Corpus

if TYPE_CHECKING:
    from . import Retriever


def clarified_query(item: AmbigItem, interpretation: Interpretation) -> str:
    if interpretation.question:
        return interpretation.question
    return f"{item.question} {interpretation.condition or ''}".strip()


def gold_ids(item: AmbigItem, interpretation: Interpretation, corpus: Corpus) -> set[str]:
    """The corpus ids of an interpretation's gold passages (those the corpus holds)."""
    by_id = {p.id: p for p in item.passages}
    found = (corpus.id_of(by_id[pid]) for pid in interpretation.passage_ids if pid in by_id)
    return {cid for cid in found if cid is not None}


def evidence_recall(item: AmbigItem, corpus: Corpus, retriever: Retriever, k: int) -> dict[str, float] | None:
    """Mean recall@k over the item's interpretations, from the original and clarified questions.

    None when no interpretation has gold passages in the corpus (nothing to measure).
    """
    targets = [(interp, gold) for interp in item.interpretations if (gold := gold_ids(item, interp, corpus))]
    if not targets:
        return None
    queries = [item.question] + [clarified_query(item, interp) for interp, _ in targets]
    results = [{p.id for p in hits} for hits in retriever.batch(queries, k)]
    original = [len(gold & results[0]) / len(gold) for _, gold in targets]
    clarified = [len(gold & hits) / len(gold) for (_, gold), hits in zip(targets, results[1:], strict=True)]
    return {
        "original": sum(original) / len(original),
        "clarified": sum(clarified) / len(clarified),
        "interpretations": float(len(targets)),
    }
