"""--ambig-human-labels: the labels file, the figures against independent implementations,
the scorecard key read back, and whole runs against the stand-in judge on 127.0.0.1 (and on
ALCE's 100 real human utility ratings, where ../shared is present)."""

from __future__ import annotations

import json
import math

import krippendorff
import numpy as np
import ppi_py
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from fixtures.network import GUARD
from fixtures.process import ambig_run
from fixtures.servers import utility
from pytest_ambigqa.card.calibration import Calibration, calibrate, read_labels
from pytest_ambigqa.card.saved import read_card
from pytest_ambigqa.errors import ScorecardError, UnreadableFile
from pytest_ambigqa.schema import ItemResult
from pytest_ambigqa.suites import SUITES, LoadOptions

ASQA = SUITES["asqa"].load(None, LoadOptions()).items
METRICS = {"asqa": ["str_em", "judge_utility"], "march": ["str_em", "judge", "judge_relevance"]}


def write(tmp_path, rows, name="labels.jsonl"):
    path = tmp_path / name
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8"
    )
    return path


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("{not json", "line 2: not a JSON object"),
        ('["a"]', "line 2: a row must be a JSON object, not list"),
        ('{"score": 3}', "line 2: 'id' must be the item's id (a non-empty string)"),
        ('{"id": "x", "score": 3, "scores": {"judge": 3}}', "line 2: give either 'score'"),
        ('{"id": "x"}', "line 2: give either 'score'"),
        ('{"id": "x", "score": true}', "line 2: 'score' must be a finite number, not true"),
        ('{"id": "x", "score": NaN}', "line 2: 'score' must be a finite number, not NaN"),
        ('{"id": "x", "scores": {"str_em": 1}}', "line 2: 'scores': 'str_em' is not a judge metric"),
        ('{"id": "x", "scores": {}}', "line 2: 'scores' must be a non-empty object"),
        ('{"id": "x", "suite": 3, "score": 1}', "line 2: 'suite' must be a string"),
        ('{"id": "a", "score": 2}', "line 2: a second row for item 'a' (first: line 1)"),
    ],
)
def test_a_bad_row_is_named_by_file_line_and_problem(tmp_path, row, problem):
    path = write(tmp_path, ['{"id": "a", "score": 1}', row])
    with pytest.raises(UnreadableFile) as raised:
        read_labels(path)
    assert str(raised.value).startswith(f"{path}, {problem}")


def test_a_json_list_is_read_too_and_rows_are_numbered(tmp_path):
    path = tmp_path / "labels.json"
    path.write_text(json.dumps([{"id": 7, "score": 1, "note": "ignored"}, {"id": "b"}]), encoding="utf-8")
    with pytest.raises(UnreadableFile, match=r"labels.json, row 2: give either"):
        read_labels(path)
    path.write_text(json.dumps([{"id": 7, "scores": {"judge_utility": 4}, "system": "s"}]), encoding="utf-8")
    [label] = read_labels(path)
    assert (label.item_id, label.system, label.scores, label.where) == (
        "7",
        "s",
        {"judge_utility": 4.0},
        "row 1",
    )
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(UnreadableFile, match="no labels in it"):
        read_labels(path)


def result(suite, item_id, score=None, status="ok", unscored=None):
    scores = {} if score is None else {("judge_utility" if suite == "asqa" else "judge"): score}
    return ItemResult(suite, item_id, status, scores=scores, unscored=unscored or {})


