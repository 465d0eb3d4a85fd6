"""The deal of items to xdist workers (session/deal.py): xdist's side of it, driven here as
xdist's DSession drives a scheduler, with workers that run what they are sent in order. The
runs under ``-n 2`` themselves are in test_plugin_runs.py and test_plugin.py."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pytest_ambigqa.session.deal import DealScheduling, share

CONFIG: Any = SimpleNamespace(hook=None)  # what a scheduler keeps of the controller's config


class Worker:
    """What the scheduler sees of a worker (xdist's WorkerController): its id, the indices it
    was sent, and whether it was told to shut down."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.sent: list[int] = []
        self.shutting_down = False
        self.ran: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def start(scheduler: DealScheduling, collection: list[str], *workers: Worker) -> None:
    for worker in workers:
        scheduler.add_node(worker)
    for worker in workers:
        scheduler.add_node_collection(worker, collection)
    assert scheduler.collection_is_completed
    scheduler.schedule()


def run(scheduler: DealScheduling, *workers: Worker, until: int | None = None) -> None:
    """As xdist's workers do: an item runs once its successor is known or shutdown was sent;
    ``until``: stop once that many items ran in all."""
    while True:
        ready = [
            w for w in workers
            if w in scheduler.node2pending and scheduler.node2pending[w]
            and (len(scheduler.node2pending[w]) >= 2 or w.shutting_down)
        ]  # fmt: skip
        if not ready or (until is not None and sum(len(w.ran) for w in workers) >= until):
            return
        for worker in ready:
            index = scheduler.node2pending[worker][0]
            assert worker.sent[len(worker.ran)] == index  # runs in the order sent
            worker.ran.append(index)
            scheduler.mark_test_complete(worker, index)


def seated_pair() -> tuple[DealScheduling, Worker, Worker]:
    """A scheduler for two workers, both seated (configured) as xdist seats them."""
    scheduler = DealScheduling(CONFIG, 2)
    first, second = Worker("gw0"), Worker("gw1")
    scheduler.seat(first), scheduler.seat(second)
    return scheduler, first, second


@pytest.mark.parametrize("count", [1, 2, 3, 4])
@pytest.mark.parametrize("size", [0, 1, 2, 3, 7, 13, 100])
def test_every_item_runs_once_in_its_workers_share_and_order(count, size):
    collection = [f"test_ambig[{i}]" for i in range(size)]
    scheduler = DealScheduling(CONFIG, count)
    workers = [Worker(f"gw{n}") for n in range(count)]
    slots = [scheduler.seat(w) for w in workers]
    assert slots == [[n, count] for n in range(count)]
    start(scheduler, collection, *workers)
    run(scheduler, *workers)
    assert scheduler.tests_finished and not scheduler.has_pending
    assert all(w.shutting_down for w in workers)
    assert sorted(i for w in workers for i in w.ran) == list(range(size))  # each exactly once
    for n, worker in enumerate(workers):  # what the worker's pool computes from its own collection
        assert [collection[i] for i in worker.ran] == share(collection, n, count)


def test_the_share_is_dealt_over_the_items_that_run():
    """Each side deals the collection as it is after -k, --lf and deselection, which xdist
    checks is the same in every worker: a deselected item is no one's."""
    kept = [f"test_ambig[{i}]" for i in range(10) if i not in (1, 4)]
    assert share(kept, 0, 2) == ["test_ambig[0]", "test_ambig[3]", "test_ambig[6]", "test_ambig[8]"]
    assert share(kept, 1, 2) == ["test_ambig[2]", "test_ambig[5]", "test_ambig[7]", "test_ambig[9]"]


def test_a_worker_is_sent_its_share_in_chunks():
    """A quarter of what is left, so after -x or --maxfail a worker runs only what it was sent."""
    scheduler, first, second = seated_pair()
    start(scheduler, [str(i) for i in range(400)], first, second)
    assert len(first.sent) == 50 and not first.shutting_down
    run(scheduler, first, second, until=20)
    assert len(first.sent) < 100


def test_a_crashed_workers_replacement_takes_its_slot_and_the_rest_of_its_share():
    collection = [str(i) for i in range(40)]
    scheduler, first, second = seated_pair()
    start(scheduler, collection, first, second)
    run(scheduler, first, second, until=10)
    crashed = scheduler.node2pending[first][0]
    assert scheduler.remove_node(first) == collection[crashed]  # the item it died on
    replacement = Worker("gw2")
    assert scheduler.seat(replacement) == [0, 2]  # configured after the crash: the free slot
    scheduler.add_node(replacement)
    scheduler.add_node_collection(replacement, collection)
    scheduler.schedule()
    run(scheduler, second, replacement)
    assert scheduler.tests_finished
    assert first.ran + [crashed] + replacement.ran == list(range(0, 40, 2))  # in the share's order
    assert second.ran == list(range(1, 40, 2))


def test_a_crashed_item_to_run_again_goes_first_to_its_slot():
    """``pytest_handlecrashitem`` may ask for the item again (``mark_test_pending``)."""
    collection = [str(i) for i in range(12)]
    scheduler, first, second = seated_pair()
    start(scheduler, collection, first, second)
    run(scheduler, first, second, until=2)
    crashed = scheduler.remove_node(first)
    scheduler.mark_test_pending(crashed)
    replacement = Worker("gw2")
    scheduler.seat(replacement)
    scheduler.add_node(replacement)
    scheduler.add_node_collection(replacement, collection)
    scheduler.schedule()
    run(scheduler, second, replacement)
    assert replacement.ran[0] == collection.index(crashed)
    assert sorted(first.ran + replacement.ran + second.ran) == list(range(12))


def test_a_worker_that_dies_before_it_is_ready_leaves_its_slot():
    scheduler, first, second = seated_pair()
    scheduler.add_node(second)
    with pytest.raises(KeyError):  # xdist's DSession expects this of a node it never added
        scheduler.remove_node(first)
    assert scheduler.seat(Worker("gw2")) == [0, 2]
