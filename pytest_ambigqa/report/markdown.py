"""``scorecard.md``: the view's blocks as Markdown, fit for $GITHUB_STEP_SUMMARY. Every
string in it is made inert (:func:`inert`): most of them came from outside."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..blocks import Block, Caption, Heading, Notes, Para, Table
from ..card.scorecard import Scorecard
from ..output import safe_output
from . import view


def render(card: Scorecard, duration: float | None = None) -> str:
    return document(view.scorecard(card))


def document(blocks: Iterable[Block]) -> str:
    """Blocks apart by one blank line; a run of notes is one list."""
    out: list[str] = []
    for block in blocks:
        if block.only not in (None, "markdown"):
            continue
        match block:
            case Heading(text, level):
                out += ["", f"{'#' * level} {inert(text)}"]
            case Para(text):
                out += ["", inert(text)]
            case Caption(text):
                out += ["", inert(text[:1].upper() + text[1:])]
            case Notes(notes):
                out += [""] + [f"{'  ' if n.nested else ''}- {inert(n.text)}" for n in notes]
            case Table(header, rows, align, _, fold) if header:
                table = [_row(header), "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
                table += [_row(row) for row in rows]
                out += (
                    ["", f"<details><summary>{fold}</summary>", "", *table, "", "</details>"]
                    if fold
                    else ["", *table]
                )
            case Table():
                out.append("")  # no table: the caption said it
    return "\n".join(out[1:] if out[:1] == [""] else out) + "\n"


_BIDI_CONTROLS = (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x61C)
_ENTITIES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
    # control characters shown as their pictures (a NUL makes grep call the file binary) ...
    | {chr(c): chr(0x2400 + c) for c in range(0x20)}
    | {"\x7f": "\u2421"}
    | dict.fromkeys(map(chr, range(0x80, 0xA0)), "\ufffd")
    # ... and bidi controls by name, so that none reorders the text around it
    | {chr(c): f"[U+{c:04X}]" for c in _BIDI_CONTROLS}
)
_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")


def inert(text: object) -> str:
    """Inert Markdown for any string that came from outside (a system, a model, a file):
    scrubbed, one line, no HTML, emphasis, link syntax, code or table breaks (GitHub step
    summaries render it; bare URLs may still be linked)."""
    flat = " ".join(safe_output(str(text)).split()).translate(_ENTITIES)
    return _SPECIAL.sub(r"\\\1", flat)


def _row(cells: tuple[str, ...]) -> str:
    return "| " + " | ".join(inert(c) for c in cells) + " |"