def test_rows_are_matched_to_the_run_and_everything_else_is_counted(tmp_path):
    results = [
        result("asqa", "a", 4.0),
        result("asqa", "b", 2.0),
        result("asqa", "c", 0.0, status="error"),  # no answer: the suite counts it 0, here it is left out
        result("asqa", "d", unscored={"judge_utility": "judge unavailable: HTTP 500"}),
        result("asqa", "e", 5.0),
        result("asqa", "f", 1.0),
        result("march", "a", 3.0),
    ]
    labels = read_labels(
        write(
            tmp_path,
            [
                {"id": "a", "suite": "asqa", "score": 5},
                {"id": "b", "suite": "asqa", "scores": {"judge_utility": 1}},
                {"id": "c", "suite": "asqa", "score": 2},
                {"id": "d", "suite": "asqa", "score": 3},
                {"id": "e", "system": "other", "score": 1},
                {"id": "a", "score": 1},  # in two suites: which one is not said
                {"id": "zz", "score": 1},
                {"id": "a", "suite": "march", "scores": {"judge_utility": 3}},  # not a MARCH metric
                {"id": "a", "suite": "march", "system": "sys", "score": 2.5},
            ],
        )
    )
    card = calibrate("labels.jsonl", labels, results, METRICS, "sys", 0)
    assert (card.rows, card.other_systems, card.not_in_run, card.not_in_run_ids) == (9, 1, 2, ["a", "zz"])
    assert card.not_judged == ["1 label(s) for march's judge_utility: not a metric this run reports"]
    asqa, march = card.metrics
    assert (asqa.suite, asqa.metric, asqa.labelled, asqa.pairs) == ("asqa", "judge_utility", 4, 2)
    assert asqa.unpaired == [
        "1 without an answer (errored or missing)",
        "1 not scored by the judge: judge unavailable: HTTP 500",
    ]
    assert asqa.left_out == asqa.unpaired  # the unlabelled items all have a judge score
    assert (asqa.judged, asqa.judge_mean) == (4, 3.0)  # a, b, e, f
    assert asqa.level == "ordinal" and asqa.kappa is None
    assert asqa.alpha.value == pytest.approx(
        krippendorff.alpha(reliability_data=[[5, 1], [4, 2]], level_of_measurement="ordinal")
    )
    low, high = ppi_py.ppi_mean_ci(
        np.array([5.0, 1.0]), np.array([4.0, 2.0]), np.array([5.0, 1.0]), alpha=0.05
    )
    assert (asqa.ppi.low, asqa.ppi.high) == pytest.approx((low[0], high[0]))
    assert (march.metric, march.labelled, march.pairs) == ("judge", 1, 1)
    assert march.spearman.reason == "fewer than two items rated by both"
    assert march.ppi.reason == "fewer than two labelled items" and march.level == "interval"


def test_binary_labels_get_kappa(tmp_path):
    results = [result("march", str(n), float(n % 2)) for n in range(12)]
    labels = read_labels(write(tmp_path, [{"id": str(n), "score": float(n % 3 == 0)} for n in range(8)]))
    [march] = calibrate("l", labels, results, METRICS, "sys", 3).metrics
    assert march.kappa is not None and march.kappa.value is not None
    human, judge = [float(n % 3 == 0) for n in range(8)], [float(n % 2) for n in range(8)]
    assert march.kappa.value == pytest.approx(cohen_kappa_score(human, judge))
    assert march.kappa.low is not None and march.level == "ordinal"


@given(
    st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=4, max_size=30),
    st.lists(st.integers(1, 5), min_size=1, max_size=30),
)
def test_figures_equal_the_independent_implementations(pairs, unlabelled):
    results = [result("asqa", f"l{n}", float(j)) for n, (_, j) in enumerate(pairs)]
    results += [result("asqa", f"u{n}", float(j)) for n, j in enumerate(unlabelled)]
    labels = [_row(f"l{n}", h) for n, (h, _) in enumerate(pairs)]
    [m] = calibrate("l", labels, results, METRICS, "sys", 0).metrics
    human = np.array([h for h, _ in pairs], dtype=float)
    judge = np.array([j for _, j in pairs], dtype=float)
    if len(set(human)) > 1 and len(set(judge)) > 1:
        assert m.spearman.value == pytest.approx(scipy.stats.spearmanr(human, judge).statistic)
    else:
        assert m.spearman.value is None
    if m.alpha.value is not None:
        expected = krippendorff.alpha(reliability_data=[human, judge], level_of_measurement="ordinal")
        assert m.alpha.value == pytest.approx(expected)
    everything = np.concatenate([judge, np.array(unlabelled, dtype=float)])
    if np.var(everything) > 0:
        point = ppi_py.ppi_mean_pointestimate(human, judge, np.array(unlabelled, dtype=float))
        assert m.ppi.value == pytest.approx(float(np.squeeze(point)))
    assert m.judge_mean == pytest.approx(float(everything.mean()))


