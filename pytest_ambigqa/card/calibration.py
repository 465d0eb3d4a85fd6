"""The judge against human labels (``--ambig-human-labels``): agreement on the labelled
items, and the prediction-powered estimate of the human-scale mean over the whole run.

A labels file holds human scores of some of the run's items: JSON Lines or one JSON list of
objects, each with ``id`` (the item id, as the suite's data has it), optionally ``suite``
and ``system`` (rows for another system than the run's are ignored, and counted), and
either ``score`` (one overall score, compared with the suite's first judge metric: MARCH's
``judge``, ASQA's ``judge_utility``, CondAmbigQA's ``condition``) or ``scores`` (judge
metric: score). Other fields are ignored.

ALCE's released human evaluation (princeton-nlp/ALCE, ``human_eval/``) is read as released:
``human_eval_utility_completed.json`` and ``human_eval_citations_completed.json`` are one JSON
object, ``{dataset: {model file: {question id: output}}}`` (each model's ``overall_results``
skipped), and the same outputs one per line (JSON Lines, or a JSON list) are read too, with
``sample_id`` for ``id`` as ASQA spells it. The dataset is the suite (``asqa``), the model file
the system (``--ambig-human-labels-system`` names the one a run replays), ``utility_score``
(1-5) the label of ``judge_utility``, and ``overall_recall_score`` / ``overall_precision_score``
(the human citation recall and precision, 0-1) labels of ``citation_recall`` /
``citation_precision``, which no judge metric of this version reports (they are counted as such).

On the items of a suite that have a label and a judge score from an answer, the report
gives Spearman's rho, Krippendorff's alpha (ordinal when both sides are integers, a Likert
scale; else interval) and, when both sides are 0/1, Cohen's kappa, each with its interval
(``stats/agreement.py``). Over the suite's items answered and judged, it gives the judge's raw
mean and the prediction-powered estimate of the mean a human would give (PPI++; the
labelled items correct the judge on the unlabelled ones). An item without an answer
(errored, missing) or that the judge could not score has no judge score: it is left out of
both, counted, and said why; the suite's own score still counts an errored item as 0.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UnreadableFile
from ..metrics import METRICS
from ..schema import ItemResult
from ..stats.agreement import (
    PredictionPowered,
    Statistic,
    cohen_kappa,
    krippendorff_alpha,
    level_of,
    ppi_mean,
    spearman_rho,
)
from ..stats.bootstrap import stable_seed

SHOWN_IDS = 10  # ids not in the run, listed in the report


@dataclass(frozen=True)
class Label:
    """One row of a labels file: ``scores`` by judge metric, None for the overall ``score``."""

    where: str  # "line 3" (JSON Lines) or "row 3" (a JSON list)
    item_id: str
    suite: str | None
    system: str | None
    scores: dict[str | None, float]


# ALCE's human evaluation fields (``human_eval/README.md`` there) and the labels they give
ALCE_SCORES = {
    "utility_score": "judge_utility",
    "overall_recall_score": "citation_recall",
    "overall_precision_score": "citation_precision",
}
ALCE_SUMMARY = "overall_results"  # each model's aggregate in the released files: not a row


def read_labels(path: Path, suites_of: Mapping[str, Sequence[str]] | None = None) -> list[Label]:
    """The rows of a labels file, every one checked; UnreadableFile names the file, the line
    (or, in ALCE's nested layout, the dataset, model and question id) and what is wrong with
    it (the first problem).

    A score must be a finite number on the item scale of the metric it labels: an overall
    ``score`` that of the suite's first judge metric (``suites_of``: the suites each item id
    of the run is in, which decide it for a row without ``suite``; None: any suite). Two
    rows a run could match to the same item (the same id, and suites and systems equal or
    unnamed) are refused: the last would win."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UnreadableFile(f"{path}: cannot be read ({exc})") from None
    nested = _alce_nested(text)
    if nested is not None:
        rows = _alce_rows(path, nested)
    elif text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise UnreadableFile(f"{path}: not a JSON list of rows ({exc})") from None
        rows = [(f"row {n}", raw) for n, raw in enumerate(data, 1)]
    else:
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append((f"line {n}", json.loads(line)))
            except (ValueError, RecursionError) as exc:
                raise UnreadableFile(f"{path}, line {n}: not a JSON object ({exc})") from None
    labels: list[Label] = []
    first: dict[str, list[Label]] = {}
    for where, raw in rows:
        try:
            label = _label(where, raw)
            _on_scale(label, suites_of)
        except ValueError as exc:
            raise UnreadableFile(f"{path}, {where}: {exc}") from None
        earlier = next((e for e in first.get(label.item_id, ()) if _overlap(e, label, suites_of)), None)
        if earlier is not None:
            raise UnreadableFile(
                f"{path}, {where}: a second row for item '{label.item_id}' (first: {earlier.where})"
            )
        first.setdefault(label.item_id, []).append(label)
        labels.append(label)
    if not labels:
        raise UnreadableFile(f"{path}: no labels in it")
    return labels


