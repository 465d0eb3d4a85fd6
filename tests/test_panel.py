"""Judge panels (issue 28, part 2): every criterion scored by each judge, their scores made
one item score, and the panel's agreement (Krippendorff's alpha) and disputes reported."""

from __future__ import annotations

import base64
import dataclasses
import json
import socket
import statistics
import zlib

import krippendorff
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixtures.network import GUARD
from fixtures.process import ambig_run
from fixtures.servers import SECRET, ChatServer
from pytest_ambigqa.card.scorecard import Scorecard, _per_item_panels
from pytest_ambigqa.evaluate import combine_trials
from pytest_ambigqa.judge.judgement import Judgement
from pytest_ambigqa.judge.panel import combine
from pytest_ambigqa.readback import Invalid, check_scorecard
from pytest_ambigqa.report import html
from pytest_ambigqa.schema import ItemResult

CRITERIA = ("judge_relevance", "judge_faithfulness", "judge_informativeness", "judge_correctness")
scores = st.floats(0, 5, allow_nan=False)


def test_combine_takes_each_sample_and_unit_across_the_judges():
    a = Judgement({"m": [1.0, 3.0]}, {"u": [0.0, 1.0]}, {"matches": "a's"})
    b = Judgement({"m": [2.0, 5.0]}, {"u": [1.0, 1.0]}, {"matches": "b's"})
    c = Judgement({"m": [6.0, 4.0]}, {"u": [1.0, 0.0]}, {"matches": "c's"})
    mean = combine([a, b, c], "mean")
    assert mean.samples == {"m": [3.0, 4.0]} and mean.units == {"u": [2 / 3, 2 / 3]}
    assert mean.panel == {"m": [2.0, 3.5, 5.0]}  # each judge's mean over its seeds
    assert mean.details == {"matches": "a's"}
    median = combine([a, b, c], "median")
    assert median.samples == {"m": [2.0, 4.0]} and median.units == {"u": [1.0, 1.0]}
    assert combine([a, b], "median").means() == {"m": 2.75}  # an even panel: the middle two's mean


@given(st.lists(scores, min_size=1, max_size=4), st.integers(1, 5), st.sampled_from(["mean", "median"]))
def test_a_panel_of_one_opinion_is_that_opinion(values, judges, how):
    one = Judgement({"m": values})
    combined = combine([one] * judges, how)
    assert combined.samples["m"] == pytest.approx(one.samples["m"], rel=1e-12)
    assert combined.panel == {"m": [one.means()["m"]] * judges}


@given(
    st.lists(st.lists(scores, min_size=2, max_size=2), min_size=2, max_size=5),
    st.sampled_from(["mean", "median"]),
)
def test_a_panel_score_lies_between_its_judges(rows, how):
    combined = combine([Judgement({"m": row}) for row in rows], how)
    for k, value in enumerate(combined.samples["m"]):
        column = [row[k] for row in rows]
        assert min(column) - 1e-9 <= value <= max(column) + 1e-9


def run_panel(pytester, *args: str, report: str = "report"):
    pytester.makeconftest(GUARD)
    return ambig_run(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=oracle",
        "--ambig-judge-timeout=2",
        "--ambig-judge-retries=0",
        "--ambig-cache-dir=cache",
        *args,
        report=report,
    )


def suite(card: dict) -> dict:
    return next(s for s in card["suites"] if s["name"] == "march")


