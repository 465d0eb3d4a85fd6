"""The files a scorecard is written to, by name: ``scorecard.json``, ``scorecard.md`` and
``report.html`` built in, more from plugins (``pytest_ambigqa_writers``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..output import json_document
from ..registry import Registry
from . import html, markdown
from .scorecard import Scorecard


@dataclass(frozen=True)
class Writer:
    name: str
    filename: str  # inside --ambig-report's directory
    render: Callable[[Scorecard, float | None], str]  # (scorecard, run duration in seconds) -> text


WRITERS: Registry[Writer] = Registry("report writer")
for _writer in (
    Writer(
        "json", "scorecard.json", lambda card, duration: json_document(card.to_json(duration=duration)) + "\n"
    ),
    Writer("markdown", "scorecard.md", markdown.render),
    Writer("html", "report.html", html.render),
):
    WRITERS.register(_writer.name, _writer)
