"""Retrieval at 10k and 100k passages: build, load, query latency, memory.

    python bench/retrieval.py            # about 3 minutes on 2 cores

Targets (issue 3): BM25 build of 100k passages under 15 s; a dense index over 100k under
300 MB; a cached index loads at least 10x faster than it builds.

The corpus is synthetic: passages of 40-80 words drawn (Zipf-like) from the vocabulary of
the bundled samples, so that term statistics look like text. The dense encode is run on
10k passages and extrapolated to 100k (it is linear); the 100k dense index is built from
those 10k real embeddings, each repeated 10 times with small noise, which keeps their
clustered geometry. Memory is measured in a fresh process per index (VmRSS growth when
loading the index; VmHWM for the whole process).
"""

from __future__ import annotations

import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from pytest_ambigqa.retrieval import HybridRetriever, open_retriever
from pytest_ambigqa.retrieval.corpus import Corpus, suite_corpus
from pytest_ambigqa.retrieval.dense import DenseRetriever, Embedder, default_model_path, make_index
from pytest_ambigqa.schema import Passage
from pytest_ambigqa.suites import SUITES, LoadOptions

NAMES = ("march", "condambigqa", "asqa")
ITEMS = [item for name in NAMES for item in SUITES[name].load(None, LoadOptions()).items]
QUERIES = [
    q for item in ITEMS for q in [item.question, *(i.question or i.condition for i in item.interpretations)]
]


def synthetic_corpus(n: int, seed: int = 0) -> Corpus:
    words = sorted({w for p in suite_corpus(ITEMS, NAMES).passages for w in re.findall(r"[A-Za-z]+", p.text)})
    rng = random.Random(seed)
    rng.shuffle(words)
    weights = [1 / (rank + 1) for rank in range(len(words))]  # Zipf
    passages = []
    for i in range(n):
        text = " ".join(rng.choices(words, weights, k=rng.randint(40, 80))) + "."
        passages.append(Passage(id=f"s{i}", title=" ".join(rng.choices(words, weights, k=2)), text=text))
    return Corpus(tuple(passages), f"synthetic {n}", {})


def timed(fn) -> tuple[float, object]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def percentiles(times_ms: list[float]) -> tuple[float, float]:
    times_ms = sorted(times_ms)
    return statistics.median(times_ms), times_ms[int(0.95 * (len(times_ms) - 1))]


def latency(call, queries) -> tuple[float, float]:
    """p50 and p95 in milliseconds of ``call(query)`` over the queries, one at a time."""
    times = []
    for query in queries:
        started = time.perf_counter()
        call(query)
        times.append((time.perf_counter() - started) * 1000)
    return percentiles(times)


MEMORY_PROBE = """
import json, sys
from pathlib import Path
def rss():
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024
kind, path = sys.argv[1], sys.argv[2]
import numpy
if kind == "dense":
    import faiss
before = rss()[0]
if kind == "bm25":
    arrays = dict(numpy.load(Path(path) / "bm25.npz"))
    meta = json.loads((Path(path) / "bm25.json").read_text())
else:
    index = faiss.read_index(str(Path(path) / "dense.faiss"))
after, peak = rss()
print(json.dumps({"index_mb": after - before, "process_peak_mb": peak}))
"""


def memory(kind: str, directory: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, kind, str(directory)], capture_output=True, text=True
    )
    return json.loads(out.stdout)


def main() -> None:
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        queries = QUERIES[:200]
        for n in (10_000, 100_000):
            corpus = synthetic_corpus(n)
            cache = root / f"bm25-{n}"
            build, _ = timed(lambda: open_retriever("bm25", corpus, cache, None))  # noqa: B023
            load, bm25 = timed(lambda: open_retriever("bm25", corpus, cache, None))  # noqa: B023
            p50, p95 = latency(lambda q: bm25(q, 10), queries)  # noqa: B023
            (index_dir,) = [p for p in cache.iterdir() if p.is_dir()]
            mem = memory("bm25", index_dir)
            rows.append(
                f"bm25   {n:>7,} passages: build {build:6.2f} s ({n / build:,.0f}/s), "
                f"cached load {load:.3f} s ({build / load:.0f}x), query p50 {p50:.1f} ms p95 {p95:.1f} ms, "
                f"index {mem['index_mb']:.0f} MB"
            )
            print(rows[-1], flush=True)

        # Dense: encode 10k for real, time the model load separately.
        corpus = synthetic_corpus(10_000)
        embedder = Embedder(default_model_path())
        model_load, _ = timed(lambda: embedder.model)
        texts = [f"{p.title}. {p.text}" for p in corpus.passages]
        encode, vectors = timed(lambda: embedder.encode(texts))
        rate = len(texts) / encode
        rows.append(
            f"dense  model load {model_load:.1f} s; encode 10,000 passages {encode:.1f} s ({rate:.0f}/s) "
            f"-> 100,000 extrapolated {100_000 / rate:.0f} s"
        )
        print(rows[-1], flush=True)

        rng = np.random.default_rng(0)
        big = np.repeat(vectors, 10, axis=0) + rng.normal(0, 0.02, (100_000, vectors.shape[1])).astype(
            np.float32
        )
        big /= np.linalg.norm(big, axis=1, keepdims=True)
        query_vectors = embedder.encode(queries)
        import faiss

        results = {}
        for label, exact in (("flat", True), ("ivf", False)):
            build, index = timed(lambda: make_index(big, exact=exact))  # noqa: B023
            path = root / f"dense-{label}"
            path.mkdir()
            faiss.write_index(index, str(path / "dense.faiss"))
            load, _ = timed(lambda: faiss.read_index(str(path / "dense.faiss")))  # noqa: B023
            p50, p95 = latency(lambda v: index.search(v[None, :], 10), query_vectors)  # noqa: B023
            _, ids = index.search(query_vectors, 10)
            results[label] = ids
            mem = memory("dense", path)
            size = (path / "dense.faiss").stat().st_size / 2**20
            probed = f" (nprobe {index.nprobe} of {index.nlist})" if label == "ivf" else ""
            rows.append(
                f"dense  100,000 {label:<4}{probed}: index build {build:.2f} s, file {size:.0f} MB, "
                f"load {load:.3f} s, search p50 {p50:.2f} ms p95 {p95:.2f} ms, "
                f"index {mem['index_mb']:.0f} MB RSS"
            )
            print(rows[-1], flush=True)
        overlap = np.mean(
            [len(set(a) & set(b)) / 10 for a, b in zip(results["flat"], results["ivf"], strict=True)]
        )
        rows.append(f"dense  IVF recall@10 against exact search, 100,000 passages: {overlap:.3f}")
        print(rows[-1], flush=True)

        # End-to-end query latency at 100k: the plugin's own retriever objects over those indexes.
        corpus = synthetic_corpus(100_000)
        bm25 = open_retriever("bm25", corpus, root / "bm25-100000", None)
        dense = DenseRetriever(corpus, root / "dense-flat", embedder)
        for name, retriever in (("dense", dense), ("hybrid", HybridRetriever(bm25, dense))):
            p50, p95 = latency(lambda q: retriever(q, 10), queries)  # noqa: B023
            rows.append(
                f"{name:<6} 100,000 passages: query p50 {p50:.1f} ms p95 {p95:.1f} ms (encode + search)"
            )
            print(rows[-1], flush=True)


if __name__ == "__main__":
    main()
