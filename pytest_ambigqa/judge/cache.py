"""The judge's call cache: SQLite, shared by xdist workers, survives a corrupt file.

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

SCHEMA = "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, reply TEXT NOT NULL, created REAL NOT NULL)"


class CallCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db = self._open()

    @staticmethod
    def key(base_url: str, request: dict[str, Any]) -> str:
        blob = json.dumps({"base_url": base_url.rstrip("/"), "request": request}, sort_keys=True)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            self.path.replace(aside)
            warnings.warn(
                AmbigQAWarning(
                    f"judge cache {self.path} was unreadable ({exc}); moved to {aside.name}, starting afresh"
                ),
                stacklevel=3,
            )
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(SCHEMA)
        db.execute("SELECT count(*) FROM calls").fetchone()  # reads the file: corruption shows here
        return db

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT reply FROM calls WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, reply: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO calls (key, reply, created) VALUES (?, ?, ?)",
                (key, json.dumps(reply), time.time()),
            )
