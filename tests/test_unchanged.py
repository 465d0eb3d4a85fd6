"""What a user sees stays what it was while the house is rebuilt (issue 24's check).

One fixed matrix of runs (the three suites single-shot and interactive, serial and ``-n 2``,
shards and merge, rescore, a baseline comparison and ``pytest-ambigqa compare``) and, for each,
everything a user reads: ``scorecard.json`` less its timings, ``scorecard.md``, the terminal
scorecard, the JUnit properties and the node ids. They must equal ``tests/golden/``, written
by a run before the change. A change meant to alter output rewrites them on purpose:
``AMBIGQA_GOLDEN=update pytest tests/test_unchanged.py``, and the diff shows what moved.
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fixtures.process import run_pytest
from pytest_ambigqa.cli import main as cli
from pytest_ambigqa.report.markdown import inert
from pytest_ambigqa.rooms import room

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("AMBIGQA_GOLDEN") == "update"

# A policy that takes each action somewhere, without reading the gold item: clarify when
# asking is cheap, list readings when words are cheap, else answer from its question.
POLICY = """
def act(question, history, alpha, beta, actions):
    if "clarify" in actions and alpha < 10:
        return {"action": "clarify", "text": "Which one do you mean?"}
    if "multi-answer" in actions and beta < 1:
        return {"action": "multi-answer", "text": question + ": one\\nthe other: two"}
    said = history[-1]["answer"] if history else question
    return {"action": "answer", "text": " ".join(said.split()[-4:])}
"""

SUITES = "--ambig-suite=march,condambigqa,asqa"
SINGLE = (SUITES, "--ambig-system=lexical", "--ambig-retrieval-report", "--ambig-cache-dir=cache")
INTERACTIVE = (
    SUITES,
    "--ambig-protocol=interactive",
    "--ambig-system=policy:act",
    "--ambig-costs=0:0.1,20:5",
    "--ambig-steerability",
    "--ambig-limit=3",
)


def _timeless(value):
    """``scorecard.json`` without what differs from run to run: timings, versions, where it ran."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in ("duration", "timing", "versions")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _placed(text: str, root: Path) -> str:
    """Where the suites are installed, and the runs' directory, as placeholders (written
    plain, and as scorecard.md escapes them: a wheel's ``_rooms`` is ``\\_rooms`` there)."""
    for path, mark in ((str(room("suites")), "<suites>"), (str(root), "<tmp>")):
        text = text.replace(path, mark).replace(inert(path), mark)
    return text


def _terminal(stdout: str) -> str:
    """The terminal scorecard: from its header to pytest's last line (the timing), exclusive."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if " ambigqa scorecard " in line)
    end = max(i for i, line in enumerate(lines) if line.startswith("=") and " in " in line)
    return "\n".join(lines[start:end]) + "\n"


def _junit(path: Path) -> str:
    """Each test's node id and properties, in node id order (xdist finishes in any order)."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        props = [f"  {p.get('name')} = {p.get('value')}" for p in case.iter("property")]
        cases.append((case.get("name"), [f"{case.get('classname')}::{case.get('name')}", *props]))
    return "".join("\n".join(lines) + "\n" for _, lines in sorted(cases))


def _snapshot(root: Path, report: str, stdout: str | None, junit: bool = True) -> dict[str, str]:
    out = root / report
    card = _timeless(json.loads((out / "scorecard.json").read_text(encoding="utf-8")))
    shot = {
        "scorecard.json": json.dumps(card, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
        "scorecard.md": (out / "scorecard.md").read_text(encoding="utf-8"),
    }
    if stdout is not None:
        shot["terminal.txt"] = _terminal(stdout)
    if junit:
        shot["junit.txt"] = _junit(root / f"{report}.xml")
    return {name: _placed(text.replace(str(out), "<report>"), root) for name, text in shot.items()}


def _run(root: Path, report: str, *args: str) -> str:
    done = run_pytest(
        root, "-p", "no:randomly", f"--ambig-report={report}", f"--junitxml={report}.xml", *args,
        env={"CI": "", "BUILD_NUMBER": ""},  # on CI pytest does not cut the short summary's lines
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory) -> dict[str, dict[str, str]]:
    root = tmp_path_factory.mktemp("unchanged")
    (root / "policy.py").write_text(POLICY, encoding="utf-8")
    shots = {}
    for name, args in {
        "single": SINGLE,
        "single-n2": (*SINGLE, "-n", "2"),
        "interactive": INTERACTIVE,
        "interactive-n2": (*INTERACTIVE, "-n", "2"),
        "shard1": ("--ambig-suite=march", "--ambig-system=lexical", "--ambig-shard=1/2"),
        "shard2": ("--ambig-suite=march", "--ambig-system=lexical", "--ambig-shard=2/2"),
        "rescore": (SUITES, "--ambig-rescore=single/scorecard.json"),
        "baseline": (
            SUITES,
            "--ambig-system=oracle",
            "--ambig-baseline=single/scorecard.json",
            "--ambig-fail-if-worse=str_em:1",
        ),
    }.items():
        shots[name] = _snapshot(root, name, _run(root, name, *args))
    cwd = Path.cwd()
    os.chdir(root)
    try:
        assert cli(["merge", "shard1/scorecard.json", "shard2/scorecard.json", "-o", "merged"]) == 0
        shots["merged"] = _snapshot(root, "merged", None, junit=False)
    finally:
        os.chdir(cwd)
    return shots


@pytest.fixture
def compared(snapshots, tmp_path_factory, capsys) -> str:
    root = next(iter(tmp_path_factory.getbasetemp().glob("unchanged*")))
    cli(["compare", str(root / "single" / "scorecard.json"), str(root / "baseline" / "scorecard.json")])
    return _placed(capsys.readouterr().out, root)


def _same(case: str, name: str, text: str) -> None:
    path = GOLDEN / case / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"no golden {path}: write it with AMBIGQA_GOLDEN=update"
    assert text == path.read_text(encoding="utf-8"), f"{case}/{name} changed"


CASES = ("single", "interactive", "shard1", "shard2", "merged", "rescore", "baseline")


@pytest.mark.parametrize("case", CASES)
def test_a_run_shows_what_it_showed(snapshots, case):
    for name, text in snapshots[case].items():
        _same(case, name, text)


@pytest.mark.parametrize("case", ["single", "interactive"])
def test_xdist_shows_what_a_serial_run_shows(snapshots, case):
    assert snapshots[f"{case}-n2"] == snapshots[case]


def test_compare_prints_what_it_printed(compared):
    _same("compare", "stdout.txt", re.sub(r"\d+\.\d+s\b", "<s>", compared))
