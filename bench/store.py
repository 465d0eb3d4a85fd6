"""What an answer costs the thread that got it: the response store's write, off the call path.

    python bench/store.py          # a few seconds

32 threads (``--ambig-concurrency=32``) each store 50 answers of 400 characters. Before,
``put`` ran one SQLite transaction on the caller's thread, behind the store's lock; now it
queues the row and a writer thread commits what has queued. Both are measured in this run,
the former as that same transaction run by the caller (issue 10, item 3).
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from pytest_ambigqa.store.answers import _INSERT, AnswerStore

THREADS, PUTS = 32, 50


def caller_waits(on_caller_thread: bool) -> tuple[list[float], float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = AnswerStore(Path(tmp) / "answers.sqlite")
        waits: list[float] = []

        def worker(w: int) -> None:
            for i in range(PUTS):
                key, payload = f"{w}-{i}", {"text": "x" * 400}
                start = time.perf_counter()
                if on_caller_thread:
                    row = (key, "run", "ok", json.dumps(payload), os.getpid(), time.time())
                    store._execute(_INSERT, row)
                else:
                    store.put(key, "run", "ok", payload)
                waits.append(time.perf_counter() - start)
                time.sleep(0.002)  # the next system call

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(THREADS)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        store.close()  # every row written: the comparison includes the writer's work
        return waits, time.perf_counter() - start


def main() -> None:
    for _ in range(2):
        before, before_total = caller_waits(on_caller_thread=True)
        after, after_total = caller_waits(on_caller_thread=False)
        mean_before, mean_after = statistics.mean(before) * 1000, statistics.mean(after) * 1000
        p95 = [sorted(w)[int(len(w) * 0.95)] * 1000 for w in (before, after)]
        print(
            f"caller's wait per answer: transaction {mean_before:.3f} ms (p95 {p95[0]:.2f}), "
            f"queued {mean_after:.3f} ms (p95 {p95[1]:.3f}); {mean_before / mean_after:.0f}x; "
            f"all {THREADS * PUTS} rows written in {before_total:.2f} s vs {after_total:.2f} s"
        )


if __name__ == "__main__":
    main()
