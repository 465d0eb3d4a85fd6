"""A third-party executor, written as another package would write one: a pool of threads of
its own (where a real one would send each call to Dask, Modal or a job queue), added through
``pytest_ambigqa_executors`` and chosen with ``--ambig-executor=toy``. Used by
tests/test_executors.py."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from pytest_ambigqa.errors import ActorUnavailable
from pytest_ambigqa.executors import Call, Executor
from pytest_ambigqa.options import refuse

THREAD = "toy-executor"  # its threads' names start so: the system can tell where it ran


def pytest_addoption(parser):
    parser.getgroup("ambigqa").addoption(
        "--ambig-toy-threads", metavar="N", help="--ambig-executor=toy: its threads (2)"
    )
    parser.getgroup("ambigqa").addoption(
        "--ambig-toy-lose", metavar="ID", help="--ambig-executor=toy: lose the call of the item of this id"
    )


class ToyExecutor(Executor):
    name = "toy"
    own_options = ("--ambig-toy-threads", "--ambig-toy-lose")

    def __init__(self, threads: int, lose: str | None) -> None:
        self.threads, self.lose = threads, lose
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix=THREAD)

    @classmethod
    def read(cls, config: Any, value: str) -> ToyExecutor:
        raw = config.getoption("ambig_toy_threads") or "2"
        if not raw.isdigit() or int(raw) < 1:
            refuse(f"--ambig-toy-threads: '{raw}' is not a whole number of at least 1")
        return cls(int(raw), config.getoption("ambig_toy_lose"))

    def submit(self, call: Call) -> Future[Any]:
        if call.item.id == self.lose:  # its worker went away with it
            lost: Future[Any] = Future()
            lost.set_exception(ActorUnavailable("the toy executor's worker was lost"))
            return lost
        return self.pool.submit(call.run)

    def shown(self) -> str:
        return f"toy, {self.threads} threads"

    def close(self) -> None:
        self.pool.shutdown(wait=True)


def pytest_ambigqa_executors():
    return [ToyExecutor]
