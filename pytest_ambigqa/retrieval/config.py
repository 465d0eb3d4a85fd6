"""The run's retrieval, read from its options: which retriever over which corpus, how deep,
and whether the evidence report runs. Its default depth is the papers' (MARCH Appendix H:
top-10 per query), which the option table shows too (``tests/test_layout.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import options

TOP_K = 10


@dataclass(frozen=True)
class RetrievalConfig:
    retriever: str = "bm25"  # a RETRIEVERS name, or "none"
    top_k: int = TOP_K
    corpus: Path | None = None  # None: the selected suites' own passages
    embedder: str | None = None
    report: bool = False  # --ambig-retrieval-report: evidence recall per item

    @classmethod
    def read(cls, config: Any, base: Path) -> RetrievalConfig:
        corpus = options.value(config, "--ambig-corpus")
        return cls(
            retriever=options.choice(config, "--ambig-retriever"),
            top_k=options.number(
                "--ambig-top-k", options.text(config, "--ambig-top-k"), kind=int, low=1, high=10_000
            ),
            corpus=base / Path(corpus).expanduser() if corpus else None,
            embedder=options.value(config, "--ambig-embedder"),
            report=options.value(config, "--ambig-retrieval-report") is not None,
        )

    @property
    def searches(self) -> bool:
        return self.retriever != "none"

    def to_dict(self) -> dict[str, Any]:
        return {
            "corpus": str(self.corpus) if self.corpus else None,
            "retriever": self.retriever,
            "top_k": self.top_k,
            "embedder": self.embedder,
            "retrieval_report": self.report,
        }
