"""NLTK's Punkt and Porter modules, and rouge-score, imported without NLTK's package ``__init__``
(issue 44, target 5).

ROUGE-Lsum needs two modules of NLTK: Punkt (``nltk.tokenize.punkt``, the official scorers'
sentence splitter) and Porter (``nltk.stem.porter``, rouge-score's stemmer). Importing either
the usual way runs ``nltk/__init__.py``, which imports all of NLTK and with it SciPy,
scikit-learn and pandas where they are installed: about three quarters of a 1-item ASQA run,
none of it used. Here the packages ``nltk``, ``nltk.tokenize`` and ``nltk.stem`` are bare
(their ``__init__`` not run) while those modules and rouge-score (whose scorer module says
``import nltk`` and uses it only to split sentences itself, which ours never asks; it is given
the whole of NLTK, imported on first use, in case someone else's code does) are imported; every
``nltk`` module is then taken out of ``sys.modules`` again, so that a later ``import nltk``
anywhere in the process imports the whole of NLTK as ever. The modules are NLTK's own, as
installed: nothing is copied, and the scores are the same to the last bit
(``tests/test_conformance.py``).

All of this happens inside the import of ``nltk`` itself: any other thread that imports NLTK
meanwhile waits on that module's import lock, as it would for any import, and never sees the
bare packages. Anything that fails here is left to the ordinary imports that follow, which
meet it again and raise what they always raised (or, with an NLTK this does not fit, import
it whole).
"""

from __future__ import annotations

import importlib
import sys
import threading
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

_BARE = ("nltk", "nltk.tokenize", "nltk.stem")  # packages whose __init__ is not run
_NEEDED = ("nltk.tokenize.punkt", "nltk.stem.porter", "rouge_score.tokenizers", "rouge_score.rouge_scorer")


class _Imported(ImportError):
    """Raised at the end of the bare ``nltk``'s import, so that Python takes it out of
    ``sys.modules`` (the modules imported under it are the finder's)."""


class _Whole(ModuleType):
    """``nltk`` for rouge-score's scorer module: the whole of NLTK, imported on first use."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("nltk"), name)


class _BarePackages:
    """A meta path finder and loader for :data:`_BARE`, for one thread's imports only."""

    def __init__(self) -> None:
        self._thread = threading.get_ident()
        self.parts: dict[str, ModuleType] = {}

    def find_spec(self, name: str, path: Any, target: Any = None) -> ModuleSpec | None:
        if name not in _BARE or threading.get_ident() != self._thread:
            return None
        found = PathFinder.find_spec(name, path)
        if found is None or not found.submodule_search_locations:
            return None
        spec = ModuleSpec(name, cast("Loader", self), origin=found.origin, is_package=True)
        spec.submodule_search_locations = list(found.submodule_search_locations)
        return spec

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        if module.__name__ != "nltk":
            return
        before = set(sys.modules)
        try:
            self.parts = {name: importlib.import_module(name) for name in _NEEDED}
            setattr(self.parts["rouge_score.rouge_scorer"], "nltk", _Whole("nltk"))  # noqa: B010 - not typed
        finally:  # while this thread holds nltk's import lock: no other sees them
            for name in set(sys.modules) - before:
                if name.startswith("nltk."):
                    del sys.modules[name]
        raise _Imported


_LOCK = threading.Lock()
_PARTS: dict[str, ModuleType] = {}  # like sys.modules, for the process: imported once


def parts() -> dict[str, ModuleType]:
    """The modules of :data:`_NEEDED` by name, imported without NLTK's package ``__init__``
    unless NLTK is imported already (or this does not work: then as ever, raising as ever)."""
    with _LOCK:
        if not _PARTS:
            _PARTS.update(_imported())
        return _PARTS


def _imported() -> dict[str, ModuleType]:
    if "nltk" not in sys.modules:
        finder = _BarePackages()
        sys.meta_path.insert(0, finder)
        try:
            importlib.import_module("nltk")
        except Exception:  # noqa: BLE001 - _Imported, or a failure the ordinary imports meet again
            pass
        finally:
            sys.meta_path.remove(finder)
        if len(finder.parts) == len(_NEEDED):
            return finder.parts
    return {name: importlib.import_module(name) for name in _NEEDED}
