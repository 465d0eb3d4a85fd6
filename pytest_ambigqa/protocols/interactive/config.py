"""The interactive protocol's own options, read and checked by it: the cost pairs, the
clarifications an episode allows, the simulated user, and whether the forced policies and
the oracle are played (steerability)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import options
from .episodes import COST_GRID, parse_costs


@dataclass(frozen=True)
class InteractiveConfig:
    costs: tuple[tuple[float, float], ...] = COST_GRID  # (alpha, beta) pairs, the paper's grid
    clarifications: int = 1
    user: str = "offline"  # or "llm": the judge model plays the user
    steerability: bool = False

    @classmethod
    def read(cls, config: Any) -> InteractiveConfig:
        return cls(
            costs=parse_costs(options.value(config, "--ambig-costs")),
            clarifications=options.number(
                "--ambig-clarifications",
                options.text(config, "--ambig-clarifications"),
                kind=int,
                low=0,
                high=10,
            ),
            user=options.choice(config, "--ambig-user"),
            steerability=options.value(config, "--ambig-steerability") is not None,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "costs": [list(pair) for pair in self.costs],
            "clarifications": self.clarifications,
            "user": self.user,
            "steerability": self.steerability,
        }
