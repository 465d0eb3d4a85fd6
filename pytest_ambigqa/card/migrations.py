"""Older ``scorecard.json`` files read: each version's file brought to the next by one
explicit function, in turn, up to ``card/model.py``'s :data:`SCHEMA_VERSION`, before anything
checks or reads it (``card/saved.py``, ``Scorecard.from_json``). A newer version's file is
refused in one line. Apart from the records, which the answer store's readback imports too:
a migration may judge a record with the rest of the card's code."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from ..suites.base import OPEN_RETRIEVAL
from . import published
from .model import SCHEMA_VERSION


def migrate_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 as the last of its writers left it, older cards included: a suite written
    before its data was judged against the papers' (no ``protocol.unlike``) is judged now,
    from what the card records, as version 2 always writes it."""
    if not isinstance(data.get("suites"), list):
        return {**data, "schema_version": 2}  # for the check to refuse
    suites = []
    for suite in data["suites"]:
        protocol = suite.get("protocol") if isinstance(suite, dict) else None
        if isinstance(suite, dict) and (protocol is None or "unlike" not in protocol):
            total = suite.get("items_in_file", suite.get("items"))
            ran = suite.get("items")
            why = None
            if isinstance(total, int) and isinstance(ran, int):
                why = published.unlike(
                    str(suite.get("title", suite.get("name"))), suite.get("is_sample", False),
                    suite.get("release"), min(ran, total), total, sampled=False,
                )  # fmt: skip
            suite = {**suite, "protocol": {**(protocol or asdict(OPEN_RETRIEVAL)), "unlike": why}}
        suites.append(suite)
    return {**data, "suites": suites, "schema_version": 2}


# From version N to N + 1: each step one function, applied in turn.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: migrate_1_to_2}


def migrate(data: Any) -> Any:
    """A scorecard's JSON brought to :data:`SCHEMA_VERSION` (the same object where it is
    already there); ValueError where it says no version this one reads. Anything not a
    scorecard is handed on as it is, for the check to refuse."""
    if not isinstance(data, dict):
        return data
    version = data.get("schema_version")
    if version == SCHEMA_VERSION:
        return data
    if type(version) is not int or version not in MIGRATIONS:
        newer = type(version) is int and version > SCHEMA_VERSION
        why = "written by a newer pytest-ambigqa" if newer else f"not a version 1 to {SCHEMA_VERSION}"
        raise ValueError(f"schema_version {version!r}: {why}")
    while version != SCHEMA_VERSION:
        data = MIGRATIONS[version](data)
        version = data["schema_version"]
    return data
