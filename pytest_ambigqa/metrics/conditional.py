"""CondAmbigQA scoring: its four settings, citations, pair matching and the item scores.

Li et al. 2025, "CondAmbigQA: A Benchmark and Dataset for Conditional Ambiguous Question
Answering" (arXiv 2502.01523): section 4.1 (metrics), Table 2 (main setting), section 5.5
and Figure 4 (gold conditions, no conditions), section 5.6 and Table 3 (closed book); and
its released code (``experiment_code/core``: ``main_experiment.py``,
``ground_truth_experiment.py``, ``pure_llm_experiment.py``, ``evaluator.py``; the
``visualization`` scripts for the per-item means and the balanced scores). The condition
and answer scores of a pair come from G-Eval (the judge); everything here is the
arithmetic around them, kept pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..schema import Answer, GeneratedInterpretation
from .spec import MetricSpec, Scored, Scorer, count, judged

if TYPE_CHECKING:
    from ..models.usage import Usage
    from ..schema import AmbigItem
    from .scoring import Scorers

_GOLD_TITLE = re.compile(r"(\d+)\.")  # the digits are kept as written: "02." is "F02", as there
_FRAGMENT = re.compile(r"Fragment\s+(\d+)")
_PASSAGE_ID = re.compile(r"F\d+")


@dataclass(frozen=True)
class Setting:
    """One of CondAmbigQA's experimental settings, as the released code runs it."""

    name: str
    source: str
    gives: str  # what systems get, for people
    weights: tuple[float, float, float]  # pair matching: condition, answer, citation
    unmatched_count: bool  # generated pairs left without gold score 0 in the item means
    judge_sees_prompt: bool  # G-Eval's input is the generation prompt, else the bare question
    passages: bool  # systems get the item's 20 fragments
    gold_conditions: bool  # systems get the gold conditions
    metrics: tuple[str, ...]  # the judged metrics this setting reports


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting(
            "main",
            "Table 2 (main_experiment.py)",
            "systems get the 20 retrieved fragments, find the conditions, answer and cite",
            (0.3, 0.5, 0.2),
            unmatched_count=False,
            judge_sees_prompt=True,
            passages=True,
            gold_conditions=False,
            metrics=("condition", "answer", "citation_matched", "combined", "balanced", "balanced_combined"),
        ),
        Setting(
            "gold-conditions",
            "section 5.5, Figure 4 (ground_truth_experiment.py)",
            "systems get the fragments and the gold conditions, answer and cite",
            (0.0, 0.6, 0.4),
            unmatched_count=True,
            judge_sees_prompt=False,
            passages=True,
            gold_conditions=True,
            metrics=("answer", "citation_matched", "balanced"),
        ),
        Setting(
            "no-conditions",
            "section 5.5, Figure 4 (run_comparison_experiment)",
            "systems get the fragments, answer and cite, without conditions",
            (0.0, 0.7, 0.3),
            unmatched_count=False,
            judge_sees_prompt=True,
            passages=True,
            gold_conditions=False,
            metrics=("answer", "citation_matched", "balanced"),
        ),
        Setting(
            "closed-book",
            "section 5.6, Table 3 (pure_llm_experiment.py)",
            "systems get the question only: no fragments, no retriever",
            (0.0, 1.0, 0.0),
            unmatched_count=True,
            judge_sees_prompt=False,
            passages=False,
            gold_conditions=False,
            metrics=("answer", "balanced"),
        ),
    )
}


def fragment_id(number: int | str) -> str:
    """Our passage id for the 1-based fragment ``number`` of an item's ``ctxs``."""
    return f"F{number}"


def gold_fragment(title: str) -> str | None:
    """``"2. Title"`` -> ``"F2"``: gold citation titles carry the 1-based fragment number
    (``evaluator.extract_number_from_title``); a title without one is ignored."""
    match = _GOLD_TITLE.match(title)
    return fragment_id(match.group(1)) if match else None


def cited_fragment(citation: str) -> str:
    """A system's citation as the official scorer reads it (``format_fragment_citation``).

    ``"Fragment 2 ..."`` -> ``"F2"``; anything else is kept as written, so a passage id
    ``"F2"`` matches and every other form (``"[2]"``, ``"2"``, ``"fragment 2"``) is a
    wrong citation.
    """
    match = _FRAGMENT.match(citation)
    return fragment_id(match.group(1)) if match else citation


def is_official_citation(citation: str) -> bool:
    """A form the official scorer can match: ``Fragment N`` or a passage id ``FN``."""
    return bool(_FRAGMENT.match(citation) or _PASSAGE_ID.fullmatch(citation))


def citation_precision(cited: Iterable[str], gold: Iterable[str]) -> float:
    """``|cited ∩ gold| / |cited|`` over sets of fragment ids; 0 when nothing is cited.

    CondAmbigQA eq. (1), "Citation Score" (``evaluate_citation_correctness``).
    """
    cited_set = {cited_fragment(c) for c in cited}
    if not cited_set:
        return 0.0
    return len(cited_set & set(gold)) / len(cited_set)


