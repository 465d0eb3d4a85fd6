"""On the controller: each item's full result on disk as it arrives, the rest in memory.

A result's free text (the answer, the details, the system's traceback) is most of it, and
nothing aggregates it but a few counts at the end; held for 20,000 items it was most of the
controller's memory and the heap pytest's garbage collector walked (issue 27). So the record
the test report brings (JSON, one line) is appended to a spool file as it is, and the
controller keeps a :class:`SpooledResult`: every other field in memory, those three read
back from the spool line when they are asked for. Every reader of results (the scorecard,
the gates, each writer) sees the same values as before, so every number and every file is
the same; only where the three fields live has changed.

The spool is a temporary file without a name (``tempfile.TemporaryFile``): it goes when the
run ends or its process does, killed or not; a named one was left behind by every killed run.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
from typing import Any

from ..errors import AmbigQAWarning, SpoolError
from ..output import excerpt
from ..schema import Answer, ItemResult

HEAVY = ("answer", "details", "trace")  # the fields read back from the spool when asked for


def _heavy(name: str) -> property:
    """A field of :data:`HEAVY`: the instance's own value where it has one (set by
    ``__init__``, as ``dataclasses.replace`` builds one), else its spool line's."""

    def get(self: SpooledResult) -> Any:
        own = self.__dict__
        return own[name] if name in own else self._spool.read(self._at, self)[name]

    def set_(self: SpooledResult, value: Any) -> None:  # the frozen dataclass's __init__ only
        self.__dict__[name] = value

    return property(get, set_)


class SpooledResult(ItemResult):
    """An :class:`ItemResult` whose :data:`HEAVY` fields are on its spool's line."""

    _spool: Spool
    _at: tuple[int, int]  # the line's offset and length in bytes
    _mentions: frozenset[str]  # the keys of its details and its answer's metadata, shared

    answer = _heavy("answer")
    details = _heavy("details")
    trace = _heavy("trace")

    def mentions(self, name: str) -> bool:
        """Without reading the line: the session's end asks it of every result, several
        times (issue 44). One made by ``dataclasses.replace`` has its own fields."""
        known = self.__dict__.get("_mentions")
        return super().mentions(name) if known is None else name in known


class Spool:
    """The run's results, one JSON line each, in a temporary file (removed at :meth:`close`)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="ambigqa-results-", suffix=".jsonl")
        self._end = 0
        self._last: tuple[int, dict[str, Any]] | None = None  # the line read last: its fields
        self._failed = False  # a write failed: the results from then on are kept in memory
        self._keys: dict[frozenset[str], frozenset[str]] = {}  # each set of mentioned keys, once

    def add(self, text: str) -> ItemResult:
        """The result whose record is ``text`` (``ItemResult.to_dict`` as JSON), its
        :data:`HEAVY` fields left on the spool. A spool that cannot be written (a full
        disk) is said once, and the results are kept whole in memory from then on."""
        data = json.loads(text)
        if not self._failed:
            line = text.encode("utf-8") + b"\n"
            try:
                if os.pwrite(self._file.fileno(), line, self._end) != len(line):
                    raise OSError("short write")
            except OSError as exc:
                self._failed = True
                message = f"could not write the results spool ({_where()}: {exc}): results are kept in memory"
                warnings.warn(AmbigQAWarning(message), stacklevel=2)
            else:
                at = (self._end, len(line))
                self._end += len(line)
                return _lean(data, self, at)
        return ItemResult.from_dict(data)

    def read(self, at: tuple[int, int], result: ItemResult) -> dict[str, Any]:
        """The :data:`HEAVY` fields of ``result``'s line at ``at``, checked: a damaged or
        truncated line, or one of another item, is a :class:`SpoolError` naming the line."""
        if self._last is not None and self._last[0] == at[0]:
            return self._last[1]
        offset, size = at
        try:
            raw = os.pread(self._file.fileno(), size, offset)
        except (OSError, ValueError) as exc:  # ValueError: closed
            raise SpoolError(f"the results spool ({_where()}) cannot be read ({exc})") from None
        try:
            if len(raw) != size or not raw.endswith(b"\n"):
                raise ValueError(f"{len(raw)} of {size} bytes")
            data = json.loads(raw)
            if not isinstance(data, dict) or (data.get("suite"), data.get("item_id")) != (
                result.suite,
                result.item_id,
            ):
                raise ValueError(f"not the record of {result.key}")
            answer = data.get("answer")
            fields = {
                "answer": Answer.from_dict(answer) if answer else None,
                "details": dict(data.get("details") or {}),
                "trace": data.get("trace"),
            }
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            line = os.pread(self._file.fileno(), offset, 0).count(b"\n") + 1
            raise SpoolError(
                f"the results spool ({_where()}), line {line}: the result of {result.key} is damaged "
                f"({type(exc).__name__}: {excerpt(exc, 200)})"
            ) from None
        self._last = (offset, fields)
        return fields

    def close(self) -> None:
        self._last = None
        self._file.close()


def _where() -> str:
    """Where the spool is, for a message: it has no name to give."""
    return f"a temporary file in {tempfile.gettempdir()}"


def _lean(data: dict[str, Any], spool: Spool, at: tuple[int, int]) -> SpooledResult:
    """The result of ``data`` without its :data:`HEAVY` fields, its repeated names and
    reasons shared (``sys.intern``) with every other result's."""
    light = ItemResult.from_dict({k: v for k, v in data.items() if k not in HEAVY})
    own = dict(vars(light))
    for name in HEAVY:
        del own[name]
    own["suite"], own["status"] = sys.intern(light.suite), sys.intern(light.status)
    if light.ambiguity_type is not None:
        own["ambiguity_type"] = sys.intern(light.ambiguity_type)
    own["scores"] = {sys.intern(k): v for k, v in light.scores.items()}
    own["unscored"] = {
        sys.intern(k): sys.intern(v) if type(v) is str else v for k, v in light.unscored.items()
    }
    answer = data.get("answer") or {}
    keys = frozenset((*(data.get("details") or ()), *(answer.get("metadata") or ())))
    mentions = spool._keys.setdefault(keys, keys)
    result = SpooledResult.__new__(SpooledResult)
    result.__dict__.update(own, _spool=spool, _at=at, _mentions=mentions)
    return result
