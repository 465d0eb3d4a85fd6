"""Disambig-F1: a reader answers each clarified question from the long answer.

SQuAD v1.1/v2.0 token F1 and exact match, as ASQA's scorer computes them: normalised
tokens, max over the gold aliases, empty against empty scoring 1 (the SQuAD 2.0 rule
for no-answer). Item scores are means over interpretations; Hit is 1 when every
interpretation is an exact match (ASQA ``scoring.py``, ALCE ``compute_qa``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .spec import MetricSpec, Scored, Scorer, percent
from .text import normalize_answer

if TYPE_CHECKING:
    from ..models.usage import Usage
    from ..schema import AmbigItem, Answer
    from .scoring import Scorers


def token_f1(prediction: str, gold: str) -> float:
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not predicted or not expected:
        return float(predicted == expected)
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def best_over_aliases(prediction: str, aliases: Sequence[str]) -> tuple[float, float]:
    """(F1, EM) of a prediction against its best-matching gold alias."""
    return max(token_f1(prediction, a) for a in aliases), max(exact_match(prediction, a) for a in aliases)


def disambig_scores(predictions: Sequence[str], aliases: Sequence[Sequence[str]]) -> dict[str, float]:
    """Item scores from one reader prediction per gold interpretation."""
    pairs = [best_over_aliases(p, a) for p, a in zip(predictions, aliases, strict=True)]
    f1 = sum(f for f, _ in pairs) / len(pairs)
    em = sum(e for _, e in pairs) / len(pairs)
    return {"disambig_f1": f1, "disambig_em": em, "disambig_hit": float(all(e == 1.0 for _, e in pairs))}


def _read(item: AmbigItem, answer: Answer, scorers: Scorers, usage: Usage) -> Scored:
    """Disambig-F1/EM/Hit: the reader answers each clarified question from the long answer
    (the text the profile's scorer reads)."""
    questions = [i.question or i.condition or item.question for i in item.interpretations]
    predictions = scorers.reader.read(questions, scorers.text(answer), usage)
    return Scored(
        disambig_scores(predictions, [i.short_answers for i in item.interpretations]),
        details={"reader": [{"question": q, "span": p} for q, p in zip(questions, predictions, strict=True)]},
    )


READER = Scorer("reader", _read, needs="reader")

# The metrics of this module, by the names options and reports use.
SPECS = (
    percent("disambig_f1", "Disambig-F1", "ASQA/MARCH reader token F1", READER),
    percent("disambig_em", "Disambig-EM", "ASQA reader exact match", READER),
    percent("disambig_hit", "Disambig-Hit", "ASQA: every interpretation an exact match", READER, binary=True),
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
)
