"""The judge's call cache: SQLite, shared by xdist workers, survives a corrupt file.

A row is one chat completion, keyed by a hash of the base URL and the full request
(model, messages, temperature, seed, ...). The API key is not part of the request and is
never stored.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any

from ..sqlite import open_database

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, reply TEXT NOT NULL, created REAL NOT NULL);"
)


class CallCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db = open_database(path, SCHEMA, "SELECT count(*) FROM calls", "judge cache")

    @staticmethod
    def key(base_url: str, request: dict[str, Any]) -> str:
        blob = json.dumps({"base_url": base_url.rstrip("/"), "request": request}, sort_keys=True)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

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
