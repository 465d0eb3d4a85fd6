"""``--ambig-ray-models=reader,embedder``: the local models that want a GPU run in Ray actors
of their own (``--ambig-ray-model-gpus`` each), while the pytest process scores as before.

The reader's actor holds an :class:`HFReader` and reads there (tokenising, the forward pass
and the decoding of ``models/reader.py``, unchanged), with the run's concurrency in flight so
that its :class:`~.reader.Batcher` still puts the windows of the items read at once in one
pass. The embedder's actor holds the dense retriever's :class:`Embedder`: a query, and the
corpus when its index is built, is encoded there. Both give the numbers a local run gives
(``tests/test_ray.py`` compares the scorecards).

A lost model actor leaves only the reads in flight on it unscored, with the reason, and is
replaced (``pool.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import ActorUnavailable, ScorerUnavailable
from ...models.reader import Decoding, HFReader
from .pool import ActorPool, Cluster, ray_api


class _ReaderActor:
    def __init__(self, path: str, decoding: Decoding, device: str) -> None:
        self.reader = HFReader(Path(path), decoding, device)
        self.reader.load()

    def read(self, questions: list[str], context: str) -> list[str]:
        return self.reader.read(questions, context)

    def device(self) -> str:
        return self.reader.device


class RemoteReader:
    """The reader of ``local`` (its model files, decoding and ``--ambig-device``), in an actor."""

    def __init__(self, cluster: Cluster, local: HFReader, gpus: float, per_actor: int) -> None:
        self.path, self.decoding, self.device_spec = local.path, local.decoding, local.device_spec
        self.pool = ActorPool(
            cluster,
            _ReaderActor,
            (str(local.path), local.decoding, local.device_spec),
            what="reader",
            count=1,
            per_actor=per_actor,
            cpus=0,  # it is placed by its GPU, or anywhere on a CPU-only cluster
            gpus=gpus,
        )
        self._device: str | None = None

    def load(self) -> None:
        """Start the actor now, its model loaded (else on the first read)."""
        self.device  # noqa: B018

    @property
    def device(self) -> str:
        """Where the actor's model runs (what ``--ambig-device=auto`` chose there)."""
        if self._device is None:
            self._device = self._call("device")
        return self._device

    def read(self, questions: Sequence[str], context: str, usage: Any = None) -> list[str]:
        return self._call("read", list(questions), context)

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return self.pool.call(method, *args)
        except ActorUnavailable as exc:
            raise ScorerUnavailable(f"reader: {exc}") from None

    def close(self) -> None:
        self.pool.close()


class _EmbedderActor:
    def __init__(self, path: str, device: str) -> None:
        from ...retrieval.dense import Embedder

        self.embedder = Embedder(Path(path), device)
        self.embedder.model  # noqa: B018 - loaded now, not on the first query

    def encode(self, texts: list[str]) -> Any:
        return self.embedder.encode(texts)


class RemoteEmbedder:
    """The dense retriever's embedder (``retrieval/dense.py``'s ``encode``), in an actor.

    Pickled (the run's retriever goes to the system's actors, ``system.py``), it
    becomes a handle on that actor: a system actor's queries are encoded there too."""

    def __init__(self, cluster: Cluster, path: Path, device: str, gpus: float, per_actor: int) -> None:
        self.path, self.device = path, device
        self.pool = ActorPool(
            cluster,
            _EmbedderActor,
            (str(path), device),
            what="embedder",
            count=1,
            per_actor=per_actor,
            cpus=0,
            gpus=gpus,
        )

    def encode(self, texts: Sequence[str]) -> Any:
        try:
            return self.pool.call("encode", list(texts))
        except ActorUnavailable as exc:
            raise ScorerUnavailable(f"embedder: {exc}") from None

    def __reduce__(self) -> tuple[Any, ...]:
        return (_EmbedderHandle, (self.pool.handle(), str(self.path), self.device))

    def close(self) -> None:
        self.pool.close()


class _EmbedderHandle:
    """A :class:`RemoteEmbedder` where it was unpickled (in a system's actor): its queries go
    to the embedder's actor; once that actor is lost (the pool replaces it, but this copy
    holds the lost one's handle), the model is loaded here and encodes from then on."""

    def __init__(self, actor: Any, path: str, device: str) -> None:
        self.actor, self.path, self.device = actor, path, device
        self._local: Any = None
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> Any:
        ray = ray_api()
        if self._local is None:
            try:
                return ray.get(self.actor.encode.remote(list(texts)))
            except ray.exceptions.RayActorError:
                with self._lock:
                    if self._local is None:
                        from ...retrieval.dense import Embedder

                        self._local = Embedder(Path(self.path), self.device)
        return self._local.encode(texts)
