"""The browser harness itself (``fixtures/browser.py``): a real headless Chromium opens a local HTML
file, is driven, and reports what the page logged and requested, without reaching the network."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import fixtures.browser

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>harness</title></head>
<body>
  <p id="status">idle</p>
  <button id="go" onclick="document.getElementById('status').textContent = 'clicked: ' +
      document.getElementById('name').value + ' / ' + document.getElementById('suite').value">Go</button>
  <input id="name">
  <select id="suite"><option value="march">MARCH</option><option value="asqa">ASQA</option></select>
</body></html>
"""


def test_a_click_a_typed_text_and_a_selection_change_the_page_and_a_screenshot_is_a_png(
    tmp_path, open_page, request
):
    (tmp_path / "page.html").write_text(PAGE, encoding="utf-8")
    page = open_page(tmp_path / "page.html")

    page.fill("#name", "lexical")
    page.select_option("#suite", "asqa")
    page.click("#go")

    assert page.text_content("#status") == "clicked: lexical / asqa"
    assert page.evaluate("document.title") == "harness"
    assert page.evaluate("n => n * 2", 21) == 42
    assert page.console_errors == []
    assert page.requests == [(tmp_path / "page.html").as_uri()]
    assert page.blocked == []
    shot = page.screenshot("after click")
    assert shot.parent == fixtures.browser.artifacts()
    # named by the test and the name, sanitized: pytest-repeat's "[3-15]" would be "_3-15"
    assert shot.name == re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name).strip("_") + "-after_click.png"
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_console_errors_and_uncaught_errors_are_collected(tmp_path, open_page):
    (tmp_path / "page.html").write_text(
        """<script>
        console.log("hello");
        console.warn("careful");
        console.error("boom", 42);
        </script>
        <script>null.x;</script>
        <script>setTimeout(() => { throw "late"; }, 0);</script>
        <button onclick="undefinedFunction()">broken</button>""",
        encoding="utf-8",
    )
    page = open_page(tmp_path / "page.html")
    page.click("button")
    page.wait_for_function("() => true")  # a round trip: the click's error has been reported

    assert page.console_errors == [
        "boom 42",
        "Uncaught TypeError: Cannot read properties of null (reading 'x')",
        "Uncaught late",
        "Uncaught ReferenceError: undefinedFunction is not defined",
    ]
    assert ("log", "hello") in page.console and ("warning", "careful") in page.console


@pytest.fixture
def counting_server() -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 and the paths it was asked for: a request the harness let
    through would land here."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}", hits
    server.shutdown()
    server.server_close()


def test_every_request_that_would_leave_the_machine_is_recorded_and_blocked(
    tmp_path, open_page, counting_server
):
    host, hits = counting_server
    (tmp_path / "style.css").write_text("p { color: red }", encoding="utf-8")
    (tmp_path / "page.html").write_text(
        f"""<link rel="stylesheet" href="style.css">
        <img src="http://example.invalid/x.png">
        <img src="http://{host}/img.png">
        <img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
        <p>text</p>
        <script>
        const socket = new WebSocket("ws://{host}/ws");
        window.settled = Promise.allSettled([
            fetch("https://{host}/fetch"),
            new Promise(done => {{ socket.onclose = done; }}),
        ]);
        </script>""",
        encoding="utf-8",
    )
    page = open_page(tmp_path / "page.html")
    assert page.evaluate("window.settled.then(() => true)")

    assert sorted(page.blocked) == sorted(
        ["http://example.invalid/x.png", f"http://{host}/img.png", f"https://{host}/fetch", f"ws://{host}/ws"]
    )
    assert hits == []  # not even loopback was reached
    local = [(tmp_path / name).as_uri() for name in ("page.html", "style.css")]
    assert sorted(page.requests) == sorted([*local, *page.blocked])
    # Chromium's own words for each blocked load, and for the web socket its host resolver failed
    assert sorted(page.console_errors) == [
        "Failed to load resource: net::ERR_BLOCKED_BY_CLIENT.Inspector",
        "Failed to load resource: net::ERR_BLOCKED_BY_CLIENT.Inspector",
        "Failed to load resource: net::ERR_BLOCKED_BY_CLIENT.Inspector",
        f"WebSocket connection to 'ws://{host}/ws' failed: Error in connection establishment: net::ERR_NAME_NOT_RESOLVED",
    ]
    assert page.evaluate("getComputedStyle(document.querySelector('p')).color") == "rgb(255, 0, 0)"


@pytest.mark.parametrize("missing", ["chromium", "playwright"])
@pytest.mark.parametrize("required", [False, True])
def test_a_missing_browser_skips_with_what_to_install_or_fails_where_required(
    pytester, monkeypatch, missing, required
):
    if missing == "chromium":
        monkeypatch.setattr(fixtures.browser, "CHROMIUM", str(pytester.path / "no-chromium"))
    else:
        monkeypatch.setitem(sys.modules, "playwright.sync_api", None)
    if required:
        monkeypatch.setenv("AMBIGQA_REQUIRE_BROWSER", "1")
    else:
        monkeypatch.delenv("AMBIGQA_REQUIRE_BROWSER", raising=False)
    pytester.makepyfile("def test_page(open_page):\n    pass\n")

    result = pytester.runpytest("-p", "fixtures.browser", "-rs", "-p", "no:cacheprovider")

    install = "apt-get install chromium" if missing == "chromium" else "pip install 'pytest-ambigqa[test]'"
    if required:
        result.assert_outcomes(errors=1)
        assert f"{install} (AMBIGQA_REQUIRE_BROWSER=1)" in result.stdout.str()
    else:
        result.assert_outcomes(skipped=1)
        assert result.stdout.lines[-2].endswith(install)  # the -rs line: "SKIPPED [1] ...: <reason>"
    assert "During handling" not in result.stdout.str()