def _row(item_id, score):
    from pytest_ambigqa.card.calibration import Label

    return Label("line 1", item_id, None, None, {None: float(score)})


SYSTEM = """
import json, pathlib

BROKEN = {broken!r}

def answer(question, item):
    if item.id == BROKEN:
        raise RuntimeError("boom")
    return item.long_answers[0]
"""


def labelled_run(pytester, chat_server, rows, *args, broken="", report="report"):
    pytester.makeconftest(GUARD)
    pytester.makepyfile(mysys=SYSTEM.format(broken=broken))
    (pytester.path / "labels.jsonl").write_text(
        "\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8"
    )
    return ambig_run(
        pytester,
        "--ambig-suite=asqa",
        "--ambig-system=mysys:answer",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-judge=judge-m",
        "--ambig-cache-dir=cache",
        "--ambig-metrics=str_em,judge_utility",
        "--ambig-human-labels=labels.jsonl",
        *args,
        report=report,
    )


def test_a_run_with_labels_reports_agreement_and_the_corrected_mean(pytester, chat_server):
    judge = {i.id: utility(f"Question: {i.question}\n\nAnswer: {i.long_answers[0]}") for i in ASQA}
    human = {i.id: min(5, judge[i.id] + n % 2) for n, i in enumerate(ASQA[:7])}  # 7 of 10 labelled
    rows = [{"id": k, "system": "mysys:answer", "score": v} for k, v in human.items()]
    rows += [{"id": ASQA[0].id, "system": "other", "score": 1}, {"id": "nope", "score": 3}]
    broken = ASQA[1].id
    result, card = labelled_run(pytester, chat_server, rows, broken=broken)
    result.assert_outcomes(passed=9, errors=1)
    [m] = card["calibration"]["metrics"]
    assert card["calibration"]["other_systems"] == 1 and card["calibration"]["not_in_run_ids"] == ["nope"]
    assert (m["labelled"], m["pairs"], m["judged"], m["level"]) == (7, 6, 9, "ordinal")
    assert m["unpaired"] == m["left_out"] == ["1 without an answer (errored or missing)"]
    pairs = [(human[k], judge[k]) for k in human if k != broken]
    assert m["spearman"]["value"] == pytest.approx(scipy.stats.spearmanr(*zip(*pairs, strict=True)).statistic)
    assert m["alpha"]["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=list(zip(*pairs, strict=True)), level_of_measurement="ordinal")
    )
    unlabelled = np.array([judge[i.id] for i in ASQA[7:]], dtype=float)
    low, high = ppi_py.ppi_mean_ci(
        np.array([h for h, _ in pairs], dtype=float),
        np.array([j for _, j in pairs], dtype=float),
        unlabelled,
        alpha=0.05,
    )
    assert (m["ppi"]["low"], m["ppi"]["high"]) == pytest.approx((low[0], high[0]))
    assert m["judge_mean"] == pytest.approx((sum(j for _, j in pairs) + unlabelled.sum()) / 9)
    result.stdout.fnmatch_lines(
        [
            "judge against human labels: *labels.jsonl, 9 rows; 1 for other systems than mysys:answer (ignored); "
            "1 not among this run's items (nope)",
            "  asqa Judge: utility: labelled but not paired: 1 without an answer (errored or missing)",
            "*suite*metric*pairs*Spearman*Krippendorff's alpha*Cohen's kappa",
            "*ASQA*Judge: utility*6/7*ordinal*n/a (not both 0/1)",
            "*suite*metric*judge mean*human-scale mean (PPI)*items: labelled + unlabelled",
            "*ASQA*Judge: utility*6 + 3",
        ]
    )
    markdown = (pytester.path / "report" / "scorecard.md").read_text(encoding="utf-8")
    assert "## Judge against human labels" in markdown and "| ASQA | Judge: utility | 6/7 |" in markdown
    html = (pytester.path / "report" / "report.html").read_text(encoding="utf-8")
    assert "Judge against human labels" in html  # the page's script draws the section
    assert read_card(pytester.path / "report" / "scorecard.json").calibration == Calibration.from_json(
        card["calibration"]
    )


