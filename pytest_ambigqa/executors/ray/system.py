"""``--ambig-executor=ray``: the system's calls run in Ray actors, each of which constructs the
system once from its spec (``--ambig-system``), so a GPU- or CPU-bound system spreads over a
cluster while the pytest process keeps asking, storing, scoring and reporting as it does for
a local run: the same :class:`System`, whose call goes to an actor and waits for its output.

An item's ``--ambig-timeout`` counts from its start in the actor, not from a wait in a queue
(each actor takes at most its share of ``--ambig-concurrency``). An actor lost with items in
flight fails exactly those items, each with the reason, and is replaced
(``pool.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import ActorUnavailable, SystemFailure
from ...schema import AmbigItem
from ...telemetry import active, continued
from .pool import ActorPool, Cluster, RayConfig, ray_api, ray_reason


class _SystemActor:
    """What runs in each Ray actor: the system, constructed once, called per item."""

    def __init__(self, spec: str, search_dir: str) -> None:
        from ...systems.spec import load_system

        self._system = load_system(spec, Path(search_dir))
        self._retrievers: dict[str, Any] = {}  # the run's retriever, fetched once per actor

    def call(
        self,
        item: AmbigItem,
        timeout: float | None,
        extras: dict[str, Any],
        retriever: list[Any],
        traceparent: str | None = None,
    ) -> tuple[Any, ...]:
        """("ok", raw output) or ("failed", message, trace, calls): the item's failure, in the
        same words a local call gives (``System._raw``). ``retriever``: [] or [its object ref]
        (in a list, so Ray hands the ref over, not a copy of the retriever per call).
        ``traceparent``: the run's ``invoke_agent`` span (``--ambig-otel``), which the call
        continues (``telemetry.continued``)."""
        if retriever:
            ref = retriever[0]
            if ref.hex() not in self._retrievers:
                self._retrievers[ref.hex()] = ray_api().get(ref)
            extras = extras | {"retriever": self._retrievers[ref.hex()]}
        try:
            with continued(traceparent):
                return ("ok", self._system._raw(item, timeout, extras))
        except SystemFailure as exc:
            return ("failed", str(exc), exc.trace, exc.calls)


class RemoteSystem:
    """The system's calls, on a pool of actors started on the first call."""

    def __init__(
        self, cluster: Cluster, spec: str, search_dir: Path, config: RayConfig, per_actor: int
    ) -> None:
        self.pool = ActorPool(
            cluster,
            _SystemActor,
            (spec, str(search_dir)),
            what="system",
            count=config.actors,
            per_actor=per_actor,
            cpus=config.cpus,
            gpus=config.gpus,
        )
        self._lock = threading.Lock()
        self._retriever: tuple[Any, Any] | None = None  # the run's retriever and its object ref

    def call(self, item: AmbigItem, timeout: float | None, extras: Mapping[str, Any]) -> Any:
        ray = ray_api()
        sent = {k: v for k, v in extras.items() if k != "retriever"}
        try:
            shared = self._shared(extras.get("retriever"))
            outcome = self.pool.call("call", item, timeout, sent, shared, active().traceparent())
        except ActorUnavailable as exc:
            raise SystemFailure(str(exc)) from None
        except ray.exceptions.RayError as exc:  # the output could not travel back (not picklable), say
            reason = ray_reason(exc)
            raise SystemFailure(f"the Ray actor could not return this item's answer: {reason}") from None
        if outcome[0] == "ok":
            return outcome[1]
        raise SystemFailure(outcome[1], trace=outcome[2], calls=outcome[3])

    def _shared(self, retriever: Any) -> list[Any]:
        """[the retriever's object ref], put in Ray's object store once; [] for none."""
        if retriever is None:
            return []
        ray = ray_api()
        self.pool.cluster.connect()  # else ray.put would start a cluster of its own, here
        with self._lock:
            if self._retriever is None or self._retriever[0] is not retriever:
                self._retriever = (retriever, ray.put(retriever))
            return [self._retriever[1]]

    def close(self) -> None:
        self.pool.close()
