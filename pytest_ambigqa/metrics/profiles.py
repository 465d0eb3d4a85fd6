"""Scorer profiles: the two official scorers of long-form ambiguous QA, which differ.

ALCE ``eval.py`` (Gao et al. 2023, "Enabling Large Language Models to Generate Text with
Citations", arXiv 2305.14627) keeps only the first line of an answer, removes ``[n]``
citation marks, and reads it with the transformers question-answering pipeline (answers
of at most 15 tokens, ``handle_impossible_answer``) over ``gaotianyu1350/roberta-large-squad``.
ASQA ``scoring.py`` (Stelmakh et al. 2022, "ASQA: Factoid Questions Meet Long-Form
Answers", arXiv 2204.06092) keeps the whole answer and reads it with ``run_qa.py``
(``--version_2_with_negative``, answers of at most 30 tokens) over the RoBERTa-large SQuAD
2.0 checkpoint of its release. Both split sentences with NLTK's trained Punkt and take the
bootstrap "mid" of ROUGE-Lsum. The profile a run uses is named in its scorecard.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..models.reader import PIPELINE, RUN_QA, Decoding
from .text import ALCE_CITATION_MARKS, strip_alce_citations

_CHAT_END = re.compile(re.escape("<|im_end|>"))


@dataclass(frozen=True)
class ScorerProfile:
    name: str
    title: str
    reader: Decoding  # how its extractive reader decodes (models/reader.py)

    def prepare(self, text: str) -> str:
        """The answer text the official scorer evaluates."""
        if self.name == "alce":
            # ALCE eval.py: strip, first line, drop a chat end marker, then remove citations.
            return strip_alce_citations(_CHAT_END.sub("", text.strip().split("\n")[0]))
        return text

    def located(self, text: str) -> tuple[str, Sequence[int]]:
        """``prepare(text)`` with the position in ``text`` of each of its characters, so that
        report.html highlights what the scorer read, where the answer has it."""
        if self.name != "alce":
            return text, range(len(text))
        stripped = text.strip()
        start = len(text) - len(text.lstrip())
        first = stripped.split("\n")[0]
        origin: Sequence[int] = range(start, start + len(first))
        for pattern in (_CHAT_END, *ALCE_CITATION_MARKS):
            first, origin = _delete(pattern, first, origin)
        return first, origin


def _delete(pattern: re.Pattern, text: str, origin: Sequence[int]) -> tuple[str, Sequence[int]]:
    """``pattern.sub("", text)`` (as ``str.replace`` deletes a literal), the positions kept."""
    pieces: list[str] = []
    kept: list[int] = []
    last = 0
    for match in pattern.finditer(text):
        pieces.append(text[last : match.start()])
        kept.extend(origin[last : match.start()])
        last = match.end()
    if not last:  # nothing deleted (every pattern matches at least one character)
        return text, origin
    pieces.append(text[last:])
    kept.extend(origin[last:])
    return "".join(pieces), kept


PROFILES: dict[str, ScorerProfile] = {
    p.name: p
    for p in (
        ScorerProfile("alce", "ALCE eval.py", reader=PIPELINE),
        ScorerProfile("asqa", "ASQA scoring.py", reader=RUN_QA),
    )
}
