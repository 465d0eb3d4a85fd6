"""The response store: every system answer, content-addressed, in SQLite under the cache dir.

An answer's key is a hash of the system (its spec), the inputs the run gives it (config
fingerprint), the item id and the item's content, so a changed item or system never
reuses an old answer. Rows also say which run wrote them: without ``--ambig-resume`` a run
only reads its own rows; with it, any stored answer that is not an error is reused.

The same table coordinates the pools of xdist workers whose items are not dealt to them up
front (a ``--dist`` the user gave; see session/deal.py): a process *claims* an item before
asking the system, so each item is asked once per run, whichever worker gets there first.
A claim whose process has died is taken over. Answers leave the call path: ``put`` queues
the row and a writer thread commits whatever has queued in one transaction as soon as it is
free (milliseconds; ``close`` at the end of the run, Ctrl-C included, writes the rest). A
crash leaves whole rows; a corrupt file is set aside with a warning and the run goes on.

Scores are kept beside the answers (issue 27): a scored result is stored under
:func:`score_key`, the item, the answer and the scorers' fingerprint, so a resumed run
whose answers and scoring configuration are unchanged reads its scores instead of computing
them again, and one where any of them changed scores that item afresh.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from ..output import excerpt, json_text
from ..readback import check_answer, check_failure, check_result
from ..schema import AmbigItem
from .sqlite import open_database

SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT NOT NULL,
    run TEXT NOT NULL,
    state TEXT NOT NULL,            -- claimed | ok | error
    payload TEXT,                   -- JSON: the Answer (ok) or {error, calls} (error)
    pid INTEGER NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (key, run)
);
CREATE INDEX IF NOT EXISTS answers_by_key ON answers (key, state, updated);
CREATE TABLE IF NOT EXISTS rate (id INTEGER PRIMARY KEY CHECK (id = 1), next REAL NOT NULL);
CREATE TABLE IF NOT EXISTS scores (
    key TEXT PRIMARY KEY,           -- score_key: the item, the answer and the scorers
    payload TEXT NOT NULL,          -- JSON: the scored result, without its answer
    updated REAL NOT NULL
);
"""
FILE = "answers.sqlite"
_INSERT = "INSERT OR REPLACE INTO answers (key, run, state, payload, pid, updated) VALUES (?, ?, ?, ?, ?, ?)"
_INSERT_SCORES = "INSERT OR REPLACE INTO scores (key, payload, updated) VALUES (?, ?, ?)"
# Seconds the writer gathers rows into one transaction after the first: a transaction and a
# wake-up of the writer for each row cost 12% of a 5,000-item run of a system that answers at
# once (issue 44). A process killed outright loses what it gathered, at most this long's
# answers, which a resume asks again.
GATHER = 0.05
ROWS = 128  # rows per INSERT the writer runs (:func:`_insert`): 768 values, far below SQLite's limit


