"""The wiring of a session that selects a suite, as pytest wires its own features: one
object per job, registered at ``pytest_configure`` and kept in ``config.stash``.

- :class:`~.run.Run` (every process): the run's options, items, system, models, corpus;
- :class:`~.collection.Collection` (every process): the items as tests;
- :class:`~.runner.Runner` (every process): asks the systems, scores, reports per test;
- :class:`~.scorecard.ScorecardPlugin` (the controller only): results, scorecard, gates, reports;
- :class:`~.progress.Progress` (the controller only, unless ``--ambig-progress=off``): the live
  status line;
- :class:`~.tracing.Tracing` (every process, with ``--ambig-otel``): the run's trace;
- :class:`~.tracking.Tracking` (the controller only, with ``--ambig-mlflow``): the run logged to MLflow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .. import telemetry
from ..errors import UsageError
from ..hookspecs import register_extensions
from ..output import for_terminal
from ..report import mlflow_target
from .collection import ASK_KEY, Collection
from .config import read_run_config, refuse_without_suite
from .preflight import preflight
from .progress import Progress, mode
from .run import RUN_KEY, Run
from .runner import RUNNER_KEY, Runner
from .scorecard import ScorecardPlugin

_PLUGINS: pytest.StashKey[list[tuple[str, Any]]] = pytest.StashKey()
_UNREGISTER: pytest.StashKey[Callable[[], None]] = pytest.StashKey()


def start(config: pytest.Config) -> None:
    """Read the run's configuration and register its plugins; every usage error it raises is
    one line fit for a terminal (``output.for_terminal``: a data file's id or a server's reply
    in it may hold an escape sequence)."""
    try:
        _start(config)
    except pytest.UsageError as exc:
        shown = for_terminal(str(exc))
        if shown == str(exc):
            raise
        raise pytest.UsageError(shown) from None


def _start(config: pytest.Config) -> None:
    try:
        config.stash[_UNREGISTER] = register_extensions(config.hook)
    except ValueError as exc:
        raise pytest.UsageError(f"ambigqa: {exc}") from None
    try:
        cfg = read_run_config(config)
        progress = mode(config)
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    if cfg is None:
        return
    try:
        traced = telemetry.wanted(config)
        tracked = mlflow_target.wanted(config)
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    run = Run(config, cfg)
    _checked(run, preflight)  # every model server answers and takes the key, before any item
    if traced:
        _checked(run, _traced)
    runner = Runner(run)
    config.stash[RUN_KEY] = run
    config.stash[RUNNER_KEY] = runner
    config.stash[ASK_KEY] = runner.verdict  # a builtin test's setup asks through it
    plugins: list[tuple[str, Any]] = [("ambigqa-collection", Collection(run)), ("ambigqa-runner", runner)]
    if traced:
        from .tracing import Tracing

        plugins.append(("ambigqa-tracing", Tracing(run)))
    if not run.in_worker:
        scorecard = ScorecardPlugin(run)
        plugins.append(("ambigqa-scorecard", scorecard))
        if progress != "off":
            plugins.append(("ambigqa-progress", Progress(run, scorecard, forced=progress == "on")))
        if tracked is not None:
            from .tracking import Tracking

            plugins.append(("ambigqa-tracking", Tracking(run, tracked)))
    for name, plugin in plugins:
        config.pluginmanager.register(plugin, name)
    config.stash[_PLUGINS] = plugins
    # Not one of the plugins ``stop`` unregisters: its own unconfigure comes after stop's.
    config.pluginmanager.register(runner.heap, "ambigqa-heap")


def _traced(run: Run) -> None:
    """The run's tracer (``--ambig-otel``), before the runner takes the run's context."""
    attributes = {
        "ambigqa.suites": list(run.cfg.suites),
        "ambigqa.system": run.default_system.label,
        "ambigqa.protocol": run.cfg.protocol,
        "ambigqa.items": len(run.items),
    }
    try:
        run.tracer = telemetry.open_tracer(run.config, list(run.cfg.suites), run.run_id, attributes)
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None


def _checked(run: Run, check: Callable[[Run], None]) -> None:
    """``check(run)``; when it refuses the run, the run is closed first (its temporary cache)."""
    try:
        check(run)
    except BaseException:
        run.close()
        raise


def refuse_idle_options(config: pytest.Config) -> None:
    """An idle run (no suite) given ambigqa options on its command line: a usage error."""
    try:
        refuse_without_suite(config)
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None


def stop(config: pytest.Config) -> None:
    unregister = config.stash.get(_UNREGISTER, None)
    if unregister is not None:  # the registries outlive the run (pytester runs many in one process)
        del config.stash[_UNREGISTER]
        unregister()
    plugins = config.stash.get(_PLUGINS, None)
    if plugins is None:
        return
    del config.stash[_PLUGINS]
    for _, plugin in reversed(plugins):
        config.pluginmanager.unregister(plugin)
        if isinstance(plugin, ScorecardPlugin):
            plugin.close()
    config.stash[RUNNER_KEY].close()
    config.stash[RUN_KEY].tracer.close()  # when the session did not finish (its spans still go)
    config.stash[RUN_KEY].close()
    del config.stash[RUNNER_KEY]
    del config.stash[RUN_KEY]
