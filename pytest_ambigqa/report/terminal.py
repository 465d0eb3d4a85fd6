"""The scorecard in the terminal: the view's blocks as indented lines (no headings: the
summary's separator and each section's first line say them)."""

from __future__ import annotations

from collections.abc import Iterable

from ..blocks import Block, Caption, Gap, Notes, Para, Table
from ..card.compare import Comparison
from ..card.scorecard import Scorecard
from ..output import for_terminal
from . import view


def lines(blocks: Iterable[Block]) -> list[str]:
    out: list[str] = []
    for block in blocks:
        if block.only not in (None, "terminal"):
            continue
        match block:
            case Gap():
                out.append("")
            case Para(text, depth) | Caption(text, depth):
                out.append("  " * depth + _shown(text))
            case Notes(notes):
                out += ["  " * note.depth + _shown(note.text) for note in notes]
            case Table(header, rows, align, depth) if header:
                cells = [tuple(_shown(c, one_line=True) for c in row) for row in [header, *rows]]
                out += _table(cells, align, "  " * depth)
    return out


def _shown(text: str, *, one_line: bool = False) -> str:
    """Text from the run (answers, ids, server errors, batch statuses) as a terminal may show
    it: control characters escaped (``output.for_terminal``), so no escape sequence in it
    reaches the terminal, and a table's cell on one line."""
    return for_terminal(text, one_line=one_line)


def _table(rows: list[tuple[str, ...]], align: str, indent: str) -> list[str]:
    """Columns padded to width, right-aligned where ``align`` says ``r``."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        (
            indent
            + "  ".join(
                c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(row, widths, align, strict=True)
            )
        ).rstrip()
        for row in rows
    ]


def scorecard(card: Scorecard) -> list[str]:
    return lines(view.scorecard(card))


def comparison(comparison: Comparison) -> list[str]:
    return lines(view.comparison(comparison))