def test_bad_labels_stop_the_run_before_any_item(pytester, chat_server):
    result, card = labelled_run(pytester, chat_server, [{"id": "x", "score": "high"}])
    assert result.ret == pytest.ExitCode.USAGE_ERROR and not card and not chat_server.requests
    result.stderr.fnmatch_lines(
        ["ERROR: --ambig-human-labels: *labels.jsonl, line 1: 'score' must be a finite number, not \"high\""]
    )


def test_labels_need_a_judge(pytester):
    (pytester.path / "labels.jsonl").write_text('{"id": "x", "score": 1}\n', encoding="utf-8")
    result = pytester.runpytest("--ambig-suite=asqa", "--ambig-human-labels=labels.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --ambig-human-labels: the labels are compared with the judge's scores*"]
    )


def test_labels_are_refused_in_a_shard(pytester):
    (pytester.path / "labels.jsonl").write_text('{"id": "x", "score": 1}\n', encoding="utf-8")
    result = pytester.runpytest(
        "--ambig-suite=asqa", "--ambig-human-labels=labels.jsonl", "--ambig-judge=j", "--ambig-shard=1/2"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --ambig-human-labels: a shard holds part of the labelled items*"])


def test_a_damaged_calibration_is_refused_when_read_back(pytester, chat_server, tmp_path):
    rows = [{"id": i.id, "score": 3} for i in ASQA[:4]]
    _, card = labelled_run(pytester, chat_server, rows)
    card["calibration"]["metrics"][0]["ppi"]["value"] = math.nan
    path = tmp_path / "scorecard.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    with pytest.raises(
        ScorecardError, match=r"calibration\.metrics\.0\.ppi\.value: nan is not a finite number"
    ):
        read_card(path)
    del card["calibration"]  # a scorecard from before, or of a run without labels
    path.write_text(json.dumps(card), encoding="utf-8")
    assert read_card(path).calibration is None


ALCE = "alce_human_utility_sample100.jsonl"
ALCE_SYSTEM = """
import json, pathlib

ROWS = [json.loads(line) for line in pathlib.Path({path!r}).read_text(encoding="utf-8").splitlines()]
OUTPUTS = {{r["sample_id"]: r["output"] for r in ROWS if r["model"] == {model!r}}}

def answer(question, item):
    return OUTPUTS[item.id]
"""


@pytest.mark.parametrize("model", range(4))
def test_on_alces_real_human_ratings_the_figures_equal_an_independent_computation(
    pytester, chat_server, shared_data, model
):
    """ALCE's 100 human utility ratings (25 questions x 4 systems): a run per system replays its
    outputs, the stand-in judge rates each by its length; 15 of the 25 ratings are the labels
    (the other 10 items are the unlabelled part of the prediction-powered mean), and the 75
    ratings of the other systems stay in the file, ignored."""
    source = shared_data / "asqa" / ALCE
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    models = list(dict.fromkeys(r["model"] for r in rows))
    mine = [r for r in rows if r["model"] == models[model]]
    # The items: the questions of the ratings, in ASQA's layout; only the judge metric runs,
    # so the gold the layout asks for is never read.
    items = [
        {
            "sample_id": r["sample_id"],
            "question": r["question"],
            "qa_pairs": [{"question": r["question"], "short_answers": ["-"]}],
        }
        for r in mine
    ]
    (pytester.path / "items.jsonl").write_text("\n".join(map(json.dumps, items)) + "\n", encoding="utf-8")
    pytester.makepyfile(alce=ALCE_SYSTEM.format(path=str(source), model=models[model]))
    labelled = {r["sample_id"] for r in mine[:15]}
    labels = [
        {
            "id": r["sample_id"],
            "system": "alce:answer" if r["model"] == models[model] else r["model"],
            "score": r["utility_score"],
        }
        for r in rows
        if r["model"] != models[model] or r["sample_id"] in labelled
    ]
    (pytester.path / "labels.jsonl").write_text("\n".join(map(json.dumps, labels)) + "\n", encoding="utf-8")
    pytester.makeconftest(GUARD)
    result, card = ambig_run(
        pytester,
        "--ambig-suite=asqa",
        "--ambig-data=items.jsonl",
        "--ambig-system=alce:answer",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-judge=judge-m",
        "--ambig-metrics=judge_utility",
        "--ambig-human-labels=labels.jsonl",
    )
    result.assert_outcomes(passed=25)
    calibration = card["calibration"]
    assert (calibration["rows"], calibration["other_systems"], calibration["not_in_run"]) == (90, 75, 0)
    [m] = calibration["metrics"]
    judge = {r["sample_id"]: utility(f"Question: {r['question']}\n\nAnswer: {r['output']}") for r in mine}
    human = np.array([r["utility_score"] for r in mine[:15]], dtype=float)
    judged = np.array([judge[r["sample_id"]] for r in mine[:15]], dtype=float)
    unlabelled = np.array([judge[r["sample_id"]] for r in mine[15:]], dtype=float)
    assert (m["pairs"], m["judged"], m["level"]) == (15, 25, "ordinal")
    assert m["spearman"]["value"] == pytest.approx(scipy.stats.spearmanr(human, judged).statistic, abs=1e-12)
    expected = krippendorff.alpha(reliability_data=[human, judged], level_of_measurement="ordinal")
    assert m["alpha"]["value"] == pytest.approx(expected, abs=1e-12)
    low, high = ppi_py.ppi_mean_ci(human, judged, unlabelled, alpha=0.05)
    point = float(np.squeeze(ppi_py.ppi_mean_pointestimate(human, judged, unlabelled)))
    assert (m["ppi"]["value"], m["ppi"]["low"], m["ppi"]["high"]) == pytest.approx(
        (point, low[0], high[0]), abs=1e-12
    )
    assert m["judge_mean"] == pytest.approx(np.concatenate([judged, unlabelled]).mean())


