"""BM25 over the corpus with ``rank-bm25`` (BM25Okapi: k1 = 1.5, b = 0.75, epsilon = 0.25).

Tokenisation (documents and queries alike): lowercase, Unicode word characters
(``\\w+``), minus a short English stopword list; no stemming.

rank-bm25 computes the statistics (idf with its epsilon floor, document lengths,
average length). Its ``get_scores`` walks every document for every query term in
Python, so scoring here runs the same formula over per-term postings built from its
``doc_freqs``, term by term in query order, and gives the same floating-point scores.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..metrics.text import STOPWORDS
from ..schema import Passage
from .corpus import Corpus
from .ranking import to_passages, top

_WORD = re.compile(r"\w+")
K1, B, EPSILON = 1.5, 0.75, 0.25


def tokenize(text: str) -> list[str]:
    return [t for t in _WORD.findall(text.lower()) if t not in STOPWORDS]


def build_bm25(corpus: Corpus, directory: Path) -> None:
    """Index the corpus with rank-bm25 and store what scoring needs as flat arrays."""
    from rank_bm25 import BM25Okapi

    documents = [tokenize(f"{p.title} {p.text}") for p in corpus.passages]
    if not any(documents):
        raise ValueError("no passage has a word to index")
    bm25 = BM25Okapi(documents, k1=K1, b=B, epsilon=EPSILON)
    postings: dict[str, tuple[list[int], list[int]]] = {}
    for doc, freqs in enumerate(bm25.doc_freqs):
        for term, tf in freqs.items():
            entry = postings.setdefault(term, ([], []))
            entry[0].append(doc)
            entry[1].append(tf)
    terms = sorted(postings)
    offsets = np.zeros(len(terms) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(postings[t][0]) for t in terms])
    np.savez(
        directory / "bm25.npz",
        offsets=offsets,
        docs=np.fromiter((d for t in terms for d in postings[t][0]), dtype=np.int32, count=int(offsets[-1])),
        tfs=np.fromiter((f for t in terms for f in postings[t][1]), dtype=np.float64, count=int(offsets[-1])),
        idf=np.array([bm25.idf[t] for t in terms], dtype=np.float64),
        doc_len=np.array(bm25.doc_len, dtype=np.float64),
    )
    meta = {"terms": terms, "avgdl": bm25.avgdl, "k1": K1, "b": B}
    (directory / "bm25.json").write_text(json.dumps(meta), encoding="utf-8")


class BM25Retriever:
    """``retriever(query, k)`` -> the k best passages, each with its BM25 score."""

    name = "bm25"

    def __init__(self, corpus: Corpus, directory: Path) -> None:
        meta = json.loads((directory / "bm25.json").read_text(encoding="utf-8"))
        arrays = np.load(directory / "bm25.npz")
        self.corpus = corpus
        self._term_index = {t: i for i, t in enumerate(meta["terms"])}
        self._offsets, self._docs, self._tfs = arrays["offsets"], arrays["docs"], arrays["tfs"]
        self._idf, doc_len = arrays["idf"], arrays["doc_len"]
        if len(doc_len) != len(corpus):
            raise ValueError(f"index has {len(doc_len)} documents, corpus {len(corpus)}")
        k1, b = meta["k1"], meta["b"]
        self._k1 = k1
        self._norm = k1 * (1 - b + b * doc_len / meta["avgdl"])  # rank-bm25's denominator term

    def scores(self, query: str) -> np.ndarray:
        """Scores of every passage, as rank-bm25's ``get_scores`` computes them."""
        score = np.zeros(len(self.corpus))
        for term in tokenize(query):
            i = self._term_index.get(term)
            if i is None:
                continue  # rank-bm25 adds idf 0 x ... = 0 for unknown terms
            lo, hi = self._offsets[i], self._offsets[i + 1]
            docs, tf = self._docs[lo:hi], self._tfs[lo:hi]
            score[docs] += self._idf[i] * (tf * (self._k1 + 1) / (tf + self._norm[docs]))
        return score

    def ranking(self, query: str, depth: int) -> list[tuple[int, float]]:
        """The ``depth`` best (passage index, score), best first; ties by corpus order."""
        return top(self.scores(query), depth)

    def __call__(self, query: str, k: int = 10) -> list[Passage]:
        return to_passages(self.corpus, self.ranking(query, k))

    def batch(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        return [self(q, k) for q in queries]
