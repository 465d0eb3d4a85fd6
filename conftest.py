"""The repository's own test setup: pytester, the shared real-data samples, a local HTTP server."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy  # noqa: F401
import pydantic_core  # noqa: F401
import pytest
import rouge_score.rouge_scorer  # noqa: F401
from hypothesis import settings

try:
    import torch  # noqa: F401
except ImportError:  # the core install: no model-backed tests run
    pass

# pytester's in-process runs restore sys.modules afterwards, and numpy's C extensions cannot be
# loaded twice in one process: import up front what the plugin loads in those runs (numpy,
# openai's pydantic, rouge-score, whose NLTK pulls in SciPy and numpy.fft, and torch: imported
# again after an inner run had loaded it, it failed with "bad call flags" or crashed the
# worker), whichever xdist worker happens to run an inner run first.

pytest_plugins = ["pytester"]

# Plugins that deepeval installs and nothing here uses: deepeval's own costs seconds in every
# process (README, "deepeval"), pytest-asyncio warns in every run without its option set.
QUIET = "-p no:deepeval -p no:asyncio"


@pytest.fixture(autouse=True)
def _quiet_inner_runs(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytester clears PYTEST_ADDOPTS; set it again for its runs, their xdist workers and subprocesses."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")
        monkeypatch.setenv("PYTEST_ADDOPTS", QUIET)


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


# -- a real OpenAI-compatible judge server on 127.0.0.1 ------------------------------------

LOOPBACK = ("127.0.0.1", "::1", "localhost")

# Installed in every process a test starts (pytester runs, their xdist workers): any connection
# to an address other than loopback fails the test.
GUARD = """
import socket as _socket
_real_connect = _socket.socket.connect
def _loopback_only(self, address):
    loopback = ("127.0.0.1", "::1", "localhost")
    if self.family in (_socket.AF_INET, _socket.AF_INET6) and address[0] not in loopback:
        raise AssertionError(f"network guard: a test tried to reach {address}")
    return _real_connect(self, address)
_socket.socket.connect = _loopback_only
"""


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    real = socket.socket.connect

    def guarded(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
            raise AssertionError(f"network guard: a test tried to reach {address}")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


def judge_reply(body: dict[str, Any]) -> dict[str, Any]:
    """What the stand-in judge answers, by the kind of request (deterministic, seed-aware)."""
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    if "impartial judge" in system:  # MARCH criteria
        odd = body.get("seed", 0) % 2
        return {
            "content": json.dumps(
                {"relevance": 4, "faithfulness": 5, "informativeness": 3, "correctness": 4 - odd}
            )
        }
    if "extract answers" in system:  # the LLM reader
        context = messages[1]["content"].split("Context: ", 1)[1].split("\n\nQuestion:", 1)[0]
        return {"content": json.dumps({"answer": " ".join(context.split()[:3])})}
    # deepeval G-Eval: a score out of 10, with log-probabilities when asked for them.
    content = json.dumps({"reason": "Mostly consistent with the expected output.", "score": 7})
    reply: dict[str, Any] = {"content": content}
    if body.get("logprobs"):
        top = [{"token": "7", "logprob": -0.1, "bytes": None}, {"token": "8", "logprob": -2.5, "bytes": None}]
        reply["logprobs"] = {"content": [{"token": "7", "logprob": -0.1, "bytes": None, "top_logprobs": top}]}
    return reply


# Replies that are not chat completions, served with status 200 (``ChatServer.faults``).
MALFORMED: dict[str, Any] = {
    "html": b"<html><body>Bad gateway</body></html>",
    "foo": {"foo": 1},
    "empty-choices": {"choices": []},
    "null-choices": {"choices": None},
    "no-message": {"choices": [{"index": 0}]},
    "list-content": {"choices": [{"index": 0, "message": {"role": "assistant", "content": [{"text": "x"}]}}]},
}


class ChatServer:
    """``/v1/chat/completions`` on 127.0.0.1, recording requests; ``faults`` are served first:
    "429", "500", "400", "hang" (sleeps past the client's timeout), "invalid" (content not
    JSON), "401-echo" (a 401 that quotes the Authorization header), "retry-after=X" (a 429
    with that header), "string-usage" (a good reply with a string ``usage``), and the
    :data:`MALFORMED` replies."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.faults: list[str] = []
        self.hang = 3.0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.requests.append(body)
                outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                fault = outer.faults.pop(0) if outer.faults else None
                if fault in ("429", "500", "400"):
                    return self._send(
                        int(fault), {"error": {"message": f"stand-in {fault}"}}, {"Retry-After": "0"}
                    )
                if fault and fault.startswith("retry-after="):
                    message = {"error": {"message": "slow down"}}
                    return self._send(429, message, {"Retry-After": fault.split("=", 1)[1]})
                if fault == "400-surrogate":
                    return self._send(400, {"error": {"message": "bad \ud800 request"}})
                if fault == "401-echo":
                    echoed = f"invalid key in header Authorization: {self.headers.get('Authorization')}"
                    return self._send(401, {"error": {"message": echoed}})
                if fault in MALFORMED:
                    return self._send(200, MALFORMED[fault])
                if fault == "hang":
                    time.sleep(outer.hang)
                reply = {"content": "this is not JSON"} if fault == "invalid" else judge_reply(body)
                choice = {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply["content"]},
                    "finish_reason": "stop",
                    "logprobs": reply.get("logprobs"),
                }
                prompt = sum(len(m["content"]) for m in body["messages"]) // 4
                completion = len(reply["content"]) // 4
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(outer.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "system_fingerprint": "fp_local",
                        "choices": [choice],
                        "usage": "lots"
                        if fault == "string-usage"
                        else {
                            "prompt_tokens": prompt,
                            "completion_tokens": completion,
                            "total_tokens": prompt + completion,
                        },
                    },
                )

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (hang)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


SECRET = "sk-test-DO-NOT-LEAK-8d1f"


@pytest.fixture
def chat_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    """A stand-in judge, with an API key in the environment that must never be written anywhere."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    server = ChatServer()
    yield server
    server.server.shutdown()
    server.server.server_close()


# -- a tiny extractive QA model for the reader path -----------------------------------------


@pytest.fixture(scope="session")
def tiny_qa_model(tmp_path_factory) -> Path:
    """A 2-layer BERT with a vocabulary of the samples' words: random but real, seeded."""
    import torch
    from transformers import BertConfig, BertForQuestionAnswering, BertTokenizerFast

    directory = tmp_path_factory.mktemp("tiny-qa")
    text = " ".join(p.text for item in _reader_items() for p in item.passages) + " ".join(
        i.question for i in _reader_items()
    )
    vocab = sorted({w for w in re.findall(r"\w+", text.lower())})[:3000]
    (directory / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *vocab]) + "\n"
    )
    tokenizer = BertTokenizerFast(vocab_file=str(directory / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    BertForQuestionAnswering(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def _reader_items():
    from pytest_ambigqa.suites import SUITES, LoadOptions

    return [i for name in ("march", "asqa") for i in SUITES[name].load(None, LoadOptions()).items]
