"""End to end through pytest itself (pytester): items as tests, systems, scorecard, gates."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fixtures.process import ambig_run
from pytest_ambigqa.suites import SUITES, LoadOptions

MARCH = SUITES["march"].load(None, LoadOptions()).items
FIRST = MARCH[0]


def scorecard(pytester: pytest.Pytester, *args: str, report: str = "report") -> tuple[pytest.RunResult, dict]:
    return ambig_run(pytester, "-p", "no:cacheprovider", *args, report=report)


def suite_card(card: dict, name: str) -> dict:
    return next(s for s in card["suites"] if s["name"] == name)


# -- items as tests -------------------------------------------------------------------------


def test_empty_directory_runs_the_sample_and_prints_a_scorecard(pytester):
    result = pytester.runpytest("--ambig-suite=march")
    result.assert_outcomes(passed=len(MARCH))
    result.stdout.fnmatch_lines(
        [
            "ambigqa: march (* items, bundled sample); system: ambig_system fixture, default lexical baseline",
            "*ambigqa scorecard*",
            "system: lexical baseline (pytest_ambigqa.baselines:lexical)",
            "*no --ambig-system given*",
            f"MARCH: {len(MARCH)} items, bundled sample (not the benchmark)",
            "*STR-EM*[[]*]*15.59–38.73*",
            "*Disambig-F1*n/a*no reader configured*",
            "*ambiguity type*items*STR-EM*",
            "*semantic*",
        ]
    )
    assert result.ret == 0


def test_collect_only_shows_stable_ids(pytester):
    result = pytester.runpytest("--ambig-suite=march,asqa", "--co", "-q")
    result.stdout.fnmatch_lines([f"ambigqa::test_ambig[march-{FIRST.id}]", "ambigqa::test_ambig[asqa-*"])
    again = pytester.runpytest("--ambig-suite=march,asqa", "--co", "-q")
    assert result.outlines[:-1] == again.outlines[:-1]  # all but the timing line


@pytest.mark.parametrize("mode", ["--collect-only", "--fixtures", "--fixtures-per-test", "--setup-plan"])
def test_a_run_that_runs_no_test_makes_no_scorecard(pytester, mode):
    """pytest collects but runs nothing: no system is asked, so no scorecard of every item
    missing is printed or written, and no gate fails the run."""
    result = pytester.runpytest(
        "--ambig-suite=march", "--ambig-fail-under=str_em=90", "--ambig-report=out", mode
    )
    assert result.ret == pytest.ExitCode.OK
    assert "ambigqa scorecard" not in result.stdout.str() and "gate" not in result.stdout.str()
    assert not (pytester.path / "out").exists()


def test_items_live_in_the_directory_given(pytester):
    pytester.mkdir("tests")
    result = pytester.runpytest("tests", "--ambig-suite=march", "--co", "-q")
    result.stdout.fnmatch_lines([f"tests/ambigqa::test_ambig[march-{FIRST.id}]"])
    pytester.makepyfile(test_mine="def test_mine():\n    pass\n")
    only_file = pytester.runpytest("test_mine.py", "--ambig-suite=march")
    only_file.assert_outcomes(passed=1)  # a file argument runs just that file


def test_keyword_selection_and_scorecard_follow_k(pytester):
    syntactic = [i for i in MARCH if i.ambiguity_type == "syntactic"]
    result, card = scorecard(pytester, "--ambig-suite=march", "-k", " or ".join(i.id for i in syntactic))
    result.assert_outcomes(passed=len(syntactic), deselected=len(MARCH) - len(syntactic))
    march = suite_card(card, "march")
    assert march["items"] == len(syntactic) and march["missing"] == 0
    assert [s["name"] for s in march["slices"]] == ["syntactic"]


def test_limit_takes_a_stratified_seeded_sample(pytester):
    _, card = scorecard(pytester, "--ambig-suite=march", "--ambig-limit=6", "--ambig-seed=1")
    kinds = [r["ambiguity_type"] for r in card["items"]]
    assert len(kinds) == 6 and set(kinds) == {"semantic", "syntactic", "constraint"}
    _, again = scorecard(pytester, "--ambig-suite=march", "--ambig-limit=6", "--ambig-seed=1", report="r2")
    assert [r["item_id"] for r in again["items"]] == [r["item_id"] for r in card["items"]]


FLAKY = f"""
def answer(question, item):
    if item.id == {FIRST.id!r}:
        raise RuntimeError("model overloaded")
    return item.long_answers[0]