def test_a_panel_of_two_servers_scores_agrees_and_disputes(pytester, chat_server):
    other = ChatServer()
    try:
        result, card = run_panel(
            pytester,
            "--ambig-judge=panel-a,panel-b",
            f"--ambig-judge-base-url={chat_server.url},{other.url}",
            "--ambig-judge-price=1,2;3,4",
        )
    finally:
        other.server.shutdown()
        other.server.server_close()
    assert result.ret == 0, result.stdout.str()
    models = [j["model"] for j in card["judge"]["panel"]["judges"]]
    assert models == ["panel-a", "panel-b"] and card["judge"]["panel"]["aggregation"] == "mean"
    assert {r["model"] for r in chat_server.requests} == {"panel-a"}  # each judge on its own server
    assert {r["model"] for r in other.requests} == {"panel-b"}
    assert card["config"]["judge_prices"] == [[1.0, 2.0], [3.0, 4.0]] and card["judge"]["usage"]["cost"] > 0
    items = card["items"]
    assert len(items) == 13
    for item in items:
        for metric in (*CRITERIA, "judge"):
            a, b = item["panel"][metric]
            assert item["scores"][metric] == pytest.approx((a + b) / 2)
    agreement = suite(card)["panel"]
    for metric in CRITERIA:
        units = [item["panel"][metric] for item in items]
        entry = agreement[metric]
        assert entry["level"] == "ordinal" and entry["items"] == 13 and entry["threshold"] == 2.0
        theirs = krippendorff.alpha(reliability_data=np.array(units).T, level_of_measurement="ordinal")
        assert entry["alpha"] == pytest.approx(theirs, abs=1e-12)
        assert entry["low"] <= entry["alpha"] <= entry["high"]
        expected = [
            i["suite"] + "-" + i["item_id"]
            for i, u in zip(items, units, strict=True)
            if abs(u[0] - u[1]) >= 2
        ]
        assert entry["disputed"] == expected
    assert agreement["judge"]["level"] == "interval"  # a mean of four criteria is no whole number
    assert any(agreement[m]["disputed"] for m in CRITERIA)  # the stand-ins differ by up to 3
    result.stdout.fnmatch_lines(
        [
            f"judge panel: panel-a at {chat_server.url}, panel-b at {other.url}; an item's score is the mean*",
            "*judge panel, Judge: relevance: Krippendorff's alpha *, ordinal, over 13 items; * items where "
            "the judges differ by 2.000 or more*",
        ]
    )
    markdown = (pytester.path / "report" / "scorecard.md").read_text(encoding="utf-8")
    assert "judge panel, Judge: correctness: Krippendorff's alpha" in markdown
    loaded = Scorecard.from_json(card)  # read back as written
    assert loaded.suites[0].panel["judge"].alpha == agreement["judge"]["alpha"]
    packed = html.payload(loaded)["items"].text()
    rows = json.loads(zlib.decompress(base64.b64decode(packed)))
    flagged = {k for m in agreement.values() for k in m["disputed"]}
    assert {r["key"] for r in rows if r["spread"] > 0} == flagged  # report.html's disagreement filter
    for path in pytester.path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_the_median_of_a_panel_and_a_rerun_from_the_cache(pytester, chat_server):
    args = ("--ambig-judge=panel-a,panel-b,panel-c", f"--ambig-judge-base-url={chat_server.url}")
    result, card = run_panel(pytester, *args, "--ambig-judge-panel=median")
    assert result.ret == 0, result.stdout.str()
    for item in card["items"]:
        for metric in CRITERIA:
            assert item["scores"][metric] == statistics.median(item["panel"][metric])
    sent = len(chat_server.requests)
    assert sent == 3 * 13  # one call per judge and item
    again, card2 = run_panel(pytester, *args, "--ambig-judge-panel=median", report="again")
    assert len(chat_server.requests) == sent and suite(card2)["metrics"] == suite(card)["metrics"]


