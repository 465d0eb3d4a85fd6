"""``--ambig-executor=local`` (the default): each call runs in the thread that submits it,
one of the run's ``--ambig-concurrency`` threads that ask ahead (``store/pool.py``), as a
run without this option always did; the system's timeout is the call adapter's
(``systems/call.py``)."""

from __future__ import annotations

from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from . import Call, Executor

if TYPE_CHECKING:
    from ..systems import System


class LocalExecutor(Executor):
    name = "local"

    def submit(self, call: Call) -> Future[Any]:
        done: Future[Any] = Future()
        try:
            done.set_result(call.run())
        except BaseException as exc:  # noqa: BLE001 - the system's, Ctrl-C too: result() raises it again
            done.set_exception(exc)
        return done

    def through(self, system: System) -> System:
        """``system`` itself: its calls run where they are made, as :meth:`submit` runs them,
        without a future for each (a cost of every item, issue 44)."""
        return system

    def shown(self) -> str | None:
        return None  # the header says nothing of the default

    def to_dict(self) -> dict[str, Any]:
        return {}  # a local run's config records no executor, as before the option
