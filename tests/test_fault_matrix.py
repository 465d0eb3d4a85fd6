"""The invariant, as a matrix: judge fault x suite, serial and under xdist, against one loopback server.

Whatever the judge server does, every item is present, every no-model metric is what a run
without any judge gives, every model metric is unscored with its reason (never 0), the run
fails saying why, and the API key is in no file and no output.
"""

from __future__ import annotations

import itertools

import pytest

from fixtures.network import GUARD
from fixtures.process import ambig_run
from fixtures.servers import SECRET
from pytest_ambigqa.baselines import oracle
from pytest_ambigqa.metrics import METRICS
from pytest_ambigqa.suites import SUITES, LoadOptions, Scorers, stratified_sample

FAULTS = ["html", "foo", "null-choices", "list-content", "invalid", "500", "401-echo"]
SUITE_ARGS = {
    "march": [],
    "condambigqa": [],
    "asqa": ["--ambig-reader=llm"],  # the judge model reads the answers: the reader fails with it
}
LIMIT = 3
# Every fault against every suite in one process; under xdist (where the judge's calls run in the
# workers and their failures reach the controller in reports) every fault once and every suite at
# least twice, the suites taken in turn: an xdist run costs five serial ones, and what a fault does
# to a judge's reply does not depend on the process that asked.
CASES = [pytest.param(f, s, "0", id=f"{f}-{s}-0") for f in FAULTS for s in SUITE_ARGS] + [
    pytest.param(f, s, "2", id=f"{f}-{s}-2")
    for f, s in zip(FAULTS, itertools.cycle(SUITE_ARGS), strict=False)
]


def fault_free(suite: str) -> dict[str, dict[str, float]]:
    """Each selected item's no-model scores, computed here with no judge and no reader."""
    items = stratified_sample(SUITES[suite].load(None, LoadOptions()).items, LIMIT, 0)
    return {
        item.key: {
            m: v
            for m, v in SUITES[suite].score(item, oracle(item.question, item), Scorers()).scores.items()
            if METRICS[m].needs is None
        }
        for item in items
    }


@pytest.mark.parametrize(("fault", "suite", "workers"), CASES)
def test_a_failing_judge_changes_nothing_else(pytester, chat_server, fault, suite, workers):
    chat_server.faults = [fault] * 10_000
    pytester.makeconftest(GUARD)
    result, card = ambig_run(
        pytester,
        f"--ambig-suite={suite}",
        "--ambig-system=oracle",
        f"--ambig-limit={LIMIT}",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-judge=judge-m",
        "--ambig-judge-retries=1",
        "--ambig-judge-reasks=1",
        "--ambig-cache-dir=cache",
        "--junitxml=junit.xml",
        "-n",
        workers,
        *SUITE_ARGS[suite],
    )
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output[-2000:]
    assert "INTERNALERROR" not in output and "Traceback" not in output
    result.stdout.fnmatch_lines(["gate FAILED: *the configured model scored no item*"])
    expected = fault_free(suite)
    items = {f"{i['suite']}-{i['item_id']}": i for i in card["items"]}
    assert set(items) == set(expected) and {i["status"] for i in items.values()} == {"ok"}
    for key, item in items.items():
        no_model = {m: v for m, v in item["scores"].items() if METRICS[m].needs is None}
        assert no_model == expected[key], key
        modelled = [m for m in SUITES[suite].metrics if METRICS[m].needs and not METRICS[m].suite_level]
        assert all(m not in item["scores"] and item["unscored"][m] for m in modelled), key
    for path in pytester.path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in output