@dataclass(frozen=True)
class PairScores:
    """One generated pair against one gold property."""

    condition: float
    answer: float
    citation: float


def greedy_match(
    setting: Setting, n_generated: int, n_gold: int, score: Callable[[int, int], PairScores]
) -> list[tuple[int | None, PairScores | None]]:
    """For each generated pair in output order, the best unused gold property and its scores.

    The weighted score (``setting.weights``) picks the property; ties keep the lowest gold
    index, and a pair left without gold gets ``(None, None)``. ``score`` is called only for
    unused properties, as the released loops do, so no judgement is asked twice.
    """
    wc, wa, wt = setting.weights
    unused = list(range(n_gold))
    matches: list[tuple[int | None, PairScores | None]] = []
    for g in range(n_generated):
        best: tuple[int | None, PairScores | None] = (None, None)
        best_value = float("-inf")
        for k in unused:
            s = score(g, k)
            value = wc * s.condition + wa * s.answer + wt * s.citation
            if value > best_value:
                best, best_value = (k, s), value
        if best[0] is not None:
            unused.remove(best[0])
        matches.append(best)
    return matches


def count_adjustment(n_generated: int, n_gold: int, answer: float) -> float:
    """The factor that rewards producing as many condition-answer pairs as expected.

    0.1 when a single answer is given and more are expected; otherwise 1 - penalty, with
    answer quality q = clamp(answer / 0.5, 0.5, 1) softening the penalty for good answers:
    missing ratio r -> min(r * 0.6 * (2 - q), 0.2); extra ratio r ->
    (min(0.3 r, 0.15) if r > 1 else min(0.15 r, 0.075)) * (2 - q). Ratios are relative
    to the expected count.
    """
    expected = max(n_gold, 1)
    if n_generated == 1 and expected > 1:
        return 0.1
    q = min(max(answer / 0.5, 0.5), 1.0)
    diff = n_generated - n_gold
    if diff < 0:
        return 1.0 - min(-diff / expected * 0.6 * (2 - q), 0.2)
    if diff > 0:
        r = diff / expected
        base = min(r * 0.3, 0.15) if r > 1 else min(r * 0.15, 0.075)
        return 1.0 - base * (2 - q)
    return 1.0


def _clip(x: float) -> float:
    return min(max(x, 0.0), 1.0)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def balanced(
    setting: str,
    condition: float,
    answer: float,
    citation: float,
    citations_per_pair: float,
    n_generated: int,
    n_gold: int,
) -> tuple[float, float]:
    """(balanced answer, balanced combined) of one item, by the setting's released formula.

    Closed book (``pure_llm_experiment.calculate_balanced_scores``): answer x (0.6 answer +
    0.4 adjustment). The retrieval settings (the visualizers' ``calculate_balanced_scores``):
    quality = 0.5 (condition + answer) / 2 + 0.5 citation x (1 + 0.3 min(citations per
    pair, 3)), factor = 0.6 quality + 0.4 adjustment, each score x factor clipped, and the
    combined the mean of the three. As released, the no-conditions files carry no citation
    lists where the visualizer looks (no boost), and the gold-conditions expected count is
    read from the output itself (no count penalty); both are reproduced.
    """
    if setting == "closed-book":
        adjustment = count_adjustment(n_generated, n_gold, answer)
        score = _clip(answer * (0.6 * answer + 0.4 * adjustment))
        return score, score
    if setting == "no-conditions":
        citations_per_pair = 0.0
    if setting == "gold-conditions":
        n_gold = n_generated
    adjustment = count_adjustment(n_generated, n_gold, answer)
    citation_quality = citation * (1 + 0.3 * min(citations_per_pair, 3))
    quality = 0.5 * (condition + answer) / 2 + 0.5 * citation_quality
    factor = 0.6 * quality + 0.4 * adjustment
    parts = (_clip(condition * factor), _clip(answer * factor), _clip(citation_quality * factor))
    return parts[1], sum(parts) / 3


@dataclass(frozen=True)
class ItemScores:
    values: dict[str, float]
    units: dict[str, list[float]]  # closed book: every generated pair's answer score


def item_scores(
    setting: Setting,
    matches: Sequence[tuple[int | None, PairScores | None]],
    n_gold: int,
    citations_per_pair: float,
) -> ItemScores:
    """The item's judged metrics from its matched pairs (``setting.metrics`` only).

    Means run over matched pairs, or over every generated pair with the unmatched ones at
    0 where the released code keeps them (gold conditions, closed book). An answer with no
    pairs scores 0 (the released code drops such items; nothing is dropped here).
    """
    kept = [s for _, s in matches if s is not None]
    if setting.unmatched_count:
        scored = [s or PairScores(0.0, 0.0, 0.0) for _, s in matches]
    else:
        scored = kept
    condition = _mean([s.condition for s in scored])
    answer = _mean([s.answer for s in scored])
    citation = _mean([s.citation for s in scored])
    balanced_answer, balanced_combined = balanced(
        setting.name, condition, answer, citation, citations_per_pair, len(matches), n_gold
    )
    values = {
        "condition": condition,
        "answer": answer,
        "citation_matched": citation,
        "combined": (condition + answer + citation) / 3,
        "balanced": balanced_answer,
        "balanced_combined": balanced_combined,
    }
    units = {"answer": [s.answer for s in scored]} if setting.name == "closed-book" else {}
    return ItemScores({m: values[m] for m in setting.metrics}, units)


