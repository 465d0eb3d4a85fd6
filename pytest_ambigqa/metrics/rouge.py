"""ROUGE-Lsum as ASQA and ALCE compute it, with their sentence splitter and no download."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from .nltk_parts import parts
from .spec import MetricSpec, Scored, Scorer, percent
from .text import split_sentences

if TYPE_CHECKING:
    from rouge_score.rouge_scorer import RougeScorer

    from ..models.usage import Usage
    from ..schema import AmbigItem, Answer
    from .scoring import Scorers

MEMO_SENTENCES = 1024  # far more sentences than one item scores; an item's own are what repeat


class _MemoTokenizer:
    """rouge-score's own stemming tokenizer, memoised per sentence (it is pure and hot:
    every prediction sentence is tokenised once per reference). That reuse is within an
    item, so the memo keeps the last :data:`MEMO_SENTENCES` sentences. Sized for a whole
    run (65,536), it held about 1.3 KB a sentence, 1.5 KB an item at 20,000 items, in the
    process that scores (issue 27), for no more hits: over the ASQA dev sample repeated to
    3,000 items, 512 entries hit exactly as often as 65,536."""

    def __init__(self) -> None:
        tokenize = parts()["rouge_score.tokenizers"].DefaultTokenizer(use_stemmer=True).tokenize
        self.tokenize = lru_cache(maxsize=MEMO_SENTENCES)(tokenize)


@lru_cache(maxsize=1)
def _scorer() -> RougeScorer:
    """rouge-score's scorer, imported without NLTK's package ``__init__`` (``nltk_parts``)."""
    scorer = parts()["rouge_score.rouge_scorer"].RougeScorer
    return scorer(["rougeLsum"], use_stemmer=True, tokenizer=_MemoTokenizer())


def sentence_lines(text: str) -> str:
    """Lowercase, split into sentences, one per line: rougeLsum's summary-level input."""
    return "\n".join(split_sentences(text.lower()))


def rouge_lsum(prediction: str, references: Sequence[str]) -> float:
    """Best ROUGE-Lsum F-measure of ``prediction`` against any reference, in [0, 1].

    ALCE ``eval.py`` ``compute_rouge`` and ASQA ``scoring.py``: ``rouge-score`` with
    ``use_stemmer=True``, both sides lowercased and sentence-split, max over the
    annotations' long answers. Suites report the mean of items and, as ``rouge_lsum_mid``,
    the official bootstrap "mid" of them.
    """
    if not references:
        raise ValueError("ROUGE-Lsum needs at least one reference")
    hypothesis = sentence_lines(prediction)
    return max(_scorer().score(sentence_lines(ref), hypothesis)["rougeLsum"].fmeasure for ref in references)


def _rouge(item: AmbigItem, answer: Answer, scorers: Scorers, usage: Usage) -> Scored:
    """ROUGE-Lsum of the long answer (:func:`rouge_lsum`); unscored, with the reason, for an
    item that has no reference long answer."""
    if not item.long_answers:
        return Scored(unscored={"rouge_lsum": "item has no reference long answer"})
    return Scored({"rouge_lsum": rouge_lsum(scorers.text(answer), item.long_answers)})


ROUGE = Scorer("rouge", _rouge)

# The metrics of this module, by the names options and reports use.
SPECS = (
    percent("rouge_lsum", "ROUGE-Lsum", "ASQA/ALCE rougeLsum F, max over annotations; mean of items", ROUGE),
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
)
