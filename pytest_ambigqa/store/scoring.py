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

A worker is a fresh interpreter (``python -c``, the run's ``sys.path``) that imports the
scorers and nothing of the run: not multiprocessing's start methods, which fork a process
that has threads ("fork") or run the user's main script again in every child that lacks an
``if __name__ == "__main__"`` guard ("spawn", "forkserver": a script calling
``pytest.main()`` would start a run in each worker). Pickled messages go over its stdin and
stdout; it runs in a session of its own, so Ctrl-C reaches the run alone, which ends and
reaps the workers (:meth:`ScoringPool.close`); a worker whose run is gone reads the end of
its input and exits. A worker that dies takes no item with it: its batch, and everything
after the last worker, is scored in the run's process, and the run says so
(:attr:`ScoringPool.died`). The pool starts only for :data:`THRESHOLD` items or more: each
worker's start (an interpreter and NLTK's import, about a second of CPU) must pay for itself.
"""

from __future__ import annotations

import math
import os
import pickle
import signal
import struct
import subprocess
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import IO, TYPE_CHECKING, Any

from ..metrics.scoring import Failure, compute
from ..output import excerpt
from ..suites import SUITES

if TYPE_CHECKING:
    from ..metrics.scoring import Scorers
    from ..metrics.spec import Scored
    from ..schema import AmbigItem, Answer
    from ..suites import Suite

BATCH = 64  # the most items one round trip to a worker carries
THRESHOLD = 500  # items ahead below which the pool does not pay its start (docs/how-to/fast-runs.md)

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


def start(
    workers: int | None, items: int, suites: Sequence[Suite], scorers: Scorers, lazy: bool = False
) -> ScoringPool | None:
    """The pool for ``items`` of ``suites`` evaluated ahead, or None: scoring stays in this
    process (one worker or none asked for, too few items to pay for the start, or nothing of
    the suites' scoring is pure and ours)."""
    size = pool_size(workers)
    if size < 2 or items < THRESHOLD:
        return None
    pool = ScoringPool(size, suites, scorers, lazy)
    return pool if pool.offloads else None


class ScoringPool:
    """``workers`` scoring processes, each fed by a thread of this process that sends it a
    batch and waits for its parts (the wait, on a pipe, leaves the interpreter's lock free)."""

    def __init__(self, workers: int, suites: Sequence[Suite], scorers: Scorers, lazy: bool = False) -> None:
        self.died: str | None = None  # how the first worker that died ended (the run says so)
        self._scorers = scorers
        self._warming = threading.Lock()
        self._warmed: set[str] = set()  # suites whose imports this process made (to score here)
        # Per suite, the scorers a worker runs and the context they read (Suite.offload).
        self._contexts = {s.name: s.offload(scorers) for s in suites}
        self.offloads = any(names for names, _ in self._contexts.values())
        self._queue: deque[tuple[str, AmbigItem, Answer, Future[Parts]]] = deque()
        self._futures: dict[tuple[str, int], tuple[Answer, Future[Parts]]] = {}
        self._cond = threading.Condition()
        self._closed = False
        self._live = workers
        self._workers: list[_Worker] = []
        self._lazy = lazy  # a worker starts with its first batch (a resumed run may score nothing)
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
        return [worker.process.pid for worker in self._workers]

    def submit(self, suite: Suite, item: AmbigItem, answer: Answer) -> None:
        """Queue the pure scorers of ``answer`` (called as it arrives, ahead of its test)."""
        if not self._contexts.get(suite.name, ((), None))[0]:
            return  # nothing of this suite's scoring is pure and ours: scored in this process
        future: Future[Parts] = Future()
        with self._cond:
            if self._closed or not self._live:
                return  # scored in this process
            self._futures[_key(item, answer)] = (answer, future)
            self._queue.append((suite.name, item, answer, future))
            self._cond.notify()

    def done(self, item: AmbigItem, answer: Answer) -> Parts:
        """What the workers computed of ``answer``'s scoring (waiting for it); empty when they
        computed nothing of it (never submitted, a worker died): this process scores it all,
        after its suite's imports (once, under a lock: the run's process skipped them)."""
        with self._cond:
            entry = self._futures.pop(_key(item, answer), None)
        parts = entry[1].result() if entry is not None and entry[0] is answer else _NONE
        if not parts:
            with self._warming:
                if item.suite not in self._warmed:
                    self._warmed.add(item.suite)
                    SUITES[item.suite].warm(self._scorers)
        return parts

    def close(self) -> None:
        """End the workers now (the session's end, Ctrl-C, -x): what is queued or in a batch is
        left to this process; every worker is killed and reaped, and its thread let go."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            left = list(self._queue)
            self._queue.clear()
            workers = list(self._workers)
        _leave(left)
        for worker in workers:
            worker.end()
        for thread in self._threads:
            thread.join(timeout=5)

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
        worker: _Worker | None = None
        batch: list[tuple[str, AmbigItem, Answer, Future[Parts]]] = []
        try:
            worker = None if self._lazy else self._start()
            while (taken := self._take()) is not None:
                batch = taken
                worker = worker or self._start()
                contexts = {name: self._contexts[name] for name, *_ in batch}
                try:
                    message = _encode((contexts, [(name, item, answer) for name, item, answer, _ in batch]))
                except Exception:  # noqa: BLE001 - an answer that does not pickle (its metadata holds a client)
                    _leave(batch)  # scored in this process; the worker goes on
                    continue
                try:
                    worker.send(message)
                    parts = worker.receive()
                except (EOFError, OSError, pickle.UnpicklingError) as exc:  # it died (killed, out of memory)
                    raise _Died(worker.reason()) from exc
                for (*_, future), part in zip(batch, parts, strict=True):
                    future.set_result(part)
        except Exception as exc:  # noqa: BLE001 - a worker that cannot run leaves its items to this process
            with self._cond:
                if not self._closed:  # closing ends every worker: no death
                    self.died = self.died or _reason(exc)
        finally:
            _leave(batch)
            if worker is not None:
                worker.end()
            self._retire()

    def _start(self) -> _Worker:
        warm = {name: scorers for name, (names, scorers) in self._contexts.items() if names}
        with self._cond:
            if self._closed:
                raise _Closing
            worker = _Worker(warm)
            self._workers.append(worker)
        return worker

    def _retire(self) -> None:
        """One worker fewer; with none left, whatever is queued is scored in this process."""
        with self._cond:
            self._live -= 1
            if self._live:
                return
            left = list(self._queue)
            self._queue.clear()
        _leave(left)


def _leave(jobs: Sequence[tuple[str, AmbigItem, Answer, Future[Parts]]]) -> None:
    """These answers are scored in the run's process: their waiters get no parts."""
    for *_, future in jobs:
        if not future.done():
            future.set_result(_NONE)


class _Died(Exception):
    """A worker that ended while it had a batch (its reason: :meth:`_Worker.reason`)."""


class _Closing(Exception):
    """The pool closed before this worker started."""


def _reason(exc: BaseException) -> str:
    if isinstance(exc, _Died):
        return str(exc)
    return f"a scoring worker process could not run: {type(exc).__name__}: {excerpt(exc, 200)}"


class _Worker:
    """One scoring process: length-prefixed pickles over its stdin and stdout, its stderr kept
    (in a file) for the reason it gives if it dies."""

    def __init__(self, warm: Mapping[str, Scorers]) -> None:
        self._ending = threading.Lock()
        self._ended = False
        self._stderr = tempfile.TemporaryFile()
        path = [entry for entry in sys.path if isinstance(entry, str)]
        bootstrap = f"import sys; sys.path[:] = {path!r}; from {__name__} import serve; serve()"
        self.process = subprocess.Popen(
            [sys.executable, "-c", bootstrap],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,  # Ctrl-C is the run's: it ends the workers
        )
        self.send(_encode(warm))

    def send(self, data: bytes) -> None:
        """One message, as :func:`_encode` made it."""
        assert self.process.stdin is not None
        _write(self.process.stdin, data)

    def receive(self) -> Any:
        assert self.process.stdout is not None
        return _read(self.process.stdout)

    def reason(self) -> str:
        """How it ended: killed by a signal, or its exit code and the last line it wrote."""
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "a scoring worker process stopped answering"
        if code < 0:
            return f"a scoring worker process was killed ({signal.Signals(-code).name})"
        self._stderr.seek(0)
        said = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        last = f": {excerpt(said[-1], 200)}" if said else ""
        return f"a scoring worker process ended (exit code {code}{last})"

    def end(self) -> None:
        """Killed and reaped (an idle worker holds nothing to save; waiting for its interpreter
        to exit would hold up the session's end); once, whoever asks first (its thread, or the
        pool closing)."""
        with self._ending:
            if self._ended:
                return
            self._ended = True
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout, self._stderr):
                try:
                    if stream is not None:
                        stream.close()
                except (OSError, ValueError):  # a pipe the dead worker left half written
                    pass


