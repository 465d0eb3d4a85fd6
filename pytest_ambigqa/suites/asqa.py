"""ASQA: long-form answers to ambiguous questions (Stelmakh et al. 2022; ALCE, Gao et al. 2023).

Three real layouts: the official ``ASQA.json`` (``{"train": {id: item}, "dev": {...}}``),
the ``din0s/asqa`` JSON Lines release, and ALCE's ``asqa_eval_*.json`` list whose
retrieved ``docs`` become the item's passages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from ..errors import DataError
from ..schema import AmbigItem, Interpretation, Passage
from .base import OPEN_RETRIEVAL, LoadOptions, Scorers, Setup, Suite
from .records import Record, parse_json, read_records

_SPLITS = ("train", "dev", "test")


class Asqa(Suite):
    name = "asqa"
    title = "ASQA"
    metrics = (
        "str_em",
        "str_hit",
        "cover_em",
        "rouge_lsum",
        "rouge_lsum_mid",
        "disambig_f1",
        "disambig_em",
        "disambig_hit",
        "dr",
        "ambiguity_detected",
        "length",
        "judge_utility",
    )
    sample_file = "asqa_sample.json"
    uses_profile = True
    headline_setting = "dev"  # the split the published rows report
    published_split = "dev"
    evidence_hint = (
        "ALCE publishes ASQA's dev items with 100 retrieved Wikipedia passages each: "
        "--ambig-data=hf://princeton-nlp/ALCE-data (asqa_eval_gtr_top100.json, the given-docs protocol; "
        "`pytest-ambigqa data list` shows every source)"
    )

    def heavy(self, scorers: Scorers) -> bool:
        """ROUGE-Lsum's rouge-score and NLTK (whose ``__init__`` imports SciPy, scikit-learn
        and pandas where installed): seconds, most of a 1-item run."""
        return scorers.wants("rouge_lsum")

    def warm(self, scorers: Scorers) -> None:
        if self.heavy(scorers):  # NLTK: sentences for ROUGE-Lsum
            from ..metrics.rouge import rouge_lsum

            rouge_lsum("warm up", ["warm up"])

    def parse(self, path: Path, text: str, options: LoadOptions) -> list[tuple[str, AmbigItem]]:
        if text.lstrip().startswith("{"):
            try:
                whole = parse_json(path, text)
            except DataError:
                whole = None  # JSON Lines: one object per line
            if isinstance(whole, dict) and whole and set(whole) <= set(_SPLITS):
                return _official(path, whole, options.split)
        return [(rec.where, _item(rec)) for rec in read_records(path, text)]

    def protocol(self, scorers: Scorers, inputs: Sequence[str], has_passages: bool) -> Setup:
        """ALCE's given-docs protocol where the file has retrieved docs and the system reads
        them; else open retrieval, ASQA's own. A ``passages`` parameter is often declared as
        a fallback, so the choice is said on the protocol's line."""
        if has_passages and "passages" in inputs:
            return Setup(
                "given-docs",
                "given docs: systems get the data file's retrieved docs (ALCE)",
                evidence="passages",
                chosen="the system declares `passages` and the data file has retrieved docs",
            )
        if has_passages:
            return dataclasses.replace(
                OPEN_RETRIEVAL, chosen="the system does not declare `passages`, so not ALCE's given docs"
            )
        return OPEN_RETRIEVAL


def _official(path: Path, data: dict, split: str) -> list[tuple[str, AmbigItem]]:
    if split not in data:
        raise DataError(
            f"{path}: no split '{split}' (it has {', '.join(sorted(data))}); choose one with --ambig-split"
        )
    items = data[split]
    if not isinstance(items, dict):
        raise DataError(f"{path}: split '{split}' must map item ids to items")
    return [
        (where, _item(Record(raw, where), default_id=key))
        for key, raw in items.items()
        for where in [f"{path} ({split} item '{key}')"]
    ]


def _item(rec: Record, default_id: str | None = None) -> AmbigItem:
    item_id = rec.string("sample_id", default=default_id)
    if default_id is None:
        rec.where = f"{rec.where} (item '{item_id}')"
    question = rec.string("question") if rec.has("question") else rec.string("ambiguous_question")
    docs = rec.records("docs", required=False)
    passages = tuple(
        Passage(
            id=doc.string("id", default=str(n)),
            title=doc.string("title", default=""),
            text=doc.string("text"),
            score=float(doc.data["score"]) if isinstance(doc.data.get("score"), (int, float)) else None,
        )
        for n, doc in enumerate(docs, start=1)
    )
    interpretations = []
    for j, pair in enumerate(rec.records("qa_pairs", nonempty=True)):
        interpretations.append(
            Interpretation(
                question=pair.string("question"),
                short_answers=pair.strings("short_answers", nonempty=True),
                passage_ids=_labelled_docs(docs, passages, j),
                context=pair.optional_str("context"),
            )
        )
    if rec.has("annotations"):
        long_answers = tuple(a.string("long_answer") for a in rec.records("annotations"))
    else:
        long_answers = (rec.string("answer"),) if rec.has("answer") else ()
    return AmbigItem(
        suite="asqa",
        id=item_id,
        question=question,
        interpretations=tuple(interpretations),
        long_answers=long_answers,
        passages=passages,
    )


def _labelled_docs(docs: list[Record], passages: tuple[Passage, ...], pair: int) -> tuple[str, ...]:
    """ALCE docs flag, per qa_pair, whether they contain its answer (``answers_found``)."""
    found = []
    for doc, passage in zip(docs, passages, strict=True):
        flags = doc.data.get("answers_found")
        if isinstance(flags, list) and pair < len(flags) and flags[pair]:
            found.append(passage.id)
    return tuple(found)
