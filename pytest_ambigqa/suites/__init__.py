"""The benchmark suites, by the names ``--ambig-suite`` accepts: the built-in ones, and
those plugins add (``pytest_ambigqa_suites``)."""

from __future__ import annotations

from ..registry import Registry
from .asqa import Asqa
from .base import LoadedSuite, LoaderOption, LoadOptions, Scorers, Setup, Suite, shard, stratified_sample
from .condambigqa import CondAmbigQA
from .march import March

SUITES: Registry[Suite] = Registry("suite")
for _suite in (March(), CondAmbigQA(), Asqa()):
    SUITES.register(_suite.name, _suite)


def loader_options() -> dict[str, LoaderOption]:
    """Every registered suite's loader options (``Suite.loader_options``) by key, each once:
    what a run reads and its scorecard's config records, as it does every suite's setting."""
    found: dict[str, LoaderOption] = {}
    for suite in SUITES.values():
        for option in suite.loader_options:
            found.setdefault(option.key, option)
    return found


def saved_settings(config: dict) -> dict[str, str]:
    """The settings a saved run's suites ran (its ``config``), as :class:`Scorers` takes
    them; a scorecard before ``settings`` named the built-in suites' two alone."""
    saved = config.get("settings")
    if isinstance(saved, dict):
        return {str(k): str(v) for k, v in saved.items()}
    legacy = {"condambigqa": config.get("condambigqa_setting"), "march": config.get("march_setting")}
    return {k: v for k, v in legacy.items() if isinstance(v, str)}


__all__ = [
    "SUITES",
    "LoadOptions",
    "LoaderOption",
    "LoadedSuite",
    "Setup",
    "Scorers",
    "Suite",
    "loader_options",
    "saved_settings",
    "shard",
    "stratified_sample",
]
