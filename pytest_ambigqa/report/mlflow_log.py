"""A scorecard as an MLflow run (``--ambig-mlflow``; ``pytest-ambigqa merge --mlflow``): the
only module that imports MLflow, imported at the end of a run that asks for it (the ``mlflow``
extra: ``mlflow-skinny``, with SQLAlchemy and Alembic for a SQLite store).

What goes where, everything scrubbed of credentials (``output.clean``, ``output.excerpt``):

* parameters: the run's config (``config.seed``, ``config.suites`` ...; a nested field dotted,
  a list as JSON) and the system (``system.label`` ...), each value cut at MLflow's 6,000
  characters;
* metrics, on scorecard.json's printed scale, exactly its numbers: ``SUITE/METRIC`` (the mean),
  ``SUITE/METRIC/low`` and ``/high`` (its 95% interval), ``/n`` and ``/unscored`` (its
  counts); ``SUITE/items``, ``/errors``, ``/missing``; a slice's (an ambiguity type's) as
  ``SUITE/slice/SLICE/METRIC`` with the same suffixes and ``.../items``. An n/a metric has its
  counts and no mean. In a name, every character MLflow does not take in every store (anything
  but letters, digits, ``_ - . /`` and space) becomes ``_``, and an empty, ``.`` or ``..``
  part ``_`` too (:func:`metric_key`);
* the per-item table, ``ambigqa/items.json``, in ``log_table``'s format (the UI shows it as a
  table; ``mlflow.load_table`` reads it) with every score exact: an item a row, its key, suite,
  id, ambiguity type, status, error and answer (each cut at 1,000 characters), and its score
  per metric (empty where n/a);
* artifacts: the reports of ``--ambig-report`` (``report.html``, ``scorecard.json``,
  ``scorecard.md``) under ``report/``;
* tags: ``ambigqa.suites``, ``ambigqa.system``, ``ambigqa.exit_status``, ``ambigqa.gates``
  (passed, failed, or deferred to the merge).

A shard (``--ambig-shard``) logs its own run, a child of the run its shard set shares: the
running run tagged ``ambigqa.shard_set`` (a digest of what ``merge`` checks the shards agree
on: the config but for its per-shard fields, and the system) with no child of that shard yet;
the first shard opens it. ``merge --mlflow`` logs the merged numbers to the newest such run
and ends it.

An MLflow failure (a server down, a store that cannot be written) is returned as one line:
the caller says it once; no number, report or exit status depends on it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from mlflow.entities import Metric, Param, RunTag
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient
from mlflow.utils.mlflow_tags import MLFLOW_LOGGED_ARTIFACTS

from ..card import storage
from ..card.scorecard import PER_SHARD, MetricSummary, Scorecard
from ..output import clean, excerpt, json_text
from .mlflow_target import Target
from .writers import WRITERS

SHARD_SET = "ambigqa.shard_set"
SHARD = "ambigqa.shard"  # "I/N" on a shard's run
ROLE = "ambigqa.role"  # "shards" on the run a shard set shares
PARENT = "mlflow.parentRunId"  # MLflow's own: the UI nests a run under it
TABLE = "ambigqa/items.json"
REPORT = "report"  # the artifacts' folder
PARAM_LIMIT = 6000  # characters of a parameter's value (MLflow's MAX_PARAM_VAL_LENGTH)
TEXT_LIMIT = 1000  # characters of a table's error or answer
_BATCH = 100  # parameters and tags per request (MLflow's limit; metrics take 1,000)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\- ]")
# A server that does not answer: a few tries, not MLflow's seven with backoff (minutes)
_HTTP = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_TIMEOUT": "30"}


def log(card: Scorecard, target: Target, report: storage.Location | None, exit_status: int) -> str | None:
    """``card`` logged as a run (a shard's as a child of its shard set's run); why not, if not."""
    return _guarded(target, lambda client, experiment: _log(client, experiment, card, report, exit_status))


def complete(
    card: Scorecard, target: Target, report: storage.Location | None, exit_status: int
) -> str | None:
    """The merged ``card`` logged to the run its shards share (a run of its own if they logged
    none), which is then ended; why not, if not."""
    return _guarded(
        target, lambda client, experiment: _complete(client, experiment, card, report, exit_status)
    )


def _guarded(target: Target, work: Callable[[MlflowClient, str], None]) -> str | None:
    try:
        with _quiet():
            client = MlflowClient(tracking_uri=target.uri)
            work(client, _experiment(client, target))
    except Exception as exc:  # noqa: BLE001 - MLflow's fault never reaches the run's numbers or exit status
        return (
            f"could not log the run to MLflow at {target.shown()}: {type(exc).__name__}: {excerpt(exc, 300)}"
        )
    return None


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """MLflow's INFO lines (a new store's migrations) and warnings kept off the user's terminal,
    and its HTTP retries bounded unless the user set them."""
    logger = logging.getLogger("mlflow")
    level = logger.level
    added = {name: value for name, value in _HTTP.items() if name not in os.environ}
    os.environ.update(added)
    logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)
        for name in added:
            os.environ.pop(name, None)


def _experiment(client: MlflowClient, target: Target) -> str:
    """The experiment's id, made if absent (another shard may make it at the same moment)."""
    found = client.get_experiment_by_name(target.experiment)
    if found is not None:
        return str(found.experiment_id)
    location = f"{target.artifacts}/{_segment(target.experiment)}" if target.artifacts else None
    try:
        return str(client.create_experiment(target.experiment, artifact_location=location))
    except MlflowException:
        found = client.get_experiment_by_name(target.experiment)
        if found is None:
            raise
        return str(found.experiment_id)


