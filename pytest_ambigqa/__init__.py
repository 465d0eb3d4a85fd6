"""pytest-ambigqa: ambiguous-question benchmarks (MARCH, CondAmbigQA, ASQA) as pytest tests."""

from __future__ import annotations

from typing import Any

from .schema import AmbigItem, Answer, GeneratedInterpretation, Interpretation, ItemResult, Passage

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Lazy, so that loading the plugin (which imports this package) stays cheap.
    if name == "assert_ambig":
        from .assertions import assert_ambig

        return assert_ambig
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