_LENGTH = struct.Struct("!Q")


def _encode(message: Any) -> bytes:
    return pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)


def _write(stream: IO[bytes], data: bytes) -> None:
    stream.write(_LENGTH.pack(len(data)))
    stream.write(data)
    stream.flush()


def _read(stream: IO[bytes]) -> Any:
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError
    (size,) = _LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def serve() -> None:
    """A scoring worker's main: the suites to warm, then batches of (suite, item, answer) in,
    one :data:`Parts` each out, until the run closes its input."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's
    incoming = sys.stdin.buffer
    outgoing = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what a scorer prints goes to stderr, not into the answers
    warm = _read(incoming)
    for name, scorers in warm.items():  # the suites' heavy imports, before the first batch
        if name in SUITES:
            SUITES[name].warm(scorers)
    while True:
        try:
            contexts, jobs = _read(incoming)
        except EOFError:
            return  # the run closed it, or is gone
        parts = []
        for name, item, answer in jobs:
            names, scorers = contexts[name]
            parts.append(compute(names, item, answer, scorers))
        _write(outgoing, _encode(parts))


def _key(item: AmbigItem, answer: Answer) -> tuple[str, int]:
    """An answer's entry: the item, and which answer of it (its repeated trials have several)."""
    return item.key, id(answer)
