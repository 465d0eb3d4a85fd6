"""Named extensions of one kind: suites, metrics, report writers, executors.

The built-in ones are registered where they are defined; a third-party plugin adds its own
through the hooks of :mod:`pytest_ambigqa.hookspecs` (lm-evaluation-harness keeps its
tasks and metrics in registries of this kind).
"""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(dict[str, T], Generic[T]):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self._sources: dict[str, str] = {}

    def register(self, name: str, value: T, source: str = "pytest-ambigqa") -> T:
        """Add ``value`` under ``name``. The same value again, or a new one from the same
        ``source`` (a plugin imported again, as pytester's inline runs do), replaces it;
        another source's is an error naming both."""
        known = self.get(name)
        if known is not None and known is not value and known != value and self._sources[name] != source:
            raise ValueError(
                f"{self.kind} '{name}' from {source} is already registered by {self._sources[name]}"
            )
        self[name] = value
        self._sources[name] = source
        return value

    def state(self) -> tuple[dict[str, T], dict[str, str]]:
        """What is registered now, for :meth:`restore`."""
        return dict(self), dict(self._sources)

    def restore(self, state: tuple[dict[str, T], dict[str, str]]) -> None:
        """Back to ``state``: what a run's plugins added goes when the run ends."""
        values, sources = state
        self.clear()
        self.update(values)
        self._sources = dict(sources)
