"""What a protocol is: how a run puts its items to a system (issue 24's strategy).

A protocol turns a suite's items into tests, asks one of them of a system and scores it,
says what an item that never got an answer counts, which metrics and slices a suite
reports under it, and what section its scorecard carries. ``Run``, the evaluator and the
scorecard builder ask the run's protocol rather than branch on its name; a new protocol is
a module here and one line in :data:`pytest_ambigqa.protocols.PROTOCOLS`.

The published setting a run's numbers are compared with is a :class:`~..suites.Setup`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..schema import AMBIGUITY_TYPES, AmbigItem, ItemResult, Status

if TYPE_CHECKING:
    import pytest

    from ..evaluate import Evaluator
    from ..metrics.scoring import Scorers
    from ..store.pool import Scoring
    from ..suites import Setup, Suite
    from ..systems import System


class Protocol:
    """The single-shot defaults; a protocol overrides what it does otherwise."""

    name: str
    judges_suites = True  # the suites' judge metrics run (their judge packages are needed)
    own_options: tuple[str, ...] = ()  # options only this protocol reads: refused under others

    @classmethod
    def check_options(cls, config: pytest.Config) -> None:
        """Refuse (``options.refuse``) what this protocol cannot do with the run's options."""

    @classmethod
    def check_rescore(cls) -> None:
        """Refuse ``--ambig-rescore`` where saved answers cannot be scored again."""

    @classmethod
    def configured(cls, cfg: Any, user: Callable[[], Any]) -> Protocol:
        """The protocol of a run with options ``cfg`` (``user`` builds its simulated user)."""
        return cls()

    def expand(self, items: tuple[AmbigItem, ...]) -> tuple[AmbigItem, ...]:
        """The tests of the selected items, in order."""
        return items

    def base_key(self, item: AmbigItem) -> str:
        """The key of the data file's item a test was made from."""
        return item.key

    def metrics(self, suite: Suite) -> tuple[str, ...]:
        """The metrics a suite reports under this protocol."""
        return suite.reported()

    def setup(self, inputs: Setup) -> Setup:
        """The run's setup, given the one the suite's inputs make."""
        return inputs

    def ask(
        self, evaluator: Evaluator, item: AmbigItem, system: System, extras: dict[str, Any], evidence: Any
    ) -> Scoring:
        """Ask one test of the system (the pool's first stage); what is returned scores it."""
        return evaluator.single(item, system, extras, evidence)

    def failed(
        self,
        suite: Suite,
        item: AmbigItem,
        scorers: Scorers,
        status: Status,
        error: str,
        duration: float = 0.0,
    ) -> ItemResult:
        """A test without an answer (an error, or missing from the run)."""
        return suite.failed_result(item, scorers, status, error, duration)

    def settle(self, results: Sequence[ItemResult]) -> list[ItemResult]:
        """A suite's results as its scorecard reports them, once all are in (the
        interactive protocol sets a failed episode's reward from the others')."""
        return list(results)

    def group(self, result: ItemResult) -> str:
        """What a result weighs as one with others of in a suite's means (the interactive
        protocol's readings of one query at one cost pair); by default, itself alone."""
        return result.key

    def slices(self, suite: Suite, results: Sequence[ItemResult]) -> list[tuple[str, list[ItemResult]]]:
        """The parts of a suite's results reported apart (MARCH: by ambiguity type)."""
        if not suite.sliced_by_type:
            return []
        parts = [(kind, [r for r in results if r.ambiguity_type == kind]) for kind in AMBIGUITY_TYPES]
        return [(kind, part) for kind, part in parts if part]

    def section(self, results: Sequence[ItemResult], steered: bool) -> dict[str, Any] | None:
        """The protocol's own part of a suite's scorecard (``suites[].interactive``)."""
        return None


class SingleShot(Protocol):
    """One call per item, one answer, scored against every gold interpretation: the
    benchmarks' protocol as published."""

    name = "single-shot"
