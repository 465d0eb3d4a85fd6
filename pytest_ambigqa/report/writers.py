"""The files a scorecard is written to, by name: ``scorecard.json``, ``scorecard.md`` and
``report.html`` built in, more from plugins (``pytest_ambigqa_writers``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import chain

from ..card.scorecard import Scorecard
from ..output import json_chunks
from ..registry import Registry
from . import html, markdown


@dataclass(frozen=True)
class Writer:
    name: str
    filename: str  # inside --ambig-report's directory
    # (scorecard, run duration in seconds) -> its text, or the text's pieces as they are made
    render: Callable[[Scorecard, float | None], str | Iterable[str]]


WRITERS: Registry[Writer] = Registry("report writer")
for _writer in (
    Writer(
        "json",
        "scorecard.json",
        lambda card, duration: chain(json_chunks(card.to_json(duration, stream=True)), "\n"),
    ),
    Writer("markdown", "scorecard.md", markdown.render),
    Writer("html", "report.html", html.render),
):
    WRITERS.register(_writer.name, _writer)
