"""``--ambig-system``: a built-in name, ``llm:<method>``, an http(s) URL or ``module:attr``,
loaded as a :class:`System`; a spec that cannot be loaded is a :class:`UsageError`, which
suggests the closest names when the one given looks misspelt (a built-in, a method, a module
in the directory pytest was started from or on ``sys.path``, an attribute of the module)."""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import UsageError
from .call import System, from_object

BUILTIN = {
    "oracle": "pytest_ambigqa.baselines:oracle",
    "lexical": "pytest_ambigqa.baselines:lexical",
    "retrieval": "pytest_ambigqa.baselines:retrieval",
}


def load_system(
    spec: str, search_dir: Path, llm: Callable[[], Any] | None = None, construct: bool = True
) -> System:
    """Resolve ``--ambig-system``: a built-in name, ``llm:<method>`` (a reference method over
    the client ``llm()`` makes), an http(s) URL, or ``module:attr``; ``construct`` False reads
    a class without instantiating it (``from_object``)."""
    spec = spec.strip()
    if spec.lower().startswith("llm:"):
        return _llm_system(spec, llm)
    target = BUILTIN.get(spec.lower(), spec)
    if target.startswith(("http://", "https://")):
        from .http import http_system  # urllib and http.client: for an endpoint only

        return http_system(target)
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(
            f"--ambig-system: '{spec}' is not module:attr, an http(s) URL, llm:<method>, or one of "
            f"{', '.join(BUILTIN)}{did_you_mean(spec.lower(), BUILTIN)}"
        )
    module = _import(module_name, search_dir)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(
                f"--ambig-system: module '{module_name}' has no attribute '{attr}'"
                f"{did_you_mean(part, _callables(obj))}"
            )
        obj = getattr(obj, part)
    label = spec if spec.lower() not in BUILTIN else f"{spec.lower()} baseline ({target})"
    try:
        return from_object(obj, label, construct)
    except TypeError as exc:
        raise UsageError(f"--ambig-system: {exc}") from None


def _llm_system(spec: str, llm: Callable[[], Any] | None) -> System:
    from ..baselines.llm import METHODS, llm_system

    method = spec.partition(":")[2].strip().lower()
    if method not in METHODS:
        valid = ", ".join(f"llm:{m}" for m in METHODS)
        close = did_you_mean(method, METHODS, prefix="llm:")
        raise UsageError(f"--ambig-system: unknown reference method '{spec}'{close} (valid: {valid})")
    if importlib.util.find_spec("openai") is None:
        raise UsageError(f"--ambig-system={spec} needs openai: pip install 'pytest-ambigqa[judge]'")
    client = llm() if llm is not None else None
    if client is None:
        raise UsageError(f"--ambig-system={spec}: name the model with --ambig-llm-model")
    return llm_system(method, client)


def _import(module_name: str, search_dir: Path) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name.split(".")[0] or str(search_dir) in sys.path:
            raise _import_error(module_name, exc, search_dir) from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed to import: one line saying why
        raise _import_error(module_name, exc) from None
    # Like `python -m pytest`, also look in the directory pytest was started from.
    sys.path.insert(0, str(search_dir))
    try:
        return importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - the user's module failed to import: one line saying why
        raise _import_error(module_name, exc, search_dir) from None


def _import_error(module_name: str, exc: Exception, search_dir: Path | None = None) -> UsageError:
    close = ""
    if isinstance(exc, ModuleNotFoundError) and exc.name and module_name.startswith(exc.name):
        close = _close_modules(exc.name, search_dir)  # the module asked for, not one it imports
    return UsageError(f"--ambig-system: cannot import '{module_name}': {type(exc).__name__}: {exc}{close}")


def did_you_mean(name: str, candidates: Any, prefix: str = "") -> str:
    """`` (did you mean 'x'?)`` or `` (did you mean 'x' or 'y'?)`` with the candidates closest
    to ``name`` (difflib's), or "" when none is close."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=3, cutoff=0.6)
    if not close:
        return ""
    return f" (did you mean {' or '.join(repr(prefix + c) for c in close)}?)"


def _callables(obj: Any) -> list[str]:
    """The public names of ``obj`` that a system could be: callables (classes included)."""
    names = []
    for name in dir(obj):
        if name.startswith("_"):
            continue
        try:
            if callable(getattr(obj, name)):
                names.append(name)
        except Exception:  # noqa: BLE001 - an attribute that raises is no candidate
            continue
    return names


def _close_modules(missing: str, search_dir: Path | None) -> str:
    """The names closest to the module ``missing`` (dotted: the missing part of a package): a
    package's submodules, else the top-level modules of the search directory and ``sys.path``."""
    parent, _, last = missing.rpartition(".")
    if parent:
        package = sys.modules.get(parent)
        path = getattr(package, "__path__", None)
        found = [m.name for m in pkgutil.iter_modules(path)] if path is not None else []
        return did_you_mean(last, found, prefix=f"{parent}.")
    dirs = [str(search_dir)] if search_dir is not None else []
    found = [m.name for m in pkgutil.iter_modules([*dirs, *(p for p in sys.path if p not in dirs)])]
    return did_you_mean(last, [*found, *sys.builtin_module_names])
