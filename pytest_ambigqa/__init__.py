"""pytest-ambigqa: ambiguous-question benchmarks (MARCH, CondAmbigQA, ASQA) as pytest tests.

PYTEST_DONT_REWRITE: ``pytest-ambigqa.pth`` imports this package at interpreter start, before
pytest could rewrite it (it has no asserts); the marker keeps pytest from warning about that.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # not typing's: importing typing costs every interpreter 10 ms (see below)
if TYPE_CHECKING:
    from typing import Any

    from .assertions import assert_ambig
    from .schema import AmbigItem, Answer, GeneratedInterpretation, Interpretation, ItemResult, Passage

__version__ = "0.1.0"

# Every name is imported on first use: ``pytest-ambigqa.pth`` imports this package in every
# interpreter (deepeval_gate), and the plugin in every pytest run.
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
