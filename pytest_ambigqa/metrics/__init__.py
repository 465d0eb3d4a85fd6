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
    factor: float  # item scale -> printed suite scale
    correctness: bool  # an errored item counts as 0 (else it is unscored)
    higher_is_better: bool | None
    item_range: tuple[float, float] | None  # for validating --ambig-item-min
    source: str
    needs: str | None = None  # "reader" or "judge": a model the metric cannot do without


METRICS: dict[str, MetricSpec] = {
    m.name: m
    for m in (
        MetricSpec("str_em", "STR-EM", 100, True, True, (0, 1), "ASQA/ALCE exact presence of short answers"),
        MetricSpec("str_hit", "STR-Hit", 100, True, True, (0, 1), "ALCE: every short answer present"),
        MetricSpec(
            "rouge_lsum", "ROUGE-Lsum", 100, True, True, (0, 1), "ASQA/ALCE rougeLsum F, max over annotations"
        ),
        MetricSpec(
            "disambig_f1", "Disambig-F1", 100, True, True, (0, 1), "ASQA/MARCH reader token F1", "reader"
        ),
        MetricSpec("dr", "DR", 100, True, True, (0, 1), "ASQA: sqrt(Disambig-F1 x ROUGE-Lsum)", "reader"),
        MetricSpec(
            "judge", "LLM judge", 1, True, True, (0, 5), "MARCH Table 9, mean of 4 criteria, 0-5", "judge"
        ),
        MetricSpec(
            "condition", "Condition", 1, True, True, (0, 1), "CondAmbigQA G-Eval condition score", "judge"
        ),
        MetricSpec("answer", "Answer", 1, True, True, (0, 1), "CondAmbigQA G-Eval answer score", "judge"),
        MetricSpec("citation", "Citation", 1, True, True, (0, 1), "CondAmbigQA eq. (1) citation precision"),
        MetricSpec(
            "combined", "Combined", 1, True, True, (0, 1), "CondAmbigQA Table 2 combined score", "judge"
        ),
        MetricSpec(
            "balanced", "Balanced", 1, True, True, (0, 1), "CondAmbigQA count-balanced answer score", "judge"
        ),
        MetricSpec("answer_count", "Answers", 1, False, None, None, "CondAmbigQA: generated pairs"),
        MetricSpec("count_diff", "Count diff", 1, False, None, None, "CondAmbigQA: generated - gold pairs"),
        MetricSpec("length", "Length", 1, False, None, None, "words in the long answer"),
    )
}

NOT_CONFIGURED = {"reader": "no reader configured", "judge": "no judge configured"}