# -- ALCE's released human evaluation files, as released (issue 38, part 2) ------------------

ALCE_MODEL = "asqa-made-up-model-shot2-ndoc5-42.json"


def alce_output(item_id: str, **ratings) -> dict:
    """One output of ALCE's human evaluation files, in their fields (values invented)."""
    return {"id": item_id, "question": "Who?", "output": "Someone [1].", **ratings}


def test_alces_nested_release_is_read_as_released(tmp_path):
    """``human_eval_utility_completed.json`` and ``..._citations_completed.json``: one object,
    dataset -> model file -> question id -> output; each model's overall_results is no row."""
    utility_file = {
        "asqa": {
            ALCE_MODEL: {
                "-1": alce_output("-1", utility_score=5, automatic_correctness_scores=[True, False]),
                "7": alce_output("7", utility_score=2, automatic_correctness_scores=[False]),
                "overall_results": {"str_em": 35.3, "length": 42.4},
            },
            "asqa-other.json": {"-1": alce_output("-1", utility_score=1)},
        },
        "eli5": {"eli5-m.json": {"eli5_0": alce_output("eli5_0", utility_score=3)}},
    }
    path = tmp_path / "human_eval_utility_completed.json"
    path.write_text(json.dumps(utility_file, indent=2), encoding="utf-8")
    labels = read_labels(path)
    assert [(x.suite, x.system, x.item_id, x.scores) for x in labels] == [
        ("asqa", ALCE_MODEL, "-1", {"judge_utility": 5.0}),
        ("asqa", ALCE_MODEL, "7", {"judge_utility": 2.0}),
        ("asqa", "asqa-other.json", "-1", {"judge_utility": 1.0}),
        ("eli5", "eli5-m.json", "eli5_0", {"judge_utility": 3.0}),
    ]
    assert labels[0].where == f'["asqa"]["{ALCE_MODEL}"]["-1"]'
    citations = {
        "asqa": {
            ALCE_MODEL: {
                "-1": alce_output(
                    "-1",
                    overall_recall_score=0.5,
                    overall_precision_score=1.0,
                    sentences=[{"text": "Someone [1].", "sentence_recall_score": 1, "citations": []}],
                ),
                "overall_results": {"citation_rec": 76.0},
            }
        }
    }
    path = tmp_path / "human_eval_citations_completed.json"
    path.write_text(json.dumps(citations), encoding="utf-8")
    [label] = read_labels(path)
    assert label.scores == {"citation_recall": 0.5, "citation_precision": 1.0}
    # No judge metric of this version takes citation labels: counted as such, never matched.
    result = ItemResult("asqa", "-1", "ok", None, scores={"judge_utility": 4.0})
    calibration = calibrate(str(path), [label], [result], METRICS, ALCE_MODEL, 0)
    assert calibration.metrics == [] and calibration.not_judged == [
        "1 label(s) for asqa's citation_recall: not a metric this run reports",
        "1 label(s) for asqa's citation_precision: not a metric this run reports",
    ]


