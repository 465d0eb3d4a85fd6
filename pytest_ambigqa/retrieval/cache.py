"""Indexes on disk: one directory per key, built once per machine under a file lock.

The key covers the corpus, the retriever's settings and the model's fingerprint, so a
changed input never reads a stale index. Every file's sha256 is recorded in a manifest
and checked before loading; a corrupt or half-written index is rebuilt with a warning.
Under xdist the first worker builds while the others wait on the lock, then load.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from ..errors import AmbigQAWarning
from ..suites.records import file_sha256

T = TypeVar("T")
MANIFEST = "manifest.json"
BUILD_LOG = "builds.log"


def fingerprint(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock (Windows): builds may race, results stay correct
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class IndexCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def get(self, name: str, key: str, build: Callable[[Path], None], load: Callable[[Path], T]) -> T:
        """Load index ``name`` for ``key``, building it first if it is missing or corrupt."""
        self.root.mkdir(parents=True, exist_ok=True)
        directory = self.root / f"{name}-{key[:24]}"
        with _locked(self.root / f"{directory.name}.lock"):
            problem = self._check(directory)
            if problem is None:
                try:
                    return load(directory)
                except Exception as exc:  # noqa: BLE001 - an unreadable index is rebuilt, never fatal
                    problem = f"could not be loaded ({type(exc).__name__}: {exc})"
            if problem != "missing":
                warnings.warn(AmbigQAWarning(f"index {directory} {problem}; rebuilding it"), stacklevel=2)
            self._build(directory, build)
            return load(directory)

    def _check(self, directory: Path) -> str | None:
        manifest = directory / MANIFEST
        if not directory.exists():
            return "missing"
        try:
            files = json.loads(manifest.read_text(encoding="utf-8"))["files"]
        except (OSError, ValueError, KeyError, TypeError):
            return "has no valid manifest"
        for name, digest in files.items():
            path = directory / name
            if not path.is_file() or file_sha256(path) != digest:
                return f"is corrupt ({name} does not match its checksum)"
        return None

    def _build(self, directory: Path, build: Callable[[Path], None]) -> None:
        started = time.perf_counter()
        tmp = self.root / f".{directory.name}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            build(tmp)
            files = {p.name: file_sha256(p) for p in sorted(tmp.iterdir()) if p.is_file()}
            (tmp / MANIFEST).write_text(json.dumps({"files": files}, indent=1), encoding="utf-8")
            shutil.rmtree(directory, ignore_errors=True)
            tmp.replace(directory)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        seconds = time.perf_counter() - started
        with (self.root / BUILD_LOG).open("a", encoding="utf-8") as log:
            log.write(
                json.dumps({"index": directory.name, "pid": os.getpid(), "seconds": round(seconds, 3)}) + "\n"
            )
