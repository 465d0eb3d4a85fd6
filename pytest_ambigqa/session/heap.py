"""The run's heap and Python's cycle collector (issue 44).

The items, their tests and the modules outlive the run, and so do its results and reports: the
collector's full passes walked them again and again, and pytest's own at the end walk the whole
heap (they look for objects whose finalizers raise: its unraisable-exception plugin). Frozen
(``gc.freeze``), objects are out of those walks:

- from the end of collection to the runner's close (the session's results and reports are
  made after, and stay collectable);
- from the end of unconfigure, after pytest's own collection there has seen the whole heap
  (every plugin's garbage, ours included, finalised and reported as ever), to the end of
  pytest's cleanups, whose last collection then walks only what is made after.

The cleanup that unfreezes is registered at configure, before pytest's own (this plugin
configures first), so it runs after them: a process that goes on (pytester, a script calling
``pytest.main``) frees the run as before, and the interpreter's collections at exit finalise
what is left as they always did. It unfreezes only when this run froze.

What the session leaves is walked again by the interpreter's collections at exit: every
plugin stays reachable until then (pluggy keeps the calls of ``pytest_plugin_registered``,
a historic hook), and with it pytest's JUnit writer, which keeps each test's XML elements
after writing its file. The run's properties make them 14 an item with every ASQA metric,
a quarter of the objects a 5,000-item run leaves at exit: they are let go once the file is
written.
"""

from __future__ import annotations

import gc
from collections.abc import Generator

import pytest


class Heap:
    def __init__(self, config: pytest.Config) -> None:
        self._frozen = False
        config.add_cleanup(self.thaw)

    def freeze(self) -> None:
        gc.freeze()
        self._frozen = True

    def thaw(self) -> None:
        if self._frozen:
            self._frozen = False
            gc.unfreeze()

    @pytest.hookimpl(trylast=True)  # after pytest's own collection at unconfigure
    def pytest_unconfigure(self) -> None:
        self.freeze()

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None]:
        try:
            return (yield)
        finally:  # after every implementation, the JUnit writer's included
            _let_go_of_junit(session.config)


def _let_go_of_junit(config: pytest.Config) -> None:
    """Drop the elements pytest's JUnit writer (``--junitxml``) keeps once its file is
    written (its reporters: nothing reads them after), where its pytest has them as known."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # another pytest: left as it is
        return
    xml = config.stash.get(xml_key, None)
    for name in ("node_reporters", "node_reporters_ordered"):
        kept = getattr(xml, name, None)
        if isinstance(kept, (dict, list)):
            kept.clear()
