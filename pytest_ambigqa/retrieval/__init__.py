"""Retrievers over the suite corpus: BM25, dense, and their reciprocal-rank fusion.

Every retriever is called as ``retriever(query, k=10) -> list[Passage]`` (best first,
each passage with its ``score``) and ``retriever.batch(queries, k)``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ModelNotFound
from ..registry import Registry
from ..schema import Passage
from .cache import IndexCache, fingerprint
from .corpus import Corpus
from .ranking import RRF_K, reciprocal_rank_fusion, to_passages

if TYPE_CHECKING:
    from .bm25 import BM25Retriever
    from .dense import DenseRetriever

FUSION_DEPTH = 100  # how deep each list goes into the fusion


# makes the dense retriever's embedder from (model directory, --ambig-device); None: here
Embed = Callable[[Path, str], Any] | None


class Retriever(Protocol):
    name: str
    corpus: Corpus

    def __call__(self, query: str, k: int = 10) -> list[Passage]: ...

    def batch(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]: ...


class HybridRetriever:
    """Reciprocal-rank fusion (k = 60) of the BM25 and dense rankings."""

    name = "hybrid"

    def __init__(self, bm25: BM25Retriever, dense: DenseRetriever) -> None:
        self.bm25, self.dense, self.corpus = bm25, dense, bm25.corpus

    def batch(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        depth = max(k, FUSION_DEPTH)
        dense = self.dense.rankings(queries, depth)
        out = []
        for query, dense_ranking in zip(queries, dense, strict=True):
            lists = [[i for i, _ in self.bm25.ranking(query, depth)], [i for i, _ in dense_ranking]]
            out.append(to_passages(self.corpus, reciprocal_rank_fusion(lists, RRF_K)[:k]))
        return out

    def __call__(self, query: str, k: int = 10) -> list[Passage]:
        return self.batch([query], k)[0]


def _bm25(
    corpus: Corpus, cache: IndexCache, embedder: str | None, device: str, embed: Embed
) -> BM25Retriever:
    from . import bm25 as bm25_module

    key = fingerprint("bm25", corpus.sha256, bm25_module.K1, bm25_module.B, sorted(bm25_module.STOPWORDS))
    return cache.get(
        "bm25",
        key,
        lambda d: bm25_module.build_bm25(corpus, d),
        lambda d: bm25_module.BM25Retriever(corpus, d),
    )


def _dense(
    corpus: Corpus, cache: IndexCache, embedder: str | None, device: str, embed: Embed
) -> DenseRetriever:
    from . import dense as dense_module

    path = dense_module.resolve_model(embedder)
    model = (embed or dense_module.Embedder)(path, device)
    key = fingerprint("dense", corpus.sha256, dense_module.model_fingerprint(path), dense_module.FLAT_LIMIT)
    return cache.get(
        "dense",
        key,
        lambda d: dense_module.build_dense(corpus, model, d),
        lambda d: dense_module.DenseRetriever(corpus, d, model),
    )


def _hybrid(corpus: Corpus, cache: IndexCache, embedder: str | None, device: str, embed: Embed) -> Retriever:
    parts = (corpus, cache, embedder, device, embed)
    return HybridRetriever(_bm25(*parts), _dense(*parts))


@dataclass(frozen=True)
class RetrieverKind:
    """One ``--ambig-retriever`` value: what it imports, whether it runs the dense embedder
    (a model and a device), and how its index is opened (built once per machine)."""

    name: str
    needs: tuple[str, ...]
    embeds: bool
    open: Callable[[Corpus, IndexCache, str | None, str, Embed], Retriever]


RETRIEVERS: Registry[RetrieverKind] = Registry("retriever")
for _kind in (
    RetrieverKind("bm25", ("rank_bm25",), False, _bm25),
    RetrieverKind("dense", ("faiss", "sentence_transformers"), True, _dense),
    RetrieverKind("hybrid", ("rank_bm25", "faiss", "sentence_transformers"), True, _hybrid),
):
    RETRIEVERS.register(_kind.name, _kind)


def unavailable(kind: str, embedder: str | None) -> str | None:
    """Why retriever ``kind`` cannot run here (a message naming the option), or None.

    Cheap: looks for the packages and the model files without importing torch.
    """
    missing = [m for m in RETRIEVERS[kind].needs if importlib.util.find_spec(m) is None]
    if missing:
        return f"--ambig-retriever={kind} needs {', '.join(missing)}: pip install 'pytest-ambigqa[retrieval]'"
    if RETRIEVERS[kind].embeds:
        from .dense import resolve_model

        try:
            resolve_model(embedder)
        except ModelNotFound as exc:
            return f"--ambig-embedder: {exc}"
    return None


def open_retriever(
    kind: str,
    corpus: Corpus,
    cache_dir: Path,
    embedder: str | None,
    device: str = "auto",
    embed: Embed = None,
) -> Retriever:
    """Load (or build once, under the cache lock) the index of ``kind`` for ``corpus``; the
    embedder runs on ``device`` (an ``--ambig-device`` value), made by ``embed(path, device)``
    when given (a Ray actor's, ``executors/ray/models.py``), else here."""
    return RETRIEVERS[kind].open(corpus, IndexCache(cache_dir), embedder, device, embed)
