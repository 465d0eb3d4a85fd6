"""Where each benchmark is published (``suites/<name>/sources.toml``), and ``hf://`` URLs.

Pure: no network and no ``huggingface_hub`` here (``suites/hub.py`` talks to the Hub). The
table says, per suite, which Hub repositories hold the benchmark, what their files are,
under what license, how big, at which revision we looked, and the sha256 of files where one
was found published (an LFS oid is the file's sha256); from it a run tells whether its data
is a whole known split of a known release (:func:`release`), which is what makes published
rows comparable.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataError

SCHEME = "hf://"
_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
_REPO = re.compile(rf"(?P<repo>{_NAME}/{_NAME})(?:@(?P<revision>[^/]+))?(?:/(?P<file>.+))?")
COMMIT = re.compile(r"[0-9a-f]{40}")
DATA_FILES = ("*.parquet", "*.jsonl", "*.json", "*.tar")  # what a benchmark's data file can be


@dataclass(frozen=True)
class HubRef:
    """``hf://OWNER/NAME[@REVISION][/FILE]``: a dataset repository on the Hub, at a branch,
    tag or commit (``main`` when not given), and the file to read (chosen by split when not
    given). A file inside a tar archive is named after it: ``ALCE-data.tar/asqa_eval_gtr_top100.json``."""

    repo: str
    revision: str | None = None
    file: str | None = None

    def __str__(self) -> str:
        rev = f"@{urllib.parse.quote(self.revision, safe='')}" if self.revision else ""
        return f"{SCHEME}{self.repo}{rev}{'/' + self.file if self.file else ''}"

    def pinned(self, commit: str) -> HubRef:
        """The same data at one commit: the URL that repeats the run exactly."""
        return HubRef(self.repo, commit, self.file)


def is_hub(text: str) -> bool:
    return text.strip().lower().startswith(SCHEME)


def parse_hub(text: str) -> HubRef:
    """An ``hf://`` URL (``hf://datasets/OWNER/NAME...`` as ``HfFileSystem`` spells it too;
    a revision with a slash percent-encoded, ``@refs%2Fconvert%2Fparquet``)."""
    rest = text.strip()[len(SCHEME) :]
    if rest.startswith("datasets/"):
        rest = rest[len("datasets/") :]
    match = _REPO.fullmatch(rest.rstrip("/"))
    if match is None:
        raise DataError(f"{text}: not a Hub dataset, expected hf://OWNER/NAME[@REVISION][/FILE]")
    revision = urllib.parse.unquote(match["revision"]) if match["revision"] else None
    return HubRef(match["repo"], revision, match["file"])


@dataclass(frozen=True)
class KnownFile:
    """A file of a release whose sha256 was found published, and where."""

    path: str
    sha256: str
    split: str | None
    revision: str | None
    found: str  # where the value was read


@dataclass(frozen=True)
class Source:
    """One place a suite's benchmark is published (a row of ``sources.toml``)."""

    repo: str
    title: str
    license: str
    size: str
    gated: bool = False
    splits: tuple[str, ...] = ()  # files name their split ("dev"); none: the repo is one release
    member: str | None = None  # the file to read inside a tar archive
    revision_seen: str | None = None  # a commit of the repo we saw, with where (not tested: no network)
    format: str = ""
    notes: str = ""
    files: tuple[KnownFile, ...] = ()


@dataclass(frozen=True)
class Sources:
    """A suite's known sources; ``unpublished`` says why there are none and whom to ask."""

    suite: str
    sources: tuple[Source, ...] = ()
    unpublished: str | None = None

    def find(self, repo: str) -> Source | None:
        return next((s for s in self.sources if s.repo.lower() == repo.lower()), None)

    @property
    def default(self) -> Source | None:
        return self.sources[0] if self.sources else None


def read_sources(suite: str, path: Path) -> Sources:
    """The table in ``path`` (absent: no known source)."""
    if not path.is_file():
        return Sources(suite)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise DataError(f"{path}: not a readable sources table ({exc})") from None
    return Sources(
        suite,
        tuple(_source(raw) for raw in data.get("source", ())),
        data.get("unpublished"),
    )


