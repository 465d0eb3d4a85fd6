"""Numbers from the papers (``baselines/published.toml``), to print beside a user's own."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources
from typing import Any


@lru_cache(maxsize=1)
def published() -> dict[str, list[dict[str, Any]]]:
    text = (resources.files("pytest_ambigqa.baselines") / "published.toml").read_text("utf-8")
    return tomllib.loads(text)


def rows(suite: str, setting: str | None = None) -> list[dict[str, Any]]:
    """Published rows of a suite, optionally only one ``setting`` (e.g. "all", "semantic")."""
    return [r for r in published().get(suite, []) if setting is None or r.get("setting") == setting]
