"""report.html's and history.html's scripts, module by module, under Node's own test runner (tests/js):
what needs no browser (formatting, filtering and sorting, the plots' arithmetic, the address, the paired
statistics). The browser tests (test_report_browser.py, test_history_browser.py) keep what only a page shows."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_ambigqa.report import history, html

TESTS = Path(__file__).parent / "js"


def test_the_page_script_passes_its_node_unit_tests(node):
    done = subprocess.run([node, "--test", str(TESTS)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout


@pytest.mark.parametrize("page", [html, history], ids=["report", "history"])
def test_every_module_is_in_the_page_and_loads_alone_in_node(node, page):
    """Each page joins exactly the modules of its folder in assets (history.html report.html's
    shared ones too); each one, loaded alone by Node, defines its part of the namespace and
    draws nothing (what it uses of the others, it looks up when called)."""
    folder = Path(html.__file__).parent / "assets" / ("js" if page is html else "history")
    assert sorted(page.SCRIPTS) == sorted(p.stem for p in folder.glob("*.js"))
    assert set(history.SHARED) <= set(html.SCRIPTS)
    for name in page.SCRIPTS:
        code = f"console.log(Object.keys(require({str(folder / f'{name}.js')!r})).join())"
        done = subprocess.run([node, "-e", code], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split() == [name], name
