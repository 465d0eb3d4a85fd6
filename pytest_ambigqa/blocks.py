"""The words the report view is written in: blocks of already-formatted text (headings,
paragraphs, notes, tables) and the few formats that both the view (``report/view.py``) and a
protocol's section (``Protocol.blocks``, e.g. ``protocols/interactive/view.py``) use.

It imports nothing of the package and lives in neither room, so that a protocol speaks it
without importing the report, while the report asks the protocols (``PROTOCOLS``) for their
sections: the dependency runs one way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

NOT_COMPARABLE = "n/c"

Only = Literal["terminal", "markdown"] | None  # the one writer that shows a block; None: both


@dataclass(frozen=True)
class Heading:
    """A section's title: Markdown prints it; the terminal's separator and each section's
    first line say it there."""

    text: str
    level: int
    only: Only = None


@dataclass(frozen=True)
class Para:
    """A line of prose: a paragraph in Markdown, a line indented by ``depth`` in the terminal."""

    text: str
    depth: int = 0
    only: Only = None


@dataclass(frozen=True)
class Caption:
    """A table's title (or a finding with no table): as :class:`Para`, capitalised in Markdown."""

    text: str
    depth: int = 1
    only: Only = None


@dataclass(frozen=True)
class Note:
    text: str
    depth: int = 0  # the terminal's indent, in steps of two spaces
    nested: bool = False  # Markdown: a bullet under the one before


@dataclass(frozen=True)
class Notes:
    """Lines of notes: bullets in Markdown, indented lines in the terminal. Empty, it still
    separates in Markdown (as scorecard.md always has)."""

    notes: tuple[Note, ...]
    only: Only = None


@dataclass(frozen=True)
class Table:
    """Columns of formatted cells; ``align`` has one ``l`` or ``r`` per column. No header: no
    table (a caption said it all), a blank line in Markdown."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: str
    depth: int = 1
    fold: str | None = None  # Markdown: folded away under this summary
    only: Only = None


@dataclass(frozen=True)
class Gap:
    """A blank line in the terminal (Markdown puts one between every two blocks)."""

    only: Only = "terminal"


Block = Heading | Para | Caption | Notes | Table | Gap


def note_lines(texts: list[str], depth: int = 0, only: Only = None) -> Notes:
    return Notes(tuple(Note(t, depth) for t in texts), only)


def fixed(value: float | None, digits: int = 1) -> str:
    """A number with ``digits`` decimals, or n/a."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def row_label(row: dict[str, Any]) -> str:
    """A published row's method and model, as the tables name it."""
    return f"{row['method']} / {row['model']}" if row.get("method") else row["model"]
