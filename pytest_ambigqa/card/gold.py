"""The items of a scorecard read back from their data files, for report.html's drill-down
when the scorecard came from disk (``merge``, ``compare``) rather than from a run.

``scorecard.json`` holds results, not the benchmark (that is not ours to copy around); the
question and the gold interpretations are read again from the file each suite names, and
only when its sha256 is still the run's. Otherwise the drill-down says why they are absent.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DataError
from ..protocols import protocol_of
from ..schema import AmbigItem
from ..suites import SUITES, LoadOptions, loader_options
from ..suites.sources import HubRef, is_hub, parse_hub
from .scorecard import Scorecard


def reload(card: Scorecard) -> tuple[dict[str, AmbigItem], dict[str, str]]:
    """(items by result key, why a suite's items are absent)."""
    found: dict[str, AmbigItem] = {}
    absent: dict[str, str] = {}
    saved = {key: card.config.get(key) for key in loader_options()}  # each suite's loader options
    options = LoadOptions(
        {key: value for key, value in saved.items() if value},  # absent or empty: the default
        offline=True,  # an hf:// source is read again from the cache, never downloaded for a report
    )
    for suite in card.suites:
        if suite.name not in SUITES:
            absent[suite.name] = f"no suite '{suite.name}' is registered here"
            continue
        local = None if suite.is_sample else Path(suite.source)
        path: Path | HubRef | None = local
        if is_hub(suite.source):  # at the commit the run read, from the Hub's cache
            path = parse_hub(suite.source)
        elif local is not None and not local.is_file():
            absent[suite.name] = f"the data file {suite.source} is not here"
            continue
        try:
            loaded = SUITES[suite.name].load(path, options)
        except (DataError, OSError, ValueError) as exc:
            absent[suite.name] = f"the data file {suite.source} could not be read again: {exc}"
            continue
        if loaded.sha256 != suite.sha256:
            absent[suite.name] = f"the data file {suite.source} has changed since the run"
            continue
        items = {i.key: i for i in loaded.items}
        way = protocol_of(suite.protocol.name)
        for result in card.results:
            if result.suite != suite.name:
                continue
            item = way.gold_item(result, items)
            if item is not None:
                found[result.key] = item
    return found, absent