def _log(
    client: MlflowClient, experiment: str, card: Scorecard, report: storage.Location | None, exit_status: int
) -> None:
    tags = _tags(card, exit_status)
    shard = card.config.get("shard")
    name = _name(card)
    if shard:
        number, count = shard
        label, digest = f"{number}/{count}", shard_set(card)
        parent = _shared(client, experiment, digest, label, name, count)
        tags |= {PARENT: parent, SHARD: label, SHARD_SET: digest}
        name = f"shard {label}"
    run = client.create_run(experiment, run_name=name, tags=tags).info.run_id
    _fill(client, run, card, report)


def _complete(
    client: MlflowClient, experiment: str, card: Scorecard, report: storage.Location | None, exit_status: int
) -> None:
    digest = shard_set(card)
    found = client.search_runs(
        [experiment],
        f"tags.`{SHARD_SET}` = '{digest}' and tags.`{ROLE}` = 'shards' and attributes.status = 'RUNNING'",
        order_by=["attributes.start_time DESC"],
        max_results=1,
    )
    tags = _tags(card, exit_status) | {SHARD_SET: digest}
    if found:
        run = found[0].info.run_id
        client.log_batch(run, tags=[RunTag(k, v) for k, v in tags.items()])
    else:
        run = client.create_run(experiment, run_name=_name(card), tags=tags).info.run_id
    _fill(client, run, card, report)


def _shared(client: MlflowClient, experiment: str, digest: str, label: str, name: str, count: int) -> str:
    """The run a shard set shares: the earliest running one with no run of shard ``label``
    yet, else a new one. Shards that open one at the same moment each find the earliest after
    opening theirs, and the others' is deleted: they meet in one."""
    found = _joinable(client, experiment, digest, label)
    if found is not None:
        return found
    tags = {SHARD_SET: digest, ROLE: "shards", "ambigqa.shards": str(count)}
    mine = client.create_run(experiment, run_name=name, tags=tags).info.run_id
    found = _joinable(client, experiment, digest, label) or mine
    if found != mine:
        client.delete_run(mine)
    return found


def _joinable(client: MlflowClient, experiment: str, digest: str, label: str) -> str | None:
    parents = client.search_runs(
        [experiment],
        f"tags.`{SHARD_SET}` = '{digest}' and tags.`{ROLE}` = 'shards' and attributes.status = 'RUNNING'",
        order_by=["attributes.start_time ASC"],
    )
    for parent in parents:
        taken = client.search_runs(
            [experiment],
            f"tags.`{PARENT}` = '{parent.info.run_id}' and tags.`{SHARD}` = '{label}'",
            max_results=1,
        )
        if not taken:
            return str(parent.info.run_id)
    return None


def _fill(client: MlflowClient, run: str, card: Scorecard, report: storage.Location | None) -> None:
    """Parameters, metrics, the table and the reports on ``run``, which is then ended."""
    try:
        entries = [Param(k, v) for k, v in params(card).items()]
        for start in range(0, len(entries), _BATCH):
            client.log_batch(run, params=entries[start : start + _BATCH])
        found = [Metric(k, v, 0, 0) for k, v in metrics(card).items()]
        for start in range(0, len(found), 10 * _BATCH):
            client.log_batch(run, metrics=found[start : start + 10 * _BATCH])
        columns = table(card)  # as log_table writes one, but every float exact (not pandas' 10 digits)
        rows = [list(row) for row in zip(*columns.values(), strict=True)]
        client.log_text(run, json_text({"columns": list(columns), "data": rows}), TABLE)
        client.set_tag(run, MLFLOW_LOGGED_ARTIFACTS, json.dumps([{"path": TABLE, "type": "table"}]))
        if report is not None:
            for writer in WRITERS.values():
                with contextlib.suppress(OSError):  # a writer that failed: said by the run already
                    text = storage.read_text(storage.joined(report, writer.filename))
                    client.log_text(run, text, f"{REPORT}/{writer.filename}")
    except BaseException:
        client.set_terminated(run, "FAILED")
        raise
    client.set_terminated(run, "FINISHED")


