"""The end of a run, in one place for the plugin and for ``pytest-ambigqa merge``: the
comparison with a baseline run, the gates, then every registered writer."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from ..card import compare, gates, storage
from ..card.scorecard import Check, Scorecard
from ..output import excerpt
from .writers import EXPORTS, WRITERS, Export


def gated(
    card: Scorecard,
    fail_under: Sequence[gates.Threshold],
    gate: str,
    max_error_rate: float | None,
    max_unscored_rate: float | None,
    deferred: str | None = None,
    baseline: Scorecard | None = None,
    margins: Sequence[compare.Margin] = (),
    baseline_path: Path | None = None,
    item_min: Sequence[gates.Threshold] = (),
) -> Scorecard:
    """The scorecard with its comparison with ``baseline``, every gate evaluated and its
    failures (none when the gates are ``deferred``: why)."""
    comparison = None
    if baseline is not None:
        comparison = compare.compare(baseline, card, int(card.config.get("seed") or 0), baseline_path)
    checks: list[Check] = []
    shortfalls: list[str] = []
    if not deferred:
        checks, shortfalls = gates.evaluate(
            card.suites, fail_under, gate, max_error_rate, max_unscored_rate, item_min, card.results
        )
        if comparison is not None:
            worse = compare.worse(comparison, margins)
            checks += worse
            shortfalls += [c.failure for c in worse if c.failure]
    return dataclasses.replace(
        card, shortfalls=shortfalls, checks=checks, gates_deferred=deferred, comparison=comparison
    )


def write_reports(
    card: Scorecard, directory: storage.Location, duration: float | None = None, exports: Sequence[str] = ()
) -> list[str]:
    """Every registered writer's file in ``directory`` (a path, or an object store's URL:
    ``card/storage.py``), and each of ``exports`` (``--ambig-export``) in its subdirectory;
    one line per file not written.

    A writer that fails leaves its own file unwritten and every other file as it would be.
    """
    problems = []
    try:
        storage.prepare(directory)
    except OSError as exc:
        return [f"could not write the scorecard to {directory}: {exc}"]
    for writer in list(WRITERS.values()):
        try:
            storage.write(directory, writer.filename, writer.render(card, duration))
        except OSError as exc:
            problems.append(f"could not write the scorecard to {storage.shown(directory)}: {exc}")
        except Exception as exc:  # noqa: BLE001 - a plugin's writer: its file only
            problems.append(
                f"could not write {writer.filename} ({writer.name} writer): {type(exc).__name__}: "
                f"{excerpt(exc, 200)}"
            )
    for name in exports:
        problem = export(EXPORTS[name], card, storage.joined(directory, EXPORTS[name].subdirectory))
        problems += [problem] if problem else []
    return list(dict.fromkeys(problems))  # an unwritable directory: said once


def export(chosen: Export, card: Scorecard, directory: storage.Location) -> str | None:
    """``chosen``'s files of ``card`` in ``directory``; the line saying why not, if they are not."""
    try:
        chosen.write(card, directory)
    except ImportError as exc:
        return f"no {chosen.name} export: {chosen.absent() or exc}"
    except Exception as exc:  # noqa: BLE001 - another tool's library: its export only, the run's reports stand
        return (
            f"could not write the {chosen.name} export to {storage.shown(directory)}: {type(exc).__name__}: "
            f"{excerpt(exc, 200)}"
        )
    return None
