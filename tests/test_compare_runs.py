"""--ambig-baseline, --ambig-fail-if-worse and `pytest-ambigqa compare`, end to end: the
comparison in the summary, scorecard.json, scorecard.md and report.html; the gate; shards."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from fixtures.pages import blocks
from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.report.html import PACKED

# The gold long answer, except for the items named in $WORSE (comma-separated ids), which get
# $ANSWER (default: a non-answer).
SYSTEM = """
import os
def answer(question, item):
    if item.id in os.environ.get("WORSE", "").split(","):
        return os.environ.get("ANSWER", "I could not say.")
    return item.long_answers[0]
"""
WORSE = "sem-01,sem-02,syn-01,syn-02,con-01,con-02"
EVIL = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> & more'


@pytest.fixture
def runs(pytester, monkeypatch):
    pytester.makepyfile(mysys=SYSTEM)
    monkeypatch.delenv("WORSE", raising=False)

    def run(report: str, *args: str, worse: str = "", answer: str | None = None) -> pytest.RunResult:
        monkeypatch.setenv("WORSE", worse)
        if answer is not None:
            monkeypatch.setenv("ANSWER", answer)
        return pytester.runpytest(
            "--ambig-suite=march", "--ambig-system=mysys:answer", f"--ambig-report={report}", *args
        )

    assert run("base").ret == 0
    return run


def card(pytester, report: str) -> dict:
    return json.loads((pytester.path / report / "scorecard.json").read_text())


def test_a_run_against_its_baseline(runs, pytester):
    result = runs(
        "new", "--ambig-baseline=base/scorecard.json", "--ambig-fail-if-worse=str_em:1", worse=WORSE
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "compared with the base run (*base/scorecard.json): system mysys:answer, 13 items in 1 suite paired",
            "*STR-EM*100.0*-*",
            "*regressions (6, worst first):",
            "gate FAILED: march str_em (STR-EM) worse than the base run: change -*, beyond the margin 1;*",
        ]
    )
    comparison = card(pytester, "new")["comparison"]
    assert {r["key"] for r in comparison["regressions"]} == {f"march-{i}" for i in WORSE.split(",")}
    em = next(r for r in comparison["rows"] if r["metric"] == "str_em" and r["slice"] == "all")
    assert em["n"] == 13 and em["high"] < 0 and em["test"] == "permutation" and em["losses"] == 6
    markdown = (pytester.path / "new" / "scorecard.md").read_text()
    assert "## Compared with the base run" in markdown and "word diff:" in markdown
    assert "ambigqa-data" in (pytester.path / "new" / "report.html").read_text()
    # Within the margin: the same comparison, and the run passes.
    assert (
        runs(
            "wide", "--ambig-baseline=base/scorecard.json", "--ambig-fail-if-worse=str_em:80", worse=WORSE
        ).ret
        == 0
    )
    assert card(pytester, "wide")["comparison"]["rows"] == comparison["rows"]
    # Under xdist the controller compares the same results: the same rows.
    assert runs("xdist", "-n", "2", "--ambig-baseline=base/scorecard.json", worse=WORSE).ret == 0
    assert card(pytester, "xdist")["comparison"]["rows"] == comparison["rows"]


def test_the_gate_line_says_which_statistic_decided(runs, pytester):
    """The interval decides, not the (Holm-corrected) p beside it, and the line says so and
    why they differ (issue 26, item 3)."""
    result = runs(
        "new", "--ambig-baseline=base/scorecard.json", "--ambig-fail-if-worse=str_em:1", worse=WORSE
    )
    line = next(x for x in result.stdout.lines if x.startswith("gate FAILED: march str_em"))
    rows = card(pytester, "new")["comparison"]["rows"]
    em = next(r for r in rows if r["metric"] == "str_em" and r["slice"] == "all")
    tests = sum(r["p"] is not None for r in rows)
    assert (
        "decided by that interval (paired bootstrap, unadjusted: a non-inferiority check of this metric "
        f"alone), not by the row's p {em['p']:.3f} (Holm {em['p_holm']:.3f}), which test a change of 0 "
        f"across the {tests} rows shown"
    ) in line


def test_every_gate_evaluated_is_listed_passed_ones_too(runs, pytester):
    """Value, bound, margin and result of each gate, in the terminal, scorecard.md,
    scorecard.json and report.html (issue 26, item 4)."""
    result = runs(
        "new",
        "--ambig-baseline=base/scorecard.json",
        "--ambig-fail-if-worse=str_em:80",
        "--ambig-fail-under=str_em=30,str_hit=99",
        "--ambig-max-error-rate=0.2",
        worse="sem-01",
    )
    assert result.ret == 1  # STR-Hit 92.3 < 99
    result.stdout.fnmatch_lines(
        [
            "gates: 4 evaluated, 1 failed (margin: how far the value lies inside its bound)",
            "  suite*gate*statistic*value*bound*margin*result",
            "  march*--ambig-fail-under=str_em=30*STR-EM mean*92.3*≥ 30*+62.3*passed",
            "  march*--ambig-fail-under=str_hit=99*STR-Hit mean*92.3*≥ 99*-6.7*FAILED",
            "  march*--ambig-max-error-rate=0.2*errored or missing items, share*0*≤ 0.2*+0.2*passed",
            "  march*--ambig-fail-if-worse=str_em:80*change, the better end of its 95% CI*≥ -80*passed",
            "gate FAILED: march str_hit (STR-Hit) mean 92.31 < 99",
        ]
    )
    checks = card(pytester, "new")["gates"]["checks"]
    assert [(c["gate"], c["passed"]) for c in checks] == [
        ("--ambig-fail-under=str_em=30", True),
        ("--ambig-fail-under=str_hit=99", False),
        ("--ambig-max-error-rate=0.2", True),
        ("--ambig-fail-if-worse=str_em:80", True),
    ]
    markdown = (pytester.path / "new" / "scorecard.md").read_text()
    assert (
        "| march | --ambig-fail-under=str\\_em=30 | STR-EM mean | 92.3 | ≥ 30 | +62.3 | passed |" in markdown
    )
    data = blocks(pytester.path / "new" / "report.html")["ambigqa-data"]
    assert data["gates"]["checks"]["rows"][0] == [
        "march", "--ambig-fail-under=str_em=30", "STR-EM mean", "92.3", "≥ 30", "+62.3", "passed"
    ]  # fmt: skip


def test_compare_says_what_it_left_out_and_what_differs(pytester, capsys):
    """MARCH alone against MARCH with CondAmbigQA pooled into the retriever's corpus: the
    suite one run has is named, the header counts only what is compared, and the corpus
    difference (which moves the same system's scores) is said (issue 26, item 2)."""
    for report, suites in (("alone", "march"), ("pooled", "march,condambigqa")):
        result = pytester.runpytest(
            f"--ambig-suite={suites}", "--ambig-system=lexical", f"--ambig-report={report}"
        )
        assert result.ret == 0
    capsys.readouterr()
    assert cli(["compare", "alone/scorecard.json", "pooled/scorecard.json"]) == 0
    out = capsys.readouterr().out
    assert "system lexical baseline (pytest_ambigqa.baselines:lexical), 13 items in 1 suite paired" in out
    assert "condambigqa: in this run only (10 items), not compared" in out
    assert "the retrieval corpus differs: suites: march (" in out and "suites: march, condambigqa (" in out
    assert cli(["compare", "pooled/scorecard.json", "alone/scorecard.json"]) == 0
    out = capsys.readouterr().out
    assert ", 13 items in 1 suite paired (of 23 in the base run)" in out
    assert "condambigqa: in the base run only (10 items), not compared" in out
    # A gate on a suite that could not be compared fails, saying why; nothing to compare is refused.
    assert (
        cli(["compare", "alone/scorecard.json", "pooled/scorecard.json", "--fail-if-worse=citation:0.1"]) == 1
    )
    out = capsys.readouterr().out
    assert (
        "gate FAILED: condambigqa citation (Cited-fragment precision (no judge)): not compared (in this run only), "
        "cannot show citation:0.1; gate other suites alone with SUITE:citation:0.1"
    ) in out
    assert pytester.runpytest("--ambig-suite=asqa", "--ambig-system=lexical", "--ambig-report=asqa").ret == 0
    capsys.readouterr()
    assert cli(["compare", "alone/scorecard.json", "asqa/scorecard.json"]) == 2
    assert (
        "have no suite to compare: asqa: in this run only (10 items), not compared; march: in the base run only"
        in (capsys.readouterr().err)
    )


def test_compare_command_gives_the_runs_comparison(runs, pytester, monkeypatch, capsys):
    runs("new", "--ambig-baseline=base/scorecard.json", worse=WORSE)
    monkeypatch.chdir(pytester.path)
    assert cli(["compare", "base/scorecard.json", "new/scorecard.json", "-o", "cmp"]) == 0
    assert card(pytester, "cmp")["comparison"]["rows"] == card(pytester, "new")["comparison"]["rows"]
    assert cli(["compare", "base/scorecard.json", "new/scorecard.json", "--fail-if-worse=str_hit:5"]) == 1
    out = capsys.readouterr().out
    assert "gate FAILED: march str_hit (STR-Hit) worse than the base run" in out
    # The user's files are never overwritten, and bad input is one line.
    before = (pytester.path / "new" / "scorecard.json").read_bytes()
    assert cli(["compare", "base/scorecard.json", "new/scorecard.json", "-o", "new"]) == 2
    assert (pytester.path / "new" / "scorecard.json").read_bytes() == before
    assert cli(["compare", "base/scorecard.json", "nope.json"]) == 2
    assert cli(["compare", "base/scorecard.json", "new/scorecard.json", "--fail-if-worse=length:1"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("pytest-ambigqa compare: -o new: it holds new/scorecard.json")
    assert err[1].startswith("pytest-ambigqa compare: nope.json is not a readable scorecard.json")
    assert (
        err[2]
        == "pytest-ambigqa compare: --fail-if-worse: length (Length) has no better direction to be worse in"
    )


def test_merged_shards_compare_like_one_run(runs, pytester, monkeypatch):
    args = ("--ambig-baseline=base/scorecard.json", "--ambig-fail-if-worse=str_em:1")
    runs("whole", *args, worse=WORSE)
    for i in (1, 2):
        shard = runs(f"shard{i}", *args, f"--ambig-shard={i}/2", worse=WORSE)
        assert shard.ret == 0  # the gate waits for the merge
    monkeypatch.chdir(pytester.path)
    assert cli(["merge", "shard1/scorecard.json", "shard2/scorecard.json", "-o", "merged"]) == 1
    merged = card(pytester, "merged")
    assert merged["comparison"]["rows"] == card(pytester, "whole")["comparison"]["rows"]
    assert any("worse than the base run" in s for s in merged["gates"]["shortfalls"])
    # report.html of a merge still shows questions: the data file is read again.
    page = blocks(pytester.path / "merged" / "report.html")
    details, items = page["ambigqa-details"], page["ambigqa-items"]
    assert len(details) == 13 and all(d["gold"]["interpretations"] for d in details)
    assert all(item["question"] for item in items)  # the drill-down's question is its row's


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ambig-fail-if-worse=str_em:1"], "*--ambig-fail-if-worse: name the run to compare with*"),
        (
            ["--ambig-baseline=missing.json"],
            "*--ambig-baseline: *missing.json is not a readable scorecard.json*",
        ),
        (
            ["--ambig-baseline=base/scorecard.json", "--ambig-fail-if-worse=str_em"],
            "*expected [[]SUITE:]METRIC:MARGIN*",
        ),
        (
            ["--ambig-baseline=base/scorecard.json", "--ambig-fail-if-worse=str_em:-1"],
            "*-1 must be at least 0*",
        ),
        (["--ambig-baseline=base/scorecard.json", "--ambig-fail-if-worse=bleu:1"], "*unknown metric 'bleu'*"),
    ],
)
def test_bad_comparison_options_stop_the_run_before_any_item(runs, pytester, args, message):
    result = runs("bad", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not (pytester.path / "bad").exists()


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "img", "iframe", "link"):
            self.scripts.append({"tag": tag, **dict(attrs)})


def test_report_html_keeps_answers_inert(runs, pytester):
    runs("evil", worse="sem-01", answer=EVIL)
    page = (pytester.path / "evil" / "report.html").read_text()
    parser = _Scripts()
    parser.feed(page)
    # Only the page's own script elements: three data blocks and the inline script.
    assert [s["tag"] for s in parser.scripts] == ["script"] * 4
    assert [s.get("type") for s in parser.scripts] == ["application/json", PACKED, PACKED, None]
    assert "</script><script>window.__pwned" not in page
    # The answer rides in the packed details, whose base64 has no character that ends a script.
    details = blocks(pytester.path / "evil" / "report.html")["ambigqa-details"]
    assert any(EVIL in d["answer"]["text"] for d in details)
    for packed in re.findall(f'<script type="{re.escape(PACKED)}" id="[^"]+">([^<]*)</script>', page):
        assert re.fullmatch("[A-Za-z0-9+/]*=*", packed)
    assert "Content-Security-Policy" in page and "script-src 'sha256-" in page
    assert (
        "http://" not in page.split('id="ambigqa-data"')[0]
        and "https://" not in page.split('id="ambigqa-data"')[0]
    )