def _overlap(a: Label, b: Label, suites_of: Mapping[str, Sequence[str]] | None) -> bool:
    """Whether a run could match both rows (of one item id) to the same item and metric."""
    if a.system is not None and b.system is not None and a.system != b.system:
        return False
    suite_a, suite_b = _suite_of(a, suites_of), _suite_of(b, suites_of)
    if suite_a != suite_b:
        return False  # another suite, or one of them matched to no item
    return not _metrics_of(a, suite_a).isdisjoint(_metrics_of(b, suite_b))


def _suite_of(label: Label, suites_of: Mapping[str, Sequence[str]] | None) -> str | None:
    """The suite a run matches ``label`` to: its own, or the one suite of the run its id is in."""
    if label.suite is not None:
        return label.suite
    found = suites_of.get(label.item_id, ()) if suites_of is not None else ()
    return found[0] if len(found) == 1 else None


def _metrics_of(label: Label, suite: str | None) -> set[str | None]:
    from ..suites import SUITES

    overall = main_judge_metric(SUITES[suite].metrics) if suite is not None and suite in SUITES else None
    return {named or overall for named in label.scores}


def _on_scale(label: Label, suites_of: Mapping[str, Sequence[str]] | None) -> None:
    """Each score of ``label`` on the item scale of the metric it labels (ValueError)."""
    for named, value in label.scores.items():
        if named is not None:
            span = METRICS[named].item_range if named in METRICS else None
            spans = [(named, span)] if span is not None else []
            field = f"scores.{named}"
        else:
            from ..suites import SUITES

            if label.suite is not None:
                candidates: Sequence[str] = [label.suite]
            elif suites_of is not None:
                candidates = suites_of.get(label.item_id) or sorted(
                    {s for v in suites_of.values() for s in v}
                )
            else:
                candidates = list(SUITES)
            spans = []
            for suite in candidates:
                metric = main_judge_metric(SUITES[suite].metrics) if suite in SUITES else None
                span = METRICS[metric].item_range if metric is not None else None
                if span is not None:
                    spans.append((f"{suite}'s {metric}", span))
            field = "score"
        if spans and not any(low <= value <= high for _, (low, high) in spans):
            scales = ", ".join(f"{what} {low:g} to {high:g}" for what, (low, high) in spans)
            raise ValueError(f"'{field}' {value:g} is outside the scale of {scales}")


def _alce_nested(text: str) -> dict[str, Any] | None:
    """The released layout of ALCE's human evaluation files, ``{dataset: {model: {id: row}}}``,
    or None for any other file (one JSON Lines row included)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None  # JSON Lines, or broken: read line by line
    if not isinstance(data, dict) or not data:
        return None
    models = list(data.values())
    if not all(isinstance(m, dict) and m and all(isinstance(i, dict) for i in m.values()) for m in models):
        return None  # a row (its values are not all objects of objects)
    return data


def _alce_rows(path: Path, data: dict[str, Any]) -> list[tuple[str, Any]]:
    """ALCE's nested rows as flat ones, each with where it stands (dataset, model, id)."""
    rows: list[tuple[str, Any]] = []
    for dataset, models in data.items():
        for model, items in models.items():
            for key, raw in items.items():
                if key == ALCE_SUMMARY:
                    continue
                where = f"[{json.dumps(dataset)}][{json.dumps(model)}][{json.dumps(key)}]"
                if not isinstance(raw, dict):
                    raise UnreadableFile(f"{path}, {where}: an output must be a JSON object")
                if raw.get("id", key) != key:
                    raise UnreadableFile(
                        f"{path}, {where}: its 'id' {json.dumps(raw['id'])} is not its key {json.dumps(key)}"
                    )
                if not any(field in raw for field in ALCE_SCORES):
                    raise UnreadableFile(
                        f"{path}, {where}: no human rating in it (ALCE's {', '.join(ALCE_SCORES)})"
                    )
                rows.append((where, {**raw, "id": key, "suite": dataset, "system": model}))
    return rows


