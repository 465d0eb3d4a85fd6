"""A ``scorecard.json`` read back, in one place: ``--ambig-rescore`` reads a run's answers
and options from it, ``pytest-ambigqa merge`` the shards of a run, ``--ambig-baseline`` and
``pytest-ambigqa compare`` the runs they compare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ScorecardError
from ..readback import check_scorecard
from . import storage
from .migrations import migrate

if TYPE_CHECKING:
    from .scorecard import Scorecard


def read_scorecard(path: storage.Location) -> dict[str, Any]:
    """The scorecard's JSON (at a path, or an object store's URL), an older version's migrated
    to this one (``card/migrations.py``), then checked whole against its schema (``readback``):
    every number finite and on its metric's scale, so nothing read back can make a mean NaN or
    pass a gate it would fail on clean data."""
    try:
        data = migrate(json.loads(storage.read_text(path)))
        check_scorecard(data)
    except (OSError, ValueError, RecursionError) as exc:  # readback.Invalid is a ValueError
        raise ScorecardError(storage.shown(path), str(exc)) from None
    return data


def read_card(path: Path) -> Scorecard:
    """The scorecard of a ``scorecard.json``, its results and suite summaries."""
    from .scorecard import Scorecard

    data = read_scorecard(path)
    try:
        return Scorecard.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ScorecardError(path, f"{type(exc).__name__}: {exc}") from None