def count_difference(n_generated: int, n_gold: int) -> int:
    """Generated pairs minus expected pairs ("Diff. of Ans. Count")."""
    return n_generated - n_gold


def generated_pairs(answer: Answer) -> tuple[GeneratedInterpretation, ...]:
    """The answer's condition-answer pairs; a bare text answer is one pair citing its citations."""
    if answer.interpretations or not answer.text.strip():
        return answer.interpretations
    return (GeneratedInterpretation(answer=answer.text, citations=answer.citations),)


def _counts(item: AmbigItem, answer: Answer, scorers: Scorers, usage: Usage) -> Scored:
    """The condition-answer pairs the answer gives, and how many more (or fewer) than the
    item's conditions: CondAmbigQA's "Diff. of Ans. Count"."""
    pairs = len(generated_pairs(answer))
    return Scored(
        {
            "answer_count": float(pairs),
            "count_diff": float(count_difference(pairs, len(item.interpretations))),
        }
    )


def setting_of(scorers: Any) -> Setting:
    """The CondAmbigQA setting a run scores under (the first, the paper's main, unless chosen)."""
    return SETTINGS[scorers.settings.get("condambigqa", next(iter(SETTINGS)))]


def _citations(item: AmbigItem, answer: Answer, scorers: Scorers, usage: Usage) -> Scored:
    """The no-judge citation score pools every cited fragment against every gold one (the
    paper's Citation Score is ``citation_matched``: matching needs the judge). A setting
    without fragments has no citations to score."""
    if not setting_of(scorers).passages:
        return Scored()
    # a bare-text answer's pair already carries the answer's citations
    cited = list(answer.citations) if answer.interpretations else []
    cited += [c for p in generated_pairs(answer) for c in p.citations]
    gold = {pid for interp in item.interpretations for pid in interp.passage_ids}
    return Scored(
        {
            "citation": citation_precision(cited, gold),
            "unofficial_citations": float(sum(not is_official_citation(c) for c in cited)),
        }
    )


def _judge(item: AmbigItem, answer: Answer, scorers: Scorers, usage: Usage) -> Scored:
    """The pairs matched to the gold properties by the judge's G-Eval scores; only the
    metrics of the run's setting."""
    setting = setting_of(scorers)
    if not scorers.wants(*setting.metrics):
        return Scored()
    return scorers.judge.condambigqa(setting, item, generated_pairs(answer), usage).scored()


COUNTS = Scorer("condambigqa-counts", _counts)
CITATIONS = Scorer("condambigqa-citations", _citations)
CONDAMBIGQA_JUDGE = Scorer("condambigqa-judge", _judge, needs="judge")

# The metrics of this module, by the names options and reports use.
SPECS = (
    judged(
        "condition",
        "Condition",
        "CondAmbigQA Table 2: G-Eval condition score, matched pairs",
        CONDAMBIGQA_JUDGE,
    ),
    judged("answer", "Answer", "CondAmbigQA Table 2: G-Eval answer score", CONDAMBIGQA_JUDGE),
    judged(
        "citation_matched",
        "Citation Score",
        "CondAmbigQA eq. (1) per matched condition-answer pair (Table 2 'Citation Score')",
        CONDAMBIGQA_JUDGE,
    ),
    MetricSpec(
        "citation",
        "Cited-fragment precision (no judge)",
        "every fragment the answer cites against every gold fragment of the item; "
        "not the paper's Citation Score (that is citation_matched)",
        scorer=CITATIONS,
    ),
    judged(
        "combined",
        "Combined",
        "CondAmbigQA Table 2: plain mean of condition, answer and citation",
        CONDAMBIGQA_JUDGE,
    ),
    judged(
        "balanced_combined",
        "Balanced combined",
        "CondAmbigQA released visualizer: count-penalised, citation-boosted mean (not Table 2)",
        CONDAMBIGQA_JUDGE,
    ),
    judged(
        "balanced",
        "Balanced answer",
        "CondAmbigQA released code: count-balanced answer score",
        CONDAMBIGQA_JUDGE,
    ),
    count("answer_count", "Answers", "CondAmbigQA: generated pairs", COUNTS),
    count("count_diff", "Count diff", "CondAmbigQA: generated - gold pairs", COUNTS),
    count(
        "unofficial_citations",
        "Citations not in an official form",
        "CondAmbigQA: citations neither 'Fragment N' nor a passage id; the official scorer "
        "counts them as wrong, and so do we (total over items)",
        CITATIONS,
        aggregation="sum",
        better=False,
    ),
)
