"""Scoring on every core: the pure scorers of the items a run evaluates ahead, in batches, on
worker processes (issue 27).

Python runs one thread of a process at a time, so a run that scored in its own process was
held to one core, and its scoring threads fought the tests and the calls for it. With
``--ambig-concurrency`` above 1, each answer is handed, as it arrives, to a queue that
``workers`` processes take from in batches (whatever is queued when a worker is free, up to
:data:`BATCH` items: one round trip per batch, not per item). A worker runs this package's
pure scorers (``metrics.scoring.offloadable``: ROUGE-Lsum with NLTK's sentence splitter,
STR-EM, COVER-EM, the counts); the reader and the judge (models, I/O) stay in the run's
process, and ``metrics.scoring.score`` merges the workers' parts where it would have
computed them, so every number is the one an in-process run gives, to the last digit.

Workers come from a fork server that has imported the scorers once (a process with threads
is never forked), and ignore Ctrl-C, which is the run's: :meth:`ScoringPool.close` ends and
reaps them. A worker that dies takes no item with it: its batch, and everything after the
last worker, is scored in the run's process, and the run says so (:attr:`ScoringPool.died`).
The pool is started only for :data:`THRESHOLD` items or more; fewer do not pay its start.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ..metrics.scoring import Failure, compute
from ..schema import safe_str

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from ..metrics.scoring import Scorers
    from ..metrics.spec import Scored
    from ..schema import AmbigItem, Answer
    from ..suites import Suite

BATCH = 64  # the most items one round trip to a worker carries
THRESHOLD = 200  # items evaluated ahead below which the pool does not pay its start (bench/scoring.py)
# What the fork server imports once for every worker: the scorers and NLTK's sentence splitter.
PRELOAD = [
    "pytest_ambigqa.store.scoring",
    "pytest_ambigqa.suites",
    "nltk.tokenize.punkt",
    "rouge_score.rouge_scorer",
]

Parts = Mapping[str, "Scored | Failure"]  # a worker's part of one answer's scoring (metrics.scoring.compute)
_NONE: Parts = {}


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the system has one)."""
    if hasattr(os, "process_cpu_count"):  # Python 3.13
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def pool_size(workers: int | None) -> int:
    """The scoring processes of this process: ``workers`` as given, or (None, ``auto``) the
    cores shared out among the run's xdist workers, so that together they use each core once."""
    if workers is not None:
        return workers
    processes = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return max(1, usable_cores() // max(1, processes))


def start(workers: int | None, items: int, suites: Sequence[Suite], scorers: Scorers) -> ScoringPool | None:
    """The pool for ``items`` of ``suites`` evaluated ahead, or None: scoring stays in this
    process (one worker or none asked for, too few items to pay for the start, or nothing of
    the suites' scoring is pure and ours)."""
    size = pool_size(workers)
    if size < 2 or items < THRESHOLD:
        return None
    pool = ScoringPool(size, suites, scorers)
    return pool if pool.offloads else None


class ScoringPool:
    """``workers`` scoring processes, each fed by a thread of this process that sends it a
    batch and waits for its parts (the wait, on a pipe, leaves the interpreter's lock free)."""

    def __init__(self, workers: int, suites: Sequence[Suite], scorers: Scorers) -> None:
        self.died: str | None = None  # how the first worker that died ended (the run says so)
        # Per suite, the scorers a worker runs and the context they read (Suite.offload).
        self._contexts = {s.name: s.offload(scorers) for s in suites}
        self.offloads = any(names for names, _ in self._contexts.values())
        self._queue: deque[tuple[str, AmbigItem, Answer, Future[Parts]]] = deque()
        self._futures: dict[str, tuple[Answer, Future[Parts]]] = {}
        self._cond = threading.Condition()
        self._closed = False
        self._live = workers
        self._processes: list[multiprocessing.process.BaseProcess] = []
        self._threads = [
            threading.Thread(target=self._serve, args=(n,), name=f"ambigqa-scoring-{n}", daemon=True)
            for n in range(workers)
        ]
        if self.offloads:
            for thread in self._threads:
                thread.start()

    @property
    def pids(self) -> list[int]:
        """The worker processes' ids (for tests: none is left after :meth:`close`)."""
        return [p.pid for p in self._processes if p.pid is not None]

    def submit(self, suite: Suite, item: AmbigItem, answer: Answer) -> None:
        """Queue the pure scorers of ``answer`` (called as it arrives, ahead of its test)."""
        if not self._contexts.get(suite.name, ((), None))[0]:
            return  # nothing of this suite's scoring is pure and ours: scored in this process
        future: Future[Parts] = Future()
        with self._cond:
            if self._closed or not self._live:
                return  # scored in this process
            self._futures[item.key] = (answer, future)
            self._queue.append((suite.name, item, answer, future))
            self._cond.notify()

    def done(self, item: AmbigItem, answer: Answer) -> Parts:
        """What the workers computed of ``answer``'s scoring (waiting for it); empty when they
        computed nothing of it (never submitted, a worker died): this process scores it all."""
        with self._cond:
            entry = self._futures.pop(item.key, None)
        if entry is None or entry[0] is not answer:
            return _NONE
        return entry[1].result()

    def close(self, grace: float = 5.0) -> None:
        """End the workers (Ctrl-C, -x, the session's end): what is queued is left to this
        process; a worker still busy after ``grace`` seconds is terminated; all are reaped."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            left = list(self._queue)
            self._queue.clear()
        for *_, future in left:
            future.set_result(_NONE)
        for thread in self._threads:
            thread.join(timeout=grace)
        for process in list(self._processes):
            process.join(timeout=0 if process.exitcode is not None else grace)
            if process.exitcode is None:
                process.terminate()
                process.join(timeout=grace)
            if process.exitcode is None:
                process.kill()
                process.join()

    def _take(self) -> list[tuple[str, AmbigItem, Answer, Future[Parts]]] | None:
        """The next batch (None: the pool closes): a fair share of what is queued, at most BATCH."""
        with self._cond:
            while not self._queue and not self._closed:
                self._cond.wait()
            if self._closed:
                return None
            size = min(BATCH, math.ceil(len(self._queue) / self._live))
            return [self._queue.popleft() for _ in range(size)]

    def _serve(self, n: int) -> None:
        connection: Connection | None = None
        try:
            process, connection = self._start(n)
            while (batch := self._take()) is not None:
                contexts = {name: self._contexts[name] for name, *_ in batch}
                try:
                    connection.send((contexts, [(name, item, answer) for name, item, answer, _ in batch]))
                    parts = connection.recv()
                except (EOFError, OSError) as exc:  # the worker died (killed, out of memory)
                    for *_, future in batch:
                        future.set_result(_NONE)
                    raise _Died(process, exc) from None
                for (*_, future), part in zip(batch, parts, strict=True):
                    future.set_result(part)
        except Exception as exc:  # noqa: BLE001 - a worker that cannot run leaves its items to this process
            with self._cond:
                self.died = self.died or _reason(exc)
        finally:
            if connection is not None:
                try:
                    connection.send(None)
                except OSError:
                    pass
                connection.close()
            self._retire()

    def _start(self, n: int) -> tuple[multiprocessing.process.BaseProcess, Connection]:
        context = _context()
        mine, theirs = context.Pipe()
        warm = {name: scorers for name, (names, scorers) in self._contexts.items() if names}
        process = context.Process(target=_work, args=(theirs, warm), name=f"ambigqa-scoring-{n}", daemon=True)
        with self._cond:
            if self._closed:
                raise _Closing
            self._processes.append(process)
        process.start()
        theirs.close()
        return process, mine

    def _retire(self) -> None:
        """One worker fewer; with none left, whatever is queued is scored in this process."""
        with self._cond:
            self._live -= 1
            if self._live:
                return
            left = list(self._queue)
            self._queue.clear()
        for *_, future in left:
            future.set_result(_NONE)


class _Died(Exception):
    def __init__(self, process: multiprocessing.process.BaseProcess, exc: BaseException) -> None:
        super().__init__(process, exc)
        self.process = process


class _Closing(Exception):
    """The pool closed before this worker started: not a death."""


def _reason(exc: BaseException) -> str | None:
    if isinstance(exc, _Closing):
        return None
    if isinstance(exc, _Died):
        exc.process.join(timeout=1)
        code = exc.process.exitcode
        if code is not None and code < 0:
            return f"a scoring worker process was killed ({signal.Signals(-code).name})"
        return f"a scoring worker process ended (exit code {code})"
    return f"a scoring worker process could not run: {type(exc).__name__}: {safe_str(exc)[:200]}"


def _context() -> Any:
    """A fork server where the system has one (a process with threads must not fork), else spawn."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(PRELOAD)
    return context


def _work(connection: Connection, warm: Mapping[str, Scorers]) -> None:
    """A scoring worker: batches of (suite, item, answer) in, one :data:`Parts` each out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's; it closes the pool
    from ..suites import SUITES

    for name, scorers in warm.items():  # the suites' heavy imports, before the first batch
        if name in SUITES:
            SUITES[name].warm(scorers)
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return  # the run is gone
        if message is None:
            return
        contexts, jobs = message
        parts = []
        for name, item, answer in jobs:
            names, scorers = contexts[name]
            parts.append(compute(names, item, answer, scorers))
        connection.send(parts)
