"""Batch judging's first phase (``--ambig-judge-batch``), in each process that runs items,
before its first test takes a result: every item of the process is answered (once: the
answers are kept for the tests, and stored as always), then scored while the judge's client
records (``models/batch.py``): each judge call the cache does not hold (the judge metrics',
and ``--ambig-reader=llm``'s, which goes through the same client) is recorded, not sent. The
recorded requests go to the server as one batch; its replies fill the cache, and the items
whose scoring deferred a call are scored again, which records what they ask next (G-Eval's
next pair, a re-ask of an unusable reply). Rounds repeat while new requests appear, at most
:data:`ROUNDS`. Then the tests run as usual: every judge call is a cache hit, or unscored
with the reason its batch gave.

Under xdist each worker batches the items dealt to it (``session/deal.py``): ``-n N`` sends
N batches, and no item is answered or judged twice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from ..models.batch import BatchSettings, BatchState
from ..models.chat import ChatClient
from ..schema import AmbigItem, ItemResult
from ..store.pool import Scoring

ROUNDS = 8  # G-Eval's pairs one after another, and re-asks: a bound, not a budget


def attach(clients: Sequence[ChatClient], settings: BatchSettings | None, run: str) -> list[BatchState]:
    """Each judge client's batch state: batch mode's; without it, one that has collected the
    batches an earlier run left, kept while some are pending or their replies are unaccounted."""
    states = []
    for client in clients:
        given, own = settings or BatchSettings(wait=0.0), client.settings
        if given.price_in is None and own.price_in is not None and own.price_out is not None:
            # OpenAI's Batch API costs half the synchronous price: each judge's own, halved
            given = dataclasses.replace(given, price_in=own.price_in / 2, price_out=own.price_out / 2)
        state = BatchState(client, given, run)
        if settings is None:
            state.collect()
            if not state.holding():
                continue
        client.batch = state
        states.append(state)
    return states


class Priming:
    def __init__(self, states: Sequence[BatchState], concurrency: int) -> None:
        self.states = list(states)
        self.concurrency = concurrency
        self._scorings: dict[str, Scoring] = {}

    def run(self, items: Sequence[AmbigItem], prepare: Callable[[AmbigItem], Scoring]) -> None:
        with ThreadPoolExecutor(max(1, self.concurrency), thread_name_prefix="ambigqa-batch") as pool:
            self._scorings = dict(zip((i.key for i in items), pool.map(prepare, items), strict=True))
        for _ in range(ROUNDS):
            deferred = False
            for key, scoring in list(self._scorings.items()):
                if isinstance(scoring, ItemResult):
                    continue
                result, later = self._record(scoring)
                if later:
                    deferred = True
                else:
                    self._scorings[key] = result  # scored in full from the cache: final
            sent = [state.send() for state in self.states]
            if not deferred or not any(sent):
                break
        else:
            for state in self.states:
                state.abandon()

    def _record(self, scoring: Callable[[], ItemResult]) -> tuple[ItemResult, bool]:
        """The item scored while every state records: its result, and whether a call was deferred."""
        from contextlib import ExitStack

        with ExitStack() as stack:
            recordings = [stack.enter_context(state.recording()) for state in self.states]
            result = scoring()
        return result, any(r.deferred for r in recordings)

    def take(self, item: AmbigItem) -> Scoring | None:
        """The item's result (or what scores it) from the first phase; None if it was not in it."""
        return self._scorings.pop(item.key, None)
