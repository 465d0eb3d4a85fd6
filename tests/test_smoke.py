"""Whole runs kept in the fast tier (``smoke``): the session, the plugin's hooks, the writers and the
systems that stand behind a run are reached only through one, so a few small in-process runs
stand in the fast tier for the full tier's hundreds. Each checks that the run ends well and
leaves what its parts make; what the numbers are is the full tier's to check."""

from __future__ import annotations

import pytest

from fixtures.process import ambig_run
from pytest_ambigqa.cli import main as cli

pytestmark = pytest.mark.smoke

REPORTS = {"scorecard.json", "scorecard.md", "report.html"}


def test_a_run_of_an_endpoint_is_reported_rescored_and_compared(pytester, local_server):
    server = local_server(lambda path, body: (200, {"text": body["question"]}))
    result, card = ambig_run(
        pytester, "--ambig-suite=march", "--ambig-limit=2", f"--ambig-system={server.url}/qa"
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert len(server.requests) == 2 and len(card["items"]) == 2
    assert REPORTS <= {p.name for p in (pytester.path / "report").iterdir()}
    again, rescored = ambig_run(pytester, "--ambig-rescore=report/scorecard.json", report="again")
    assert again.ret == 0 and len(server.requests) == 2  # replayed, not asked again
    assert [r["answer"] for r in rescored["items"]] == [r["answer"] for r in card["items"]]
    compared = pytester.path / "compared"
    assert cli(["compare", "report/scorecard.json", "again/scorecard.json", "-o", str(compared)]) == 0
    assert REPORTS <= {p.name for p in compared.iterdir()}


def test_a_users_own_test_asserts_on_each_item(pytester):
    pytester.makepyfile(
        test_mine="""
        from pytest_ambigqa import assert_ambig
        def test_answers(ambig_item):
            gold = " ".join(i.short_answers[0] for i in ambig_item.interpretations)
            assert_ambig(gold, ambig_item, str_em=1.0)
        """
    )
    pytester.runpytest("test_mine.py", "--ambig-suite=march", "--ambig-limit=2").assert_outcomes(passed=2)


def test_an_interactive_run_is_reported(pytester):
    result, card = ambig_run(
        pytester,
        "--ambig-suite=march",
        "--ambig-limit=1",
        "--ambig-protocol=interactive",
        "--ambig-costs=0:0.1",
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert card["config"]["protocol"] == "interactive"
    assert "interactive" in (pytester.path / "report" / "scorecard.md").read_text().lower()


def test_a_run_judged_in_a_batch(pytester, chat_server):
    result, card = ambig_run(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=oracle",
        "--ambig-limit=2",
        "--ambig-judge=judge-m",
        f"--ambig-judge-base-url={chat_server.url}",
        "--ambig-judge-batch=60",
        "--ambig-judge-batch-poll=0.01",
        "--ambig-cache-dir=cache",
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    judge = next(s for s in card["suites"] if s["name"] == "march")["metrics"]["judge"]
    assert judge["n"] == 2 and len(chat_server.batch_api.created) == 1
