"""Evaluating items ahead of their tests, in two stages on bounded pools of threads.

pytest runs tests one after another; the systems under evaluation mostly wait on I/O. With
``--ambig-concurrency=N`` the items' system calls start in test order on N threads, and each
test takes its item's result when it gets there, so reports, ``-x`` and ``--lf`` behave as in
a serial run. Scoring (judge and reader calls included) is a second stage on its own
threads, which wait for ``ready`` (the scorers' imports and model loads, done in the
background): a call never waits for scoring, so the first calls are in flight while NLTK,
SciPy or a reader load. The scoring stage has N threads where the run's scorers wait on models
(judge and reader calls), and one where they only compute: more threads cannot compute faster
in one process, and would take the interpreter from the tests and the calls (the scoring
pool, ``scoring.py``, computes on the other cores). Calls start at most ``window`` items
ahead of the test that waits: a fast system does not fill memory with results, nor keep N
threads computing while the tests wait for the interpreter. Threads are daemons: a hung
system never keeps the process alive, and ``stop`` cancels everything not yet started.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, wait

from ..schema import AmbigItem, ItemResult

# What is left to do for an item once the system answered, or its result when nothing is
# (scores read back from the store, an item that errored before its call): never waits for ``ready``.
Scoring = Callable[[], ItemResult] | ItemResult
AHEAD = 512  # the fewest items a pool may ask ahead of the tests (bench/scoring.py)


class Prefetcher:
    def __init__(
        self,
        call: Callable[[AmbigItem], Scoring],
        workers: int,
        ready: threading.Event | None = None,
        scorers: int | None = None,
        window: int | None = None,
        warm: Callable[[], None] | None = None,
        halted: Callable[[], bool] | None = None,
        lazy: bool = False,
    ) -> None:
        self._call = call
        self._workers = workers
        self._scorers = workers if scorers is None else scorers  # the scoring stage's threads
        self._window = window or max(AHEAD, 4 * workers)  # items asked ahead of the waiting test
        self._ready = ready
        self._warm = warm  # called (idempotent) when an item first needs scoring: the warm-up's start
        self._halted = halted  # true once no new call may start (a sequential gate decided the run)
        self._futures: dict[str, Future[ItemResult]] = {}
        self._index: dict[str, int] = {}  # each item's place in the order the tests run
        self._calls: deque[tuple[int, AmbigItem, Future[ItemResult]]] = deque()
        self._room = threading.Condition()  # guards _calls and _cursor: calls wait in it for room
        self._cursor = 0  # the place of the item the tests wait for now
        self._scores: queue.SimpleQueue[tuple[Callable[[], ItemResult], Future[ItemResult]]]
        self._scores = queue.SimpleQueue()
        self._stopped = threading.Event()
        self._open = 0  # futures not yet done: the scoring stage ends when none is left
        self._open_lock = threading.Lock()
        self._started = 0  # items whose call has started, and of them, those done
        self._ended = 0
        # ``lazy`` (a resume): each test reads its item's stored answer and scores itself
        # (:meth:`_inline`) until an item needs scoring (one call thread from then on) or a
        # system is asked (:meth:`widen`). Reading the store is serial (one connection) and the
        # interpreter's: threads taking turns at it cost more than the reads, and handing each
        # stored result over from even one thread was 10% of a 5,000-item resume (issue 44).
        self._reading = lazy  # the tests read the store themselves: no call thread yet
        self._callers = 0  # call threads the pool may have: one per worker, at most one per item
        self._idle_callers = 0  # of them, not started yet
        self._widen_lock = threading.Lock()

    def start(self, items: Sequence[AmbigItem]) -> None:
        for n, item in enumerate(items):
            future: Future[ItemResult] = Future()
            self._futures[item.key] = future
            self._index[item.key] = n
            self._calls.append((n, item, future))
        self._open = len(self._futures)
        for future in self._futures.values():
            future.add_done_callback(self._closed)
        self._callers = self._idle_callers = min(self._workers, len(items))
        if not self._reading:
            self._add_callers(self._callers)
        for n in range(min(self._scorers, len(items))):
            threading.Thread(target=self._score_stage, name=f"ambigqa-score-{n}", daemon=True).start()

    def widen(self) -> None:
        """Every call thread: a system is being asked (an answer not in the store)."""
        if self._idle_callers:
            self._add_callers(self._callers)

    def _add_callers(self, n: int) -> None:
        """Up to ``n`` more call threads; the tests take their results from them from now on."""
        with self._widen_lock:
            self._reading = False
            n = min(n, self._idle_callers)
            started = self._callers - self._idle_callers
            self._idle_callers -= n
            for k in range(started, started + n):
                threading.Thread(target=self._call_stage, name=f"ambigqa-call-{k}", daemon=True).start()

    def _closed(self, future: Future[ItemResult]) -> None:
        with self._open_lock:
            self._open -= 1
            if not future.cancelled():  # a future that ran cannot be cancelled
                self._ended += 1

    @property
    def running(self) -> int:
        """Items being asked or scored now (live progress shows them as calls in flight)."""
        return self._started - self._ended

    def _next(self) -> tuple[AmbigItem, Future[ItemResult]] | None:
        """The next item to ask, once it is within the window (None: nothing left, or stopped).
        Only the head of the queue can be next, so one waiting thread is woken at a time."""
        with self._room:
            while self._calls and not self._stopped.is_set():
                if self._halted is not None and self._halted():
                    return None  # the tests of the items left are skipped; those in flight finish
                n, item, future = self._calls[0]
                if n < self._cursor + self._window:
                    self._calls.popleft()
                    if self._calls and self._calls[0][0] < self._cursor + self._window:
                        self._room.notify()  # the next one has room too
                    return item, future
                self._room.wait()
            return None

    def _call_stage(self) -> None:
        while (taken := self._next()) is not None:
            item, future = taken
            if not future.set_running_or_notify_cancel():
                continue
            with self._open_lock:
                self._started += 1
            try:
                scoring = self._call(item)
            except BaseException as exc:  # noqa: BLE001 - handed to the test that waits for this item
                future.set_exception(exc)
                continue
            if isinstance(scoring, ItemResult):
                future.set_result(scoring)
            else:
                if self._warm is not None:
                    self._warm()  # the first item to score starts the scorers' warm-up
                self._scores.put((scoring, future))

    def _score_stage(self) -> None:
        if self._ready is not None:
            self._ready.wait()
        while self._open > 0:
            try:
                scoring, future = self._scores.get(timeout=0.5)
            except queue.Empty:
                if self._stopped.is_set():
                    return  # only hung calls are left; their tests will not run
                continue  # calls still in flight
            if self._stopped.is_set():  # -x, --maxfail, Ctrl-C: the answer is stored; no paid scoring
                future.set_exception(CancelledError())
                continue
            try:
                future.set_result(scoring())
            except BaseException as exc:  # noqa: BLE001 - handed to the test that waits for this item, as above
                future.set_exception(exc)

    def started(self, item: AmbigItem) -> bool:
        """Whether the item's call has started (or ended): its test takes its result."""
        future = self._futures.get(item.key)
        return future is not None and (future.running() or future.done())

    def result(self, item: AmbigItem) -> ItemResult | None:
        """The item's result, waiting for it if it is running; None if the pool never took it.
        The window moves up to the item (a test that never asks for its item holds no room)."""
        future = self._futures.pop(item.key, None)  # the result is the test's from now on
        if future is None:
            return None
        with self._room:
            at = self._index[item.key]
            if at > self._cursor:
                self._cursor = at
                self._room.notify()  # the head's thread; it wakes the next while there is room
        if self._reading and not self._stopped.is_set() and future.cancel():  # no call thread has it
            return self._inline(item)
        try:
            return future.result()
        except CancelledError:
            return None

    def _inline(self, item: AmbigItem) -> ItemResult:
        """The two stages for one item in the test's own thread, as a call thread and a
        scoring thread would: its stored answer and scores read back, or else, once scoring is
        needed, the items after it asked ahead (their scoring overlaps, on the scoring pool), and
        this one scored once ``ready``. A system it asks widens the pool (:meth:`widen`)."""
        scoring = self._call(item)
        if isinstance(scoring, ItemResult):
            return scoring
        self._add_callers(1)
        if self._warm is not None:
            self._warm()
        if self._ready is not None:
            self._ready.wait()
        return scoring()

    def stop(self, grace: float = 1.0) -> None:
        """No new calls start, nothing more is scored; calls running get ``grace`` seconds to
        finish and be stored.

        A call still running after that is left to its daemon thread, so a hung system
        never holds up the end of the session.
        """
        self._stopped.set()
        with self._room:
            self._room.notify_all()
        for future in self._futures.values():
            future.cancel()
        running = [f for f in self._futures.values() if not f.done()]
        if running:
            wait(running, timeout=grace)
