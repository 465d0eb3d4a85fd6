"""Reading data files with errors that name the file, the line and the item.

Loaders never raise anything but :class:`DataError`; the plugin turns it into one usage
error line. Files are only ever opened for reading.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..errors import DataError
from ..output import clean_text

T = TypeVar("T")


def read_text(path: Path) -> str:
    if not path.exists():
        raise DataError(f"{path}: no such file")
    if path.is_dir():
        raise DataError(f"{path}: is a directory, expected a data file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _json_error(path: Path, text: str, exc: json.JSONDecodeError, offset: int = 0) -> DataError:
    line = _line_of(text, offset + exc.pos)
    return DataError(f"{path}:{line}: invalid JSON ({exc.msg})")


def _too_deep(path: Path, line: int | None = None) -> DataError:
    where = f"{path}:{line}" if line else str(path)
    return DataError(f"{where}: the JSON is nested too deeply to be a benchmark file")


def parse_json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _json_error(path, text, exc) from None
    except RecursionError:
        raise _too_deep(path) from None


class _Lines:
    """Line numbers of offsets visited left to right, in linear total time."""

    def __init__(self, text: str) -> None:
        self.text, self.pos, self.line = text, 0, 1

    def at(self, pos: int) -> int:
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def iter_records(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """``(line, record)`` for a JSON list or a JSON Lines file.

    A JSON list is decoded element by element so each record keeps the line it starts on.
    """
    decoder = json.JSONDecoder()
    stripped = text.lstrip()
    if not stripped:
        raise DataError(f"{path}: the file is empty")
    pos = len(text) - len(stripped)
    if stripped[0] == "[":
        lines = _Lines(text)
        pos += 1
        while True:
            pos = _skip_space(text, pos)
            if pos < len(text) and text[pos] == "]":
                _expect_end(path, text, pos + 1)
                return
            try:
                record, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise _json_error(path, text, exc) from None
            except RecursionError:
                raise _too_deep(path, lines.at(pos)) from None
            yield lines.at(pos), record
            pos = _skip_space(text, end)
            if pos < len(text) and text[pos] == ",":
                pos += 1
            elif pos >= len(text) or text[pos] != "]":
                raise DataError(f"{path}:{_line_of(text, pos)}: invalid JSON (expected ',' or ']')")
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}:{number}: invalid JSON ({exc.msg}, column {exc.colno})") from None
        except RecursionError:
            raise _too_deep(path, number) from None
        yield number, record


def read_records(path: Path, text: str, rename: dict[str, str] | None = None) -> Iterator[Record]:
    """Each record of a JSON list or JSON Lines file, located as ``path:line``.

    The whole file is parsed first, so a syntax error is reported before field errors.
    """
    for line, raw in list(iter_records(path, text)):
        yield Record(raw, f"{path}:{line}", rename)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _expect_end(path: Path, text: str, pos: int) -> None:
    pos = _skip_space(text, pos)
    if pos < len(text):
        raise DataError(f"{path}:{_line_of(text, pos)}: unexpected data after the JSON list")


class Record:
    """A JSON object being read as an item, so every complaint names where it is.

    ``rename`` maps our field names to the file's spellings (MARCH's field mapping).
    Locations of nested records are only spelled out when an error needs them.
    """

    def __init__(
        self,
        data: Any,
        where: str,
        rename: dict[str, str] | None = None,
        scope: str = "",
        parent: Record | None = None,
    ):
        self.data = data
        self._where = where
        self._parent = parent
        self._rename = rename or {}
        self._scope = scope
        if not isinstance(data, dict):
            raise DataError(f"{self.where}: expected a JSON object, got {type(data).__name__}")

    @property
    def where(self) -> str:
        return f"{self._parent.where}, {self._where}" if self._parent is not None else self._where

    @where.setter
    def where(self, value: str) -> None:
        self._where, self._parent = value, None

    def _key(self, field: str) -> str:
        return self._rename.get(self._scope + field, field) if self._rename else field

    def has(self, field: str) -> bool:
        return self.data.get(self._key(field)) is not None

    def raw(self, field: str) -> Any:
        value = self.data.get(self._key(field))
        if value is None:
            raise DataError(f"{self.where}: missing field '{self._key(field)}'")
        return value

    def string(self, field: str, default: str | None = None) -> str:
        value = self.data.get(self._key(field))
        if value is None and default is not None:
            return default
        if type(value) is str:
            return value
        value = self.raw(field)
        if isinstance(value, bool) or not isinstance(value, int):
            raise DataError(
                f"{self.where}: field '{self._key(field)}' must be a string, got {type(value).__name__}"
            )
        return str(value)

    def text(self, field: str) -> str:
        """A string, or a list of strings that is one text written in parts (joined by a
        space after trimming each part), as the CondAmbigQA release stores some answers."""
        value = self.data.get(self._key(field))
        if type(value) is not list:
            return self.string(field)
        if not value:
            raise DataError(f"{self.where}: field '{self._key(field)}' is an empty list, expected text")
        for i, part in enumerate(value):
            if type(part) is not str:
                raise DataError(
                    f"{self.where}: '{self._key(field)}'[{i}] must be a string, got {type(part).__name__}"
                )
        return " ".join(part.strip() for part in value)

    def optional_str(self, field: str) -> str | None:
        return self.string(field) if self.has(field) else None

    def array(self, field: str, *, required: bool = True) -> list[Any]:
        value = self.data.get(self._key(field))
        if value is None and not required:
            return []
        if type(value) is list:
            return value
        value = self.raw(field)
        raise DataError(
            f"{self.where}: field '{self._key(field)}' must be a list, got {type(value).__name__}"
        )

    def strings(self, field: str, *, required: bool = True, nonempty: bool = False) -> tuple[str, ...]:
        values = self.array(field, required=required)
        for i, value in enumerate(values):
            if type(value) is not str and (isinstance(value, bool) or not isinstance(value, int)):
                raise DataError(
                    f"{self.where}: '{self._key(field)}'[{i}] must be a string, got {type(value).__name__}"
                )
        if nonempty and not values:
            raise DataError(f"{self.where}: field '{self._key(field)}' is empty")
        return tuple(map(str, values))

    def records(self, field: str, *, required: bool = True, nonempty: bool = False) -> list[Record]:
        values = self.array(field, required=required)
        if nonempty and not values:
            raise DataError(f"{self.where}: field '{self._key(field)}' is empty")
        key = self._key(field)
        scope = f"{self._scope}{field}."
        return [Record(v, f"{key}[{i}]", self._rename, scope, self) for i, v in enumerate(values)]


# A JSON escape of a UTF-16 surrogate: the only way a lone one (a code point no UTF-8 text,
# report, node id or xdist channel can carry) gets into a decoded data file.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def repair_text(
    path: Path, text: str, records: Sequence[tuple[str, T]]
) -> tuple[list[tuple[str, T]], list[str]]:
    """``records`` (``(where, item or passage)``, parsed from ``text``) with every lone
    surrogate made encodable: in an ``id`` spelled out as its escape (``\\ud800``, so the id
    stays itself and distinct), elsewhere "?" as in answers (``output.clean_text``).
    Returns the records and one warning naming the file, the first place and the count; a
    file without a surrogate escape is not walked."""
    if not _SURROGATE_ESCAPE.search(text):
        return list(records), []
    found: list[str] = []
    out = [(where, _repaired(record, where, found)) for where, record in records]
    if not found:
        return out, []
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return out, [
        f"{path}: {len(found)} text(s) hold a lone surrogate (a \\udXXX escape that encodes no "
        f"character), which no report or test id can carry: ids keep it escaped as text, other "
        f"texts read '?' in its place; at {found[0]}{more}"
    ]


_IDS = ("id", "passage_ids")  # fields that name a thing: escaped, so that two ids stay two


def _escaped(value: Any, where: str, found: list[str]) -> Any:
    if isinstance(value, tuple):
        parts = tuple(_escaped(v, f"{where}[{i}]", found) for i, v in enumerate(value))
        return parts if parts != value else value
    if not isinstance(value, str) or not _SURROGATE.search(value):
        return value
    found.append(where)
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _repaired(value: Any, where: str, found: list[str]) -> Any:
    if isinstance(value, str):
        if value.isascii() or not _SURROGATE.search(value):
            return value
        found.append(where)
        return clean_text(value)
    if isinstance(value, tuple):
        parts = tuple(_repaired(v, f"{where}[{i}]", found) for i, v in enumerate(value))
        return parts if any(a is not b for a, b in zip(parts, value, strict=True)) else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for f in dataclasses.fields(value):
            old = getattr(value, f.name)
            if f.name in _IDS:
                new = _escaped(old, f"{where}, {f.name}", found)
            else:
                new = _repaired(old, f"{where}, {f.name}", found)
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value


def parquet_text(path: Path) -> str:
    """A parquet file's rows as JSON Lines text (row N on line N), so that each suite's own
    parser reads a Hub release in parquet as it reads the release's JSON."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(f"{path}: reading parquet needs pyarrow: pip install 'pytest-ambigqa[hub]'") from None
    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # noqa: BLE001 - pyarrow's ArrowInvalid and kin: not a parquet file
        raise DataError(f"{path}: not a readable parquet file ({type(exc).__name__})") from None
    return "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows)


def member_text(path: Path, member: str) -> tuple[str, str]:
    """(its name in the archive, its text) of the file ``member`` names inside the tar archive
    ``path``, by its whole name or its name in any folder of the archive."""
    import tarfile

    try:
        with tarfile.open(path) as archive:
            names = [m for m in archive.getmembers() if m.isfile()]
            found = [m for m in names if m.name == member or m.name.endswith("/" + member)]
            if len(found) != 1:
                jsons = [m.name for m in names if m.name.endswith((".json", ".jsonl"))]
                shown = ", ".join(jsons[:12]) or "none"
                raise DataError(f"{path}: no single file '{member}' in the archive (JSON files: {shown})")
            data = archive.extractfile(found[0])
            assert data is not None  # a regular file
            raw = data.read()
    except (tarfile.TarError, OSError) as exc:
        raise DataError(f"{path}: not a readable tar archive ({type(exc).__name__})") from None
    try:
        return found[0].name, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}/{found[0].name}: not UTF-8 text (byte {exc.start})") from None


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, read in blocks (a Hub file, an index, a model)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
