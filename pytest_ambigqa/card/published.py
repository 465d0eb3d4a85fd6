"""Numbers from the papers (each suite's ``suites/<name>/published.toml``), and which of them a run may be
compared with: only rows produced under the run's own protocol, from a like-for-like source.
"""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Any

from ..protocols import protocol_of
from ..suites import SUITES, Setup


@cache
def _published(suite: str) -> dict[str, Any]:
    known = SUITES.get(suite)
    path = known.published_path() if known is not None else None
    return tomllib.loads(path.read_text("utf-8")) if path is not None and path.is_file() else {}


def source(suite: str, name: str) -> dict[str, Any]:
    """What a source's rows were produced under: protocol, items, note, like_for_like."""
    return _published(suite).get("sources", {}).get(name, {})


def rows(suite: str, setting: str | None = None) -> list[dict[str, Any]]:
    """Published rows of a suite, each with its ``protocol``; optionally one ``setting``
    (the slice: "all", an ambiguity type, ASQA's "dev")."""
    out = []
    for row in _published(suite).get("rows", []):
        if setting is None or row.get("setting") == setting:
            out.append({"protocol": source(suite, row["source"]).get("protocol"), **row})
    return out


def compare(suite: str, protocol: Setup) -> list[dict[str, Any]]:
    """Every published row of ``suite``, marked ``comparable`` or not, with the ``reason``;
    ``same_protocol`` rows are the ones a reader would put beside this run."""
    marked = []
    for row in rows(suite):
        if protocol_of(row["protocol"]).name != protocol_of(protocol.name).name:
            continue  # another protocol's rows (episodes, single answers) are not even n/c here
        meta = source(suite, row["source"])
        if protocol.upper_bound:
            reason = f"this run is an upper bound: {protocol.upper_bound}"
        elif row["protocol"] != protocol.published_as:
            reason = f"published under the {row['protocol']} protocol; this run: {protocol.name}"
        elif not meta.get("like_for_like", True):
            reason = meta.get("note", "the source says its numbers are not like for like")
        elif protocol.unlike is not None:
            reason = protocol.unlike
        elif protocol.easier is not None:
            reason = protocol.easier
        else:
            reason = None
        same = row["protocol"] == protocol.published_as
        marked.append({**row, "same_protocol": same, "comparable": reason is None, "reason": reason})
    return marked


def unlike(
    title: str, is_sample: bool, release: str | None, ran: int, total: int, sampled: bool
) -> str | None:
    """Why a run's data is not the data the papers' rows were computed on (None: it is): a
    published row is comparable only for the same split of a known release, by revision or
    checksum, whole or as a sample the run declares random (``--ambig-sample``, whose
    estimates are weighted back to the split, with their intervals)."""
    if is_sample:
        return f"the bundled sample of {total} items written for this project, not the benchmark's"
    if release is None:
        return (
            f"data not identified as a published release of {title}: load it from its Hub source "
            "to compare (`pytest-ambigqa data list`)"
        )
    if ran < total and not sampled:
        return f"{ran} of the {total} items of {release} (-k, --ambig-limit or a shard), not the whole split"
    return None


def protocol_rows(protocol: str) -> list[dict[str, Any]]:
    """Every suite's rows published under ``protocol``, each with its source's note: a
    protocol's own rows (not a suite's setting) come from other datasets, context for any suite."""
    return [
        {**row, "note": source(suite, row["source"]).get("note", "")}
        for suite in SUITES
        for row in rows(suite)
        if row["protocol"] == protocol
    ]
