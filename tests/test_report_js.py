"""report.html's script, module by module, under Node's own test runner (tests/js): what
needs no browser (formatting, filtering and sorting, the plots' arithmetic, the address).
The browser tests (test_report_browser.py) keep what only a page shows."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_ambigqa.report import html

TESTS = Path(__file__).parent / "js"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("AMBIGQA_REQUIRE_NODE") == "1":
            pytest.fail("AMBIGQA_REQUIRE_NODE=1 but no `node` on PATH")
        pytest.skip(
            "no `node` on PATH: the page's unit tests need Node 18 or later (AMBIGQA_REQUIRE_NODE=1 fails)"
        )
    return node


def test_the_page_script_passes_its_node_unit_tests():
    done = subprocess.run([_node(), "--test", str(TESTS)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout


def test_every_module_is_in_the_page_and_loads_alone_in_node():
    """The page joins exactly the modules in assets/js; each one, loaded alone by Node, defines
    its part of the namespace and draws nothing (what it uses of the others, it looks up when
    called)."""
    folder = Path(html.__file__).parent / "assets" / "js"
    assert sorted(html.SCRIPTS) == sorted(p.stem for p in folder.glob("*.js"))
    node = _node()
    for name in html.SCRIPTS:
        code = f"console.log(Object.keys(require({str(folder / f'{name}.js')!r})).join())"
        done = subprocess.run([node, "-e", code], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split() == [name], name
