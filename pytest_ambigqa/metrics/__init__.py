"""Every metric the plugin can report, by the one name used in options and reports.

Item values are stored on the item scale (fractions for percentage metrics, as the
official per-item scores are); suites print them on the papers' scale. A spec also says
how a suite value is made from the items (``aggregation``), which matters: the official
scorers do not all take a plain mean of items.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import Registry

# How a suite (or slice) value is made from its items:
#   mean       the mean of item values; when items report units (CondAmbigQA closed-book
#              answer pairs), the mean of all units, pooled across items
#   sum        the total over items (counts)
#   boot-mid   rouge-score's BootstrapAggregator "mid" of the ``of`` metric's item values
#   geometric  sqrt of the product of the ``of`` metrics' suite values (ASQA's DR)
AGGREGATIONS = ("mean", "sum", "boot-mid", "geometric")


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
    aggregation: str = "mean"
    of: tuple[str, ...] = ()  # the metrics a suite-level aggregation is computed from

    def __post_init__(self) -> None:
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"{self.name}: unknown aggregation '{self.aggregation}'")

    @property
    def suite_level(self) -> bool:
        """No value per item: computed only for a whole suite or slice."""
        return bool(self.of)

    @property
    def item_metric(self) -> str:
        """The metric whose item values this one is made from (itself, unless suite-level)."""
        return self.of[0] if self.of else self.name


def _percent(name: str, label: str, source: str, needs: str | None = None) -> MetricSpec:
    return MetricSpec(name, label, source, factor=100, needs=needs)


def _judge(name: str, label: str, source: str, scale: float = 1) -> MetricSpec:
    return MetricSpec(name, label, source, needs="judge", item_range=(0, scale))


def _count(name: str, label: str, source: str, aggregation: str = "mean", better: bool | None = None):
    return MetricSpec(
        name,
        label,
        source,
        correctness=False,
        higher_is_better=better,
        item_range=None,
        aggregation=aggregation,
    )


METRICS: Registry[MetricSpec] = Registry("metric")
for _spec in (
    _percent("str_em", "STR-EM", "ASQA/ALCE exact presence of short answers"),
    _percent("str_hit", "STR-Hit", "ALCE: every short answer present"),
    MetricSpec(
        "cover_em",
        "COVER-EM",
        "TreeRare (arXiv 2506.00331) section 4.1: share of interpretations with a gold alias "
        "inside the answer, TreeRare's normalisation, 0-1",
    ),
    _percent("rouge_lsum", "ROUGE-Lsum", "ASQA/ALCE rougeLsum F, max over annotations; mean of items"),
    MetricSpec(
        "rouge_lsum_mid",
        "ROUGE-Lsum (official)",
        "ASQA scoring.py / ALCE eval.py: rouge-score BootstrapAggregator mid of the item "
        "ROUGE-Lsum (1000 resamples; seeded here, unseeded there)",
        factor=100,
        item_range=None,
        aggregation="boot-mid",
        of=("rouge_lsum",),
    ),
    _percent("disambig_f1", "Disambig-F1", "ASQA/MARCH reader token F1", needs="reader"),
    _percent("disambig_em", "Disambig-EM", "ASQA reader exact match", needs="reader"),
    _percent("disambig_hit", "Disambig-Hit", "ASQA: every interpretation an exact match", needs="reader"),
    MetricSpec(
        "dr",
        "DR",
        "ASQA scoring.py: sqrt(Disambig-F1 x official ROUGE-Lsum) of the suite values",
        factor=100,
        needs="reader",
        item_range=None,
        aggregation="geometric",
        of=("disambig_f1", "rouge_lsum_mid"),
    ),
    _judge("judge", "LLM judge", "MARCH Table 9, mean of the 4 criteria, 0-5", scale=5),
    _judge("judge_relevance", "Judge: relevance", "MARCH Table 9 criterion, 0-5", scale=5),
    _judge("judge_faithfulness", "Judge: faithfulness", "MARCH Table 9 criterion, 0-5", scale=5),
    _judge("judge_informativeness", "Judge: informativeness", "MARCH Table 9 criterion, 0-5", scale=5),
    _judge("judge_correctness", "Judge: correctness", "MARCH Table 9 criterion, 0-5", scale=5),
    _percent(
        "ambiguity_detected",
        "Ambiguity detected",
        "share of items the system flags is_ambiguous (every benchmark item is ambiguous; "
        "MARCH section 4, CLARION's planning stage)",
    ),
    _percent(
        "ambiguity_type_acc",
        "Ambiguity type accuracy",
        "system ambiguity_type equals the gold type (MARCH Table 1 taxonomy)",
    ),
    _judge("condition", "Condition", "CondAmbigQA Table 2: G-Eval condition score, matched pairs"),
    _judge("answer", "Answer", "CondAmbigQA Table 2: G-Eval answer score"),
    _judge(
        "citation_matched",
        "Citation Score",
        "CondAmbigQA eq. (1) per matched condition-answer pair (Table 2 'Citation Score')",
    ),
    MetricSpec(
        "citation",
        "Cited-fragment precision (no judge)",
        "every fragment the answer cites against every gold fragment of the item; "
        "not the paper's Citation Score (that is citation_matched)",
    ),
    _judge("combined", "Combined", "CondAmbigQA Table 2: plain mean of condition, answer and citation"),
    _judge(
        "balanced_combined",
        "Balanced combined",
        "CondAmbigQA released visualizer: count-penalised, citation-boosted mean (not Table 2)",
    ),
    _judge("balanced", "Balanced answer", "CondAmbigQA released code: count-balanced answer score"),
    _count("answer_count", "Answers", "CondAmbigQA: generated pairs"),
    _count("count_diff", "Count diff", "CondAmbigQA: generated - gold pairs"),
    _count(
        "unofficial_citations",
        "Citations not in an official form",
        "CondAmbigQA: citations neither 'Fragment N' nor a passage id; the official scorer "
        "counts them as wrong, and so do we (total over items)",
        aggregation="sum",
        better=False,
    ),
    _count("length", "Length", "words in the long answer"),
):
    METRICS.register(_spec.name, _spec)

NOT_CONFIGURED = {
    "reader": "no reader configured (--ambig-reader)",
    "judge": "no judge configured (--ambig-judge)",
}
