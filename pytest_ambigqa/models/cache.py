"""The chat client's call cache: SQLite, shared by xdist workers, survives a corrupt file.

A row is one chat completion, keyed by a hash of the base URL and the full request
(model, messages, temperature, seed, ...). The API key is not part of the request and is
never stored.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from ..errors import AmbigQAWarning
from ..store.sqlite import open_database

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, reply TEXT NOT NULL, created REAL NOT NULL);"
)


class CallCache:
    """Never fatal: if the file cannot be opened or written, the cache turns itself off (one
    warning) and every judgement is simply asked of the server."""

    def __init__(self, path: Path, role: str = "judge") -> None:
        self.path = path
        self.role = role  # whose calls: the judge's, or the model's of the llm: systems
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        try:
            self._db = open_database(path, SCHEMA, "SELECT count(*) FROM calls", f"{role} cache")
        except (sqlite3.Error, OSError) as exc:
            self._off(exc)

    def _off(self, exc: Exception) -> None:
        self._db = None
        replies = "judgements" if self.role == "judge" else f"{self.role} replies"
        warnings.warn(
            AmbigQAWarning(
                f"the {self.role} cache {self.path} cannot be used ({exc}): {replies} are not cached"
            ),
            stacklevel=3,
        )

    @staticmethod
    def key(base_url: str, request: dict[str, Any]) -> str:
        blob = json.dumps({"base_url": base_url.rstrip("/"), "request": request}, sort_keys=True)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached reply; a row that cannot be read back (not JSON, too deep, not an
        object: damage, or another version) is a miss, asked of the server again and
        overwritten. The caller checks a hit as it checks a reply."""
        with self._lock:
            if self._db is None:
                return None
            try:
                row = self._db.execute("SELECT reply FROM calls WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as exc:
                self._off(exc)
                return None
        try:
            reply = json.loads(row[0]) if row else None
        except (TypeError, ValueError, RecursionError):
            return None
        return reply if isinstance(reply, dict) else None

    def put(self, key: str, reply: dict[str, Any]) -> None:
        with self._lock:
            if self._db is None:
                return
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO calls (key, reply, created) VALUES (?, ?, ?)",
                    (key, json.dumps(reply), time.time()),
                )
            except (sqlite3.Error, OSError) as exc:
                self._off(exc)
