"""The benchmark suites, by the names ``--ambig-suite`` accepts: the built-in ones, and
those plugins add (``pytest_ambigqa_suites``)."""

from __future__ import annotations

from ..registry import Registry
from .asqa import Asqa
from .base import LoadedSuite, LoadOptions, Scorers, Setup, Suite, shard, stratified_sample
from .condambigqa import CondAmbigQA
from .march import March

SUITES: Registry[Suite] = Registry("suite")
for _suite in (March(), CondAmbigQA(), Asqa()):
    SUITES.register(_suite.name, _suite)


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
    "LoadedSuite",
    "Setup",
    "Scorers",
    "Suite",
    "saved_settings",
    "shard",
    "stratified_sample",
]
