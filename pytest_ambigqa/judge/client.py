"""An OpenAI-compatible chat client for judging: cached, retried, schema-checked, costed.

Talks to any server with the chat-completions API (OpenAI, vLLM, Ollama, OpenRouter, or a
local stand-in) through the ``openai`` package. Every call runs at temperature 0 with a
fixed seed. Replies must be JSON that passes the caller's check; an invalid reply is
re-asked, and when it stays invalid, or the server keeps failing after bounded retries,
the caller gets :class:`JudgeUnavailable` with the reason, so that the item is
*unscored*, never scored 0 and never dropped. Calls are cached in SQLite, keyed by base
URL, model, messages and parameters (never the API key), so a re-run costs nothing.
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cache import CallCache

REASK = (
    "Your reply could not be used: {problem}. Reply again with only the JSON object asked for, "
    "and nothing else."
)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class JudgeUnavailable(Exception):
    """The judge could not give a usable answer; the message says why."""


@dataclass(frozen=True)
class JudgeSettings:
    model: str
    base_url: str | None
    seed: int = 0
    timeout: float = 60.0  # per request
    max_retries: int = 4  # on 429, 5xx, timeouts and connection errors
    retry_budget: float = 120.0  # total seconds of backoff per call
    max_reasks: int = 2  # after an invalid reply
    concurrency: int = 4
    price_in: float | None = None  # $ per million prompt tokens
    price_out: float | None = None  # $ per million completion tokens


@dataclass
class Usage:
    """What judging one item cost; summed per suite on the controller."""

    requests: int = 0
    cached: int = 0
    retries: int = 0
    reasks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    fingerprints: list[str] = field(default_factory=list)

    def add(self, other: Usage) -> None:
        for name in ("requests", "cached", "retries", "reasks", "prompt_tokens", "completion_tokens", "cost"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.fingerprints = sorted(set(self.fingerprints) | set(other.fingerprints))

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        return cls(**data)


def parse_json(content: str) -> Any:
    """The JSON object in a reply, tolerating a Markdown code fence around it."""
    match = _FENCE.match(content)
    return json.loads(match.group(1) if match else content)


class JudgeClient:
    def __init__(self, settings: JudgeSettings, cache: CallCache | None) -> None:
        self.settings = settings
        self.cache = cache
        self.base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        self._slots = threading.BoundedSemaphore(settings.concurrency)
        self._client = None
        self._lock = threading.Lock()

    @property
    def client(self):
        with self._lock:
            if self._client is None:
                from openai import OpenAI

                self._client = OpenAI(
                    base_url=self.base_url,
                    # Local servers need no key; the key is only ever read from the environment.
                    api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
                    max_retries=0,
                    timeout=self.settings.timeout,
                )
            return self._client

    def chat_json(
        self,
        messages: list[dict[str, str]],
        check: Callable[[Any], str | None],
        usage: Usage,
        *,
        seed: int | None = None,
        **params: Any,
    ) -> tuple[Any, dict[str, Any]]:
        """The parsed JSON reply (and the raw completion) that passes ``check``.

        ``check(data)`` returns None when the reply is usable, else what is wrong with it;
        the judge is then re-asked, up to ``max_reasks`` times.
        """
        conversation = list(messages)
        problem = "no reply"
        for attempt in range(self.settings.max_reasks + 1):
            raw = self.complete(conversation, usage, seed=seed, **params)
            content = raw["choices"][0]["message"].get("content") or ""
            try:
                data = parse_json(content)
                problem = check(data)
            except ValueError as exc:
                problem = f"it is not JSON ({exc})"
            if problem is None:
                return data, raw
            if attempt < self.settings.max_reasks:
                usage.reasks += 1
                conversation += [
                    {"role": "assistant", "content": content},
                    {"role": "user", "content": REASK.format(problem=problem)},
                ]
        raise JudgeUnavailable(
            f"judge reply still unusable after {self.settings.max_reasks + 1} attempts: {problem}"
        )

    def complete(self, messages: list[dict[str, str]], usage: Usage, *, seed: int | None = None, **params):
        """One chat completion as a plain dict, from the cache when it has it."""
        request = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": 0,
            "seed": self.settings.seed if seed is None else seed,
            **params,
        }
        key = CallCache.key(self.base_url, request)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                usage.cached += 1
                return hit
        with self._slots:
            response = self._with_retries(request, usage)
        raw = response.model_dump(mode="json")
        if self.cache is not None:
            self.cache.put(key, raw)
        self._account(raw, usage)
        return raw

    def _account(self, raw: dict[str, Any], usage: Usage) -> None:
        usage.requests += 1
        tokens = raw.get("usage") or {}
        prompt, completion = tokens.get("prompt_tokens") or 0, tokens.get("completion_tokens") or 0
        usage.prompt_tokens += prompt
        usage.completion_tokens += completion
        price_in, price_out = self.settings.price_in, self.settings.price_out
        if price_in is not None and price_out is not None:
            usage.cost += (prompt * price_in + completion * price_out) / 1_000_000
        fingerprint = raw.get("system_fingerprint")
        if fingerprint and fingerprint not in usage.fingerprints:
            usage.fingerprints.append(fingerprint)

    def _with_retries(self, request: dict[str, Any], usage: Usage):
        import openai

        transient = (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError)
        waited = 0.0
        last: Exception | None = None
        for attempt in range(self.settings.max_retries + 1):
            try:
                return self.client.chat.completions.create(**request)
            except transient as exc:
                last = exc
            except openai.APIStatusError as exc:
                if exc.status_code < 500:
                    raise JudgeUnavailable(
                        f"judge refused the request: HTTP {exc.status_code}: {_brief(exc)}"
                    ) from None
                last = exc
            if attempt == self.settings.max_retries:
                break
            pause = _backoff(attempt, last)
            if waited + pause > self.settings.retry_budget:
                break
            usage.retries += 1
            time.sleep(pause)
            waited += pause
        raise JudgeUnavailable(f"judge unavailable after {attempt + 1} attempts: {_describe(last)}")


def _backoff(attempt: int, error: Exception | None) -> float:
    """Exponential backoff with full jitter; a server's Retry-After is honoured (capped)."""
    response = getattr(error, "response", None)
    header = response.headers.get("retry-after") if response is not None else None
    if header:
        try:
            return min(float(header), 30.0)
        except ValueError:
            pass
    return random.uniform(0, min(0.5 * 2**attempt, 20.0))


def _brief(exc: Exception) -> str:
    """The server's own error message when it sent one, else the client's."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"][:200]
    return str(getattr(exc, "message", exc))[:200]


def _describe(exc: Exception | None) -> str:
    if exc is None:
        return "no attempt made"
    status = getattr(exc, "status_code", None)
    return f"HTTP {status}: {_brief(exc)}" if status else f"{type(exc).__name__}: {_brief(exc)}"
