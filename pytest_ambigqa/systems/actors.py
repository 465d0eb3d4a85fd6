"""``--ambig-executor=ray``: the system's calls run in Ray actors, each of which constructs
the system once from its spec (``--ambig-system``), so a GPU- or CPU-bound system spreads over
a cluster while the pytest process keeps asking, storing, scoring and reporting as it does for
a local run (the same :class:`System`, whose call goes to an actor and waits for its output).

Each actor has at most ``per_actor`` items in flight (a threaded actor of that concurrency, so
an item's ``--ambig-timeout`` counts from its start, not from its wait in a queue); a call goes
to the actor with the fewest. An actor that is lost (its process killed or crashed, its node
gone: ``RayActorError``) fails only the items it had in flight, each with the reason, and is
replaced by a fresh one. Ray is imported only here, and only when the executor is ray.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SystemFailure
from ..schema import AmbigItem, safe_str
from .call import System

LOST = "the Ray actor running this item was lost"  # the start of a lost item's error
# "0": Ray's nodes take 127.0.0.1 as their address (Ray's own default on macOS and Windows)
LOOPBACK = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


@dataclass(frozen=True)
class RayConfig:
    """Where the actors run and how many: ``address`` None joins the cluster ``RAY_ADDRESS``
    names, else starts one of this run's own on the loopback; else ``ray://HOST:PORT``;
    ``cpus`` and ``gpus`` per actor (a system that uses a GPU finds it as Ray assigns it:
    ``CUDA_VISIBLE_DEVICES`` in its actor)."""

    address: str | None
    actors: int
    cpus: float
    gpus: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "executor": self.address or "ray",
            **{"ray_actors": self.actors, "ray_cpus": self.cpus, "ray_gpus": self.gpus},
        }


class _Actor:
    """What runs in each Ray actor: the system, constructed once, called per item."""

    def __init__(self, spec: str, search_dir: str) -> None:
        from .spec import load_system

        self._system = load_system(spec, Path(search_dir))
        self._retrievers: dict[str, Any] = {}  # the run's retriever, fetched once per actor

    def call(
        self, item: AmbigItem, timeout: float | None, extras: dict[str, Any], retriever: list[Any]
    ) -> tuple[Any, ...]:
        """("ok", raw output) or ("failed", message, trace, calls): the item's failure, in the
        same words a local call gives (``System._raw``). ``retriever``: [] or [its object ref]
        (in a list, so Ray hands the ref over, not a copy of the retriever per call)."""
        if retriever:
            import ray

            ref = retriever[0]
            if ref.hex() not in self._retrievers:
                self._retrievers[ref.hex()] = ray.get(ref)
            extras = extras | {"retriever": self._retrievers[ref.hex()]}
        try:
            return ("ok", self._system._raw(item, timeout, extras))
        except SystemFailure as exc:
            return ("failed", str(exc), exc.trace, exc.calls)


class RayExecutor:
    """A pool of actors, started on the first call (a run that asks nothing starts no cluster)."""

    def __init__(self, spec: str, search_dir: Path, config: RayConfig, per_actor: int) -> None:
        self.spec, self.search_dir, self.config, self.per_actor = spec, search_dir, config, per_actor
        self._actors: list[Any] = []
        self._load: list[int] = []  # items in flight per actor
        self._room = threading.Condition()
        self._started_ray = False  # this process started (or joined) Ray, so it shuts it down
        self._closed = False
        self.replaced = 0  # actors lost and replaced
        self._retriever: tuple[Any, Any] | None = None  # the run's retriever and its object ref

    def system(self, local: System) -> System:
        """``local``'s inputs and label (the same answer keys and scorecard), called on the actors."""
        return System(
            label=local.label,
            inputs=local.inputs,
            call=self.call,
            requires_retriever=local.requires_retriever,
        )

    def _start(self) -> None:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
        address = self.config.address or os.environ.get("RAY_ADDRESS")
        if not address:  # a cluster of this run's own: on the loopback, nothing listens on the network
            os.environ.setdefault(LOOPBACK, "0")  # read by Ray when imported, and by its processes
        import ray

        if not ray.is_initialized():
            if address:  # the user's: ray://HOST:PORT, or HOST:PORT of a `ray start` head
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(address="local", include_dashboard=False, log_to_driver=False)
            self._started_ray = True
        self._remote = ray.remote(_Actor)
        self._actors = [self._new() for _ in range(self.config.actors)]
        self._load = [0] * self.config.actors

    def _new(self) -> Any:
        config = self.config
        options = {"num_cpus": config.cpus, "num_gpus": config.gpus, "max_concurrency": self.per_actor}
        return self._remote.options(**options).remote(self.spec, str(self.search_dir))

    def call(self, item: AmbigItem, timeout: float | None, extras: Mapping[str, Any]) -> Any:
        with self._room:
            if not self._actors and not self._closed:
                self._start()
            while not self._closed and min(self._load) >= self.per_actor:
                self._room.wait()
            if self._closed:
                raise SystemFailure("the run ended before this item was sent to a Ray actor")
            slot = self._load.index(min(self._load))
            self._load[slot] += 1
            actor = self._actors[slot]
        import ray
        from ray.exceptions import RayActorError, RayError

        try:
            sent = {k: v for k, v in extras.items() if k != "retriever"}
            retriever = self._shared(extras.get("retriever"))
            outcome = ray.get(actor.call.remote(item, timeout, sent, retriever))
        except RayActorError as exc:
            self._replace(slot, actor)
            raise SystemFailure(f"{LOST} ({_reason(exc)}); the actor was replaced") from None
        except RayError as exc:  # the output could not travel back (not picklable), or the like
            reason = _reason(exc)
            raise SystemFailure(f"the Ray actor could not return this item's answer: {reason}") from None
        finally:
            with self._room:
                if self._load:
                    self._load[slot] -= 1
                self._room.notify()
        if outcome[0] == "ok":
            return outcome[1]
        raise SystemFailure(outcome[1], trace=outcome[2], calls=outcome[3])

    def _shared(self, retriever: Any) -> list[Any]:
        """[the retriever's object ref], put in Ray's object store once; [] for none."""
        if retriever is None:
            return []
        import ray

        with self._room:
            if self._retriever is None or self._retriever[0] is not retriever:
                self._retriever = (retriever, ray.put(retriever))
            return [self._retriever[1]]

    def _replace(self, slot: int, lost: Any) -> None:
        """A fresh actor in ``lost``'s place (once, however many of its items saw it go)."""
        import ray

        with self._room:
            if self._closed or self._actors[slot] is not lost:
                return
            self._actors[slot] = self._new()
            self.replaced += 1
        try:
            ray.kill(lost, no_restart=True)
        except Exception:  # noqa: BLE001, S110 - gone already
            pass

    def close(self) -> None:
        """The actors end; a cluster this run started stops."""
        with self._room:
            self._closed = True
            actors, self._actors = self._actors, []
            self._room.notify_all()
        if not actors and not self._started_ray:
            return
        import ray

        for actor in actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001, S110 - gone already
                pass
        if self._started_ray:
            ray.shutdown()


def _reason(exc: BaseException) -> str:
    """The first line of a Ray error that says what happened, bounded."""
    lines = [line.strip() for line in safe_str(exc).splitlines() if line.strip()]
    said = next((line for line in lines if "actor" in line.lower() or "died" in line.lower()), None)
    return (said or (lines[0] if lines else type(exc).__name__))[:300]
