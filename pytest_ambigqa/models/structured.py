"""Structured output: how a call that needs a JSON reply asks the server for one, and how
a reply is read whatever wraps it.

Servers differ. Many take a JSON schema (``response_format`` of type ``json_schema``: OpenAI,
vLLM, Ollama, llama.cpp's server), some only JSON mode (type ``json_object``), some neither:
they refuse the field (HTTP 400 or 422) or ignore it. A client asks the richest way first and
steps down one rung when a request is refused for it; the rung that worked is kept for the
rest of the run (:class:`Ladder`), so the detection costs at most two refused requests, once
per process. The prompt always describes the form too, so the last rung, the prompt alone,
still says what is wanted.

Replies are read tolerantly (:func:`parse_json`): a reasoning model's ``<think>`` block, a
Markdown code fence and prose before or after the object are set aside.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# The rungs, richest first: a JSON schema, JSON mode, the prompt alone.
MODES = ("json_schema", "json_object", "prompt")
# What a server answers a response_format it does not take with (vLLM and OpenAI: 400;
# FastAPI-based servers: 422). Any other status is not about the format.
REFUSED = (400, 422)

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_NAME = re.compile(r"[^A-Za-z0-9_-]")


def response_format(mode: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` of a request on rung ``mode`` (None: the prompt alone).

    The schema is sent non-strict: OpenAI's strict mode refuses optional fields and most
    keywords, and the caller's own check holds the reply to the form anyway."""
    if mode == "json_schema":
        name = _NAME.sub("_", str(schema.get("title") or "reply"))[:64]
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


class Ladder:
    """The run's rung for structured output: None until a structured request has gone
    through; after that it only ever steps down (a refusal on a later request, for a schema
    the server will not take, moves it down for the rest of the run)."""

    def __init__(self) -> None:
        self.mode: str | None = None
        self._lock = threading.Lock()
        self._probe = threading.Lock()

    def rungs(self) -> tuple[str, ...]:
        """The rungs a request may try, from the run's own down."""
        return MODES[MODES.index(self.mode) :] if self.mode else MODES

    def settle(self, mode: str) -> None:
        with self._lock:
            if self.mode is None or MODES.index(mode) > MODES.index(self.mode):
                self.mode = mode

    @contextmanager
    def detecting(self) -> Iterator[None]:
        """While the rung is unknown, one structured request at a time finds it: the others
        wait and then start from the rung it found, so a run detects once."""
        if self.mode is not None:
            yield
            return
        with self._probe:
            yield


def parse_json(content: str) -> Any:
    """The JSON value in a reply: the whole reply, else the first fenced block that parses,
    else the first JSON object in the text (prose before or after it is set aside). A
    ``<think>`` block is dropped first. Raises ValueError when there is none."""
    text = _THINK.sub("", content).strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block.strip())
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise ValueError("no JSON object in the reply")


def without_thinking(content: str) -> str:
    """A reply with any ``<think>`` block removed: the text a prose answer is."""
    return _THINK.sub("", content).strip()
