"""The files a scorecard is written to, by name: ``scorecard.json``, ``scorecard.md`` and
``report.html`` built in, more from plugins (``pytest_ambigqa_writers``); and the exports a
run writes beside them only when asked (``--ambig-export``, ``pytest-ambigqa export --to``),
each a module imported only then (its package an extra)."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import chain

from ..card import storage
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


@dataclass(frozen=True)
class Export:
    """Another tool's format of a scorecard, many files of its own: written by ``module``'s
    ``write(card, directory) -> names`` (imported on use) into ``--ambig-report``'s
    ``subdirectory``, or wherever ``pytest-ambigqa export -o`` says."""

    name: str
    module: str  # in this package, imported only when the export is asked for
    subdirectory: str  # inside --ambig-report's directory
    extra: str  # the extra that installs what it imports: pip install 'pytest-ambigqa[EXTRA]'
    package: str  # the distribution's top-level module, checked before a run asks for it

    def absent(self) -> str | None:
        """Why it cannot be written here (its package not installed), or None; imports nothing."""
        if importlib.util.find_spec(self.package) is not None:
            return None
        return f"{self.package} is not installed (pip install 'pytest-ambigqa[{self.extra}]')"

    def write(self, card: Scorecard, directory: storage.Location) -> list[str]:
        module = importlib.import_module(self.module, __package__)
        names: list[str] = module.write(card, directory)
        return names


EXPORTS: dict[str, Export] = {
    "inspect": Export("inspect", ".inspect_log", "inspect", "inspect", "inspect_ai"),
}
