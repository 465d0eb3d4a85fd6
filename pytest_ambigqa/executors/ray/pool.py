"""One connection to Ray per run, and pools of actors on it.

Two things about Ray shape this module:

- The processes ``ray.init`` starts for a cluster of the run's own (GCS, raylet) are forked
  with ``PR_SET_PDEATHSIG`` (``ray/_private/utils.py``): they die with the *thread* that
  started them. Started from a scoring thread that later ended, the whole cluster was killed
  mid-run (the first attempt's flaky test), so :class:`Cluster` starts and stops Ray in a
  thread of its own that lives until the run ends.
- An actor that cannot be placed (the cluster lacks the CPUs or GPUs it asks for) waits
  forever, and so would every call dealt to it. A pool therefore refuses, before it starts,
  actors that do not fit the cluster's resources, and gives an actor ``READY_S`` seconds to
  be placed and constructed; one that is not ready by then is dropped, with the reason.

A pool deals each call to the ready actor with the fewest in flight, at most ``per_actor``
each (a threaded actor of that concurrency). An actor lost with calls in flight (its process
killed or crashed, its node gone: Ray's ``RayActorError``) fails exactly those calls, each
with the reason, and a fresh actor takes its place.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import ActorUnavailable
from ...output import excerpt, scrub
from ...schema import safe_str

_IMPORTING = threading.Lock()


def ray_api() -> Any:
    """Ray, with ``ray.exceptions``, imported by one thread at a time, as every Ray import of
    this package is. Python lets a thread import a submodule of a package that another thread
    is still initializing, and Ray's package and its Cython core (``ray._raylet``) import each
    other: a system call's ``from ray.exceptions import RayError`` met the cluster thread's
    ``import ray`` half done, and Ray could not start ("cannot import name RayActorError")."""
    with _IMPORTING:
        import ray
        import ray.exceptions
    return ray


LOST = "the Ray actor running this item was lost"  # the start of a lost call's error
# "0": Ray's nodes take 127.0.0.1 as their address (as on macOS and Windows), so a cluster of
# the run's own listens on the loopback only; read when Ray is imported, and by its processes.
LOOPBACK = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
RAY_MODELS = ("reader", "embedder")  # the local models --ambig-ray-models may put in actors
READY_S = 120.0  # seconds an actor may take to be placed and to construct what it runs


@dataclass(frozen=True)
class RayConfig:
    """Where the actors run and how many: ``address`` None joins the cluster ``RAY_ADDRESS``
    names, else starts one of this run's own on the loopback; else ``ray://HOST:PORT``.
    ``cpus`` and ``gpus`` per system actor (a system that uses a GPU finds it as Ray assigns
    it: ``CUDA_VISIBLE_DEVICES`` in its actor); ``models``: the local models that run in
    actors of their own (reader, embedder), each with ``model_gpus`` GPUs."""

    address: str | None
    actors: int
    cpus: float
    gpus: float = 0.0
    models: tuple[str, ...] = ()
    model_gpus: float = 0.0

    def shown(self) -> str:
        """The executor as the terminal's header names it: ``ray, 2 actors`` (``ray://HOST:PORT``
        for a cluster named so; the address holds no user or password, config.py drops them)."""
        said = f"{self.address or 'ray'}, {self.actors} actor{'' if self.actors == 1 else 's'}"
        if self.gpus:
            said += f" ({self.gpus:g} GPU each)"
        if self.models:
            said += f"; models in actors of their own: {', '.join(self.models)}"
        return said

    def to_dict(self) -> dict[str, Any]:
        said: dict[str, Any] = {
            "executor": self.address or "ray",
            "ray_actors": self.actors,
            "ray_cpus": self.cpus,
            "ray_gpus": self.gpus,
        }
        if self.models:  # else a run as before this option
            said |= {"ray_models": list(self.models), "ray_model_gpus": self.model_gpus}
        return said


class Cluster:
    """This run's Ray: joined (or, with no address, started on the loopback) on first use, in
    a thread that keeps it until :meth:`close`; a run that asks nothing of it starts nothing."""

    def __init__(self, address: str | None) -> None:
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.loopback = self.address is None or _host_port(self.address)[0] in LOOPBACK_HOSTS
        if self.loopback:  # before anything imports Ray: our own cluster, or one on 127.0.0.1, is
            os.environ.setdefault(LOOPBACK, "0")  # else Ray puts the machine's address for 127.0.0.1
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
        self._lock = threading.Lock()
        self._up = threading.Event()
        self._closing = threading.Event()
        self._keeper: threading.Thread | None = None
        self._error: str | None = None

    def connect(self) -> None:
        """Ray, connected (once; a failed start fails every later call with the same reason)."""
        with self._lock:
            if self._keeper is None:
                self._keeper = threading.Thread(target=self._keep, name="ambigqa-ray", daemon=True)
                self._keeper.start()
        self._up.wait()
        if self._error is not None:
            raise ActorUnavailable(self._error)

    def _keep(self) -> None:
        started = False
        try:
            ray = ray_api()
            if not ray.is_initialized():
                if self.loopback:
                    keep_on_loopback()
                if self.address:  # ray://HOST:PORT, or HOST:PORT of a `ray start` head
                    _answers(self.address)
                    ray.init(address=self.address, log_to_driver=False)
                else:
                    ray.init(address="local", include_dashboard=False, log_to_driver=False)
                started = True
        except Exception as exc:  # noqa: BLE001 - every call that needs Ray says why it is not there
            where = scrub(self.address) if self.address else "a local cluster"  # RAY_ADDRESS's too
            self._error = f"Ray could not start or join {where}: {start_reason(exc)}"
        finally:
            self._up.set()
        self._closing.wait()
        if started:
            ray_api().shutdown()

    def resources(self) -> dict[str, float]:
        return {k: float(v) for k, v in ray_api().cluster_resources().items()}

    def close(self) -> None:
        """Ray is let go (a cluster this run started stops), from the thread that started it."""
        self._closing.set()
        if self._keeper is not None:
            self._keeper.join(timeout=60)


def start_reason(exc: BaseException) -> str:
    """Why Ray did not start or join, on one line: all of the error's lines (a version mismatch
    spans five) but a traceback's frames (Ray Client passes on the server's), bounded."""
    lines = [line.strip() for line in safe_str(exc).splitlines() if line.strip()]
    frames = "Traceback (most recent call last):"
    if frames in lines:  # what comes before them, and the exception they end with
        lines = lines[: lines.index(frames)] + lines[-1:]
    return excerpt(" ".join(lines), 300) or type(exc).__name__


def _answers(address: str) -> None:
    """An ``OSError`` (refused, unreachable, unknown host) where nothing accepts connections at
    the address: Ray Client would try a ``ray://`` one for about 30 s (5, 10 and 15 s) and then
    say only ``ray client connection timeout``, and Ray a head's ``HOST:PORT`` for minutes."""
    host, port = _host_port(address)
    if host and port:
        socket.create_connection((host, port), timeout=10).close()


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def _host_port(address: str) -> tuple[str | None, int | None]:
    """The host and port of ``ray://HOST:PORT`` or ``HOST:PORT`` (None, None for ``auto``)."""
    parts = urllib.parse.urlsplit(address if "://" in address else f"ray://{address}")
    try:
        return parts.hostname, parts.port
    except ValueError:  # not a port: Ray says what is wrong with it
        return parts.hostname, None


