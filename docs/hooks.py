"""MkDocs hooks (mkdocs.yml ``hooks:``): the home page (README.md), the reference pages, the
changelog and the contributing guide are made at build time by ``docs/reference.py``, never
committed as .md."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.livereload import LiveReloadServer
from mkdocs.structure.files import File, Files

HERE = Path(__file__).resolve().parent


def _reference() -> ModuleType:
    """docs/reference.py, imported by its path (docs/ is no package). The pages document the
    checkout they are built from, whatever copy of the package is installed: the checkout
    comes first on sys.path (MkDocs restores sys.path after importing this module, so here)."""
    sys.path[:] = [str(HERE.parent), *(p for p in sys.path if p != str(HERE.parent))]
    spec = importlib.util.spec_from_file_location("ambigqa_docs_reference", HERE / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and the like look their module up
    spec.loader.exec_module(module)
    return module


def on_files(files: Files, config: MkDocsConfig) -> Files:
    reference = _reference()
    for uri, make in reference.PAGES.items():
        existing = files.get_file_from_path(uri)
        if existing is not None:  # a page by this name on disk is replaced: the code is the source
            files.remove(existing)
        files.append(File.generated(config, uri, content=make()))
    return files


def on_serve(server: LiveReloadServer, config: MkDocsConfig, builder: Callable[..., Any]) -> LiveReloadServer:
    """``mkdocs serve`` rebuilds when what the generated pages are made from changes."""
    root = HERE.parent
    for path in ("pytest_ambigqa", "suites", "README.md", "CHANGELOG.md", "CONTRIBUTING.md"):
        if (root / path).exists():
            server.watch(str(root / path))
    return server
