"""What a system reports of its own planning: whether it found the question ambiguous, and
of which type (MARCH section 4 and Table 1; CLARION's planning stage)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..schema import normalize_type
from .spec import Scored, Scorer, percent

if TYPE_CHECKING:
    from ..models.usage import Usage
    from ..schema import AmbigItem, Answer
    from .scoring import Scorers


def _self_report(item: AmbigItem, answer: Answer, scorers: Scorers, usage: Usage) -> Scored:
    """Ambiguity detection (every benchmark item is ambiguous) and, where the item has a
    gold type, type accuracy."""
    scored = Scored()
    if answer.is_ambiguous is None:
        scored.unscored["ambiguity_detected"] = "the system does not report is_ambiguous"
    else:
        scored.scores["ambiguity_detected"] = float(answer.is_ambiguous)
    if item.ambiguity_type is None:
        return scored
    if answer.ambiguity_type is None:
        scored.unscored["ambiguity_type_acc"] = "the system does not report ambiguity_type"
    else:
        scored.scores["ambiguity_type_acc"] = float(
            normalize_type(answer.ambiguity_type) == item.ambiguity_type
        )
    return scored


SELF_REPORT = Scorer("self-report", _self_report)

# The metrics of this module, by the names options and reports use.
SPECS = (
    percent(
        "ambiguity_detected",
        "Ambiguity detected",
        "share of items the system flags is_ambiguous (every benchmark item is ambiguous; "
        "MARCH section 4, CLARION's planning stage)",
        SELF_REPORT,
    ),
    percent(
        "ambiguity_type_acc",
        "Ambiguity type accuracy",
        "system ambiguity_type equals the gold type (MARCH Table 1 taxonomy)",
        SELF_REPORT,
    ),
)
