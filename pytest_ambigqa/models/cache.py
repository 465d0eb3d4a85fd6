"""The chat client's call cache: SQLite, shared by xdist workers, survives a corrupt file.

A row is one chat completion, keyed by a hash of the base URL and the full request
(model, messages, temperature, seed, ...). The API key is not part of the request and is
never stored. Beside the calls, the batches of judge requests sent to the server's batch
API and not yet collected (``models/batch.py``): their ids and request keys, so that a later
run collects them instead of asking (and paying) again.
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

SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, reply TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,            -- the server's batch id
    server TEXT NOT NULL,           -- its base URL, without credentials
    model TEXT NOT NULL,
    run TEXT NOT NULL,              -- the run that sent it
    keys TEXT NOT NULL,             -- JSON: the keys of its requests
    created REAL NOT NULL
);
"""


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
        self._write(
            "INSERT OR REPLACE INTO calls (key, reply, created) VALUES (?, ?, ?)",
            (key, json.dumps(reply), time.time()),
        )

    def batches(self, server: str, model: str) -> list[tuple[str, str, list[str]]]:
        """The uncollected batches sent to ``server`` for ``model``: (id, run, request keys).
        A row that cannot be read back is left out (its requests are asked again)."""
        with self._lock:
            if self._db is None:
                return []
            try:
                rows = self._db.execute(
                    "SELECT id, run, keys FROM batches WHERE server = ? AND model = ? ORDER BY created",
                    (server, model),
                ).fetchall()
            except sqlite3.Error as exc:
                self._off(exc)
                return []
        found = []
        for batch, run, keys in rows:
            try:
                keys = json.loads(keys)
            except (TypeError, ValueError, RecursionError):
                continue
            if isinstance(batch, str) and isinstance(keys, list) and all(isinstance(k, str) for k in keys):
                found.append((batch, str(run), keys))
        return found

    def add_batch(self, batch: str, server: str, model: str, run: str, keys: list[str]) -> None:
        self._write(
            "INSERT OR REPLACE INTO batches (id, server, model, run, keys, created) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (batch, server, model, run, json.dumps(keys), time.time()),
        )

    def drop_batch(self, batch: str) -> None:
        """A batch collected (done, failed, expired or cancelled): its keys are free again."""
        self._write("DELETE FROM batches WHERE id = ?", (batch,))

    def _write(self, sql: str, args: tuple) -> None:
        with self._lock:
            if self._db is None:
                return
            try:
                self._db.execute(sql, args)
            except (sqlite3.Error, OSError) as exc:
                self._off(exc)
