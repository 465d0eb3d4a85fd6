"""What a run leaves for CI (report/ci.py): the scorecard in $GITHUB_STEP_SUMMARY, the
pull-request comment, each suite's values as JUnit properties, the commit a run records."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest

from fixtures.pages import blocks
from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.report import ci, view

# The gold long answer, except for the items named in $WORSE, which get a non-answer.
SYSTEM = """
import os
def answer(question, item):
    if item.id in os.environ.get("WORSE", "").split(","):
        return "I could not say."
    return item.long_answers[0]
"""
WORSE = "sem-01,sem-02,syn-01,syn-02,con-01,con-02"
SECRET = "sk-ci-secret-0123456789abcdef"


@pytest.fixture
def runs(pytester, monkeypatch):
    """``run(report, *args, worse=...)``: a MARCH run of mysys; the base run done."""
    pytester.makepyfile(mysys=SYSTEM)

    def run(report: str, *args: str, worse: str = "") -> pytest.RunResult:
        monkeypatch.setenv("WORSE", worse)
        return pytester.runpytest(
            "-p", "no:randomly", "--ambig-suite=march", "--ambig-system=mysys:answer",
            f"--ambig-report={report}", *args,
        )  # fmt: skip

    assert run("base").ret == 0
    return run


def test_the_step_summary_gets_the_scorecard_and_the_comparison_appended(runs, pytester, monkeypatch):
    summary = pytester.path / "summary.md"
    summary.write_text("# an earlier step's words\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = runs("new", "--ambig-baseline=base/scorecard.json", worse=WORSE)
    assert result.ret == 0
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# an earlier step's words\n")  # appended, never replaced
    assert (pytester.path / "new" / "scorecard.md").read_text(encoding="utf-8") in text
    assert "## Compared with the base run" in text and "## Gates" in text


def test_an_empty_step_summary_variable_writes_nothing(runs, pytester, monkeypatch):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "")
    assert runs("again").ret == 0
    assert sorted(p.name for p in pytester.path.iterdir() if p.suffix == ".md") == []


def test_an_unwritable_step_summary_is_one_line_and_fails_the_run(runs, pytester, monkeypatch):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path / "no" / "such" / "dir" / "summary.md"))
    result = runs("again")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["ambigqa: could not append the scorecard to $GITHUB_STEP_SUMMARY (*): *"])
    assert "Traceback" not in result.stdout.str()


def test_the_step_summary_keeps_to_its_limit(tmp_path):
    path = tmp_path / "summary.md"
    path.write_bytes(b"x" * (ci.STEP_SUMMARY_LIMIT - 5000) + b"\n")
    ci.append_step_summary(path, "".join(f"| line {n} |\n" for n in range(10_000)))
    data = path.read_bytes()
    assert len(data) <= ci.STEP_SUMMARY_LIMIT
    assert data.endswith(b"has it all]*\n") and b"| line 0 |\n" in data
    full = tmp_path / "full.md"
    full.write_bytes(b"x" * ci.STEP_SUMMARY_LIMIT)
    ci.append_step_summary(full, "more")
    assert full.stat().st_size == ci.STEP_SUMMARY_LIMIT  # no room: nothing, not a broken file


def test_the_pull_request_comment(runs, pytester, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    result = runs(
        "new", "--ambig-baseline=base/scorecard.json", "--ambig-fail-if-worse=str_em:1",
        "--ambig-pr-comment=out/comment.md", worse=WORSE,
    )  # fmt: skip
    assert result.ret == 1
    text = (pytester.path / "out" / "comment.md").read_text(encoding="utf-8")
    first, *rest = text.splitlines()
    assert first == "<!-- pytest-ambigqa:pr-comment suites=march -->"
    # the verdict, then the gates (what failed, then the table), and only then the tables
    assert rest[0] == "### ambigqa: ❌ gates FAILED: 1 of 1"
    assert rest[2].startswith("- ❌ ` march str_em (STR-EM) worse than the base run")
    assert rest[4] == "| suite | gate | statistic | value | bound | margin | result |"
    assert rest.index(rest[4]) < rest.index(
        "| suite | metric | score | 95% CI | change | 95% CI of the change |"
    )
    row = next(line for line in rest if line.startswith("| march | STR-EM |"))
    assert "▼" in row  # significantly worse, by the interval the gate reads
    head = f"**Significant changes** ({view.SIGNIFICANT_BY})"
    significant = rest[rest.index(head) + 2 :]
    assert significant[0].startswith("- ▼ march STR-EM: 100.0 → ")
    assert significant[0].endswith("(worse; Holm: see †)")  # Holm p 0.5 here: said in words, below
    footnote = next(line for line in significant if line.startswith("† "))
    assert "Holm's correction across the 16 tests shown does not confirm it" in footnote
    assert "Holm p" not in text  # no p printed beside a change called significant
    data = blocks(pytester.path / "new" / "report.html")["ambigqa-data"]
    rows = {(r["metric"], r["slice"]): r for r in data["comparison"]["suites"][0]["rows"]}
    assert rows["str_em", "all"]["significant"] == "worse"
    assert "Holm's correction across the 16 tests shown does not confirm it" in rows["str_em", "all"]["why"]
    assert data["comparison"]["significant_by"] == view.SIGNIFICANT_BY
    regressions = next(i for i, line in enumerate(rest) if line.startswith("**Worst regressions** (6 items"))
    listed = rest[regressions + 2 : regressions + 6]
    assert [line.split("`")[1].strip() for line in listed[:3]] == [f"march-{i}" for i in WORSE.split(",")[:3]]
    assert listed[3] == "- … 3 more in march: see report.html"
    assert "http" not in text and "](" not in text and "<a" not in text
    assert len(text) < 4000  # compact


def test_text_from_outside_makes_no_link_mention_or_markup_in_the_comment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    for raw in (
        "see https://evil.example/x and www.evil.example",
        "ping @octocat and #1",
        f"key {SECRET}",
        "a | pipe and `ticks` and <b>bold</b>",
        "bidi \u202e and a NUL \x00",
    ):
        shown = ci._code(raw)
        fence = re.match(r"`+", shown).group()
        assert shown.startswith(fence + " ") and shown.endswith(" " + fence)
        inside = shown[len(fence) + 1 : -len(fence) - 1]
        assert fence not in inside and "|" not in inside.replace("\\|", "")
        assert SECRET not in shown and "\u202e" not in shown and "\x00" not in shown


def test_merge_and_compare_write_the_comment_too(runs, pytester):
    assert runs("new", worse=WORSE).ret == 0
    base, new = (str(pytester.path / r / "scorecard.json") for r in ("base", "new"))
    comment = pytester.path / "compare.md"
    assert cli(["compare", base, new, "--pr-comment", str(comment)]) == 0
    assert "**Worst regressions** (6 items" in comment.read_text(encoding="utf-8")
    assert cli(["compare", base, new, "--pr-comment", str(pytester.path)]) == 1  # a directory
    merged = pytester.path / "merged.md"
    assert cli(["merge", base, "-o", str(pytester.path / "merged"), "--pr-comment", str(merged)]) == 0
    assert merged.read_text(encoding="utf-8").splitlines()[1] == "### ambigqa: no gates set"


def test_a_directory_as_the_comment_file_is_refused_before_the_run(pytester):
    (pytester.path / "out").mkdir()
    result = pytester.runpytest("--ambig-suite=march", "--ambig-pr-comment=out")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ambig-pr-comment=out: a directory; name the file to write"])


def _suite_cases(path: Path) -> dict[str, dict[str, str]]:
    cases = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.get("name", "").startswith("scorecard["):
            cases[case.get("name", "")] = {
                p.get("name", ""): p.get("value", "") for p in case.iter("property")
            }
    return cases


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_each_suite_is_a_junit_test_case_whose_properties_are_its_values(runs, pytester, workers):
    result = runs(
        "new", "--ambig-baseline=base/scorecard.json", "--junitxml=junit.xml", *workers, worse=WORSE
    )
    assert result.ret == 0
    cases = _suite_cases(pytester.path / "junit.xml")
    assert list(cases) == ["scorecard[march]"]
    props = cases["scorecard[march]"]
    card = json.loads((pytester.path / "new" / "scorecard.json").read_text(encoding="utf-8"))
    summary = card["suites"][0]["metrics"]["str_em"]
    assert float(props["ambigqa.str_em"]) == pytest.approx(summary["mean"], abs=1e-6)
    assert float(props["ambigqa.str_em.low"]) == pytest.approx(summary["low"], abs=1e-6)
    row = next(r for r in card["comparison"]["rows"] if (r["metric"], r["slice"]) == ("str_em", "all"))
    assert float(props["ambigqa.str_em.change"]) == pytest.approx(row["diff"], abs=1e-6)
    assert float(props["ambigqa.str_em.change.p_holm"]) == pytest.approx(row["p_holm"], abs=1e-6)
    assert props["ambigqa.disambig_f1"] == "n/a: no reader configured (--ambig-reader)"
    assert (props["ambigqa.items"], props["ambigqa.errors"], props["ambigqa.gates"]) == ("13", "0", "none")
    suite = ET.parse(pytester.path / "junit.xml").getroot().find("testsuite")
    assert suite.get("tests") == "14"  # 13 items and the suite's case


def _git(directory: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=directory, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def test_a_run_records_its_commit_and_start_where_it_can(pytester):
    pytester.makepyfile(test_nothing="def test_nothing(): pass")
    result = pytester.runpytest("--ambig-suite=march", "--ambig-report=outside", "--ambig-limit=2")
    assert result.ret == 0
    card = json.loads((pytester.path / "outside" / "scorecard.json").read_text(encoding="utf-8"))
    assert "commit" not in card["versions"]  # not a checkout: nothing recorded, nothing failed
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", card["timing"]["started"])
    _git(pytester.path, "init", "-q")
    _git(pytester.path, "add", "test_nothing.py")
    _git(pytester.path, "commit", "-q", "-m", "first")
    assert pytester.runpytest("--ambig-suite=march", "--ambig-report=inside", "--ambig-limit=2").ret == 0
    card = json.loads((pytester.path / "inside" / "scorecard.json").read_text(encoding="utf-8"))
    assert card["versions"]["commit"] == _git(pytester.path, "rev-parse", "HEAD")


# ---- a failed run looks failed (issue 39, section 1)


def _cases(path: Path) -> dict[str, ET.Element]:
    return {case.get("name", ""): case for case in ET.parse(path).getroot().iter("testcase")}


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_each_gate_is_a_junit_test_case_and_the_last_line_counts_the_failed_ones(
    pytester, monkeypatch, workers
):
    pytester.makepyfile(mysys=SYSTEM)
    monkeypatch.setenv("WORSE", "sem-01,sem-02")  # MARCH STR-EM 84.6, under its gate of 90
    result = pytester.runpytest(
        "-p", "no:randomly", "--ambig-suite=march,asqa", "--ambig-system=mysys:answer",
        "--ambig-fail-under=march:str_em=90", "--ambig-max-error-rate=0.5", "--junitxml=junit.xml", *workers,
    )  # fmt: skip
    assert result.ret == 1  # as before: the gate fails the run
    cases = _cases(pytester.path / "junit.xml")
    gates = {name: case for name, case in cases.items() if name.startswith("gate[")}
    assert list(gates) == ["gate[march:str_em]", "gate[march:max-error-rate]", "gate[asqa:max-error-rate]"]
    failure = gates["gate[march:str_em]"].find("failure")
    assert failure is not None and failure.get("message") == "march str_em (STR-EM) mean 84.62 < 90"
    assert [g.find("failure") for n, g in gates.items() if n != "gate[march:str_em]"] == [None, None]
    assert all(c.get("classname") == "ambigqa" for c in gates.values())
    verdicts = {
        name: {p.get("name"): p.get("value") for p in case.iter("property")}["ambigqa.gates"]
        for name, case in cases.items()
        if name.startswith("scorecard[")
    }
    assert verdicts == {"scorecard[march]": "failed", "scorecard[asqa]": "passed"}  # each its own
    suite = ET.parse(pytester.path / "junit.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("28", "1", "0")
    lines = result.stdout.lines
    assert re.fullmatch(r"=+ 23 passed, 1 gate failed in [0-9.]+s( \([0-9:]+\))? =+", lines[-1]), lines[-1]
    summary = lines.index(next(line for line in lines if "short test summary info" in line))
    assert lines[summary + 1].startswith("FAILED ambigqa::gate[march:str_em] - march str_em (STR-EM) mean")


def test_a_report_not_written_is_said_after_the_scorecard_and_counted_on_the_last_line(pytester):
    pytester.makepyfile(mysys=SYSTEM)
    (pytester.path / "afile").write_text("", encoding="utf-8")
    result = pytester.runpytest(
        "-p", "no:randomly", "--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-report=afile/out",
        "--junitxml=junit.xml",
    )  # fmt: skip
    assert result.ret == 1  # as before
    lines = result.stdout.lines
    scorecard = next(n for n, line in enumerate(lines) if "ambigqa scorecard" in line)
    unwritten = next(n for n, line in enumerate(lines) if line.startswith("ambigqa: could not write"))
    assert scorecard < unwritten and "afile" in lines[unwritten]
    assert re.fullmatch(r"=+ 13 passed, 1 report not written in [0-9.]+s( \([0-9:]+\))? =+", lines[-1])
    failure = _cases(pytester.path / "junit.xml")["run[1]"].find("failure")
    assert failure is not None and failure.get("message", "").startswith("ambigqa: could not write")
    assert not [n for n in _cases(pytester.path / "junit.xml") if n.startswith("gate[")]  # none set


def test_the_step_summary_starts_with_the_verdict_and_the_gates(pytester, monkeypatch):
    pytester.makepyfile(mysys=SYSTEM)
    monkeypatch.setenv("WORSE", "sem-01,sem-02")
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = pytester.runpytest(
        "-p", "no:randomly", "--ambig-suite=march", "--ambig-system=mysys:answer", "--ambig-report=out",
        "--ambig-fail-under=str_em=90,str_hit=10",
    )  # fmt: skip
    assert result.ret == 1
    lines = summary.read_text(encoding="utf-8").splitlines()
    assert lines[1] == "# ambigqa scorecard: ❌ gates FAILED: 1 of 2"
    assert lines[3] == "## Gates"
    tables = [n for n, line in enumerate(lines) if line.startswith("| ")]
    assert lines[tables[0]].startswith("| suite | gate | statistic |")  # the gates' table first
    failed = lines.index("- FAILED: march str\\_em (STR-EM) mean 84.62 &lt; 90")
    assert failed < tables[0]  # what failed, then every gate evaluated
    assert tables[0] < next(n for n, line in enumerate(lines) if line.startswith("## MARCH"))


def test_a_run_with_no_gate_says_so_and_its_errored_items_come_first(pytester):
    pytester.makepyfile(
        broken="def answer(question, item):\n    if item.id == 'sem-01':\n        raise RuntimeError('down')\n"
        "    return item.long_answers[0]\n"
    )
    result = pytester.runpytest(
        "-p", "no:randomly", "--ambig-suite=march", "--ambig-system=broken:answer", "--ambig-report=out",
        "--ambig-pr-comment=comment.md",
    )  # fmt: skip
    assert result.ret == 1  # the errored item's test fails
    data = blocks(pytester.path / "out" / "report.html")["ambigqa-data"]
    assert data["gates"]["verdict"] == "1 item errored or missing; no gates set"
    assert data["gates"]["set"] is False and data["gates"]["unanswered"].startswith("1 item errored")
    comment = (pytester.path / "comment.md").read_text(encoding="utf-8").splitlines()
    assert comment[1] == "### ambigqa: ❌ 1 item errored or missing; no gates set"
    assert comment[3:5] == [
        "- ❌ 1 item(s) errored or missing: their tests fail, and so does the run",
        "- no gates set",
    ]
    main = (Path(ci.__file__).parent / "assets" / "js" / "main.js").read_text(encoding="utf-8")
    header = main[main.index("function header(") :]
    assert header.index('id: "unanswered"') < header.index('id: "gates"')  # what failed first
    assert 'text: "No gates set"' in header


def test_the_header_names_an_executor_that_is_not_the_local_one(pytester):
    pytest.importorskip("ray")
    pytester.makepyfile(mysys=SYSTEM)
    args = ["--ambig-suite=march", "--ambig-system=mysys:answer", "--collect-only"]
    ray = pytester.runpytest(*args, "--ambig-executor=ray", "--ambig-ray-actors=2")  # the actors start later
    ray.stdout.fnmatch_lines(
        ["ambigqa: march (13 items, bundled sample); system: mysys:answer; executor: ray, 2 actors"]
    )
    local = pytester.runpytest(*args)
    local.stdout.fnmatch_lines(["ambigqa: march (13 items, bundled sample); system: mysys:answer"])  # unsaid


def test_significant_is_said_by_the_gates_interval_and_holm_disagreeing_in_words():
    from pytest_ambigqa.card.compare import Row

    def row(low: float, high: float, holm: float) -> Row:
        diff = (low + high) / 2
        return Row(
            "march", "all", "str_em", 13, 100.0, 100 + diff, diff, low, high, "perm", holm, holm, 0, 7, 6
        )

    assert view.significance(row(-70, -20, 0.01), 16) == ("worse", None)  # both agree: nothing to say
    word, why = view.significance(row(-70, -20, 1.0), 16)
    assert word == "worse" and why is not None and "Holm's correction across the 16 tests shown" in why
    word, why = view.significance(row(-5, 30, 0.01), 16)
    assert word is None and why is not None and "the interval holds 0" in why
    assert view.significance(row(5, 30, 0.2), 16)[0] == "better"


def test_gate_cases_are_named_uniquely_and_say_their_line():
    from pytest_ambigqa.card.scorecard import Check, Scorecard

    checks = [
        Check("--ambig-fail-under=march:str_em=30", "march", "STR-EM mean", "str_em", 40, 30, True, True),
        Check(
            "--ambig-fail-if-worse=str_em:1", "march", "change", "str_em", -3, -1, True, False, "march worse"
        ),
        Check(
            "--ambig-item-min=str_em=0.5",
            "march",
            "items with STR-EM below 0.5, of 13",
            None,
            2,
            0,
            False,
            False,
        ),
        Check(
            "--ambig-fail-under=str_hit^k=30", "march", "STR-Hit pass^3 mean", "str_hit", 40, 30, True, True
        ),
        Check("--ambig-max-unscored-rate=0.1", "march", "unscored items, share", None, 0, 0.1, False, True),
        Check("--ambig-max-unscored-rate=0.1", "march", "unscored items, share", None, 0, 0.1, False, True),
    ]
    shortfalls = ["march worse", "march judge: the configured model scored no item: down"]
    suite = SimpleNamespace(name="march")  # all gate_cases reads of a suite's card
    card = Scorecard({}, {}, [suite], [], {}, shortfalls=shortfalls, checks=checks)
    cases = ci.gate_cases(card)
    assert [(c.nodeid, c.passed) for c in cases] == [
        ("ambigqa::gate[march:str_em:fail-under]", True),  # two gates on one metric: each says its option
        ("ambigqa::gate[march:str_em:fail-if-worse]", False),
        ("ambigqa::gate[march:str_em:item-min]", False),
        ("ambigqa::gate[march:str_hit^k]", True),
        ("ambigqa::gate[march:max-unscored-rate]", True),
        ("ambigqa::gate[march:max-unscored-rate#2]", True),
        ("ambigqa::gate[march:required#1]", False),  # a failure no option sets
    ]
    assert (
        ci.suite_verdict(card, "march", cases) == "failed" and ci.suite_verdict(card, "asqa", cases) == "none"
    )
    assert cases[1].line == "march worse"  # the gate's own FAILED line
    assert cases[2].line.endswith("(--ambig-item-min=str_em=0.5): FAILED")
    assert view.gates_evaluated(card) == (3, 7)
    assert ci.gate_cases(Scorecard({}, {}, [], [], {}, checks=checks, gates_deferred="shard 1/2")) == []
