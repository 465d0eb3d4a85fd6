"""What a protocol is: how a run puts its items to a system (issue 24's strategy).

A protocol turns a suite's items into tests, asks one of them of a system and scores it,
says what an item that never got an answer counts, which metrics and slices a suite
reports under it, what section its scorecard carries, how the report shows that section and
which gates it adds. ``Run``, the evaluator, the scorecard builder and the report ask the
run's protocol (the report finds it by the name its setup records, :func:`protocol_of`)
rather than branch on its name: what the run's options may ask of it is a capability it
declares (``suite_values_are_item_means``, ``repeats_trials``), never a check of its name. A
new protocol is a package here and one line in :data:`pytest_ambigqa.protocols.PROTOCOLS`, plus
its choice of ``--ambig-protocol`` (``options.py`` imports nothing of the package, so it lists
the names; ``tests/test_layout.py`` holds the two equal).

The published setting a run's numbers are compared with is a :class:`~..suites.Setup`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..schema import AMBIGUITY_TYPES, AmbigItem, ItemResult, Status

if TYPE_CHECKING:
    import pytest

    from ..blocks import Block, Table
    from ..evaluate import Evaluator
    from ..judge import Judge
    from ..metrics.scoring import Scorers
    from ..store.pool import Scoring
    from ..suites import Setup, Suite
    from ..systems import System


class Protocol:
    """The single-shot defaults; a protocol overrides what it does otherwise."""

    name: str
    judges_suites = True  # the suites' model-backed metrics run (the reader, the judge's packages)
    own_options: tuple[str, ...] = ()  # options only this protocol reads: refused under others
    config_keys: tuple[str, ...] = ()  # how the scorecard's config records them (None elsewhere)

    @classmethod
    def read_options(cls, config: pytest.Config) -> Any:
        """Its own options, read and checked (None: it has none); ``configured`` gets them."""
        return None

    @classmethod
    def uses_judge(cls, own: Any) -> bool:
        """Whether ``--ambig-judge`` names a model this protocol talks to, given its options."""
        return True

    unit = "items"  # what a suite's tests are, as the scorecard counts them
    slice_heading = "ambiguity type"  # what its slices are, as the scorecard heads them
    papers_column = True  # the suite's published rows stand beside its metrics ("papers")
    # a system that reads evidence is refused a run that has none to give (Run.evidence_problem)
    needs_evidence = True
    has_section = False  # a section of its own per suite, under its name in scorecard.json

    suite_values_are_item_means = True
    """Whether a suite's value of a metric is the mean of its tests' scores, one test per data
    item: what ``--ambig-sequential`` decides on as items come, and what ``--ambig-sample``'s
    stratum weights estimate. A protocol that expands an item into several tests and weighs
    them in groups (interactive: readings and cost pairs) says no, and both are refused."""

    repeats_trials = True
    """Whether ``--ambig-repeats`` may ask each test K times and score the trials' mean (no:
    a protocol whose section reads one transcript per test)."""

    @classmethod
    def check_options(cls, config: pytest.Config) -> None:
        """Refuse (``options.refuse``) what this protocol cannot do with the run's options."""

    @classmethod
    def check_rescore(cls) -> None:
        """Refuse ``--ambig-rescore`` where saved answers cannot be scored again."""

    @classmethod
    def configured(cls, own: Any, judge: Judge | None) -> Protocol:
        """The protocol of a run, given its own options (``read_options``) and the run's judge."""
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
        """The run's setup, given the one the suite's inputs make; any protocol but single
        shot names it after itself, which is how a saved scorecard says its protocol."""
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

    def slice_of(self, result: ItemResult) -> str | None:
        """The slice a test's result falls in."""
        return result.ambiguity_type

    def slice_names(self, suite: Suite) -> tuple[str, ...]:
        """The slices a suite's results are reported in apart, in order (MARCH: by ambiguity type)."""
        return AMBIGUITY_TYPES if suite.sliced_by_type else ()

    def settle(self, results: Sequence[ItemResult]) -> list[ItemResult]:
        """A suite's results as its scorecard reports them, once all are in (the
        interactive protocol sets a failed episode's reward from the others')."""
        return list(results)

    def group(self, result: ItemResult) -> str:
        """What a result weighs as one with others of in a suite's means (the interactive
        protocol's readings of one query at one cost pair); by default, itself alone."""
        return result.key

    def cluster(self, result: ItemResult) -> str:
        """What a result is resampled with in an interval, its values not being independent
        of each other (the interactive protocol's query: every reading and cost pair of it);
        by default its group."""
        return self.group(result)

    def slices(self, suite: Suite, results: Sequence[ItemResult]) -> list[tuple[str, list[ItemResult]]]:
        """The parts of a suite's results reported apart, those with any result."""
        parts = [(name, [r for r in results if self.slice_of(r) == name]) for name in self.slice_names(suite)]
        return [(name, part) for name, part in parts if part]

    def section(self, results: Sequence[ItemResult]) -> dict[str, Any] | None:
        """The protocol's own part of a suite's scorecard (``has_section``)."""
        return None

    def blocks(self, section: dict[str, Any], context: list[dict[str, Any]]) -> list[Block]:
        """Its section as the report shows it (``report/blocks.py``); ``context``: the rows
        published under the protocol's name, from any suite's ``published.toml``."""
        return []

    def tables(self, section: dict[str, Any]) -> list[tuple[str, Table]]:
        """Its section's tables with their captions, as report.html draws them."""
        return []

    def shortfalls(
        self,
        suite: str,
        items: int,
        answered: int,
        section: Mapping[str, Any] | None,
        max_unscored_rate: float | None,
    ) -> list[str]:
        """The gates it adds to a suite's (``card/gates.py``), one line per failed one, given
        the suite's counts of items and of answered ones and its section (so that protocols/
        imports nothing of the scorecard model, which asks it)."""
        return []

    def gold_item(self, result: ItemResult, items: Mapping[str, AmbigItem]) -> AmbigItem | None:
        """The data file's item a saved result answered, as its test asked it (``items`` by
        key): report.html's drill-down of a scorecard read back."""
        return items.get(result.key)

    def detail(self, result: ItemResult) -> str | None:
        """A line about the test for report.html's drill-down."""
        return None


class SingleShot(Protocol):
    """One call per item, one answer, scored against every gold interpretation: the
    benchmarks' protocol as published."""

    name = "single-shot"