"""


def test_exitfirst_and_last_failed(pytester):
    pytester.makepyfile(mysys=FLAKY)
    first = pytester.runpytest("--ambig-suite=march", "--ambig-system=mysys:answer", "-x")
    first.assert_outcomes(errors=1)
    first.stdout.fnmatch_lines(["*missing: march-*"])
    full = pytester.runpytest("--ambig-suite=march", "--ambig-system=mysys:answer")
    full.assert_outcomes(passed=len(MARCH) - 1, errors=1)
    rerun = pytester.runpytest("--ambig-suite=march", "--ambig-system=mysys:answer", "--lf")
    rerun.assert_outcomes(errors=1, deselected=len(MARCH) - 1)


def test_junit_xml_carries_item_scores(pytester):
    pytester.runpytest("--ambig-suite=march", "--ambig-system=oracle", "--junitxml=out.xml")
    root = ET.parse(pytester.path / "out.xml").getroot()
    case = next(c for c in root.iter("testcase") if c.get("name") == f"test_ambig[march-{FIRST.id}]")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props["ambigqa.status"] == "ok"
    assert float(props["ambigqa.str_em"]) == 1.0
    assert props["ambigqa.disambig_f1"] == "n/a: no reader configured (--ambig-reader)"


# -- the system under test --------------------------------------------------------------


def test_system_error_is_an_item_error_and_the_session_goes_on(pytester):
    pytester.makepyfile(mysys=FLAKY)
    result, card = scorecard(pytester, "--ambig-suite=march", "--ambig-system=mysys:answer")
    result.assert_outcomes(passed=len(MARCH) - 1, errors=1)
    result.stdout.fnmatch_lines([f"*ambigqa march-{FIRST.id}: system raised RuntimeError: model overloaded"])
    march = suite_card(card, "march")
    assert march["errors"] == 1 and march["items"] == len(MARCH)
    assert march["metrics"]["str_em"]["n"] == len(MARCH)  # the error counts as 0, not dropped
    assert march["metrics"]["str_em"]["mean"] == pytest.approx(100 * (len(MARCH) - 1) / len(MARCH))
    assert march["metrics"]["length"]["unscored"] == 1


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "return 42",
            "system returned int; expected a str (the long answer), an Answer, or a dict with 'text'*",
        ),
        (
            "return {'answer': 'x'}",
            "system returned unknown field(s) 'answer'; expected *put anything else under 'metadata')",
        ),
        (
            "return {'text': 'x', 'interpretations': [{'question': 'q'}]}",
            "system returned interpretations[[]0[]] without a string 'answer'*",
        ),
        (
            "return {'text': 'x', 'metadata': {'f': object()}}",
            "system returned 'metadata' that is not JSON-serialisable*",
        ),
    ],
)
def test_wrong_shapes_name_the_item_and_the_expected_shape(pytester, body, message):
    pytester.makepyfile(mysys=f"def answer(question):\n    {body}\n")
    result = pytester.runpytest("--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-limit=1")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"ambigqa march-*: {message}"])


def test_only_declared_arguments_are_passed_and_async_works(pytester):
    pytester.makepyfile(
        mysys="""
        import asyncio
        seen = []
        async def answer(question, passages):
            await asyncio.sleep(0)
            seen.append((question, [p.id for p in passages]))
            return {"text": question, "interpretations": [{"answer": "a", "question": "q", "citations": ["p1"]}]}
        class Positional:
            def __call__(self, q, conditions=None):
                return "x " + q
        """
    )
    result, card = scorecard(  # CondAmbigQA hands over its fragments: MARCH's open retrieval none
        pytester, "--ambig-suite=condambigqa", "--ambig-system=mysys:answer", "--ambig-limit=2"
    )
    result.assert_outcomes(passed=2)
    assert card["system"]["inputs"] == ["question", "passages"]
    assert card["items"][0]["answer"]["interpretations"][0]["citations"] == ["p1"]
    result, card = scorecard(
        pytester, "--ambig-suite=condambigqa", "--ambig-system=mysys:Positional", "--ambig-limit=1"
    )
    result.assert_outcomes(passed=1)
    assert card["system"]["gold_inputs"] == []  # the main setting hands over no gold conditions
    assert card["items"][0]["answer"]["text"].startswith("x ")


def test_timeout_makes_an_error(pytester):
    pytester.makepyfile(mysys="import time\ndef answer(question):\n    time.sleep(5)\n")
    result = pytester.runpytest(
        "--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-limit=1", "--ambig-timeout=0.2"
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*system timed out after 0.2 s (--ambig-timeout)"])


def test_http_system(pytester, local_server):
    """An endpoint gets what the protocol hands over, as a callable would."""
    server = local_server(lambda path, body: (200, {"text": f"{body['question']} {body['id']}"}))
    _, card = scorecard(pytester, "--ambig-suite=march", f"--ambig-system={server.url}/qa", "--ambig-limit=2")
    assert [b["id"] for _, b in server.requests] == [r["item_id"] for r in card["items"]]
    path, body = server.requests[0]
    assert path == "/qa" and set(body) == {"question", "id"}  # open retrieval: no gold passages
    assert card["items"][0]["status"] == "ok"
    scorecard(
        pytester,
        "--ambig-suite=march",
        f"--ambig-system={server.url}/qa",
        "--ambig-limit=1",
        "--ambig-march-setting=oracle-evidence",
    )
    assert set(server.requests[-1][1]["passages"][0]) == {"id", "title", "text"}
    for setting, fields in [
        ("gold-conditions", {"question", "id", "passages", "conditions"}),
        ("closed-book", {"question", "id"}),
    ]:
        scorecard(
            pytester,
            "--ambig-suite=condambigqa",
            f"--ambig-system={server.url}/qa",
            "--ambig-limit=1",
            f"--ambig-condambigqa-setting={setting}",
        )
        assert set(server.requests[-1][1]) == fields, setting


def test_http_errors_and_secrets_stay_out_of_reports(pytester, local_server):
    server = local_server(lambda path, body: (500, b"upstream exploded"))
    url = server.url.replace("http://", "http://user:s3cr3t@") + "/qa?api_key=s3cr3t"
    result, card = scorecard(pytester, "--ambig-suite=march", f"--ambig-system={url}", "--ambig-limit=1")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*HTTP 500 from {server.url}/qa: upstream exploded"])
    for name in ("scorecard.json", "scorecard.md"):
        assert "s3cr3t" not in (pytester.path / "report" / name).read_text()
    assert "s3cr3t" not in result.stdout.str()


def test_ambig_system_fixture_override(pytester):
    pytester.makeconftest(
        """
        import pytest
        @pytest.fixture(scope="session")
        def ambig_system():
            def mine(question, item):
                return item.long_answers[0]
            return mine
        """
    )
    for workers in ("0", "2"):
        result, card = scorecard(pytester, "--ambig-suite=march", "-n", workers)
        result.assert_outcomes(passed=len(MARCH))
        assert card["system"]["label"].endswith("mine") and not card["system"]["default"]
        assert suite_card(card, "march")["metrics"]["str_em"]["mean"] == 100.0
    conflict = pytester.runpytest("--ambig-suite=march", "--ambig-system=oracle", "--ambig-limit=1")
    conflict.assert_outcomes(errors=1)
    conflict.stdout.fnmatch_lines(
        ["*--ambig-system=oracle baseline* and an `ambig_system` fixture both name*"]
    )


def test_system_failures_of_every_kind_are_item_errors_with_the_systems_traceback(pytester):
    pytester.makepyfile(
        mysys="""
        import sys

        class Unprintable(Exception):
            def __str__(self):
                raise ValueError("no")

        def helper(question):
            raise LookupError("deep inside the system")

        def answer(question, item):
            kind = item.index % 3
            if kind == 0:
                sys.exit(3)
            if kind == 1:
                raise Unprintable()
            helper(question)

        class Broken:
            def __init__(self):
                raise RuntimeError("no model here")
        """
    )
    result, card = scorecard(pytester, "--ambig-suite=march", "--ambig-system=mysys:answer")
    result.assert_outcomes(errors=len(MARCH))  # every item an error, none missing, the run goes on
    errors = {i["error"] for i in card["items"]}
    assert errors == {
        "system raised SystemExit: 3",
        "system raised Unprintable: <Unprintable: unprintable>",
        "system raised LookupError: deep inside the system",
    }
    result.stdout.fnmatch_lines(
        [
            "*Traceback of the system (most recent call last):",
            "*mysys.py*in helper*",
            "*LookupError: deep inside*",
        ]
    )
    assert "pytest_ambigqa" not in result.stdout.str().split("Traceback of the system")[1].split("=====")[0]
    broken = pytester.runpytest("--ambig-suite=march", "--ambig-system=mysys:Broken")
    assert broken.ret == pytest.ExitCode.USAGE_ERROR
    broken.stderr.fnmatch_lines(
        [
            "ERROR: --ambig-system: the system class 'mysys:Broken' could not be created: RuntimeError: no model here"
        ]
    )


def test_user_test_with_ambig_item_and_assert_ambig(pytester):
    pytester.makepyfile(
        test_mine=f"""
        from pytest_ambigqa import assert_ambig
        def test_answers(ambig_item):
            answer = ambig_item.long_answers[0] if ambig_item.id != {FIRST.id!r} else "I do not know."
            assert_ambig(answer, ambig_item, str_em=0.5)
        """
    )
    result = pytester.runpytest("test_mine.py", "--ambig-suite=march")
    result.assert_outcomes(passed=len(MARCH) - 1, failed=1)
    short = FIRST.interpretations[0].short_answers[0]
    result.stdout.fnmatch_lines(
        [
            f"ambigqa march-{FIRST.id}: 1 metric(s) below threshold",
            "  str_em (STR-EM): expected >= 0.5, got 0",
            f"  missing gold answers: {short!r} (*",
            "  answer: 'I do not know.'",
        ]
    )
    skipped = pytester.runpytest("test_mine.py")
    skipped.assert_outcomes(skipped=1)
    pytester.makepyfile(
        test_both="""
        import pytest
        from pytest_ambigqa import assert_ambig
        def test_across_suites(ambig_item):
            gold = " ".join(i.short_answers[0] for i in ambig_item.interpretations)
            assert_ambig(gold, ambig_item, str_em=1.0, citation=0.0)  # each suite checks what it has
        def test_a_typo_is_an_error(ambig_item):
            with pytest.raises(ValueError, match="str_emm is no metric"):
                assert_ambig("x", ambig_item, str_emm=1.0)
        """
    )
    both = pytester.runpytest("test_both.py", "--ambig-suite=march,condambigqa", "--ambig-limit=2")
    both.assert_outcomes(passed=8)


# -- reports and gates ------------------------------------------------------------------


def test_report_files(pytester):
    result, card = scorecard(pytester, "--ambig-suite=march,condambigqa", "--ambig-system=oracle")
    assert card["schema_version"] == 2
    assert card["config"]["suites"] == ["march", "condambigqa"]
    march = suite_card(card, "march")
    assert march["is_sample"] and len(march["sha256"]) == 64 and march["published"]
    assert {"python", "pytest", "pytest-ambigqa", "rouge-score"} <= set(card["versions"])
    assert len(card["items"]) == len(MARCH) + len(SUITES["condambigqa"].load(None, LoadOptions()).items)
    condambigqa = suite_card(card, "condambigqa")
    assert condambigqa["metrics"]["citation"]["mean"] == 1.0
    assert condambigqa["metrics"]["condition"] == {
        "metric": "condition",
        "n": 0,
        "unscored": condambigqa["items"],
        "reason": "no judge configured (--ambig-judge)",
        "mean": None,
        "low": None,
        "high": None,
        "failed": 0,
    }
    markdown = (pytester.path / "report" / "scorecard.md").read_text()
    assert (
        "| STR-EM | 100.0 |" in markdown
        and "| Condition | n/a | no judge configured (--ambig-judge) |" in markdown
    )
    result.stdout.fnmatch_lines(["scorecard written to *report"])
    (pytester.path / "taken").write_text("a file, not a directory")
    blocked = pytester.runpytest("--ambig-suite=march", "--ambig-report=taken/sub")
    assert blocked.ret == 1
    blocked.stdout.fnmatch_lines(["ambigqa: could not write the scorecard to *taken/sub: *"])


def test_fail_under_gates(pytester):
    passing, _ = scorecard(pytester, "--ambig-suite=march", "--ambig-fail-under=str_em=5")
    assert passing.ret == 0
    failing, card = scorecard(pytester, "--ambig-suite=march", "--ambig-fail-under=march:str_em=99,length=1")
    assert failing.ret == 1
    failing.stdout.fnmatch_lines(["gate FAILED: march str_em (STR-EM) mean * < 99"])
    assert card["gates"]["passed"] is False and len(card["gates"]["shortfalls"]) == 1
    lower, _ = scorecard(
        pytester,
        "--ambig-suite=march",
        "--ambig-system=oracle",
        "--ambig-gate=lower-ci",
        "--ambig-fail-under=str_em=100",
    )
    assert lower.ret == 0  # the oracle's interval is [100, 100]
    nothing = pytester.runpytest(
        "--ambig-suite=march", "--ambig-fail-under=str_em=5", "-k", "no_such_item", "--junitxml=nothing.xml"
    )
    assert nothing.ret == 1
    nothing.stdout.fnmatch_lines(["gate FAILED: no benchmark items ran, so --ambig-fail-under cannot be met"])
    assert re.fullmatch(r"=+ 13 deselected, 1 gate failed in [0-9.]+s =+", nothing.stdout.lines[-1])
    case = ET.parse(pytester.path / "nothing.xml").getroot().find("testsuite/testcase[@name='gate[run]']")
    assert case is not None and case.find("failure") is not None  # a failed run, in JUnit too
    na = pytester.runpytest("--ambig-suite=march", "--ambig-fail-under=disambig_f1=10")
    assert na.ret == 1
    na.stdout.fnmatch_lines(
        ["gate FAILED: march disambig_f1: n/a (no reader configured (--ambig-reader)), cannot meet 10"]
    )


def test_error_rate_gate_and_item_min(pytester):
    pytester.makepyfile(mysys=FLAKY)
    result = pytester.runpytest(
        "--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-max-error-rate=0"
    )
    result.stdout.fnmatch_lines(
        [f"gate FAILED: march error rate *% (1 errors, 0 missing of {len(MARCH)}) > 0"]
    )
    items = pytester.runpytest("--ambig-suite=march", "--ambig-item-min=str_em=1")
    assert items.ret == 1
    items.stdout.fnmatch_lines(
        ["*1 metric(s) below threshold", "  str_em = * < 1", "  missing gold answers: *"]
    )


NOISY = f"""
import logging