def test_alces_outputs_one_per_line_are_read_with_their_field_names(tmp_path):
    """The same outputs flattened, one per line, as ``../shared``'s sample holds them:
    ``sample_id`` the id, ``model`` the system."""
    rows = [
        {"sample_id": "-1", "model": ALCE_MODEL, "question": "Who?", "output": "x", "utility_score": 4},
        {"id": "7", "model": ALCE_MODEL, "utility_score": 1, "automatic_correctness_scores": [False]},
    ]
    labels = read_labels(write(tmp_path, rows))
    assert [(x.item_id, x.system, x.scores) for x in labels] == [
        ("-1", ALCE_MODEL, {"judge_utility": 4.0}),
        ("7", ALCE_MODEL, {"judge_utility": 1.0}),
    ]


@pytest.mark.parametrize(
    ("output", "problem"),
    [
        (alce_output("-1"), "no human rating in it (ALCE's utility_score, overall_recall_score, "),
        (alce_output("-2", utility_score=3), 'its \'id\' "-2" is not its key "-1"'),
        (alce_output("-1", utility_score="5"), "'utility_score' must be a finite number, not \"5\""),
        (alce_output("-1", overall_recall_score=None), "'overall_recall_score' must be a finite number"),
    ],
)
def test_a_bad_alce_output_is_named_by_file_and_place(tmp_path, output, problem):
    path = tmp_path / "human_eval_utility_completed.json"
    path.write_text(json.dumps({"asqa": {ALCE_MODEL: {"-1": output}}}), encoding="utf-8")
    with pytest.raises(UnreadableFile) as raised:
        read_labels(path)
    assert str(raised.value).startswith(f'{path}, ["asqa"]["{ALCE_MODEL}"]["-1"]: {problem}')


def test_a_bad_alce_line_is_named_by_file_and_line(tmp_path):
    path = write(
        tmp_path, [{"sample_id": "-1", "utility_score": 4}, {"model": ALCE_MODEL, "utility_score": 4}]
    )
    with pytest.raises(UnreadableFile) as raised:
        read_labels(path)
    assert str(raised.value) == (
        f"{path}, line 2: 'id' must be the item's id (a non-empty string) ('sample_id' in ALCE's)"
    )


def test_the_shared_alce_sample_is_read_as_it_is(shared_data):
    labels = read_labels(shared_data / "asqa" / ALCE)
    assert len(labels) == 100 and len({x.system for x in labels}) == 4
    assert all(set(x.scores) == {"judge_utility"} and 1 <= x.scores["judge_utility"] <= 5 for x in labels)
    assert len({x.item_id for x in labels}) == 25


def test_a_run_takes_alces_rows_for_the_system_it_names(pytester, chat_server):
    """``--ambig-human-labels-system`` names the run's system as the file does (ALCE's model
    file); the other models' rows are ignored and counted."""
    rows = [{"sample_id": i.id, "model": ALCE_MODEL, "utility_score": 3} for i in ASQA[:5]]
    rows += [{"sample_id": ASQA[0].id, "model": "asqa-other.json", "utility_score": 1}]
    result, card = labelled_run(pytester, chat_server, rows, f"--ambig-human-labels-system={ALCE_MODEL}")
    result.assert_outcomes(passed=10)
    calibration = card["calibration"]
    assert (calibration["system"], calibration["other_systems"]) == (ALCE_MODEL, 1)
    [m] = calibration["metrics"]
    assert (m["metric"], m["labelled"], m["pairs"]) == ("judge_utility", 5, 5)
    result = pytester.runpytest("--ambig-suite=asqa", f"--ambig-human-labels-system={ALCE_MODEL}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --ambig-human-labels-system: only with --ambig-human-labels"])
