"""``--ambig-rescore``: the answers a scorecard.json saved, replayed as a system.

The metrics, scorecard and gates are recomputed (a new reader or judge may be configured);
the answers are replayed as they were saved, errors included. Only the saved items run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SystemFailure
from ..schema import AmbigItem, Answer, ItemResult
from .call import System


@dataclass(frozen=True)
class Saved:
    label: str
    answers: dict[str, ItemResult]  # by item key
    inputs: tuple[str, ...] = ()  # what the saved run's system read: its protocol and gold inputs

    def system(self, path: Path) -> System:
        def replay(item: AmbigItem, timeout: float | None, extras: Any) -> Answer:
            saved = self.answers[item.key]
            if saved.status != "ok" or saved.answer is None:
                raise SystemFailure(
                    f"{saved.status} in the saved run: {saved.error}", calls=saved.details.get("calls")
                )
            return saved.answer

        return System(label=f"{self.label} (answers saved in {path})", inputs=(), call=replay)


def load_saved(data: dict[str, Any]) -> Saved:
    """The saved answers of a scorecard (:func:`read_scorecard`'s JSON); ValueError and
    friends when an item or the system is malformed."""
    results = [ItemResult.from_dict(item) for item in data["items"]]
    inputs = tuple(str(i) for i in data["system"].get("inputs") or ())
    return Saved(data["system"]["label"], {r.key: r for r in results}, inputs)
