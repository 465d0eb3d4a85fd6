"""What a system reports of its own planning: whether it found the question ambiguous, and
of which type (MARCH section 4 and Table 1; CLARION's planning stage). Scored by
``suites.base.add_self_report``."""

from __future__ import annotations

from .spec import percent

# The metrics of this module, by the names options and reports use.
SPECS = (
    percent(
        "ambiguity_detected",
        "Ambiguity detected",
        "share of items the system flags is_ambiguous (every benchmark item is ambiguous; "
        "MARCH section 4, CLARION's planning stage)",
    ),
    percent(
        "ambiguity_type_acc",
        "Ambiguity type accuracy",
        "system ambiguity_type equals the gold type (MARCH Table 1 taxonomy)",
    ),
)
