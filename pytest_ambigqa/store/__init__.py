"""What a run keeps between its processes and its runs: the answers (with the claims that
share items between xdist workers, and the rate limit), and the pool that asks ahead.

:class:`SharedStore` is the store as one process uses it: opened on first use, and switched
off for the rest of the run (one warning) when SQLite or the disk fails, so that a broken
store costs reuse and sharing, never the run.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import AmbigQAWarning
from ..schema import safe_str
from .answers import FILE, AnswerStore, answer_key, score_key

__all__ = ["FILE", "AnswerStore", "SharedStore", "answer_key", "score_key"]


class SharedStore:
    def __init__(self, directory: Path) -> None:
        self.path = directory / FILE
        self._lock = threading.Lock()
        self._store: AnswerStore | None = None
        self._problem: str | None = None  # why the store is off, once it failed

    def get(self) -> AnswerStore | None:
        """The response store, or None when it cannot be used (see :meth:`run`)."""
        with self._lock:
            if self._store is not None or self._problem is not None:
                return self._store
            try:
                self._store = AnswerStore(self.path)
                return self._store
            except (sqlite3.Error, OSError) as exc:
                self._problem = self._describe(exc)  # before the lock goes: nobody opens it again
        self._warn()
        return None

    def run(self, operation: Callable[[AnswerStore], Any], default: Any = None) -> Any:
        """``operation(store)``, or ``default`` once the store has failed: the run goes on
        without it, asking the system for every item it has not answered."""
        store = self.get()
        if store is None:
            return default
        try:
            return operation(store)
        except (sqlite3.Error, OSError) as exc:
            self.disable(exc)
            return default

    def disable(self, exc: Exception) -> None:
        with self._lock:
            if self._problem is not None:
                return
            broken, self._store = self._store, None
            self._problem = self._describe(exc)
        if broken is not None:
            with contextlib.suppress(Exception):  # its writer thread ends; what it can still write, it writes
                broken.close()
        self._warn()

    def close(self) -> None:
        """The answers still queued are written."""
        if self._store is not None:
            try:
                self._store.close()
            except (sqlite3.Error, OSError) as exc:
                self.disable(exc)

    @staticmethod
    def _describe(exc: Exception) -> str:
        return f"{type(exc).__name__}: {safe_str(exc)}"

    def _warn(self) -> None:
        warnings.warn(
            AmbigQAWarning(
                f"the response store {self.path} cannot be used ({self._problem}): answers are not "
                "kept, --ambig-resume and the claims that share items between xdist workers are off "
                "for the rest of this run"
            ),
            stacklevel=2,
        )
