"""Keep deepeval quiet, and keep its pytest plugin out of pytest runs that did not ask for it.

PYTEST_DONT_REWRITE: ``pytest-ambigqa.pth`` imports this module at interpreter start, before
pytest could rewrite it. It stands outside the ``pytest_ambigqa`` package so that nothing of
the package is imported before the user's own code (a checkout on ``sys.path``, coverage).

deepeval (our CondAmbigQA G-Eval judge, from the ``judge`` extra) registers a ``pytest11``
entry point, so every pytest process in an environment that has it imports all of deepeval
before any plugin of ours runs: 1-3 s, more where pytest must assertion-rewrite its 400
modules on every run (``PYTHONDONTWRITEBYTECODE``), and it writes ``./.deepeval`` and prints
into every session. deepeval's own maintainers are moving that entry point to an import-safe
module (confident-ai/deepeval#1419, #2836); until then this module does it for our users.

``pytest-ambigqa.pth`` runs :func:`install` at interpreter start: it waits, at the cost of one
comparison per import, for ``_pytest.config`` and wraps its plugin manager's entry-point
loading, so that the autoload skips ``deepeval`` as ``-p no:deepeval`` would, unless the run
asks for it: ``deepeval test run`` (which passes ``-p deepeval`` and sets ``DEEPEVAL``),
``-p deepeval`` (on the command line, in ``addopts`` or ``PYTEST_ADDOPTS``), ``PYTEST_PLUGINS``
or ``required_plugins`` naming it, or ``-p no:ambigqa``; a conftest's ``pytest_plugins``
still loads it later. Nothing else in any process changes; a failure here leaves pytest as
it was.
"""

from __future__ import annotations

import os
import sys

ENTRY_POINT = "deepeval"  # the name deepeval registers under pytest11, as in `-p no:deepeval`
OURS = "ambigqa"  # our own pytest11 name

#: deepeval must not phone home, read the user's .env, or write into the working directory.
QUIET = {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "DEEPEVAL_DISABLE_LEGACY_KEYFILE": "1",
}

_TRUE = {"1", "true", "t", "yes", "y", "on", "enable", "enabled"}  # deepeval's parse_bool


def quiet() -> None:
    """Set :data:`QUIET` where the user has not set a value (xdist workers inherit it)."""
    for name, value in QUIET.items():
        os.environ.setdefault(name, value)


def blocked_by_us(pluginmanager: object) -> bool:
    """Whether this gate kept deepeval's plugin out of the run that owns ``pluginmanager``."""
    return getattr(pluginmanager, "_ambigqa_blocked_deepeval", False)


def _names(specs: list[str] | tuple[str, ...]) -> set[str]:
    """Plugin or distribution names out of ``-p``-like and requirement-like specs."""
    import re  # here, not at interpreter start: importing re costs every Python process ~7 ms

    return {re.split(r"[\s<>=!~;\[.]", spec.strip(), maxsplit=1)[0].lower() for spec in specs if spec.strip()}


def _wanted(pluginmanager) -> bool:
    """Whether this run keeps deepeval's plugin: asked for it, decided already, or disabled us."""
    if pluginmanager.has_plugin(ENTRY_POINT) or pluginmanager.is_blocked(ENTRY_POINT):
        return True  # `-p deepeval` (deepeval test run) loaded it, or `-p no:deepeval` decided
    if pluginmanager.is_blocked(OURS):
        return True  # `-p no:ambigqa`: leave the environment exactly as it is
    if os.environ.get("DEEPEVAL", "").strip().strip("'\"").lower() in _TRUE:
        return True  # `deepeval test run` sets it
    if "deepeval" in _names(os.environ.get("PYTEST_PLUGINS", "").split(",")):
        return True
    config = pluginmanager.get_plugin("pytestconfig")
    return config is not None and "deepeval" in _names(config.getini("required_plugins"))


def _gate(load):
    def load_setuptools_entrypoints(self, group, name=None):
        blocked = False
        if group == "pytest11" and name is None:
            try:
                if not _wanted(self):
                    self.set_blocked(ENTRY_POINT)
                    blocked = self._ambigqa_blocked_deepeval = True
                    # pytest marked every module of every pytest11 distribution for assertion
                    # rewriting; deepeval is no plugin here, so a later import (our judge)
                    # need not pay for rewriting it.
                    must = getattr(getattr(self, "rewrite_hook", None), "_must_rewrite", None)
                    if isinstance(must, set):
                        must.discard(ENTRY_POINT)
            except Exception:  # noqa: BLE001 - never stand between pytest and its plugins
                pass
        try:
            return load(self, group, name)
        finally:
            if blocked:  # out of the autoload only: a conftest's `pytest_plugins` may still load it
                self.unblock(ENTRY_POINT)

    load_setuptools_entrypoints.__wrapped__ = load
    load_setuptools_entrypoints.__doc__ = load.__doc__
    return load_setuptools_entrypoints


def _patch(module) -> None:
    manager = getattr(module, "PytestPluginManager", None)
    load = getattr(manager, "load_setuptools_entrypoints", None)
    if manager is not None and load is not None and not hasattr(load, "__wrapped__"):
        manager.load_setuptools_entrypoints = _gate(load)


class _AfterPytestConfig:
    """A one-shot import watcher: patches ``_pytest.config`` once it has been executed."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "_pytest.config":
            return None
        self.remove()
        from importlib.util import find_spec

        spec = find_spec(fullname)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec

        class Patching:
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                module.__loader__ = module.__spec__.loader = loader
                loader.exec_module(module)
                try:
                    _patch(module)
                except Exception:  # noqa: BLE001 - never stand between pytest and its plugins
                    pass

        spec.loader = Patching()
        return spec

    def remove(self) -> None:
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass


def install() -> None:
    """Called by ``pytest-ambigqa.pth``: arm the gate in this interpreter, once."""
    if any(isinstance(finder, _AfterPytestConfig) for finder in sys.meta_path):
        return
    config = sys.modules.get("_pytest.config")
    if config is not None:
        _patch(config)
    else:
        sys.meta_path.insert(0, _AfterPytestConfig())