def answer(question, item):
    print("system says", item.id)
    logging.getLogger("mysys").warning("system logs %s", item.id)
    if item.id == {FIRST.id!r}:
        raise RuntimeError("model overloaded")
    return item.long_answers[0] if item.id.startswith("sem") else "no idea"
"""


def test_builtin_tests_answer_in_setup_and_fall_short_in_their_call(pytester):
    """A builtin item's system is asked in its test's setup (a failing system is an error,
    what it prints and logs is captured there), ``--ambig-item-min`` fails the call, and the
    test asks pytest for no fixture but ``ambig_system`` (issue 44: none made per item)."""
    pytester.makepyfile(mysys=NOISY)
    result = pytester.runpytest(
        "--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-item-min=str_em=1", "-rA",
        "--junitxml=junit.xml", "-p", "no:randomly",
    )  # fmt: skip
    failed = len([i for i in MARCH if not i.id.startswith("sem")])
    result.assert_outcomes(passed=len(MARCH) - failed - 1, failed=failed, errors=1)
    result.stdout.fnmatch_lines([f"*ERROR at setup of test_ambig[[]march-{FIRST.id}[]]*"])
    result.stdout.fnmatch_lines(
        ["*- Captured stdout setup -*", f"system says {FIRST.id}", "*- Captured log setup -*"]
    )
    result.stdout.fnmatch_lines(
        ["*_ test_ambig[[]march-syn-*[]] _*", "*1 metric(s) below threshold", "*str_em = 0 < 1"]
    )
    assert "system says" not in result.stdout.str().split("short test summary")[-1]
    cases = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    phases = {c.get("name"): [child.tag for child in c if child.tag in ("error", "failure")] for c in cases}
    assert phases[f"test_ambig[march-{FIRST.id}]"] == ["error"]
    assert sum(p == ["failure"] for p in phases.values()) == failed + 1  # and the item-min gate
    shown = pytester.runpytest("--ambig-suite=march", "--fixtures-per-test", "-k", FIRST.id, "-v")
    used = shown.stdout.str().split(f"fixtures used by test_ambig[march-{FIRST.id}]")[1]
    assert [name for name in re.findall(r"^(\S+) -- ", used, re.M) if "ambig" in name] == ["ambig_system"]


HOOKED = """
import pytest

