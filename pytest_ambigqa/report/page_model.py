"""What report.html's page script reads: the data block (:class:`Payload`), each item's row
(``ItemRow``) and each item's details (``Detail``), as ``report/html.py``'s ``payload`` makes
them. Their JSON Schema is where the page script's types come from (``page_types.py`` writes
``assets/js/payload.d.ts``; ``tsc --checkJs`` checks the scripts against it), and a test
holds a real run's payload to it: a field renamed on either side fails.

pydantic is imported on the first call: by the tests and the docs, never by a run, which writes
the page without it.
"""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema of the page's data: ``Page`` (the data block, the items' rows and their
    details, as the page holds them once unpacked) with every record under ``$defs``."""
    from typing import Annotated, Literal

    from pydantic import BaseModel, ConfigDict, Field

    pair = Annotated[list[float], Field(min_length=2, max_length=2)]

    class Record(BaseModel):
        model_config = ConfigDict(strict=True, extra="forbid")

    class Table(Record):
        head: list[str]
        rows: list[list[str]]

    class TitledTable(Table):
        title: str

    class Gates(Record):
        verdict: str
        set: bool
        shortfalls: list[str]
        checks: Table
        deferred: str | None
        unanswered: str | None

    class MetricInfo(Record):
        label: str
        source: str
        scale: pair | None

    class Papers(Record):
        low: float
        high: float
        comparable: bool
        text: str
        title: str

    class Summary(Record):
        metric: str
        score: str
        interval: str
        scored: str
        mean: float | None
        low: float | None
        high: float | None
        papers: Papers | None

    class SliceSummary(Summary):
        name: str

    class Multiple(Record):
        metric: str
        rows: list[SliceSummary]

    class EvidenceRow(Record):
        name: str
        items: int
        original: str
        clarified: str

    class SuitePanel(Record):
        name: str
        title: str
        summary: str
        data: str
        receives: str
        upper_bound: str | None
        notes: list[str]
        warnings: list[str]
        metrics: list[Summary]
        published: list[str]
        problems: list[str]
        by: str | None
        tables: list[TitledTable]
        multiples: list[Multiple]
        evidence: list[EvidenceRow]

    class ComparedRow(Record):
        slice: str
        metric: str
        cells: list[str]
        significant: Literal["better", "worse"] | None
        why: str | None
        diff: float
        low: float | None
        high: float | None
        direction: int
        margin: float | None

    class ComparedSuite(Record):
        name: str
        rows: list[ComparedRow]
        skipped: list[str]
        one_sided: list[str]

    class Only(Record):
        what: str
        keys: list[str]

    class Regression(Record):
        key: str
        suite: str
        text: str
        diff: list[Annotated[list[str], Field(min_length=2, max_length=2)]] | None  # (op, words): -, +, =

    class Comparison(Record):
        intro: str
        notes: list[str]
        significant_by: str
        only: list[Only]
        suites: list[ComparedSuite]
        regressions: list[Regression]

    class Calibration(Record):
        notes: list[str]
        tables: list[Table]
        key: str

    class Payload(Record):
        """The data block: the run, its gates, its suites, and what the items share."""

        system: str | None
        facts: list[str]
        config: dict[str, Any]
        versions: dict[str, str]
        judge: dict[str, Any] | None
        gates: Gates
        metrics: dict[str, MetricInfo]
        suites: list[SuitePanel]
        reasons: list[str]  # why a metric is unscored: a detail's ``unscored`` holds indices into it
        comparison: Comparison | None
        calibration: Calibration | None

    class ItemRow(Record):
        """An item as the list filters, sorts and shows it."""

        key: str
        suite: str
        type: str | None
        status: Literal["ok", "error", "missing"]
        question: str
        scores: dict[str, float]
        shown: dict[str, str]
        unscored: list[str]
        spread: float
        duration: float
        change: float | None
        regressed: bool

    class Reading(Record):
        question: str | None
        condition: str | None
        answers: list[str]
        passages: list[str]
        hit: bool | None

    class Passage(Record):
        id: str
        title: str | None

    class Citation(Passage):
        model_config = ConfigDict(strict=True, extra="forbid", populate_by_name=True)
        gold: bool
        as_: str | None = Field(default=None, alias="as")  # the passage's own id, where it differs

    class Gold(Record):
        interpretations: list[Reading]
        spans: list[Annotated[list[int], Field(min_length=3, max_length=3)]]  # start, end, reading
        citations: list[Citation]
        uncited: list[Passage]
        question: str | None = None  # put back by the page from the item's row

    class Interpretation(Record):
        model_config = ConfigDict(strict=True, extra="allow")
        answer: str
        question: str | None = None
        condition: str | None = None
        citations: list[str] = []

    class AnswerShown(Record):
        text: str
        interpretations: list[Interpretation] = []
        citations: list[str] = []
        is_ambiguous: bool | None = None
        ambiguity_type: str | None = None
        clarifying_question: str | None = None

    class FailedCalls(Record):
        summary: str
        last_reply: str | None

    class Output(Record):
        name: str
        items: list[str]

    class Steps(Record):
        head: list[str]
        rows: list[list[str]]
        total: list[str]
        outputs: list[Output]

    class Base(Record):
        status: str
        text: str | None
        scores: dict[str, str]
        error: str | None

    class Detail(Record):
        """An item's drill-down: what is empty is left out (the page fills in ``scores``,
        ``unscored`` and ``samples``; ``unscored`` holds indices into the payload's reasons,
        which the page turns into the reasons)."""

        answer: AnswerShown | None = None
        scores: dict[str, str] = {}
        unscored: dict[str, int | str] = {}
        samples: dict[str, str] = {}
        evidence: str | None = None
        error: str | None = None
        trace: str | None = None
        duration: str | None = None
        cached: bool = False
        usage: dict[str, Any] | None = None
        transcript: list[dict[str, Any]] | None = None
        episode: str | None = None
        reader: dict[str, Any] | None = None
        calls: FailedCalls | None = None
        steps: Steps | None = None
        gold_absent: str | None = None
        gold: Gold | None = None
        base: Base | None = None

    class Page(Record):
        """The page's data once unpacked: the data block, the items' rows, their details."""

        data: Payload
        items: list[ItemRow]
        details: list[Detail]

    out = Page.model_json_schema(by_alias=True)
    return out