def _alce_row(raw: dict[str, Any]) -> dict[str, Any]:
    """A row of ALCE's released fields as ours: ``sample_id`` its id, ``model`` its system, its
    human ratings the ``scores`` of the metrics they label."""
    row = {k: v for k, v in raw.items() if k not in ALCE_SCORES}
    if "id" not in row and "sample_id" in row:
        row["id"] = row["sample_id"]
    if "system" not in row and "model" in row:
        row["system"] = row["model"]
    row["scores"] = {ALCE_SCORES[f]: raw[f] for f in ALCE_SCORES if f in raw}
    return row


def _label(where: str, raw: Any) -> Label:
    if not isinstance(raw, dict):
        raise ValueError(f"a row must be a JSON object, not {type(raw).__name__}")
    alce = "score" not in raw and "scores" not in raw and any(f in raw for f in ALCE_SCORES)
    if alce:
        raw = _alce_row(raw)
    item_id = raw.get("id")
    if isinstance(item_id, int) and not isinstance(item_id, bool):
        item_id = str(item_id)
    if not isinstance(item_id, str) or not item_id.strip():
        raise ValueError(
            "'id' must be the item's id (a non-empty string)" + (" ('sample_id' in ALCE's)" if alce else "")
        )
    for field in ("suite", "system"):
        if raw.get(field) is not None and not isinstance(raw[field], str):
            raise ValueError(f"'{field}' must be a string")
    if ("score" in raw) == ("scores" in raw):
        raise ValueError("give either 'score' (one overall score) or 'scores' ({judge metric: score})")
    if "score" in raw:
        scores: dict[str | None, float] = {None: _number("score", raw["score"])}
    else:
        named = raw["scores"]
        if not isinstance(named, dict) or not named:
            raise ValueError("'scores' must be a non-empty object of judge metric: score")
        judged = sorted(m for m, spec in METRICS.items() if spec.needs == "judge")
        for metric in named:
            if metric not in judged and not (alce and metric in ALCE_SCORES.values()):
                raise ValueError(
                    f"'scores': '{metric}' is not a judge metric (judge metrics: {', '.join(judged)})"
                )
        named_as = {v: k for k, v in ALCE_SCORES.items()} if alce else {}  # as the file names it
        scores = {
            metric: _number(named_as.get(metric, f"scores.{metric}"), value)
            for metric, value in named.items()
        }
    return Label(where, item_id, raw.get("suite"), raw.get("system"), scores)


def _number(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"'{field}' must be a finite number, not {json.dumps(value)}")
    return float(value)


@dataclass(frozen=True)
class MetricCalibration:
    """One judge metric of one suite against its human labels."""

    suite: str
    metric: str
    labelled: int  # items of the suite in this run with a human label for the metric
    pairs: int  # of them, those with a judge score from an answer
    unpaired: list[str]  # why the others have no pair: "2 without an answer (errored or missing)"
    level: str  # Krippendorff's alpha's: "ordinal" (integers on both sides) or "interval"
    spearman: Statistic
    alpha: Statistic
    kappa: Statistic | None  # None: not both binary
    judge_mean: float | None  # the judge's mean over the items answered and judged, item scale
    judged: int  # those items: the labelled pairs and the unlabelled items
    left_out: list[str]  # the suite's items without a judge score, counted, and why
    ppi: Statistic  # the prediction-powered human-scale mean and its 95% interval
    lam: float  # PPI++'s tuning: 0 trusts only the labels, 1 is plain PPI


@dataclass(frozen=True)
class Calibration:
    """The labels file as this run matched it, and each labelled judge metric."""

    source: str
    rows: int
    system: str  # the run's system, which rows naming a system must name
    other_systems: int  # rows for other systems, ignored
    not_in_run: int  # rows whose item is not among the run's (or whose id is in several suites)
    not_in_run_ids: list[str]  # the first SHOWN_IDS of them
    not_judged: list[str]  # labels no metric of the run can take: "3 for asqa's judge: not in this run"
    metrics: list[MetricCalibration]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Calibration:
        """As ``card/model.py`` wrote it (``readback`` has checked its schema)."""

        def statistic(raw: Mapping[str, Any]) -> Statistic:
            return Statistic(**raw)

        metrics = [
            MetricCalibration(
                **{
                    **m,
                    "spearman": statistic(m["spearman"]),
                    "alpha": statistic(m["alpha"]),
                    "kappa": statistic(m["kappa"]) if m.get("kappa") is not None else None,
                    "ppi": statistic(m["ppi"]),
                }
            )
            for m in data["metrics"]
        ]
        return cls(**{**data, "metrics": metrics})