def item_fingerprint(item: AmbigItem) -> str:
    """The item's content: its id alone must not reuse an answer when the data changed."""
    blob = json.dumps(
        [
            item.suite,
            item.id,
            item.question,
            [p.text for p in item.passages],
            [i.condition for i in item.interpretations],
        ]
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def answer_key(system: str, config: str, item: AmbigItem) -> str:
    return hashlib.sha256(
        f"{system}\x1f{config}\x1f{item.key}\x1f{item_fingerprint(item)}".encode()
    ).hexdigest()


def score_key(item: AmbigItem, answer: str, scoring: str) -> str:
    """What a stored score stands for: the whole item (its gold answers included, which the
    answer key leaves out), the answer as stored (JSON) and the scorers' fingerprint."""
    return hashlib.sha256(f"{scoring}\x1f{item.key}\x1f{item!r}\x1f{answer}".encode()).hexdigest()


def _read_back(state: Any, payload: Any) -> tuple[str, Any]:
    """A stored row's (state, answer dict or ``{"error", "calls"}``), checked (``readback``).
    An error row an earlier version wrote is its bare message."""
    if state not in ("ok", "error") or not isinstance(payload, str):
        return "unreadable", f"state {state!r} with a {type(payload).__name__} payload"
    try:
        data = json.loads(payload)
        if state == "ok":
            check_answer(data)
        else:
            check_failure(data)
    except (TypeError, ValueError, RecursionError) as exc:  # Invalid is a ValueError
        if state == "error" and not payload.startswith("{"):
            return state, {"error": payload, "calls": None}
        return "unreadable", f"{type(exc).__name__}: {excerpt(exc, 200)}"
    return state, data


def _insert(db: sqlite3.Connection, statement: str, rows: list[tuple]) -> None:
    """``db.executemany(statement, rows)`` as statements of :data:`ROWS` rows each (``VALUES
    (...), (...)``; a later row replaces an earlier one of the same key, as one at a time).
    The sqlite3 module lets go of the interpreter for each statement it steps and takes it
    back after: a row at a time, the writer took it from the tests at each of an item's two
    rows (a 5,000-item run switched threads 30,000 times where it now does 13,000; issue 44)."""
    for start in range(0, len(rows), ROWS):
        chunk = rows[start : start + ROWS]
        db.execute(_rows(statement, len(chunk)), [value for row in chunk for value in row])


@functools.lru_cache(maxsize=512)
def _rows(statement: str, count: int) -> str:
    """``statement`` (an ``INSERT ... VALUES (?, ...)``) inserting ``count`` rows."""
    head, values = statement.split(" VALUES ")
    return f"{head} VALUES {', '.join([values] * count)}"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class AnswerStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()  # the connection: one statement or transaction at a time
        self._db = open_database(path, SCHEMA, "SELECT count(*) FROM answers", "answer cache")
        self._queue: list[tuple[str, tuple]] = []  # (statement, row) ``put`` but not yet committed
        self._queued = threading.Condition()
        self._writer: threading.Thread | None = None
        self._closing = False
        self._failure: Exception | None = None  # the writer's error: raised by the next put/close

    def _execute(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def done(self, key: str, run: str, resume: bool) -> tuple[str, Any, bool] | None:
        """("ok", answer dict, earlier) or ("error", {error, calls}, earlier) already stored for this
        run (or, resuming, any run); ``earlier`` says it came from another run than ``run``.
        A row that cannot be read back as either (not JSON, NULL, too deep, not an answer's
        shape: another version of the plugin wrote it, or damage) is ("unreadable", why, earlier):
        the caller asks the system again."""
        rows = self._execute(
            "SELECT state, payload, run FROM answers WHERE key = ? AND run = ? AND state != 'claimed'",
            (key, run),
        )
        if not rows and resume:
            rows = self._execute(
                "SELECT state, payload, run FROM answers WHERE key = ? AND state = 'ok' "
                "ORDER BY updated DESC LIMIT 1",
                (key,),
            )
        if not rows:
            return None
        state, payload, by = rows[0]
        return (*_read_back(state, payload), by != run)

    def claim(self, key: str, run: str) -> bool:
        """True if this process may ask the system: nobody claimed it this run, or the claimant died."""
        now, pid = time.time(), os.getpid()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute(
                    "SELECT state, pid FROM answers WHERE key = ? AND run = ?", (key, run)
                ).fetchone()
                if row is not None and (row[0] != "claimed" or _alive(row[1])):
                    return False
                self._db.execute(
                    "INSERT OR REPLACE INTO answers (key, run, state, payload, pid, updated) "
                    "VALUES (?, ?, 'claimed', NULL, ?, ?)",
                    (key, run, pid, now),
                )
                return True
            finally:
                self._db.execute("COMMIT")

    def put(self, key: str, run: str, state: str, payload: Any) -> None:
        """Queue the answer's row for the writer thread: the caller never waits on the disk.
        ``payload`` is scrubbed as it is encoded (:func:`json_text`): no key reaches the disk."""
        self._enqueue(_INSERT, (key, run, state, json_text(payload), os.getpid(), time.time()))

    def scored(self, key: str) -> tuple[str, Any] | None:
        """("ok", the stored scored result) for ``key`` (:func:`score_key`), None if there is
        none, or ("unreadable", why) for a row that does not read back as a result."""
        rows = self._execute("SELECT payload FROM scores WHERE key = ?", (key,))
        if not rows:
            return None
        try:
            data = json.loads(rows[0][0])
            check_result(data)
        except (TypeError, ValueError, RecursionError) as exc:  # Invalid is a ValueError
            return "unreadable", f"{type(exc).__name__}: {excerpt(exc, 200)}"
        return "ok", data

    def put_scores(self, key: str, text: str) -> None:
        """Queue a scored result (JSON, without its answer) under :func:`score_key`."""
        self._enqueue(_INSERT_SCORES, (key, text, time.time()))

    def _enqueue(self, statement: str, row: tuple) -> None:
        if self._failure is not None:
            raise self._failure
        with self._queued:
            if self._closing:  # a call that outlived the run (after -x): written at once
                self._execute(statement, row)
                return
            self._queue.append((statement, row))
            if self._writer is None:
                self._writer = threading.Thread(target=self._write, name="ambigqa-answers", daemon=True)
                self._writer.start()
            if len(self._queue) == 1:  # the writer waits for a first row; the others join it
                self._queued.notify()

    def _write(self) -> None:
        while True:
            with self._queued:
                while not self._queue and not self._closing:
                    self._queued.wait()
                if not self._closing:  # the rows of the next moments join this transaction
                    self._queued.wait(GATHER)
                rows, self._queue = self._queue, []
            if not rows:
                return  # closing, and everything is written
            tables: dict[str, list[tuple]] = {}  # a table's rows in the order they came
            for statement, row in rows:
                tables.setdefault(statement, []).append(row)
            try:
                with self._lock:
                    self._db.execute("BEGIN IMMEDIATE")
                    try:
                        for statement, table in tables.items():
                            _insert(self._db, statement, table)
                    except BaseException:
                        self._db.execute("ROLLBACK")
                        raise
                    self._db.execute("COMMIT")
            except BaseException as exc:  # noqa: BLE001 - raised by the next put or close, never lost
                self._failure = exc if isinstance(exc, (sqlite3.Error, OSError)) else OSError(repr(exc))
                return

    def close(self) -> None:
        """Write what is queued, stop the writer (raises the writer's error, if it had one) and
        move what the write-ahead log holds into the file itself, as SQLite does when its last
        connection closes: the connection stays open for a call that outlives the run, so the
        file alone (copied or cached without its ``-wal``) would otherwise lack the run's last
        answers, a short run's all of them. Passive, and best effort: it never waits for
        another process (an xdist worker still writing or reading keeps what it has not
        checkpointed for the last one to close), and a failure leaves the log as it is."""
        with self._queued:
            self._closing = True
            self._queued.notify()
        if self._writer is not None:
            self._writer.join()
        if self._failure is not None:
            raise self._failure
        with contextlib.suppress(sqlite3.Error):
            self._execute("PRAGMA wal_checkpoint(PASSIVE)")

    def reserve_slot(self, rate: float) -> float:
        """Seconds to wait before the next request, so all processes together keep to ``rate``/s."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                now = time.time()
                row = self._db.execute("SELECT next FROM rate WHERE id = 1").fetchone()
                start = max(now, row[0]) if row else now
                self._db.execute(
                    "INSERT OR REPLACE INTO rate (id, next) VALUES (1, ?)", (start + 1.0 / rate,)
                )
            finally:
                self._db.execute("COMMIT")
        return start - now
