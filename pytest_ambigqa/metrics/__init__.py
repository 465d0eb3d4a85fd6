"""Every metric the plugin can report, by the one name used in options and reports.

Item values are stored on the item scale (fractions for percentage metrics, as the
official per-item scores are); suites print them on the papers' scale.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricSpec:
    name: str
    label: str
    source: str
    factor: float = 1  # item scale -> printed suite scale
    correctness: bool = True  # an errored item counts as 0 (else it is unscored)
    higher_is_better: bool | None = True
    item_range: tuple[float, float] | None = (0, 1)  # for validating --ambig-item-min; None: not per item
    needs: str | None = None  # "reader" or "judge": a model the metric cannot do without
    derived: tuple[str, str] | None = None  # suite-level geometric mean of these two metrics' means


def _percent(name: str, label: str, source: str, needs: str | None = None) -> MetricSpec:
    return MetricSpec(name, label, source, factor=100, needs=needs)


def _judge(name: str, label: str, source: str, scale: float = 1) -> MetricSpec:
    return MetricSpec(name, label, source, needs="judge", item_range=(0, scale))


METRICS: dict[str, MetricSpec] = {
    m.name: m
    for m in (
        _percent("str_em", "STR-EM", "ASQA/ALCE exact presence of short answers"),
        _percent("str_hit", "STR-Hit", "ALCE: every short answer present"),
        _percent("rouge_lsum", "ROUGE-Lsum", "ASQA/ALCE rougeLsum F, max over annotations"),
        _percent("disambig_f1", "Disambig-F1", "ASQA/MARCH reader token F1", needs="reader"),
        _percent("disambig_em", "Disambig-EM", "ASQA reader exact match", needs="reader"),
        _percent("disambig_hit", "Disambig-Hit", "ASQA: every interpretation an exact match", needs="reader"),
        MetricSpec(
            "dr",
            "DR",
            "ASQA: sqrt(Disambig-F1 x ROUGE-Lsum) of the suite means",
            factor=100,
            needs="reader",
            item_range=None,
            derived=("disambig_f1", "rouge_lsum"),
        ),
        _judge("judge", "LLM judge", "MARCH Table 9, mean of the 4 criteria, 0-5", scale=5),
        _judge("judge_relevance", "Judge: relevance", "MARCH Table 9 criterion, 0-5", scale=5),
        _judge("judge_faithfulness", "Judge: faithfulness", "MARCH Table 9 criterion, 0-5", scale=5),
        _judge("judge_informativeness", "Judge: informativeness", "MARCH Table 9 criterion, 0-5", scale=5),
        _judge("judge_correctness", "Judge: correctness", "MARCH Table 9 criterion, 0-5", scale=5),
        _judge("condition", "Condition", "CondAmbigQA G-Eval condition score"),
        _judge("answer", "Answer", "CondAmbigQA G-Eval answer score"),
        MetricSpec("citation", "Citation", "CondAmbigQA eq. (1) citation precision, pooled per item"),
        _judge("citation_matched", "Citation (matched)", "CondAmbigQA eq. (1) per matched pair (Table 2)"),
        _judge("combined", "Combined", "CondAmbigQA Table 2 combined score"),
        _judge("balanced", "Balanced", "CondAmbigQA count-balanced answer score"),
        MetricSpec(
            "answer_count",
            "Answers",
            "CondAmbigQA: generated pairs",
            correctness=False,
            higher_is_better=None,
            item_range=None,
        ),
        MetricSpec(
            "count_diff",
            "Count diff",
            "CondAmbigQA: generated - gold pairs",
            correctness=False,
            higher_is_better=None,
            item_range=None,
        ),
        MetricSpec(
            "length",
            "Length",
            "words in the long answer",
            correctness=False,
            higher_is_better=None,
            item_range=None,
        ),
    )
}

NOT_CONFIGURED = {
    "reader": "no reader configured (--ambig-reader)",
    "judge": "no judge configured (--ambig-judge)",
}
