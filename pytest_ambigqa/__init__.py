"""pytest-ambigqa: ambiguous-question benchmarks (MARCH, CondAmbigQA, ASQA) as pytest tests."""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # not typing's, whose import alone costs 10 ms
if TYPE_CHECKING:
    from typing import Any

    from .assertions import assert_ambig
    from .schema import AmbigItem, Answer, GeneratedInterpretation, Interpretation, ItemResult, Passage

__version__ = "0.1.0"

# Every name is imported on first use: the plugin imports this package in every pytest run.
_HOMES = {
    "AmbigItem": ".schema",
    "Answer": ".schema",
    "GeneratedInterpretation": ".schema",
    "Interpretation": ".schema",
    "ItemResult": ".schema",
    "Passage": ".schema",
    "assert_ambig": ".assertions",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home, __name__), name)
    globals()[name] = value
    return value


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