def main_judge_metric(metrics: Sequence[str]) -> str | None:
    """The metric an overall ``score`` is compared with: the first judge metric the suite reports."""
    return next((m for m in metrics if METRICS[m].needs == "judge"), None)


def calibrate(
    source: str,
    labels: Sequence[Label],
    results: Sequence[ItemResult],
    suites: Mapping[str, Sequence[str]],
    system: str,
    seed: int,
) -> Calibration:
    """Match ``labels`` to the run's ``results`` (``suites``: each suite's reported metrics)
    and compute each labelled metric's agreement and prediction-powered mean."""
    by_key = {(r.suite, r.item_id): r for r in results}
    suites_of: dict[str, list[str]] = {}
    for suite, item_id in by_key:
        suites_of.setdefault(item_id, []).append(suite)
    human: dict[tuple[str, str], dict[str, float]] = {}  # (suite, metric): {item id: score}
    others = 0
    absent: list[str] = []
    not_judged: Counter[str] = Counter()
    for label in labels:
        if label.system is not None and label.system != system:
            others += 1
            continue
        found = [label.suite] if label.suite is not None else suites_of.get(label.item_id, [])
        if len(found) != 1 or (found[0], label.item_id) not in by_key:
            absent.append(label.item_id if label.suite is None else f"{label.suite}:{label.item_id}")
            continue
        suite = found[0]
        for named, value in label.scores.items():
            metric = named or main_judge_metric(suites[suite])
            if metric is None or metric not in suites[suite]:
                not_judged[f"{suite}'s {named or 'overall score'}"] += 1
                continue
            human.setdefault((suite, metric), {})[label.item_id] = value
    metrics = [
        _metric(suite, metric, scores, [r for r in results if r.suite == suite], seed)
        for (suite, metric), scores in human.items()
    ]
    return Calibration(
        source=source,
        rows=len(labels),
        system=system,
        other_systems=others,
        not_in_run=len(absent),
        not_in_run_ids=absent[:SHOWN_IDS],
        not_judged=[
            f"{n} label(s) for {what}: not a metric this run reports" for what, n in not_judged.items()
        ],
        metrics=metrics,
    )


def _judge_score(r: ItemResult, metric: str) -> float | None:
    """The judge's score of an answered item; None without an answer or a judgement."""
    return r.scores.get(metric) if r.status == "ok" else None


def _why_none(results: Sequence[ItemResult], metric: str) -> list[str]:
    """The items among ``results`` without a judge score, counted by why."""
    reasons: Counter[str] = Counter()
    for r in results:
        if r.status != "ok":
            reasons["without an answer (errored or missing)"] += 1
        elif metric not in r.scores:
            reasons[f"not scored by the judge: {r.unscored.get(metric, 'no score')}"] += 1
    return [f"{n} {why}" for why, n in reasons.items()]


def _metric(
    suite: str, metric: str, human: Mapping[str, float], results: Sequence[ItemResult], seed: int
) -> MetricCalibration:
    judged = [(r, score) for r in results if (score := _judge_score(r, metric)) is not None]
    pairs = [(human[r.item_id], score) for r, score in judged if r.item_id in human]
    unlabelled = [score for r, score in judged if r.item_id not in human]
    people, judge = [h for h, _ in pairs], [j for _, j in pairs]
    values = people + judge
    level = level_of(values)
    scope = (suite, metric, "calibration")
    binary = bool(values) and set(values) <= {0.0, 1.0}
    estimate: PredictionPowered = ppi_mean(unlabelled, judge, people)
    return MetricCalibration(
        suite=suite,
        metric=metric,
        labelled=len(human),
        pairs=len(pairs),
        unpaired=_why_none([r for r in results if r.item_id in human], metric),
        level=level,
        spearman=spearman_rho(people, judge),
        alpha=krippendorff_alpha([[h, j] for h, j in pairs], level, stable_seed(seed, *scope, "alpha")),
        kappa=cohen_kappa(people, judge, stable_seed(seed, *scope, "kappa")) if binary else None,
        judge_mean=math.fsum(s for _, s in judged) / len(judged) if judged else None,
        judged=len(judged),
        left_out=_why_none(results, metric),
        ppi=estimate.estimate,
        lam=estimate.lam,
    )
