"""The test function of every builtin item's test (``collection.AmbigFunction``), in a module
of its own: pytest cuts a failing setup's traceback at the first frame in the test function's
file, so no frame of this module may ever stand between a fixture's error and the fixture."""

from __future__ import annotations

from typing import Any


def test_function(ambig_system: Any) -> None:
    """One benchmark item: the system answered (in setup) and meets ``--ambig-item-min``
    (``AmbigFunction.runtest`` says so; this function names the test's fixtures)."""
