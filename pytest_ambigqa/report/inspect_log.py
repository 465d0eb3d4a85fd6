"""A scorecard as Inspect AI eval logs, one per suite, so that ``inspect view`` and Inspect's
log API (``inspect_ai.log.read_eval_log``) open our runs beside Inspect's own.

Built with Inspect's own log model (``EvalLog``, ``EvalSpec``, ``EvalSample``,
``EvalResults``, ``EvalScore``, ``EvalMetric``; https://inspect.aisi.org.uk/eval-logs.html)
and written by its ``write_eval_log`` in its default ``.eval`` format, under the name
``{created}_{task}_{id}.eval`` that its log listing parses. Imported only when an export to
Inspect is asked for (``pytest-ambigqa export --to inspect``, ``--ambig-export=inspect``):
``inspect_ai`` is the ``inspect`` extra.

What goes where:

* a sample per item result: ``input`` the question (the item's id when the data file
  cannot be read again: ``metadata.ambigqa.question_absent`` says why), ``target`` the
  gold short answers, ``output`` and ``messages`` the answer's text, ``scores`` each scored
  metric's item score as scorecard.json holds it (an errored item's zeros included, as the
  scorecard counts them). A metric that is n/a for the item has no score: its reason is in
  ``metadata.ambigqa.unscored``. An errored or missing item keeps its ``error``.
* the results: one ``EvalScore`` per metric the suite reports a number for, its ``mean``,
  ``low`` and ``high`` (the 95% interval) exactly as scorecard.json's suite summary has them
  (the printed scale: ``params.factor`` times the item scale); ``scored_samples`` and
  ``unscored_samples`` its counts. An n/a metric is left out of the scores, its reason in
  ``results.metadata.ambigqa.not_reported``.

Everything passes :func:`~pytest_ambigqa.output.clean` (secrets scrubbed) before it is written.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ChatMessageUser, ModelOutput
from inspect_ai.scorer import Score

from ..card import storage
from ..card.scorecard import MetricSummary, Scorecard, SuiteCard, utc_stamp
from ..metrics import METRICS
from ..output import clean, redact
from ..schema import AmbigItem, ItemResult

TASK_PREFIX = "ambigqa-"  # a suite's task is ambigqa-<suite>: apart from Inspect's own tasks in a listing


def logs(card: Scorecard) -> list[EvalLog]:
    """One eval log per suite of ``card``, scrubbed."""
    return [_log(card, suite) for suite in card.suites]


def write(card: Scorecard, directory: storage.Location) -> list[str]:
    """Each suite's log written into ``directory`` (made if absent); returns the files' names."""
    if isinstance(directory, Path):
        directory.mkdir(parents=True, exist_ok=True)
    names = []
    for log in logs(card):
        name = _filename(log)
        write_eval_log(log, str(storage.joined(directory, name)), format="eval")
        names.append(name)
    return names


def _filename(log: EvalLog) -> str:
    """``{created}_{task}_{task_id}.eval``, Inspect's own naming (``-`` for ``:`` in the time)."""
    return f"{log.eval.created.replace(':', '-')}_{log.eval.task}_{log.eval.task_id}.eval"


def _log(card: Scorecard, suite: SuiteCard) -> EvalLog:
    created = card.started or utc_stamp()
    model = _model(card)
    results = [r for r in card.results if r.suite == suite.name]
    samples = [_sample(r, card.gold.get(r.key), card.gold_absent.get(suite.name), model) for r in results]
    task_id = hashlib.sha256(f"{created}|{suite.name}|{suite.sha256}|{model}".encode()).hexdigest()[:22]
    spec = EvalSpec(
        created=created,
        task=f"{TASK_PREFIX}{suite.name}",
        task_id=task_id,
        eval_id=task_id,  # the same run exported again is the same log
        run_id=hashlib.sha256(f"{created}|{model}".encode()).hexdigest()[:22],
        task_display_name=suite.title,
        task_args={"protocol": card.config.get("protocol"), "setup": suite.protocol.name},
        dataset=EvalDataset(
            name=suite.name,
            location=suite.source,
            samples=suite.items_in_file,
            sample_ids=[r.item_id for r in results],
        ),
        model=model,
        config=EvalConfig(),
        packages=dict(card.versions),
        metadata={"ambigqa": _suite_metadata(card, suite)},
    )
    log = EvalLog(
        status="success",
        eval=spec,
        results=_results(suite, len(results)),
        stats=EvalStats(started_at=created, completed_at=created),
        samples=samples,
    )
    # Every string scrubbed of secrets, in one pass over what Inspect would write.
    return EvalLog.model_validate(clean(log.model_dump(mode="json", exclude_none=True), secrets=True))