def keep_on_loopback() -> None:
    """Ray's nodes on 127.0.0.1 even when something imported Ray before :class:`Cluster` set
    ``LOOPBACK`` (Ray reads it once, at import)."""
    ray_constants = ray_api()._private.ray_constants
    if getattr(ray_constants, "ENABLE_RAY_CLUSTER", False):
        ray_constants.ENABLE_RAY_CLUSTER = False


class ActorPool:
    """``count`` actors of ``cls(*args)`` on ``cluster``, started on the first call, spread
    over the cluster's nodes, ``per_actor`` calls in flight on each."""

    def __init__(
        self,
        cluster: Cluster,
        cls: type,
        args: Sequence[Any],
        *,
        what: str,
        count: int,
        per_actor: int,
        cpus: float,
        gpus: float = 0.0,
    ) -> None:
        self.cluster, self.cls, self.args, self.what = cluster, cls, tuple(args), what
        self.count, self.per_actor, self.cpus, self.gpus = count, per_actor, cpus, gpus
        self._room = threading.Condition()
        self._actors: list[Any] = []  # None where an actor was dropped
        self._ready: list[bool] = []  # placed and constructed: calls may be dealt to it
        self._load: list[int] = []  # calls in flight per actor
        self._started = False
        self._error: str | None = None  # why the pool has no actor (every call says it)
        self._closed = False

    @property
    def started(self) -> bool:
        return self._started

    # -- starting -------------------------------------------------------------------------

    def _start(self) -> None:
        """Called under ``_room``, once."""
        self._started = True
        try:
            self.cluster.connect()
            self._check_fit()
            self._remote: Any = ray_api().remote(self.cls)
            self._actors = [self._new() for _ in range(self.count)]
        except ActorUnavailable as exc:
            self._error = str(exc)
            return
        self._ready = [False] * self.count
        self._load = [0] * self.count
        for slot, ok in enumerate(self._wait_ready(self._actors)):
            self._settle(slot, ok)

    def _check_fit(self) -> None:
        have = self.cluster.resources()
        for name, each in (("CPU", self.cpus), ("GPU", self.gpus)):
            need, there = each * self.count, have.get(name, 0.0)
            if need > there:
                raise ActorUnavailable(
                    f"{self.count} {self.what} actor(s) of {each:g} {name} each need {need:g} {name}s; "
                    f"the Ray cluster has {there:g} (fewer actors, or fractional {name}s per actor)"
                )

    def _new(self) -> Any:
        options = {
            "num_cpus": self.cpus,
            "num_gpus": self.gpus,
            "max_concurrency": self.per_actor,
            "scheduling_strategy": "SPREAD",  # over the nodes: a lost node takes as few as it can
        }
        return self._remote.options(**options).remote(*self.args)

    def _wait_ready(self, actors: list[Any]) -> list[bool]:
        """Which of ``actors`` were placed and constructed within ``READY_S`` (a constructor
        that raised counts as not ready; its reason is kept)."""
        ray = ray_api()

        pings = {actor.__ray_ready__.remote(): i for i, actor in enumerate(actors)}
        done, _ = ray.wait(list(pings), num_returns=len(pings), timeout=READY_S)
        ready = [False] * len(actors)
        for ref in done:
            try:
                ray.get(ref)
                ready[pings[ref]] = True
            except Exception as exc:  # noqa: BLE001 - its constructor raised: say why
                self._error = f"the {self.what} could not be constructed in a Ray actor: {ray_reason(exc)}"
        return ready

    def _unplaced(self) -> str:
        have = self.cluster.resources()
        return self._error or (
            f"no {self.what} actor was placed on the Ray cluster within {READY_S:g} s ({self.cpus:g} CPU "
            f"and {self.gpus:g} GPU each; the cluster has {have.get('CPU', 0):g} CPUs and "
            f"{have.get('GPU', 0):g} GPUs)"
        )

    def _settle(self, slot: int, ok: bool) -> None:
        """A started actor ready for calls, or dropped; the pool's error once none is left."""
        if ok:
            self._ready[slot] = True
            return
        self._drop(slot)
        if not any(self._ready):
            self._error = self._unplaced()

    def _drop(self, slot: int) -> None:
        actor, self._actors[slot] = self._actors[slot], None
        self._ready[slot] = False
        _kill(actor)

    # -- calling --------------------------------------------------------------------------

    def call(self, method: str, *args: Any) -> Any:
        """``method(*args)`` on an actor; :class:`ActorUnavailable` when that actor is lost
        with it (or there is none); the actor's own exception as Ray raises it otherwise."""
        with self._room:
            if not self._started:
                self._start()
            while True:
                if self._closed:
                    raise ActorUnavailable(f"the run ended before this call went to a {self.what} actor")
                if self._error is not None and not any(self._ready):
                    raise ActorUnavailable(self._error)
                free = [s for s, ok in enumerate(self._ready) if ok and self._load[s] < self.per_actor]
                if free:
                    break
                self._room.wait()
            slot = min(free, key=self._load.__getitem__)
            self._load[slot] += 1
            actor = self._actors[slot]
        ray = ray_api()
        try:
            return ray.get(getattr(actor, method).remote(*args))
        except ray.exceptions.RayActorError as exc:
            reason = ray_reason(exc)
            replaced = self._replace(slot, actor)
            raise ActorUnavailable(f"{LOST} ({reason}); {replaced}") from None
        finally:
            with self._room:
                self._load[slot] -= 1
                self._room.notify_all()

    def handle(self) -> Any:
        """A ready actor's handle, for a process that calls it itself (a pickled model)."""
        with self._room:
            if not self._started:
                self._start()
            ready = [actor for actor, ok in zip(self._actors, self._ready, strict=True) if ok]
            if not ready:
                raise ActorUnavailable(self._error or f"no {self.what} actor is ready")
            return ready[0]

    def _replace(self, slot: int, lost: Any) -> str:
        """A fresh actor in ``lost``'s place (once, however many of its calls saw it go),
        dropped if it is not ready within ``READY_S``; says what became of the slot."""
        with self._room:
            if self._closed or self._actors[slot] is not lost:
                return "the actor was replaced"
            self._ready[slot] = False
            fresh = self._actors[slot] = self._new()
        _kill(lost)
        ok = self._wait_ready([fresh])[0]
        with self._room:
            if self._closed:  # the run ended meanwhile: close() killed the others
                _kill(fresh)
                return "the run ended"
            if self._actors[slot] is fresh:
                self._settle(slot, ok)
            self._room.notify_all()
        return "the actor was replaced" if ok else "no actor could take its place"

    def close(self) -> None:
        """The actors end (the cluster is the run's to close)."""
        with self._room:
            self._closed = True
            actors, self._actors = self._actors, []
            self._ready = []
            self._room.notify_all()
        for actor in actors:
            _kill(actor)


def _kill(actor: Any) -> None:
    if actor is None:
        return
    try:
        ray_api().kill(actor, no_restart=True)
    except Exception:  # noqa: BLE001 - gone already
        pass


def ray_reason(exc: BaseException) -> str:
    """What a Ray error says happened, in one bounded line: the exception a task or an actor's
    constructor raised (the last line of the traceback Ray carries), else Ray's own first line
    without its details (pid, ids) or colours."""
    lines = [_ANSI.sub("", line).strip() for line in safe_str(exc).splitlines()]
    lines = [line for line in lines if line and set(line) - set("^~ ")]
    if not lines:
        return type(exc).__name__
    raised = lines[-1] if len(lines) > 1 and _RAISED.match(lines[-1]) else None
    return excerpt(raised or lines[0].split(" ray::")[0].split(" (pid=")[0].rstrip(" ,"), 300)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RAISED = re.compile(r"[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Failure)\b.*")
