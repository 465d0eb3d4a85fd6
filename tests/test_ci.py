"""What a run leaves for CI (report/ci.py): the scorecard in $GITHUB_STEP_SUMMARY, the
pull-request comment, each suite's values as JUnit properties, the commit a run records."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.report import ci

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
    assert rest[0] == "### ambigqa: ❌ gates FAILED"
    assert "| suite | metric | score | 95% CI | change | 95% CI | Holm p |" in rest
    row = next(line for line in rest if line.startswith("| march | STR-EM |"))
    assert "▼" in row  # significantly worse
    assert any(line.startswith("- ❌ ` march str_em (STR-EM) worse than the base run") for line in rest)
    significant = rest[
        rest.index(
            "**Significant changes** (the paired 95% interval of the change leaves 0; Holm p beside it)"
        )
        + 2 :
    ]  # noqa: E501
    assert significant[0].startswith("- ▼ march STR-EM: 100.0 → ")
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
    assert merged.read_text(encoding="utf-8").splitlines()[1] == "### ambigqa: ✅ gates passed"


def test_a_directory_as_the_comment_file_is_refused_before_the_run(pytester):
    (pytester.path / "out").mkdir()
    result = pytester.runpytest("--ambig-suite=march", "--ambig-pr-comment=out")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ambig-pr-comment=out: a directory; name the file to write"])


def _suite_cases(path: Path) -> dict[str, dict[str, str]]:
    cases = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.get("name", "").startswith("scorecard["):
            cases[case.get("name")] = {p.get("name"): p.get("value") for p in case.iter("property")}
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
    assert (props["ambigqa.items"], props["ambigqa.errors"], props["ambigqa.gates"]) == ("13", "0", "passed")
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
