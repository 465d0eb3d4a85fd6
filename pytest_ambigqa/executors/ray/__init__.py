"""``--ambig-executor=ray`` (or ``ray://HOST:PORT``): the system's calls run in Ray actors,
each of which constructs the system from ``--ambig-system`` (``system.py``), and
``--ambig-ray-models`` puts the local models that want a GPU in actors of their own
(``models.py``); one connection to a cluster per run and the pools of actors on it are
``pool.py``'s. Ray is imported in this package only, and only once the executor is ray."""

from __future__ import annotations

import importlib.util
import urllib.parse
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import options
from ...options import refuse
from ...output import sent_url, split_url
from .. import Call, Executor
from .pool import RAY_MODELS, Cluster, RayConfig

if TYPE_CHECKING:
    import pytest

    from ...models.reader import HFReader
    from .models import RemoteReader
    from .system import RemoteSystem

OPTIONS = (
    "--ambig-ray-actors",
    "--ambig-ray-cpus",
    "--ambig-ray-gpus",
    "--ambig-ray-models",
    "--ambig-ray-model-gpus",
)


class RayExecutor(Executor):
    name = "ray"
    forms = ("ray", "ray://HOST:PORT")
    own_options = OPTIONS
    constructs = "each Ray actor"

    def __init__(self, config: RayConfig) -> None:
        self.config = config
        self.models = config.models
        self.cluster = Cluster(config.address)  # joined or started on first use
        self._system: RemoteSystem | None = None
        self._reader: RemoteReader | None = None
        self._pools: list[Any] = []  # what it started on the cluster, closed with the run

    @classmethod
    def read(cls, config: pytest.Config, value: str) -> RayExecutor:
        """The actors' config, with what cannot go with them refused (they construct the
        system from its spec, in their own processes)."""
        address = None
        if value.lower().startswith("ray://"):
            given = split_url(value)  # its user info found however it is written, never shown
            assert given is not None
            sent_url(value)
            address = f"ray://{given.host}"  # as Ray Client takes it; no user or password
            parts = urllib.parse.urlsplit(address)
            if given.userinfo is not None or given.rest.strip("/"):
                # Ray hands what follows ray:// to gRPC as its target, which a user, password, path or
                # query only spoils (a cluster's token is RAY_AUTH_TOKEN, never the address's)
                refuse(
                    f"--ambig-executor={address}: Ray Client takes ray://HOST:PORT, "
                    "no user, password or query"
                )
            try:
                port = parts.port
            except ValueError:  # not a number, or out of range
                port = None
            if not parts.hostname or not port:
                refuse(f"--ambig-executor={address}: name the cluster, ray://HOST:PORT (its Ray Client port)")
        shown = address or value
        if getattr(config.option, "numprocesses", None):
            refuse(f"--ambig-executor={shown}: not with xdist's -n; the Ray actors are the workers")
        if importlib.util.find_spec("ray") is None:
            refuse(f"--ambig-executor={shown} needs ray: pip install 'pytest-ambigqa[ray]'")
        if address and importlib.util.find_spec("grpc") is None:  # ray[client]'s, not ray's own
            refuse(f"--ambig-executor={address}: Ray Client needs grpcio: pip install 'pytest-ambigqa[ray]'")
        actors = options.number(
            "--ambig-ray-actors",
            options.text(config, "--ambig-ray-actors"),
            kind=int,
            low=1,
            high=options.MAX_THREADS,
        )
        cpus = options.number("--ambig-ray-cpus", options.text(config, "--ambig-ray-cpus"), low=0, high=1024)
        gpus = options.number("--ambig-ray-gpus", options.text(config, "--ambig-ray-gpus"), low=0, high=1024)
        raw = options.value(config, "--ambig-ray-models") or ""
        models = tuple(dict.fromkeys(part.strip().lower() for part in raw.split(",") if part.strip()))
        for model in models:
            if model not in RAY_MODELS:
                refuse(f"--ambig-ray-models: '{model}' is not {' or '.join(RAY_MODELS)}")
        reader = options.value(config, "--ambig-reader")
        if "reader" in models and (reader is None or reader.lower() == "llm"):
            refuse("--ambig-ray-models=reader: the run has no local reader (--ambig-reader=MODEL_DIR)")
        retriever = options.choice(config, "--ambig-retriever")
        if "embedder" in models and retriever not in ("dense", "hybrid"):
            refuse(
                f"--ambig-ray-models=embedder: --ambig-retriever={retriever} embeds nothing "
                "(dense or hybrid do)"
            )
        if options.given(config, "--ambig-ray-model-gpus") and not models:
            refuse("--ambig-ray-model-gpus: only with --ambig-ray-models")
        model_gpus = options.number(
            "--ambig-ray-model-gpus", options.text(config, "--ambig-ray-model-gpus"), low=0, high=1024
        )
        return cls(RayConfig(address, actors, cpus, gpus, models, model_gpus))

    @property
    def label(self) -> str:
        return self.config.address or "ray"

    def concurrency(self) -> int:
        """Two items in flight per actor (one running, the next already there when it ends)."""
        return min(2 * self.config.actors, options.MAX_THREADS)

    def setup(self, spec: str, search_dir: Path, concurrency: int) -> None:
        """The system's actors, each with its share of ``--ambig-concurrency`` in flight."""
        from .system import RemoteSystem

        per_actor = -(-concurrency // self.config.actors)
        self._system = RemoteSystem(self.cluster, spec, search_dir, self.config, per_actor)
        self._pools.append(self._system)

    def submit(self, call: Call) -> Future[Any]:
        assert self._system is not None, "setup() first"
        done: Future[Any] = Future()
        try:
            done.set_result(self._system.call(call.item, call.timeout, call.extras))
        except BaseException as exc:  # noqa: BLE001 - the item's failure or loss: result() raises it
            done.set_exception(exc)
        return done

    def place_reader(self, reader: HFReader, concurrency: int) -> RemoteReader:
        from .models import RemoteReader

        self._reader = RemoteReader(self.cluster, reader, self.config.model_gpus, concurrency)
        self._pools.append(self._reader)
        return self._reader

    def place_embedder(self, path: Path, device: str, concurrency: int) -> Any:
        from .models import RemoteEmbedder

        embedder = RemoteEmbedder(self.cluster, path, device, self.config.model_gpus, concurrency)
        self._pools.append(embedder)
        return embedder

    def device_used(self) -> dict[str, str] | None:
        """The reader's actor's device, once it ran (what ``--ambig-device=auto`` chose there)."""
        if self._reader is None:
            return None
        return {"device_used": self._reader.device} if self._reader.pool.started else {}

    def shown(self) -> str:
        return self.config.shown()

    def to_dict(self) -> dict[str, Any]:
        return self.config.to_dict()

    def close(self) -> None:
        """The actors end, then the cluster (one of the run's own stops)."""
        for pool in self._pools:
            pool.close()
        self.cluster.close()
