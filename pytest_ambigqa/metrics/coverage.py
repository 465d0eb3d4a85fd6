"""STR-EM, STR-Hit and COVER-EM: are the gold short answers present in the long answer?"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .spec import MetricSpec, Scored, Scorer, percent
from .text import Normalized, normalize_answer, treerare_normalize

if TYPE_CHECKING:
    from ..models.usage import Usage
    from ..schema import AmbigItem, Answer
    from .scoring import Scorers


def exact_presence(short_answers: Sequence[str], long_answer: str) -> bool:
    """True if any normalised short answer is a substring of the normalised long answer.

    ALCE ``eval.py`` ``exact_presence`` / ASQA ``scoring.py`` ``str_em``.
    """
    return present(short_answers, normalize_answer(long_answer))


def present(short_answers: Sequence[str], context: str) -> bool:
    """:func:`exact_presence` in a long answer already normalised (once for every reading)."""
    return any(normalize_answer(answer) in context for answer in short_answers)


def found(short_answers: Sequence[str], text: Normalized) -> tuple[bool, list[tuple[int, int]]]:
    """One reading's STR-EM hit (:func:`present`) and where its gold answers stand in the
    text (ranges of ``text``'s characters), so a report shows what the scorer counted."""
    needles = [normalize_answer(answer) for answer in short_answers]  # once each, not per step
    if not any(needle in text.normal for needle in needles):  # present()
        return False, []
    return True, [span for needle in needles for span in text.at(needle)]


def str_em_hits(pairs: Sequence[Sequence[str]], long_answer: str) -> list[bool]:
    """One hit per gold interpretation (``qa_pair``), in order: :func:`exact_presence` for
    each, the long answer normalised once for all of them (the same string each time)."""
    context = normalize_answer(long_answer)
    return [present(answers, context) for answers in pairs]


def vacuous_answers(pairs: Sequence[Sequence[str]]) -> list[str]:
    """Gold answers that normalise to nothing ("!!!", "The"): every answer contains them, so
    the official substring scorers count them hit whatever the system says."""
    return [a for answers in pairs for a in answers if not normalize_answer(a)]


def str_em(hits: Sequence[bool]) -> float:
    """Item STR-EM: the fraction of gold interpretations hit (suite value = 100 x mean)."""
    if not hits:
        raise ValueError("STR-EM needs at least one gold interpretation")
    return sum(hits) / len(hits)


def str_hit(hits: Sequence[bool]) -> float:
    """Item STR-Hit: 1 when every gold interpretation is hit (ALCE ``str_hit``)."""
    return 1.0 if hits and all(hits) else 0.0


def cover_em(pairs: Sequence[Sequence[str]], long_answer: str) -> float:
    """COVER-EM of one item: the share of interpretations with an alias inside the answer.

    TreeRare (Zhang et al. 2025, arXiv 2506.00331, section 4.1, after Rosset et al. 2021),
    as its released ASQA evaluation computes it: plain substring containment after
    :func:`treerare_normalize`, any alias of a qa_pair counting; 0-1 scale.
    """
    if not pairs:
        raise ValueError("COVER-EM needs at least one gold interpretation")
    context = treerare_normalize(long_answer)
    return sum(any(treerare_normalize(a) in context for a in aliases) for aliases in pairs) / len(pairs)


def _long_form(item: AmbigItem, answer: Answer, scorers: Scorers, usage: Usage) -> Scored:
    """STR-EM and STR-Hit on the text the profile's scorer reads; COVER-EM on the answer as
    TreeRare reads it (whole, citations and all). Only those the run selects: COVER-EM was a
    third of a STR-EM-only run's scoring, thrown away."""
    aliases = [i.short_answers for i in item.interpretations]
    scores: dict[str, float] = {}
    if scorers.wants("str_em", "str_hit"):
        hits = str_em_hits(aliases, scorers.text(answer))
        scores |= {"str_em": str_em(hits), "str_hit": str_hit(hits)}
    if scorers.wants("cover_em"):
        scores["cover_em"] = cover_em(aliases, answer.text)
    return Scored(scores)


LONG_FORM = Scorer("long-form", _long_form)

# The metrics of this module, by the names options and reports use.
SPECS = (
    percent("str_em", "STR-EM", "ASQA/ALCE exact presence of short answers", LONG_FORM),
    percent("str_hit", "STR-Hit", "ALCE: every short answer present", LONG_FORM, binary=True),
    MetricSpec(
        "cover_em",
        "COVER-EM",
        "TreeRare (arXiv 2506.00331) section 4.1: share of interpretations with a gold alias "
        "inside the answer, TreeRare's normalisation, 0-1",
        scorer=LONG_FORM,
    ),
)
