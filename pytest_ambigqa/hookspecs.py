"""Hooks through which another pytest plugin extends pytest-ambigqa without editing it.

Implement them in a plugin module or a ``conftest.py``; they are called once per run that
selects a suite, before its options are read, so ``--ambig-suite``, ``--ambig-metrics``,
``--ambig-executor`` and the gates accept what they add. ``pytest-ambigqa merge -p MODULE`` calls them too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from .executors import Executor
    from .metrics import MetricSpec
    from .registry import Registry
    from .report.writers import Writer
    from .suites import Suite


@pytest.hookspec
def pytest_ambigqa_suites() -> Sequence[Suite]:  # type: ignore[empty-body]  # pluggy calls the implementations
    """Suites to add (subclasses of :class:`pytest_ambigqa.suites.Suite`), by their ``name``."""


@pytest.hookspec
def pytest_ambigqa_metrics() -> Sequence[MetricSpec]:  # type: ignore[empty-body]  # pluggy calls the implementations
    """Metrics to add (:class:`pytest_ambigqa.metrics.MetricSpec`), which a suite can list."""


@pytest.hookspec
def pytest_ambigqa_writers() -> Sequence[Writer]:  # type: ignore[empty-body]  # pluggy calls the implementations
    """Report writers to add (:class:`pytest_ambigqa.report.writers.Writer`): each writes one
    file into ``--ambig-report``'s directory."""


@pytest.hookspec
def pytest_ambigqa_executors() -> Sequence[type[Executor]]:  # type: ignore[empty-body]  # pluggy calls the implementations
    """Executors to add (subclasses of :class:`pytest_ambigqa.executors.Executor`), by their
    ``name``: ``--ambig-executor=NAME`` runs the system's calls there."""


def register_extensions(hook: Any) -> Callable[[], None]:
    """What plugins add through these hooks, into the registries, each under the plugin's
    name (a name another plugin already holds is a ValueError naming both). Returns what
    takes it out again, when the run ends."""
    from .executors import EXECUTORS
    from .metrics import METRICS
    from .report.writers import WRITERS
    from .suites import SUITES

    registries: tuple[tuple[Any, Registry[Any]], ...] = (
        (hook.pytest_ambigqa_metrics, METRICS),
        (hook.pytest_ambigqa_suites, SUITES),
        (hook.pytest_ambigqa_writers, WRITERS),
        (hook.pytest_ambigqa_executors, EXECUTORS),
    )
    before = [(registry, registry.state()) for _, registry in registries]

    def restore() -> None:
        for registry, state in before:
            registry.restore(state)

    try:
        for caller, registry in registries:
            for impl in caller.get_hookimpls():
                for value in impl.function() or ():
                    registry.register(value.name, value, impl.plugin_name)
    except BaseException:
        restore()
        raise
    return restore