def _source(raw: dict[str, Any]) -> Source:
    return Source(
        repo=raw["repo"],
        title=raw["title"],
        license=raw["license"],
        size=raw["size"],
        gated=bool(raw.get("gated", False)),
        splits=tuple(raw.get("splits", ())),
        member=raw.get("member"),
        revision_seen=raw.get("revision_seen"),
        format=raw.get("format", ""),
        notes=raw.get("notes", ""),
        files=tuple(
            KnownFile(f["path"], f["sha256"].lower(), f.get("split"), f.get("revision"), f["found"])
            for f in raw.get("file", ())
        ),
    )


def names_split(path: str, split: str) -> bool:
    """Whether a file's path names ``split`` as a whole word: ``default/dev/0000.parquet``,
    ``data/dev-00000-of-00001.parquet``, ``dev.jsonl``; not ``devtest.jsonl``."""
    return re.search(rf"(^|[/_.-]){re.escape(split)}([/_.-]|$)", path) is not None


def data_files(paths: list[str]) -> list[str]:
    """The paths that can hold a benchmark (no README, .gitattributes, dataset_infos.json)."""
    return sorted(
        p
        for p in paths
        if any(fnmatch.fnmatch(p.rsplit("/", 1)[-1], pattern) for pattern in DATA_FILES)
        and not p.rsplit("/", 1)[-1].startswith("dataset_info")
    )


def choose(ref: HubRef, paths: list[str], split: str, source: Source | None) -> list[str]:
    """The repo files to read: the one the URL names, or those of ``split``; one line naming
    what the repo has when neither is there."""
    shown = ", ".join(paths[:12]) + (f" and {len(paths) - 12} more" if len(paths) > 12 else "")
    if ref.file is not None:
        inside = _archive(ref.file)
        path = inside[0] if inside else ref.file
        if path not in paths:
            raise DataError(f"{ref}: the repository has no file '{path}' (it has: {shown or 'no files'})")
        return [path]
    candidates = data_files(paths)
    if source is not None and source.member is not None:
        candidates = [p for p in candidates if p.endswith(".tar")] or candidates
    named = [p for p in candidates if names_split(p, split)]
    if named:
        return named
    if len(candidates) == 1 and (source is None or not source.splits):
        return candidates
    if not candidates:
        raise DataError(f"{ref}: no data file in the repository (it has: {shown or 'no files'})")
    raise DataError(
        f"{ref}: no file for split '{split}' (choose one with --ambig-split, or name the file, "
        f"hf://{ref.repo}@REVISION/FILE; data files: {', '.join(candidates[:12])})"
    )


def _archive(path: str) -> tuple[str, str] | None:
    """(archive, member) when ``path`` names a file inside a tar archive."""
    head, sep, member = path.partition(".tar/")
    return (head + ".tar", member) if sep and member else None


def member_of(ref: HubRef, source: Source | None) -> str | None:
    """The file to read inside a tar archive: the URL's, else the known source's."""
    inside = _archive(ref.file) if ref.file else None
    if inside:
        return inside[1]
    return source.member if source is not None else None


@dataclass(frozen=True)
class Read:
    """What a load read: (name, sha256) of each file, at which commit, from which repo."""

    files: tuple[tuple[str, str], ...]
    repo: str | None = None
    commit: str | None = None
    chosen_by_split: bool = False  # every file of the split was read (none named in the URL)
    only_of_split: bool = False  # the named file is the repository's only file of the split


def release(sources: Sources, read: Read, split: str) -> str | None:
    """A short label of the known release the data is, when it is a whole known split of one:
    read from a known repository (every file of the split, or its only one), or a file whose
    sha256 is a known file's. None otherwise: the data is not identified as a release."""
    if read.repo is not None and read.commit is not None:
        source = sources.find(read.repo)
        if source is None:
            return None
        at = f"{source.repo}@{read.commit[:12]}"
        if source.member is not None:  # the release is one file of an archive: that one
            whole = any(name.endswith("/" + source.member) for name, _ in read.files)
            return f"{source.title}, {at}" if whole else None
        if not source.splits:
            return f"{source.title}, {at}" if len(read.files) == 1 else None
        if split in source.splits and (read.chosen_by_split or read.only_of_split):
            return f"{source.title} {split} split, {at}"
        return None
    known = {f.sha256: (s, f) for s in sources.sources for f in s.files}
    if len(read.files) != 1 or read.files[0][1] not in known:
        return None
    source, file = known[read.files[0][1]]
    part = f" {file.split} split" if file.split else ""
    at = f"@{file.revision[:12]}" if file.revision else ""
    return f"{source.title}{part}, {source.repo}{at} {file.path} (by sha256)"
