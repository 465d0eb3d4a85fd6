"""The retrieval corpus: every passage of the selected suites, or the user's own corpus.

Suite passages are deduplicated by content (title + text); a passage keeps the id of its
first occurrence, ``<suite>/<item>/<passage>``, which is stable for a given data file. A
user corpus is JSON Lines of ``{"id", "title", "text"}`` (a file or a directory of them),
taken as it is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..errors import DataError
from ..schema import AmbigItem, Passage
from ..suites.records import read_records, read_text, repair_text


def content_key(title: str, text: str) -> str:
    """What makes two passages the same passage: their whitespace-normalised title and text."""
    return " ".join(title.split()) + "\x1f" + " ".join(text.split())


@dataclass(frozen=True)
class Corpus:
    passages: tuple[Passage, ...]
    source: str  # "suites: march, asqa" or the corpus path
    by_content: dict[str, str] = field(repr=False)  # content key -> passage id
    repairs: tuple[str, ...] = ()  # what was made encodable (records.repair_text), to warn about

    def __len__(self) -> int:
        return len(self.passages)

    @cached_property
    def sha256(self) -> str:
        """A fingerprint of ids and contents: part of every index and answer key (computed once)."""
        digest = hashlib.sha256()
        for p in self.passages:
            digest.update(f"{p.id}\x1e{p.title}\x1e{p.text}\x1d".encode())
        return digest.hexdigest()

    def id_of(self, passage: Passage) -> str | None:
        """The corpus id of an item's passage (found by content), if it is in the corpus."""
        return self.by_content.get(content_key(passage.title, passage.text))


def _build(passages: Iterable[Passage], source: str, *, dedup: bool, repairs: Sequence[str] = ()) -> Corpus:
    kept: list[Passage] = []
    by_content: dict[str, str] = {}
    for passage in passages:
        key = content_key(passage.title, passage.text)
        if key not in by_content:
            by_content[key] = passage.id
        elif dedup:
            continue
        kept.append(passage)
    return Corpus(tuple(kept), source, by_content, tuple(repairs))


def suite_corpus(items: Sequence[AmbigItem], suites: Sequence[str]) -> Corpus:
    """The passages of the given items, first occurrence wins, in file order."""
    return _build(
        (
            Passage(id=f"{item.suite}/{item.id}/{p.id}", title=p.title, text=p.text)
            for item in items
            for p in item.passages
        ),
        "suites: " + ", ".join(suites),
        dedup=True,
    )


def load_corpus(path: Path) -> Corpus:
    """A user corpus: a JSON Lines file, or a directory of ``*.jsonl`` files (sorted by name)."""
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        if not files:
            raise DataError(f"{path}: no *.jsonl files in this directory")
    else:
        files = [path]
    passages: list[Passage] = []
    repairs: list[str] = []
    seen: dict[str, str] = {}
    for file in files:
        text = read_text(file)
        read = [
            (rec.where, Passage(rec.string("id"), rec.string("title", default=""), rec.string("text")))
            for rec in read_records(file, text)
        ]
        read, repaired = repair_text(file, text, read)
        repairs += repaired
        for where, passage in read:
            if passage.id in seen:
                raise DataError(f"{where}: duplicate passage id '{passage.id}' (first at {seen[passage.id]})")
            seen[passage.id] = where
            passages.append(passage)
    if not passages:
        raise DataError(f"{path}: the corpus has no passages")
    return _build(passages, str(path), dedup=False, repairs=repairs)
