"""``--ambig-system``: a built-in name, ``llm:<method>``, an http(s) URL or ``module:attr``,
loaded as a :class:`System`; a spec that cannot be loaded is a :class:`UsageError`."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
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
            f"{', '.join(BUILTIN)}"
        )
    module = _import(module_name, search_dir)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"--ambig-system: module '{module_name}' has no attribute '{attr}'")
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
        raise UsageError(f"--ambig-system: unknown reference method '{spec}' (valid: {valid})")
    if importlib.util.find_spec("openai") is None:
        raise UsageError(f"--ambig-system={spec} needs openai: pip install 'pytest-ambigqa[judge]'")
    client = llm() if llm is not None else None
    if client is None:
        raise UsageError(f"--ambig-system={spec}: name the model with --ambig-llm-model")
    return llm_system(method, client)


def _import(module_name: str, search_dir: Path):
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name.split(".")[0] or str(search_dir) in sys.path:
            raise _import_error(module_name, exc) from None
    except Exception as exc:
        raise _import_error(module_name, exc) from None
    # Like `python -m pytest`, also look in the directory pytest was started from.
    sys.path.insert(0, str(search_dir))
    try:
        return importlib.import_module(module_name)
    except Exception as exc:
        raise _import_error(module_name, exc) from None


def _import_error(module_name: str, exc: Exception) -> UsageError:
    return UsageError(f"--ambig-system: cannot import '{module_name}': {type(exc).__name__}: {exc}")
