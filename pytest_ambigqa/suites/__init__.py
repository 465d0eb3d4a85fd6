"""The benchmark suites, by the names ``--ambig-suite`` accepts."""

from __future__ import annotations

from .asqa import Asqa
from .base import LoadedSuite, LoadOptions, Protocol, Scorers, Suite, shard, stratified_sample
from .condambigqa import CondAmbigQA
from .march import March
from .records import DataError

SUITES: dict[str, Suite] = {s.name: s for s in (March(), CondAmbigQA(), Asqa())}

__all__ = [
    "SUITES",
    "DataError",
    "LoadOptions",
    "LoadedSuite",
    "Protocol",
    "Scorers",
    "Suite",
    "shard",
    "stratified_sample",
]
