"""report.html's page script typed from the JSON Schema of its data: the generated types are
what the generator makes now, ``tsc --checkJs`` passes over the scripts against them (and
fails on a renamed field), and real runs' pages hold to the schema, so neither side of the
payload can rename a field alone."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

from fixtures.process import run_pytest
from pytest_ambigqa.report import page_model, page_types

ROOT = Path(__file__).parent.parent
TSC = ROOT / "node_modules" / ".bin" / "tsc"
SCRIPTS = ROOT / "pytest_ambigqa" / "report" / "assets" / "js"


@pytest.fixture(scope="module")
def tsc(node) -> Path:
    """TypeScript's compiler as ``npm ci`` installs it (package.json pins it), beside Node
    (``node``: skipped without it, failed where ``AMBIGQA_REQUIRE_NODE=1``, as CI sets);
    missing, the type check skips and says how to get it, or fails in CI."""
    if not TSC.exists():
        if os.environ.get("AMBIGQA_REQUIRE_NODE") == "1":
            pytest.fail(
                "AMBIGQA_REQUIRE_NODE=1 but no node_modules/.bin/tsc: run `npm ci` at the repository root"
            )
        pytest.skip(
            "no node_modules/.bin/tsc: `npm ci` at the repository root installs TypeScript to check the page"
        )
    return TSC


def _check(tsc: Path, project: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(tsc), "-p", str(project)], capture_output=True, text=True, timeout=300)


def test_the_committed_types_are_a_fresh_generation():
    committed = (SCRIPTS / "payload.d.ts").read_text("utf-8")
    assert committed == page_types.generated(), "run `python -m pytest_ambigqa.report.page_types`"
    assert "export interface Payload {" in committed and "export interface Detail {" in committed


def test_the_page_scripts_type_check(tsc):
    run = _check(tsc, ROOT / "jsconfig.json")
    assert run.returncode == 0, run.stdout + run.stderr
    config = json.loads((ROOT / "jsconfig.json").read_text("utf-8"))
    assert config["compilerOptions"]["checkJs"] is True


def test_a_renamed_field_fails_the_type_check(tsc, tmp_path):
    """The check reads the payload's fields: a field the schema no longer has is an error
    where a script reads it."""
    shutil.copytree(SCRIPTS, tmp_path / "js")
    types = tmp_path / "js" / "payload.d.ts"
    types.write_text(types.read_text("utf-8").replace("  shortfalls: string[];", "  shortfall: string[];"))
    config = json.loads((ROOT / "jsconfig.json").read_text("utf-8"))
    config["include"] = ["js/*.js", "js/*.d.ts"]
    (tmp_path / "jsconfig.json").write_text(json.dumps(config))
    run = _check(tsc, tmp_path / "jsconfig.json")
    assert run.returncode != 0
    assert re.search(r"main\.js\(\d+,\d+\): error TS\d+: Property 'shortfalls' does not exist", run.stdout)


def _page_data(report: Path) -> dict:
    """What report.html holds, unpacked as its script unpacks it (main.js, packed.js)."""
    text = report.read_text("utf-8")

    def block(name: str) -> str:
        found = re.search(rf'<script type="[^"]+" id="ambigqa-{name}">(.*?)</script>', text, re.S)
        assert found, name
        return found.group(1)

    def packed(name: str) -> list:
        return json.loads(zlib.decompress(base64.b64decode(block(name))))

    return {"data": json.loads(block("data")), "items": packed("items"), "details": packed("details")}


def test_real_runs_pages_hold_to_the_schema(tmp_path):
    """Pages of a plain run, one compared with a baseline (the comparison tab, base answers),
    and an interactive one (episodes, transcripts, the protocol's tables)."""
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(page_model.schema())
    common = ("--ambig-suite=march", "-p", "no:randomly")
    run_pytest(tmp_path, *common, "--ambig-system=oracle", "--ambig-report=base")
    run_pytest(
        tmp_path,
        *common,
        "--ambig-system=lexical",
        "--ambig-baseline=base/scorecard.json",
        "--ambig-retrieval-report",
        "--ambig-report=new",
    )
    run_pytest(
        tmp_path, *common, "--ambig-protocol=interactive", "--ambig-limit=1", "--ambig-costs=0:0.1",
        "--ambig-report=episodes",
    )  # fmt: skip
    for name in ("base", "new", "episodes"):
        page = _page_data(tmp_path / name / "report.html")
        assert page["items"] and len(page["items"]) == len(page["details"]), name
        errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(page)]
        assert errors == [], name
    compared = _page_data(tmp_path / "new" / "report.html")
    assert compared["data"]["comparison"]["suites"] and any("base" in d for d in compared["details"])
    assert any("transcript" in d for d in _page_data(tmp_path / "episodes" / "report.html")["details"])
    # and the schema says something: a renamed field fails it
    broken = {**compared, "data": {**compared["data"], "fact": compared["data"].pop("facts")}}
    assert not validator.is_valid(broken)