def shard_set(card: Scorecard) -> str:
    """What the shards of one run share, as a digest: their config but for the per-shard
    fields, and their system (``merge`` refuses shards that differ in either)."""
    shared = {k: v for k, v in card.config.items() if k not in PER_SHARD}
    text = json.dumps(clean([shared, card.system.get("label")]), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _name(card: Scorecard) -> str:
    return excerpt(f"{','.join(s.name for s in card.suites)} {card.system.get('label', '')}".strip(), 250)


def _tags(card: Scorecard, exit_status: int) -> dict[str, str]:
    failed = any(not c.passed for c in card.checks) or bool(card.shortfalls)
    gates = "deferred to merge" if card.gates_deferred else "failed" if failed else "passed"
    return {
        "ambigqa.suites": ",".join(s.name for s in card.suites),
        "ambigqa.system": excerpt(str(card.system.get("label", "")), 5000),
        "ambigqa.exit_status": str(exit_status),
        "ambigqa.gates": gates,
    }


def _segment(text: str) -> str:
    found = _UNSAFE.sub("_", text)
    return "_" if found in ("", ".", "..") else found


def metric_key(*parts: str) -> str:
    """A metric's MLflow name: its parts joined by ``/``, each made safe (:data:`_UNSAFE`)."""
    return "/".join(_segment(p) for p in parts)[:250]


def metrics(card: Scorecard) -> dict[str, float]:
    """Every number of ``card``'s suites and slices, by MLflow name (the module's docstring)."""
    found: dict[str, float] = {}
    for suite in card.suites:
        found |= {
            metric_key(suite.name, "items"): suite.items,
            metric_key(suite.name, "errors"): suite.errors,
            metric_key(suite.name, "missing"): suite.missing,
        }
        for name, summary in suite.metrics.items():
            found |= _summary((suite.name, name), summary)
        for part in suite.slices:
            found[metric_key(suite.name, "slice", part.name, "items")] = part.items
            for name, summary in part.metrics.items():
                found |= _summary((suite.name, "slice", part.name, name), summary)
    return found


def _summary(parts: tuple[str, ...], summary: MetricSummary) -> dict[str, float]:
    found: dict[str, float] = {
        metric_key(*parts, "n"): summary.n,
        metric_key(*parts, "unscored"): summary.unscored,
    }
    for suffix, value in (("", summary.mean), ("low", summary.low), ("high", summary.high)):
        if value is not None:
            found[metric_key(*parts, *([suffix] if suffix else []))] = value
    return found


def params(card: Scorecard) -> dict[str, str]:
    """The config and the system, flattened and scrubbed (the module's docstring)."""
    found: dict[str, str] = {}

    def walk(key: str, value: Any) -> None:
        if isinstance(value, Mapping) and value:
            for name, inner in value.items():
                walk(f"{key}.{name}", inner)
            return
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        found[_UNSAFE.sub("_", key)[:250]] = text[:PARAM_LIMIT]

    walk("config", clean(card.config, secrets=True))
    walk("system", clean(card.system, secrets=True))
    return found


def table(card: Scorecard) -> dict[str, list[Any]]:
    """The per-item table, a column per field and per metric (the module's docstring)."""
    fixed = ("key", "suite", "item_id", "ambiguity_type", "status", "error", "answer")
    names = list(dict.fromkeys(m for s in card.suites for m in s.metrics))
    columns: dict[str, list[Any]] = {name: [] for name in fixed} | {_column(m, fixed): [] for m in names}
    for result in card.results:
        answer = result.answer.text if result.answer is not None else None
        row = (result.key, result.suite, result.item_id, result.ambiguity_type, result.status)
        values: list[Any] = [*row, *(excerpt(t, TEXT_LIMIT) if t else None for t in (result.error, answer))]
        values += [result.scores.get(m) for m in names]
        for column, value in zip(columns.values(), values, strict=True):
            column.append(value)
    return columns


def _column(metric: str, fixed: tuple[str, ...]) -> str:
    """A metric's column: its name, unless a fixed column has it."""
    return f"metric:{metric}" if metric in fixed else metric