@pytest.fixture(autouse=True)
def skips_one(request):
    if request.node.name.endswith("-syn-01]"):
        pytest.skip("not this one")

@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    print("called through pytest_pyfunc_call")
    return (yield)

def pytest_fixture_setup(fixturedef, request):
    if fixturedef.argname == "ambig_system":
        print(f"ambig_system asks for {fixturedef.argnames}")
"""


def test_builtin_tests_are_called_and_set_up_as_any_test(pytester):
    """Another plugin's ``pytest_pyfunc_call`` sees every builtin test, an autouse fixture
    may skip one (a skip located at the items' directory), and a failing ``ambig_system``
    fixture shows the fixture's frames, none of the plugin's, and makes its item an error of
    the scorecard with the fixture's message (not an item never reported). The default ``ambig_system``
    asks for no fixture (``request`` is made anew for every test that uses a fixture asking
    for it)."""
    pytester.makeconftest(HOOKED)
    result = pytester.runpytest("--ambig-suite=march", "-s", "-rs", "-p", "no:randomly")
    result.assert_outcomes(passed=len(MARCH) - 1, skipped=1)
    assert result.stdout.str().count("called through pytest_pyfunc_call") == len(MARCH) - 1
    assert result.stdout.str().count("ambig_system asks for ()") == 1
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] *:1: not this one"])
    assert "INTERNALERROR" not in result.stdout.str()
    pytester.makeconftest(
        "import pytest\n\n@pytest.fixture(scope='session')\ndef ambig_system():\n"
        "    raise RuntimeError('cannot build the system')\n"
    )
    broken = pytester.runpytest("--ambig-suite=march", "-x", "-p", "no:asyncio", "--ambig-report=broken")
    broken.assert_outcomes(errors=1)
    errors = broken.stdout.str().split("= ERRORS =")[1].split("ambigqa scorecard")[0]
    assert "raise RuntimeError('cannot build the system')" in errors and "pytest_ambigqa" not in errors
    broken.stdout.fnmatch_lines(["  errors 1, missing 12"])  # the errored item is an error, the rest unrun
    card = json.loads((pytester.path / "broken" / "scorecard.json").read_text())
    errored = [r for r in card["items"] if r["status"] == "error"]
    assert [r["error"] for r in errored] == ["its test's setup failed: RuntimeError: cannot build the system"]


def test_a_plugin_loaded_after_this_one_overrides_its_session_fixtures(pytester):
    """Among plugins the fixture registered last wins: a plugin module's ``ambig_system``
    (here through a conftest's ``pytest_plugins``) overrides the default, as a conftest's does."""
    pytester.makepyfile(
        myfix="import pytest\n\n@pytest.fixture(scope='session')\ndef ambig_system():\n"
        "    def answer(question):\n        print('asked through the plugin module')\n        return 'no idea'\n\n"
        "    return answer\n"
    )
    pytester.makeconftest("pytest_plugins = ['myfix']\n")
    result = pytester.runpytest("--ambig-suite=march", "-s")
    result.assert_outcomes(passed=len(MARCH))
    assert result.stdout.str().count("asked through the plugin module") == len(MARCH)


EXIT_PROBE = """
import atexit, gc, json
import pytest

seen = []  # the number of frozen objects at each full collection from the session's end on

def _watch(phase, info):
    if phase == "start" and info["generation"] == 2:
        seen.append(gc.get_freeze_count())

class Raising:
    def __init__(self):
        self.me = self  # garbage only a collection finds
    def __del__(self):
        raise RuntimeError("finalizer of an object a plugin let go at unconfigure")

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_unconfigure(config):
    gc.callbacks.append(_watch)
    Raising()
    return (yield)

def _probe():
    with open("heap-at-exit.json", "w") as out:
        json.dump({"frozen": gc.get_freeze_count(), "collections": seen}, out)

atexit.register(_probe)
"""


def test_pytests_last_collection_walks_only_what_the_session_end_made(pytester):
    """pytest's collection at unconfigure sees the whole heap (a plugin's garbage is
    finalised and its unraisable exception reported); then an ambigqa run's heap is frozen, so
    pytest's last collection walks only what is made after. Unfrozen after it: nothing is
    frozen at exit, where the interpreter finalises what is left as ever; a process that goes
    on (an inline run) has nothing frozen; a run without a suite is left as pytest leaves it
    (its collections see nothing frozen)."""
    import gc

    pytester.makepyfile(exitprobe=EXIT_PROBE)
    probe = pytester.path / "heap-at-exit.json"
    result = pytester.runpytest_subprocess("-p", "exitprobe", "--ambig-suite=march")
    result.assert_outcomes(passed=len(MARCH))
    result.stderr.fnmatch_lines(
        ["*PytestUnraisableExceptionWarning*", "*finalizer of an object a plugin let go*"]
    )
    heap = json.loads(probe.read_text())
    assert heap["frozen"] == 0
    # pytest's two: the whole heap (an automatic collection may come before it), then what is made after
    assert 0 in heap["collections"] and heap["collections"][-1] > 1000
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    pytester.runpytest_subprocess("-p", "exitprobe").assert_outcomes(passed=1)
    heap = json.loads(probe.read_text())
    assert heap["frozen"] == 0 and len(heap["collections"]) >= 2 and set(heap["collections"]) == {0}
    (pytester.path / "test_plain.py").unlink()
    pytester.runpytest_inprocess("--ambig-suite=march").assert_outcomes(passed=len(MARCH))
    assert gc.get_freeze_count() == 0


JUNIT_PROBE = """
import json
import pytest
from _pytest.junitxml import xml_key

@pytest.hookimpl(tryfirst=True)  # before pytest's JUnit writer is unregistered
def pytest_unconfigure(config):
    xml = config.stash.get(xml_key, None)
    if xml is not None:
        with open("junit-kept.json", "w") as out:
            json.dump([len(xml.node_reporters), len(xml.node_reporters_ordered)], out)
"""


def test_the_junit_writers_elements_are_let_go_once_its_file_is_written(pytester):
    """pytest's JUnit writer keeps each test's elements (14 an item with the run's
    properties) until the interpreter exits: an ambigqa run lets go of them once the file,
    properties and all, is written; a run without a suite is left as pytest leaves it."""
    pytester.makepyfile(junitprobe=JUNIT_PROBE)
    pytester.syspathinsert()
    kept = pytester.path / "junit-kept.json"
    result = pytester.runpytest("-p", "junitprobe", "--ambig-suite=march", "--junitxml=junit.xml")
    result.assert_outcomes(passed=len(MARCH))
    assert json.loads(kept.read_text()) == [0, 0]
    cases = ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    statuses = [
        p.get("value") for case in cases for p in case.iter("property") if p.get("name") == "ambigqa.status"
    ]
    assert statuses == ["ok"] * len(MARCH)
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    pytester.runpytest("-p", "junitprobe", "test_plain.py", "--junitxml=plain.xml").assert_outcomes(passed=1)
    assert json.loads(kept.read_text()) == [0, 1]  # pytest keeps its written reporters in order


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--ambig-suite=marsh"],
            "ERROR: --ambig-suite: unknown suite 'marsh' (valid: march, condambigqa, asqa)",
        ),
        (
            ["--ambig-suite=march", "--ambig-fail-under=rouge=3"],
            "ERROR: --ambig-fail-under: unknown metric 'rouge' for march (valid: *)",
        ),
        (
            ["--ambig-suite=march", "--ambig-item-min=str_em=50"],
            "ERROR: --ambig-item-min: str_em=50 is outside the item scale [[]0, 1[]]*",
        ),
        (
            ["--ambig-suite=march", "--ambig-system=nosuchmod:answer"],
            "ERROR: --ambig-system: cannot import 'nosuchmod': ModuleNotFoundError*",
        ),
        (
            ["--ambig-suite=march", "--ambig-system=answer"],
            "ERROR: --ambig-system: 'answer' is not module:attr, an http(s) URL, llm:<method>, or one of oracle, lexical, retrieval",
        ),
        (
            ["--ambig-suite=march", "--ambig-gate=median"],
            "ERROR: --ambig-gate: 'median' is not one of mean, lower-ci",
        ),
        (["--ambig-suite=march", "--ambig-limit=0"], "ERROR: --ambig-limit: 0 must be between 1 and 1e+09"),
        (
            ["--ambig-suite=march", "--ambig-timeout=1e20"],
            "ERROR: --ambig-timeout: 1e20 must be between 0 and 604800",
        ),
        (
            ["--ambig-suite=march", "--ambig-concurrency=100000"],
            "ERROR: --ambig-concurrency: 100000 must be between*",
        ),
        (["--ambig-suite=march", "--ambig-seed=-1"], "ERROR: --ambig-seed: -1 must be between 0 and *"),
        (
            ["--ambig-suite=march", "--ambig-data=deep.json"],
            "ERROR: --ambig-data (march): *deep.json:1: the JSON is nested too deeply to be a benchmark file",
        ),
        (
            ["--ambig-suite=march,asqa", "--ambig-data=x.json"],
            "ERROR: --ambig-data: with several suites, name each file as SUITE=PATH*",
        ),
        (
            ["--ambig-suite=march", "--ambig-data=broken.json"],
            "ERROR: --ambig-data (march): *broken.json:3: invalid JSON (Expecting*",
        ),
        (
            ["--ambig-suite=march", "--ambig-march-fields=answers=a"],
            "ERROR: --ambig-march-fields: unknown field 'answers' (valid: *",
        ),
        (
            ["--ambig-suite=march", "--ambig-metrics=str_em,rouge"],
            "ERROR: --ambig-metrics: unknown metric 'rouge' for march (valid: *",
        ),
        (
            ["--ambig-suite=march,asqa", "--ambig-metrics=rouge_lsum"],
            "ERROR: --ambig-metrics: none of rouge_lsum is a metric of march (its metrics: str_em, *",
        ),
        (
            ["--ambig-suite=asqa", "--ambig-metrics=str_em", "--ambig-fail-under=rouge_lsum=30"],
            "ERROR: --ambig-fail-under: rouge_lsum is not computed in this run (--ambig-metrics)",
        ),
    ],
)
def test_bad_input_is_one_usage_error_line(pytester, args, message):
    broken = pytester.path / "broken.json"
    broken.write_text('[\n{"id": "a",\n  "question": }\n]\n')
    (pytester.path / "deep.json").write_text("[" + "[" * 100_000 + "]" * 100_001)
    before = broken.read_bytes()
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    assert broken.read_bytes() == before


def test_fail_under_on_a_fraction_is_an_error(pytester):
    result = pytester.runpytest("--ambig-suite=march", "--ambig-fail-under=str_em=0.3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --ambig-fail-under: str_em=0.3 is on the printed 0-100 scale (a percentage); did you mean str_em=30?"
        ]
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--ambig-suite=condambigqa", "--ambig-fail-under=citation=50"],
            "ERROR: --ambig-fail-under: citation=50 is outside Cited-fragment precision (no judge)'s printed "
            "scale [0, 1]: no run could pass it; did you mean citation=0.5 (50% of the scale)?",
        ),
        (
            ["--ambig-suite=march", "--ambig-fail-under=march:judge=60"],
            "ERROR: --ambig-fail-under: march:judge=60 is outside LLM judge's printed scale [0, 5]: no run "
            "could pass it; did you mean march:judge=3 (60% of the scale)?",
        ),
        (
            ["--ambig-suite=asqa", "--ambig-fail-under=dr=120"],
            "ERROR: --ambig-fail-under: dr=120 is outside DR's printed scale [0, 100]: no run could pass it",
        ),
        (
            ["--ambig-suite=asqa", "--ambig-fail-under=str_em=-5"],
            "ERROR: --ambig-fail-under: str_em=-5 is outside STR-EM's printed scale [0, 100]: every run "
            "passes it",
        ),
        (
            ["--ambig-suite=condambigqa", "--ambig-baseline=b.json", "--ambig-fail-if-worse=citation:5"],
            "ERROR: --ambig-fail-if-worse: citation:5 is wider than Cited-fragment precision (no judge)'s "
            "printed scale [0, 1]: no change could cross it; did you mean citation:0.05 (5% of the scale)?",
        ),
    ],
)
def test_a_threshold_off_the_printed_scale_is_an_error(pytester, args, message):
    """Every metric's printed scale, not only the percentages' (issue 26, item 5)."""
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message.replace("[", "[[]")])


def test_thresholds_on_the_printed_scale_are_taken(pytester):
    """A count has no scale to be off (Length), a reward no floor; 0-5 judge scores take 0.5."""
    result = pytester.runpytest(
        "--ambig-suite=march", "--ambig-limit=1", "--ambig-fail-under=length=5,judge=0.5,str_em=0"
    )
    assert result.ret != pytest.ExitCode.USAGE_ERROR, result.stderr.str()
    result = pytester.runpytest(
        "--ambig-suite=march", "--ambig-limit=1", "--ambig-protocol=interactive", "--ambig-costs=0:0.1",
        "--ambig-fail-under=reward=-500",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]


def test_options_without_a_suite_say_so(pytester):
    result = pytester.runpytest("--ambig-system=oracle", "--ambig-limit=3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --ambig-limit, --ambig-system: choose the benchmark with --ambig-suite*"]
    )
    pytester.makeini(
        "[pytest]\nambig_system = oracle\n"
    )  # an ini default is no request: the plugin stays idle
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    pytester.runpytest().assert_outcomes(passed=1)


def test_ini_options(pytester):
    pytester.makeini("[pytest]\nambig_suite = march\nambig_limit = 3\nambig_system = oracle\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["system: oracle baseline*"])


# -- xdist ------------------------------------------------------------------------------


def _without_timing(card: dict) -> dict:
    card = json.loads(json.dumps(card))
    card.pop("timing")
    for item in card["items"]:
        item.pop("duration")
    return card


def test_xdist_gives_the_same_scorecard(pytester):
    args = ("--ambig-suite=march,condambigqa,asqa",)
    _, serial = scorecard(pytester, *args, report="serial")
    result, parallel = scorecard(pytester, *args, "-n", "2", report="parallel")
    result.stdout.fnmatch_lines(["*2 workers*", "*ambigqa scorecard*"])
    assert _without_timing(serial) == _without_timing(parallel)


def test_dealt_workers_give_the_same_scorecard_as_one_process(pytester):
    """-n 2 with pools (each worker asks its dealt share, session/deal.py) against one process
    with the same pool: every item's scores and every metric of the scorecard, to the last digit."""
    args = ("--ambig-suite=march,condambigqa,asqa", "--ambig-concurrency=4")
    _, one = scorecard(pytester, *args, report="one")
    result, dealt = scorecard(pytester, *args, "-n", "2", "-v", report="dealt")
    result.stdout.fnmatch_lines(["scheduling tests via DealScheduling"])
    assert [(r["item_id"], r["scores"]) for r in dealt["items"]] == [
        (r["item_id"], r["scores"]) for r in one["items"]
    ]
    assert _without_timing(one) == _without_timing(dealt)


def test_items_of_a_crashed_worker_are_listed_as_missing(pytester):
    pytester.makepyfile(
        mysys=f"""
        import os
        def answer(question, item):
            if item.id == {FIRST.id!r}:
                os._exit(3)
            return item.long_answers[0]
        """
    )
    result, card = scorecard(pytester, "--ambig-suite=march", "--ambig-system=mysys:answer", "-n", "2")
    result.stdout.fnmatch_lines([f"*missing: march-{FIRST.id}*"])
    march = suite_card(card, "march")
    assert march["missing"] == 1 and march["items"] == len(MARCH)
    missing = next(r for r in card["items"] if r["status"] == "missing")
    assert missing["item_id"] == FIRST.id and missing["scores"]["str_em"] == 0.0


def test_data_option_uses_a_real_file(pytester, shared_data):
    path = shared_data / "condambigqa" / "condambigqa_sample20.json"
    _, card = scorecard(
        pytester, "--ambig-suite=condambigqa", f"--ambig-data={path}", "--ambig-system=oracle"
    )
    card_ = suite_card(card, "condambigqa")
    assert card_["items"] == 20 and not card_["is_sample"] and card_["source"] == str(path)
    assert Path(card_["source"]).exists()


def test_only_the_metrics_asked_for_are_computed(pytester):
    """--ambig-metrics: the others are named as not computed, never dropped in silence, and
    what only they need (NLTK and ROUGE for ASQA) is never loaded."""
    pytester.makeconftest(
        """
import sys

def pytest_sessionfinish(session):
    with open("loaded.txt", "w") as out:
        out.write(" ".join(m for m in ("nltk", "rouge_score") if m in sys.modules))
"""
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--ambig-report=report", "--ambig-suite=asqa", "--ambig-system=oracle",
        "--ambig-metrics=str_em,str_hit",
    )  # fmt: skip
    card = json.loads((pytester.path / "report" / "scorecard.json").read_text(encoding="utf-8"))
    assert result.ret == 0
    asqa = suite_card(card, "asqa")
    assert list(asqa["metrics"]) == ["str_em", "str_hit"]
    assert all(
        set(item["scores"]) == {"str_em", "str_hit"} and not item["unscored"] for item in card["items"]
    )
    assert any("not computed (--ambig-metrics): cover_em, rouge_lsum" in n for n in asqa["protocol"]["notes"])
    assert card["config"]["metrics"] == ["str_em", "str_hit"]
    result.stdout.fnmatch_lines(
        ["*note: not computed (--ambig-metrics): cover_em, rouge_lsum*", "*STR-EM*100.0*"]
    )
    assert (pytester.path / "loaded.txt").read_text() == ""


def test_rouge_imports_begin_in_the_background_and_a_failure_is_said_as_before(pytester):
    """ROUGE-Lsum's imports start on a thread as the run is configured (issue 44, target 5);
    when they fail (rouge-score missing here), each item says so as it did when the scorer
    imported it first, and the thread adds nothing of its own (no traceback, no warning)."""
    pytester.makeconftest(
        """
import sys
import threading

import pytest

class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "rouge_score":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Missing())

@pytest.hookimpl(trylast=True)  # right after the plugin's: the imports have only begun
def pytest_configure(config):
    with open("threads.txt", "w") as out:
        out.write(" ".join(t.name for t in threading.enumerate()))
"""
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--ambig-report=report", "--ambig-suite=asqa", "--ambig-limit=2",
        "--ambig-metrics=rouge_lsum", "--ambig-system=oracle",
    )  # fmt: skip
    card = json.loads((pytester.path / "report" / "scorecard.json").read_text(encoding="utf-8"))
    errors = [item["error"] for item in card["items"]]
    assert errors == ["scoring failed: ModuleNotFoundError: No module named 'rouge_score'"] * 2
    assert "ambigqa-preload" in (pytester.path / "threads.txt").read_text()
    assert "Exception in thread" not in result.stderr.str() + result.stdout.str()
    assert "Traceback" not in result.stderr.str()


def test_selected_metrics_keep_errored_items_and_their_reasons(pytester):
    """An item the system failed counts 0 in what the selection is built from (ROUGE-Lsum for
    its official mid; QA-F1 for DR), and DR without a reader is n/a, not a failed gate."""
    pytester.makepyfile(
        flaky="""
def answer(question, item):
    if item.index % 3 == 0:
        raise RuntimeError("down")
    return item.long_answers[0]
"""
    )
    base = ["--ambig-suite=asqa", "--ambig-system=flaky:answer"]
    _, whole = scorecard(pytester, *base, report="whole")
    result, only = scorecard(pytester, *base, "--ambig-metrics=rouge_lsum_mid,dr", report="only")
    assert result.ret == 1  # the errored items fail their tests, and nothing else
    mid = suite_card(only, "asqa")["metrics"]["rouge_lsum_mid"]
    assert mid == suite_card(whole, "asqa")["metrics"]["rouge_lsum_mid"]
    assert mid["n"] == len(only["items"])  # errored items in the denominator
    dr = suite_card(only, "asqa")["metrics"]["dr"]
    assert dr["mean"] is None and "no reader configured" in dr["reason"]
    assert not only["gates"]["shortfalls"]
