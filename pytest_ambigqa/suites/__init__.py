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

__all__ = [
    "SUITES",
    "LoadOptions",
    "LoadedSuite",
    "Setup",
    "Scorers",
    "Suite",
    "shard",
    "stratified_sample",
]