def _model(card: Scorecard) -> str:
    """The system as Inspect names a model: ``ambigqa/<--ambig-system>`` (credentials redacted)."""
    spec = str(card.config.get("system") or card.system.get("label") or "system")
    return f"ambigqa/{redact(spec)}"


def _suite_metadata(card: Scorecard, suite: SuiteCard) -> dict[str, Any]:
    return {
        "system": card.system.get("label"),
        "sha256": suite.sha256,
        "revision": suite.revision,
        "is_sample": suite.is_sample,
        "items": suite.items,
        "errors": suite.errors,
        "missing": suite.missing,
        "setting": suite.protocol.name,
        "profile": suite.profile,
        "seed": card.config.get("seed"),
        "repeats": card.config.get("repeats") or 1,
        "gates_failed": [c.failure for c in card.checks if c.suite == suite.name and c.failure],
    }


def _results(suite: SuiteCard, total: int) -> EvalResults:
    scores = [_score(summary) for summary in suite.metrics.values() if summary.mean is not None]
    not_reported = {m: s.reason or "n/a" for m, s in suite.metrics.items() if s.mean is None}
    return EvalResults(
        total_samples=total,
        completed_samples=total,
        scores=scores,
        metadata={"ambigqa": {"not_reported": not_reported}},
    )


def _score(summary: MetricSummary) -> EvalScore:
    spec = METRICS.get(summary.metric)
    values = {"mean": summary.mean, "low": summary.low, "high": summary.high}
    return EvalScore(
        name=summary.metric,
        scorer=summary.metric,
        scored_samples=summary.n,
        unscored_samples=summary.unscored,
        params={"factor": spec.factor if spec else 1.0, "aggregation": spec.aggregation if spec else None},
        metrics={k: EvalMetric(name=k, value=v) for k, v in values.items() if v is not None},
        # of the scored, the errored and missing items counted 0; why the unscored have none
        metadata={"failed": summary.failed, "reason": summary.reason},
    )


def _sample(result: ItemResult, item: AmbigItem | None, absent: str | None, model: str) -> EvalSample:
    question = item.question if item is not None else result.item_id
    text = result.answer.text if result.answer is not None else ""
    meta: dict[str, Any] = {
        "status": result.status,
        "ambiguity_type": result.ambiguity_type,
        "unscored": dict(result.unscored),
        "duration": result.duration,
    }
    if item is None:
        meta["question_absent"] = absent or "the item is not in the data file read again"
    if result.answer is not None and result.answer.interpretations:
        meta["interpretations"] = [
            {
                "question": i.question,
                "condition": i.condition,
                "answer": i.answer,
                "citations": list(i.citations),
            }
            for i in result.answer.interpretations
        ]
    if result.trials:
        meta["trials"] = [t.scores for t in result.trials]
    error = None
    if result.status != "ok":
        message = result.error or result.status
        error = EvalError(
            message=message, traceback=result.trace or message, traceback_ansi=result.trace or message
        )
    # ids of our own, not Inspect's random ones: the same run exported again is the same log
    reply = ChatMessageAssistant(id=f"{result.key}/answer", content=text, model=model)
    return EvalSample(
        id=result.item_id,
        epoch=1,
        input=question,
        target=_target(item),
        messages=[ChatMessageUser(id=f"{result.key}/question", content=question), reply],
        output=ModelOutput(model=model, choices=[ChatCompletionChoice(message=reply, stop_reason="stop")]),
        scores={metric: Score(value=value) for metric, value in result.scores.items()},
        metadata={"ambigqa": meta},
        error=error,
        total_time=result.duration,
    )


def _target(item: AmbigItem | None) -> list[str]:
    """The gold short answers of every interpretation, once each, in order; else the long answers."""
    if item is None:
        return []
    short = [a for i in item.interpretations for a in i.short_answers]
    return list(dict.fromkeys(short)) or list(item.long_answers)
