"""MARCH: multi-hop ambiguous QA (Park et al. 2025, "MARCH: Evaluating the Intersection of
Ambiguity Interpretation and Multi-hop Inference", section 3, Table 2).

No public release is reachable, so the schema is ours, defined from the paper: see
``suites/march/README.md``. ``--ambig-march-fields`` maps other spellings onto it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..options import pairs, refuse
from ..schema import AMBIGUITY_TYPES, AmbigItem, Interpretation, Passage, normalize_type
from .base import OPEN_RETRIEVAL, SPLIT, LoaderOption, LoadOptions, Scorers, Setup, Suite
from .records import Record, read_records

# The protocols: the papers' open retrieval, and the gold passages as an upper bound.
SETTINGS = ("open-retrieval", "oracle-evidence")
# Our field names, as --ambig-march-fields maps them (nested ones as "<list>.<field>").
FIELDS = (
    "id",
    "question",
    "ambiguity_type",
    "hops",
    "long_answer",
    "interpretations",
    "passages",
    "interpretations.question",
    "interpretations.short_answers",
    "interpretations.passage_ids",
    "passages.id",
    "passages.title",
    "passages.text",
)


# A file that spells our fields its own way: --ambig-march-fields=OURS=THEIRS,... (parse_fields)
MARCH_FIELDS = LoaderOption(
    "--ambig-march-fields",
    "march_fields",
    lambda text: parse_fields(text),
    "how MARCH's fields are read (--ambig-march-fields)",
)


class March(Suite):
    name = "march"
    title = "MARCH"
    metrics = (
        "str_em",
        "str_hit",
        "cover_em",
        "disambig_f1",
        "disambig_em",
        "disambig_hit",
        "judge",
        "judge_relevance",
        "judge_faithfulness",
        "judge_informativeness",
        "judge_correctness",
        "ambiguity_detected",
        "ambiguity_type_acc",
        "length",
    )
    sample_file = "march_sample.json"
    sliced_by_type = True
    uses_profile = True
    gold_evidence_in_corpus = True
    evidence_hint = "MARCH's evidence passages come with its data file (the papers searched Wikipedia)"
    settings = SETTINGS
    loader_options = (SPLIT, MARCH_FIELDS)

    def parse(self, path: Path, text: str, options: LoadOptions) -> list[tuple[str, AmbigItem]]:
        return [(rec.where, _item(rec)) for rec in read_records(path, text, dict(options.get(MARCH_FIELDS)))]

    def inputs(self, item: AmbigItem, scorers: Scorers) -> dict[str, Any]:
        """Open retrieval (the papers' protocol) gives no passages: the gold evidence only in
        the oracle-evidence setting, whose scores are an upper bound."""
        gold = self.setting(scorers) == "oracle-evidence"
        return {"passages": list(item.passages) if gold else [], "conditions": []}

    def protocol(self, scorers: Scorers, inputs: Sequence[str], has_passages: bool) -> Setup:
        if self.setting(scorers) == "oracle-evidence":
            return Setup(
                "oracle-evidence",
                "oracle evidence: systems get the gold evidence passages",
                upper_bound="systems get the gold evidence passages (--ambig-march-setting=oracle-evidence)",
                reads_as=OPEN_RETRIEVAL.name,
                evidence="passages",
            )
        return OPEN_RETRIEVAL


def _item(rec: Record) -> AmbigItem:
    item_id = rec.string("id")
    rec.where = f"{rec.where} (item '{item_id}')"
    kind = normalize_type(rec.string("ambiguity_type"))
    if kind not in AMBIGUITY_TYPES:
        raise DataError(
            f"{rec.where}: ambiguity_type '{kind}' is not one of {', '.join(AMBIGUITY_TYPES)} (or 'general')"
        )
    passages = tuple(
        Passage(id=p.string("id"), title=p.string("title", default=""), text=p.string("text"))
        for p in rec.records("passages", required=False)
    )
    known = {p.id for p in passages}
    interpretations = []
    for sub in rec.records("interpretations", nonempty=True):
        ids = sub.strings("passage_ids", required=False)
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise DataError(f"{sub.where}: passage_ids {unknown} are not among the item's passages")
        interpretations.append(
            Interpretation(
                question=sub.string("question"),
                short_answers=sub.strings("short_answers", nonempty=True),
                passage_ids=ids,
            )
        )
    hops = rec.raw("hops") if rec.has("hops") else None
    if hops is not None and (isinstance(hops, bool) or not isinstance(hops, int)):
        raise DataError(f"{rec.where}: field 'hops' must be an integer")
    return AmbigItem(
        suite="march",
        id=item_id,
        question=rec.string("question"),
        interpretations=tuple(interpretations),
        long_answers=(rec.string("long_answer"),),
        passages=passages,
        ambiguity_type=kind,
        hops=hops,
    )


def parse_fields(text: str | None) -> dict[str, str]:
    """``--ambig-march-fields``: OURS=THEIRS, our field names onto a file's spelling."""
    if not text:
        return {}
    fields = {}
    for ours, theirs in pairs("--ambig-march-fields", text):
        if ours not in FIELDS:
            refuse(f"--ambig-march-fields: unknown field '{ours}' (valid: {', '.join(FIELDS)})")
        fields[ours] = theirs
    return fields
