"""The repository's own test setup: pytester, the shared real-data samples, a local HTTP server."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

pytest_plugins = ["pytester"]

# A shared 2-core machine makes per-example timings meaningless; keep the properties, drop the deadline.
settings.register_profile("ambigqa", deadline=None)
settings.load_profile("ambigqa")

SHARED_DATA = Path(os.environ.get("AMBIGQA_SHARED_DATA", Path(__file__).parent.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``: real benchmark samples that are not ours to commit."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real-data samples not found at {SHARED_DATA} (set AMBIGQA_SHARED_DATA)")
    return SHARED_DATA


class LocalServer:
    """A real HTTP server on 127.0.0.1; ``handler(path, json_body) -> (status, body)``."""

    def __init__(self, handler: Callable[[str, Any], tuple[int, Any]]):
        self.handler = handler
        self.requests: list[tuple[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                outer.requests.append((self.path, body))
                status, reply = outer.handler(self.path, body)
                data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def local_server() -> Iterator[Callable[..., LocalServer]]:
    servers: list[LocalServer] = []

    def start(handler: Callable[[str, Any], tuple[int, Any]]) -> LocalServer:
        servers.append(LocalServer(handler))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
