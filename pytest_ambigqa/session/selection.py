"""What narrowed a run below the items its options select: ``-k``, ``-m``, ``--deselect``,
``--lf``, ``--sw``, node ids named on the command line, or a plugin's deselection.

The scorecard records it as ``config.selection`` (``{"items", "selected", "by"}``), so that
``pytest-ambigqa merge`` can refuse a shard that did not run the whole of its shard: a ``-k``
shard merged as complete once flipped a failing gate to passing.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pytest


def narrowed_by(config: pytest.Config) -> list[str]:
    """The options of this run that can deselect items, as the user gave them."""
    option = config.option
    found = []
    if getattr(option, "keyword", ""):
        found.append(f"-k {option.keyword!r}")
    if getattr(option, "markexpr", ""):
        found.append(f"-m {option.markexpr!r}")
    deselected = getattr(option, "deselect", None) or ()
    if deselected:
        found.append(f"--deselect ({len(deselected)} node id(s))")
    if getattr(option, "lf", False):
        found.append("--lf")
    if getattr(option, "stepwise", False) or getattr(option, "stepwise_skip", False):
        found.append("--sw")
    named = [arg for arg in config.args if "::" in arg]
    if named:
        found.append(f"{len(named)} node id(s) named on the command line")
    return found


def record(config: pytest.Config, items: Collection[str], selected: Collection[str] | None) -> dict[str, Any]:
    """``config.selection``: how many items the options selected, how many of them the
    collection kept (``selected``; None: all), and what narrowed it where it kept fewer."""
    kept = len(items) if selected is None else len(set(items) & set(selected))
    by = [] if kept == len(items) else narrowed_by(config) or ["a plugin or conftest deselected items"]
    return {"items": len(items), "selected": kept, "by": by}
