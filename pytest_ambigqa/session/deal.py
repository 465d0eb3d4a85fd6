"""Under ``-n N`` with ``--ambig-concurrency``: the items dealt to the workers up front.

Each worker's pool asks ahead of its tests, so it must know which items its tests will be.
xdist's default (``--dist load``) hands out chunks as tests finish, and no worker knows its
next chunk: the pools of all workers used to ask ahead over every item and share them through
claims in the answer store. Measured (500 ASQA items, a 200 ms system, ``-n 2`` with 16 calls
each): whichever pool got ahead claimed most items (425 of 500), the other pool's threads
waited on its claims (3,566 refused claims, 4,066 store reads), so about 16 calls were in
flight instead of 32, and both workers scored the items (936 scorings for 500).

So the rule is :func:`share`: the worker in slot ``s`` of ``n`` runs the collected items
``s, s + n, s + 2n, ...``, in test order. The controller's :class:`DealScheduling` sends each
worker its share (in chunks, as xdist's load scheduler does, so ``-x`` stops as soon), and
each worker computes the same share from its slot and its own collection, which xdist has
checked is the controller's: its pool asks exactly the items its tests run, and nothing is
claimed. A crashed worker's slot, with the items it had left, goes to its replacement, whose
pool asks ahead from the first of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

if TYPE_CHECKING:
    from xdist.workermanage import WorkerController

DEAL_INPUT = "ambigqa_deal"  # workerinput: [slot, count] of a worker the controller deals to
T = TypeVar("T")


def deals(config: pytest.Config) -> bool:
    """Whether this xdist controller deals: ``-n`` with ``--dist`` left to its
    default. A ``--dist`` the user gave (``load`` included) is xdist's to schedule."""
    given = config.known_args_namespace  # the command line and addopts, before xdist's defaults
    return (
        getattr(given, "dist", "no") == "no"
        and not getattr(given, "distload", False)
        and getattr(config.option, "dist", "no") == "load"
    )


def share(items: Sequence[T], slot: int, count: int) -> list[T]:
    """The items the worker in ``slot`` (of ``count``) runs, in their order: every ``count``-th
    from ``slot``, so that items of each suite, type and cost spread evenly over the workers."""
    return list(items[slot::count])


class DealScheduling:
    """xdist's scheduler (``pytest_xdist_make_scheduler``) for a run that deals: each worker
    gets its :func:`share` of the collection, sent in chunks, and only that.

    Made when the first worker is configured, before xdist asks for a scheduler, since each
    worker's slot goes into its ``workerinput``.
    """

    def __init__(self, config: pytest.Config, count: int) -> None:
        self.config = config
        self.numnodes = count
        self.log: Callable[..., Any] = lambda *args: None
        self.node2collection: dict[WorkerController, list[str]] = {}
        self.node2pending: dict[WorkerController, list[int]] = {}
        self.collection: list[str] | None = None
        self._slots: dict[WorkerController, int] = {}
        self._free: list[int] = []  # slots of removed workers, for their replacements
        self._unsent: list[list[int]] = [[] for _ in range(count)]  # by slot: indices not yet sent

    def seat(self, node: WorkerController) -> list[int]:
        """The ``[slot, count]`` of a worker being configured: the next slot, or the lowest one a
        crashed worker left (xdist removes it before it configures the replacement)."""
        if self._free:
            slot = min(self._free)
            self._free.remove(slot)
        else:
            slot = len(self._slots) + len(self._free)
        self._slots[node] = slot
        return [slot, self.numnodes]

    @property
    def nodes(self) -> list[WorkerController]:
        return list(self.node2pending)

    @property
    def collection_is_completed(self) -> bool:
        return len(self.node2collection) >= self.numnodes

    @property
    def tests_finished(self) -> bool:
        if not self.collection_is_completed or any(self._unsent):
            return False
        return all(len(pending) < 2 for pending in self.node2pending.values())

    @property
    def has_pending(self) -> bool:
        return any(self._unsent) or any(self.node2pending.values())

    def add_node(self, node: WorkerController) -> None:
        assert node not in self.node2pending
        self.node2pending[node] = []

    def add_node_collection(self, node: WorkerController, collection: Sequence[str]) -> None:
        if self.collection is not None and list(collection) != self.collection:
            from xdist.report import report_collection_diff

            other = next(iter(self.node2collection))
            self.log(report_collection_diff(self.collection, collection, other.gateway.id, node.gateway.id))
            return
        self.node2collection[node] = list(collection)

    def schedule(self) -> None:
        if self.collection is None:
            collections = list(self.node2collection.values())
            if any(c != collections[0] for c in collections):
                self._report_different_collections()
                return
            self.collection = collections[0]
            everything = range(len(self.collection))
            self._unsent = [share(everything, slot, self.numnodes) for slot in range(self.numnodes)]
        for node in self.nodes:
            self._top_up(node)

    def mark_test_complete(self, node: WorkerController, item_index: int, duration: float = 0) -> None:
        self.node2pending[node].remove(item_index)
        self._top_up(node)

    def mark_test_pending(self, item: str) -> None:
        """A crashed item to run again (``pytest_handlecrashitem``): first in its slot's queue."""
        assert self.collection is not None
        index = self.collection.index(item)
        self._unsent[index % self.numnodes].insert(0, index)
        for node in self.nodes:
            self._top_up(node)

    def remove_pending_tests_from_node(self, node: WorkerController, indices: Sequence[int]) -> None:
        raise NotImplementedError  # answers xdist's "steal", which this scheduler never sends

    def remove_node(self, node: WorkerController) -> str | None:
        """A worker done, or dead: its slot is free for a replacement, and the items sent to it
        and not run go back in front of the slot's queue, less the one it died on (returned)."""
        slot = self._slots.pop(node)
        self._free.append(slot)
        pending = self.node2pending.pop(node)  # KeyError for a worker never added: xdist expects it
        if not pending:
            return None
        assert self.collection is not None
        crashed = self.collection[pending.pop(0)]
        self._unsent[slot][:0] = pending
        return crashed

    def _top_up(self, node: WorkerController) -> None:
        """Send the worker a quarter of what is left of its share whenever fewer items than that
        wait on it (as xdist's load scheduler sizes its chunks): a worker always has its next
        item, and after ``-x`` or ``--maxfail`` it runs only what it was sent. With nothing left
        to send, it shuts down."""
        if node.shutting_down or node not in self._slots:
            return
        unsent, pending = self._unsent[self._slots[node]], self.node2pending[node]
        quarter = max(2, len(unsent) // 4)
        if unsent and len(pending) < quarter:
            chunk, unsent[:quarter] = unsent[:quarter], []
            pending.extend(chunk)
            node.send_runtest_some(chunk)
        if not unsent:
            node.shutdown()

    def _report_different_collections(self) -> None:
        """As xdist's own schedulers do: a failed collection report names the difference."""
        from xdist.report import report_collection_diff

        (first, col), *others = self.node2collection.items()
        for node, collection in others:
            message = report_collection_diff(col, collection, first.gateway.id, node.gateway.id)
            if message:
                self.log(message)
                failed = pytest.CollectReport(node.gateway.id, "failed", longrepr=message, result=[])
                self.config.hook.pytest_collectreport(report=failed)
