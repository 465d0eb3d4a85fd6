"""The SQLite files the plugin keeps (answers, judge calls): shared by processes, never fatal."""

from __future__ import annotations

import os
import sqlite3
import time
import warnings
from pathlib import Path

from ..errors import AmbigQAWarning


def open_database(path: Path, schema: str, probe: str, what: str) -> sqlite3.Connection:
    """A connection for any thread, in WAL mode, with ``schema`` applied.

    ``probe`` (a query) reads the file so corruption shows at once; an unreadable file is
    set aside with a warning naming it, and a fresh one is started: the run goes on. A file
    another process holds ("locked", "busy") is waited for; so is one that reads as damaged
    while it is young (``GRACE`` seconds): another process may be writing its first page.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _connect_waiting(path, schema, probe)
    except sqlite3.DatabaseError as exc:
        if _busy(exc):  # held by another process past our patience: no damage, the file stays
            raise
        try:
            return _connect_waiting(path, schema, probe, GRACE, settling=True)
        except sqlite3.DatabaseError as again:
            if _busy(again):
                raise
            exc = again
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}-{os.getpid()}")
        try:
            path.replace(aside)
        except FileNotFoundError:  # another process set it aside first
            pass
        warnings.warn(
            AmbigQAWarning(
                f"{what} {path} was unreadable ({exc}); set aside as {aside.name}, starting afresh"
            ),
            stacklevel=3,
        )
        return _connect_waiting(path, schema, probe)


GRACE = 2.0  # seconds a young file that reads as damaged is given to become whole


def _connect_waiting(
    path: Path, schema: str, probe: str, patience: float = 60.0, settling: bool = False
) -> sqlite3.Connection:
    """:func:`_connect`, waiting while another process holds the file: xdist workers that
    create a fresh store at once can meet "database is locked" (switching a new file to WAL
    takes a lock SQLite's busy timeout does not wait for), which is no damage to set aside.
    ``settling``: a file that reads as damaged is waited for too, while it is younger than
    ``patience`` (another process may be writing its first page)."""
    deadline = time.monotonic() + patience
    while True:
        try:
            return _connect(path, schema, probe)
        except sqlite3.DatabaseError as exc:
            waits = _busy(exc) or (settling and _young(path, patience))
            if not waits or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _young(path: Path, seconds: float) -> bool:
    try:
        return time.time() - path.stat().st_mtime < seconds
    except OSError:
        return True  # gone: another process set it aside, or is making it


# SQLite's result codes for a file another connection holds (the primary code, below 256)
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6


def _busy(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


def _connect(path: Path, schema: str, probe: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=60, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    # A row survives a crash of the process (WAL); only a power cut may lose the last few.
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA temp_store=MEMORY")  # each INSERT's statement journal: no file written, read back
    db.executescript(schema)
    db.execute(probe).fetchone()
    return db
