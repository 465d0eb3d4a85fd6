"""What ``--ambig-otel`` costs a run: 500 MARCH items with the oracle system, without the
option, with it to a receiver on 127.0.0.1, and with it to a receiver that is down (the
exporter fails once and is not asked again); the median of a few runs each, after a warm-up.

The receiver is a small OTLP/HTTP server in this process that decodes every request with
``opentelemetry.proto`` and counts its spans (two per item: the item and the system's call,
and one per suite and the session).

    python bench/otel.py [--items 500] [--rounds 3]
"""

from __future__ import annotations

import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _common import arguments, median_of, run_pytest, scaled
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


class Receiver:
    def __init__(self) -> None:
        self.spans = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = trace_service_pb2.ExportTraceServiceRequest()
                request.ParseFromString(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.spans += sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def main() -> None:
    options = arguments(__doc__, items=500, rounds=3)
    receiver = Receiver()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        data = scaled("march", options.items, directory)
        base = [
            "-q",
            "--ambig-suite=march",
            f"--ambig-data={data}",
            "--ambig-system=oracle",
            "--ambig-progress=off",
        ]

        root = str(Path(__file__).resolve().parent.parent)  # this checkout's plugin, wherever it is installed

        def timed(*extra: str, endpoint: str | None = None) -> float:
            env = {"PYTHONPATH": root} | ({"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint} if endpoint else {})
            return median_of(options.rounds, lambda: run_pytest([*base, *extra], directory, env=env))

        plain = timed()
        traced = timed("--ambig-otel", endpoint=receiver.url)
        spans = receiver.spans // (options.rounds + 1)
        dead = timed("--ambig-otel", endpoint="http://127.0.0.1:9")  # discard port: nothing listens
    n = options.items
    print(f"{n} items, median of {options.rounds} runs each:")
    print(f"  without --ambig-otel        {plain:6.2f} s")
    print(
        f"  --ambig-otel, receiver up   {traced:6.2f} s  (+{(traced - plain) / n * 1000:.2f} ms/item; "
        f"{spans} spans a run)"
    )
    print(f"  --ambig-otel, receiver down {dead:6.2f} s  (+{(dead - plain) / n * 1000:.2f} ms/item)")


if __name__ == "__main__":
    main()
