"""pytest-ambigqa: ambiguous-question benchmarks (MARCH, CondAmbigQA, ASQA) as pytest tests."""

from __future__ import annotations

from .assertions import assert_ambig
from .schema import AmbigItem, Answer, GeneratedInterpretation, Interpretation, ItemResult, Passage

__version__ = "0.1.0"

__all__ = [
    "AmbigItem",
    "Answer",
    "GeneratedInterpretation",
    "Interpretation",
    "ItemResult",
    "Passage",
    "__version__",
    "assert_ambig",
]
