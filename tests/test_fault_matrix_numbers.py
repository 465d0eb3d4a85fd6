"""The fault matrix, third part: numbers that gate, money and state (issue 39, sections 4 and 5).

Each class of hostile input asserts the invariant: the gate decides as it does on the clean
data, or the input is refused with one line naming the file and what was wrong; no internal
error (no traceback) either way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixtures.process import run_pytest
from pytest_ambigqa.cli import main as cli

GATE = "--ambig-fail-under=str_em=35"  # the lexical baseline's MARCH sample: 29.5, fails


def _run(root: Path, name: str, *args: str) -> Path:
    done = run_pytest(
        root, "--ambig-suite=march", "--ambig-system=lexical", GATE, f"--ambig-report={name}", *args
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stdout[-2000:]
    return root / name / "scorecard.json"


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> dict[str, Path]:
    """The MARCH sample's two shards, whole, and narrowed in the ways a shard can be."""
    root = tmp_path_factory.mktemp("shards")
    return {
        "1": _run(root, "s1", "--ambig-shard=1/2"),
        "2": _run(root, "s2", "--ambig-shard=2/2"),
        "-k": _run(root, "k", "--ambig-shard=1/2", "-k", "not con"),
        "-k -n 2": _run(root, "kn", "--ambig-shard=1/2", "-k", "not con", "-n", "2"),
        "--deselect": _run(root, "d", "--ambig-shard=1/2", "--deselect", "ambigqa::test_ambig[march-con-01]"),
        "--ambig-limit": _run(root, "l", "--ambig-shard=1/2", "--ambig-limit=5"),
    }


def _outcome(args: list[str], capsys) -> tuple[int, str, str]:
    code = cli(args)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- 4.1 a shard that did not run its whole shard ------------------------------------------


def test_whole_shards_merge_and_the_gate_fails_as_on_the_clean_run(shards, tmp_path, capsys):
    code, out, _ = _outcome(["merge", str(shards["1"]), str(shards["2"]), "-o", str(tmp_path / "m")], capsys)
    assert code == 1 and "gate FAILED" in out and "merged 13 items" in out
    assert json.loads(shards["1"].read_text())["config"]["selection"] == {"items": 7, "selected": 7, "by": []}


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("-k", "ran 4 of its 7 items (narrowed by -k 'not con')"),
        ("-k -n 2", "ran 4 of its 7 items (narrowed by -k 'not con')"),
        ("--deselect", "ran 6 of its 7 items (narrowed by --deselect (1 node id(s)))"),
    ],
)
def test_merge_refuses_a_narrowed_shard_naming_it(shards, tmp_path, capsys, how, said):
    code, out, err = _outcome(
        ["merge", str(shards[how]), str(shards["2"]), "-o", str(tmp_path / "m")], capsys
    )
    assert code == 2 and not (tmp_path / "m").exists()
    line = _one_line(err)
    assert f"shard 1/2 ({shards[how]}) {said}: not the whole shard" in line


def test_merge_refuses_a_shard_of_another_limit(shards, tmp_path, capsys):
    code, _, err = _outcome(
        ["merge", str(shards["2"]), str(shards["--ambig-limit"]), "-o", str(tmp_path / "m")], capsys
    )
    assert code == 2
    assert f"shard 1/2 ({shards['--ambig-limit']}) ran --ambig-limit=5 where shard 2/2" in _one_line(err)


def test_an_older_shard_without_a_record_still_merges_with_a_note(shards, tmp_path, capsys):
    old = tmp_path / "old.json"
    data = json.loads(shards["1"].read_text())
    del data["config"]["selection"]
    old.write_text(json.dumps(data))
    code, out, _ = _outcome(["merge", str(old), str(shards["2"]), "-o", str(tmp_path / "m")], capsys)
    assert code == 1 and "merged 13 items" in out
    assert f"note: {old} record(s) no selection (written by an older version)" in out
