"""Evaluating items ahead of their tests, on a bounded pool of threads.

pytest runs tests one after another; the systems under evaluation mostly wait on I/O. With
``--ambig-concurrency=N`` the items' evaluations (system call, judge and reader calls) start
in test order on N threads, and each test takes its item's result when it gets there, so
reports, ``-x`` and ``--lf`` behave as in a serial run. Threads are daemons: a hung system
never keeps the process alive, and ``stop`` cancels everything not yet started.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Future, wait

from .schema import AmbigItem, ItemResult


class Prefetcher:
    def __init__(self, evaluate: Callable[[AmbigItem], ItemResult], workers: int) -> None:
        self._evaluate = evaluate
        self._workers = workers
        self._futures: dict[str, Future[ItemResult]] = {}
        self._queue: queue.SimpleQueue[tuple[AmbigItem, Future[ItemResult]]] = queue.SimpleQueue()
        self._stopped = threading.Event()

    def start(self, items: Sequence[AmbigItem]) -> None:
        for item in items:
            future: Future[ItemResult] = Future()
            self._futures[item.key] = future
            self._queue.put((item, future))
        for n in range(min(self._workers, len(items))):
            threading.Thread(target=self._work, name=f"ambigqa-pool-{n}", daemon=True).start()

    def _work(self) -> None:
        while not self._stopped.is_set():
            try:
                item, future = self._queue.get_nowait()
            except queue.Empty:
                return
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self._evaluate(item))
            except BaseException as exc:  # handed to the test that waits for this item
                future.set_exception(exc)

    def result(self, item: AmbigItem) -> ItemResult | None:
        """The item's result, waiting for it if it is running; None if the pool never took it."""
        future = self._futures.get(item.key)
        if future is None:
            return None
        try:
            return future.result()
        except CancelledError:
            return None

    def stop(self, grace: float = 1.0) -> None:
        """No new evaluations start; those running get ``grace`` seconds to finish and be stored.

        A call still running after that is left to its daemon thread, so a hung system
        never holds up the end of the session.
        """
        self._stopped.set()
        for future in self._futures.values():
            future.cancel()
        running = [f for f in self._futures.values() if not f.done()]
        if running:
            wait(running, timeout=grace)
