"""CondAmbigQA scoring: citations, pair matching and the count-penalised scores.

Formulas follow CondAmbigQA (Li et al. 2025, seeds/004 section 4.1) and its released
experiment code (``experiment_code/core`` and ``visualization``): the condition and
answer scores of a pair come from G-Eval; everything here is the arithmetic around them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

MATCH_WEIGHTS = (0.3, 0.5, 0.2)  # condition, answer, citation
_GOLD_TITLE = re.compile(r"^\s*(\d+)\.")
_CITED_FRAGMENT = re.compile(r"^\s*\[?\s*(?:fragment|f)?\s*#?\s*(\d+)\s*\]?\s*$", re.IGNORECASE)


def fragment_id(number: int) -> str:
    """Our passage id for the 1-based fragment ``number`` of an item's ``ctxs``."""
    return f"F{number}"


def gold_fragment(title: str) -> str | None:
    """``"2. Title"`` -> ``"F2"``: gold citation titles carry the 1-based fragment number."""
    match = _GOLD_TITLE.match(title)
    return fragment_id(int(match.group(1))) if match else None


def cited_fragment(citation: str) -> str:
    """A system's citation as a fragment id: ``"Fragment 2"``, ``"F2"``, ``"[2]"``, ``"2"`` -> ``"F2"``.

    Anything else is kept as written (and so counts as a wrong citation), as in the
    official ``format_fragment_citation``.
    """
    match = _CITED_FRAGMENT.match(citation)
    return fragment_id(int(match.group(1))) if match else citation.strip()


def citation_precision(cited: Iterable[str], gold: Iterable[str]) -> float:
    """``|cited ∩ gold| / |cited|`` over sets of fragment ids; 0 when nothing is cited.

    CondAmbigQA eq. (1), "Citation Score".
    """
    cited_set = {cited_fragment(c) for c in cited}
    if not cited_set:
        return 0.0
    return len(cited_set & set(gold)) / len(cited_set)


def match_score(condition: float, answer: float, citation: float) -> float:
    """Weight of pairing a generated condition-answer pair with a gold property."""
    wc, wa, wt = MATCH_WEIGHTS
    return wc * condition + wa * answer + wt * citation


def greedy_match(
    n_generated: int, n_gold: int, score: Callable[[int, int], float]
) -> list[tuple[int, int | None]]:
    """Pair each generated pair, in output order, with the best unused gold property.

    ``score(g, k)`` is :func:`match_score` of generated pair ``g`` against gold ``k``.
    Ties keep the lowest gold index; a generated pair left without gold maps to None.
    """
    unused = list(range(n_gold))
    pairs: list[tuple[int, int | None]] = []
    for g in range(n_generated):
        best: int | None = None
        best_score = float("-inf")
        for k in unused:
            s = score(g, k)
            if s > best_score:
                best, best_score = k, s
        if best is not None:
            unused.remove(best)
        pairs.append((g, best))
    return pairs


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


def balanced_answer(answer: float, adjustment: float) -> float:
    """answer x (0.6 answer + 0.4 adjustment), clipped to [0, 1]."""
    return _clip(answer * (0.6 * answer + 0.4 * adjustment))


def combined_score(
    condition: float, answer: float, citation: float, citations_per_pair: float, adjustment: float
) -> float:
    """The "Combined" column of CondAmbigQA Table 2 for one item.

    Citation quality is boosted by how many fragments a pair cites (up to 3), the three
    scores are scaled by 0.6 x quality + 0.4 x adjustment, and the clipped results averaged.
    """
    citation_q = citation * (1 + 0.3 * min(citations_per_pair, 3))
    quality = 0.5 * (condition + answer) / 2 + 0.5 * citation_q
    factor = 0.6 * quality + 0.4 * adjustment
    return (_clip(condition * factor) + _clip(answer * factor) + _clip(citation_q * factor)) / 3


def count_difference(n_generated: int, n_gold: int) -> int:
    """Generated pairs minus expected pairs ("Diff. of Ans. Count")."""
    return n_generated - n_gold