def test_a_panel_judge_that_fails_leaves_only_the_judge_metrics_unscored(pytester, chat_server):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    result, card = run_panel(
        pytester,
        "--ambig-judge=panel-a,panel-b",
        f"--ambig-judge-base-url={chat_server.url},{dead}",
        "--ambig-no-preflight",  # as if it died after the check: the run goes on without it
    )
    for item in card["items"]:
        assert "str_em" in item["scores"]  # the lexical metrics are untouched
        assert set(CRITERIA) <= set(item["unscored"])
        assert item["unscored"]["judge"].startswith("panel judge panel-b: ")
        assert "panel" not in item
    assert "panel" not in suite(card)
    assert suite(card)["metrics"]["judge"]["mean"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (
                "--ambig-judge=a,b",
                "--ambig-judge-base-url=http://127.0.0.1:1/v1,http://127.0.0.1:2/v1,http://127.0.0.1:3/v1",
            ),
            "*--ambig-judge-base-url: 3 URLs for 2 judges*",
        ),
        (("--ambig-judge=a,,b",), "*--ambig-judge=a,,b: an empty model name in the list*"),
        (("--ambig-judge=a,a",), "*--ambig-judge: a named twice on the same server*"),
        (
            ("--ambig-judge=a,b", "--ambig-judge-price=1,2;3,4;5,6"),
            "*--ambig-judge-price: 3 prices for 2 judges*",
        ),
        (
            ("--ambig-judge=a,b", "--ambig-judge-panel=vote"),
            "*--ambig-judge-panel: 'vote' is not one of mean, median*",
        ),
        (
            ("--ambig-judge=a,b", "--ambig-judge-disagreement=2"),
            "*--ambig-judge-disagreement: 2 must be between 0 and 1*",
        ),
    ],
)
def test_a_bad_panel_is_one_usage_error(pytester, args, message):
    result = pytester.runpytest("--ambig-suite=march", "--ambig-system=oracle", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_damaged_panel_entry_is_refused_when_read_back(pytester, chat_server):
    result, card = run_panel(
        pytester, "--ambig-judge=panel-a,panel-b", f"--ambig-judge-base-url={chat_server.url}"
    )
    assert result.ret == 0
    suite(card)["panel"]["judge"]["alpha"] = float("nan")
    with pytest.raises(Invalid, match=r"suites\.0\.panel\.judge\.alpha"):
        check_scorecard(card)
    suite(card)["panel"]["judge"]["alpha"] = 0.5
    card["items"][0]["panel"]["judge"] = [1.0, 7.0]  # off the 0-5 scale
    with pytest.raises(Invalid, match=r"panel\.judge"):
        check_scorecard(card)


def test_a_panel_judges_in_batches_as_it_judges_call_by_call(pytester, chat_server):
    """``--ambig-judge-batch`` with a panel: one batch per judge in one round, the same panel
    scores as call by call, and a rerun sends nothing."""
    args = (
        "--ambig-judge=panel-a,panel-b",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-limit=5",
        "--ambig-judge-price=1,2;3,4",  # each judge's batch price is half its own
    )
    direct, one_by_one = run_panel(pytester, *args, report="direct")
    assert direct.ret == 0
    pytester.path.joinpath("cache").rename(pytester.path / "cache-direct")  # nothing cached for the batch run
    chat_server.requests.clear()
    batched = ("--ambig-judge-batch=60", "--ambig-judge-batch-poll=0.01")
    result, card = run_panel(pytester, *args, *batched, report="batched")
    assert result.ret == 0, result.stdout.str()
    api = chat_server.batch_api
    assert chat_server.requests == [] and len(api.created) == 2  # each judge's requests, one batch each
    uploaded = [json.loads(line) for f in api.files.values() for line in f.decode().splitlines()]
    models = sorted(line["body"]["model"] for line in uploaded if "body" in line)  # not the outputs
    assert models == ["panel-a"] * 5 + ["panel-b"] * 5
    assert [i["panel"] for i in card["items"]] == [i["panel"] for i in one_by_one["items"]]
    assert suite(card)["panel"] == suite(one_by_one)["panel"]
    paid, unbatched = card["judge"]["usage"]["cost"], one_by_one["judge"]["usage"]["cost"]
    assert paid == pytest.approx(unbatched / 2) and card["judge"]["usage"]["saved"] == pytest.approx(paid)
    again, _ = run_panel(pytester, *args, *batched, report="again")
    assert again.ret == 0 and len(api.created) == 2 and chat_server.requests == []


def test_asqas_utility_judge_is_a_panels_too(pytester, chat_server):
    result, card = ambig_run(
        pytester,
        "--ambig-suite=asqa",
        "--ambig-system=oracle",
        "--ambig-limit=3",
        "--ambig-metrics=judge_utility",
        "--ambig-judge=panel-a,panel-b",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-cache-dir=cache",
    )
    assert result.ret == 0, result.stdout.str()
    for item in card["items"]:
        a, b = item["panel"]["judge_utility"]
        assert item["scores"]["judge_utility"] == pytest.approx((a + b) / 2)
    assert {r["model"] for r in chat_server.requests} == {"panel-a", "panel-b"}


def test_with_repeated_trials_agreement_resamples_items_not_trials():
    trials = [
        ItemResult("march", "a", "ok", scores={"judge": 3.0}, panel={"judge": [2.0, 4.0]}),
        ItemResult("march", "a", "ok", scores={"judge": 4.0}, panel={"judge": [3.0, 5.0]}),
    ]
    item = dataclasses.replace(combine_trials(trials), panel={})
    (merged,) = _per_item_panels([item])
    assert merged.panel == {"judge": [2.5, 4.5]}  # each judge's mean over the item's trials
