"""The OpenAI-compatible chat client of every model the plugin asks (the judge, the LLM
reader, the ``llm:`` systems, the simulated user): cached, retried, schema-checked, costed.

Talks to any server with the chat-completions API (OpenAI, vLLM, Ollama, OpenRouter, or a
local stand-in) through the ``openai`` package. Every call has a fixed seed and runs at
temperature 0 unless its caller decodes otherwise (the ``llm:`` methods decode as their papers
state); ``--ambig-llm-temperature`` and ``--ambig-llm-max-tokens`` override every call of the
client they configure. Replies must be JSON that passes the caller's check (a caller may take
a reply without JSON as prose instead); a call that needs structure asks for it with the
server's structured output (``structured.py``). An invalid reply is re-asked, and when it
stays invalid, or the server keeps failing after bounded retries, the caller gets
:class:`ModelUnavailable` with the reason, so that the item is *unscored*, never scored 0
and never dropped. Calls are cached in SQLite, keyed by base
URL, model, messages and parameters (never the API key), so a re-run costs nothing.
"""

from __future__ import annotations

import json
import math
import os
import random
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ModelGivenUp, ModelUnavailable
from ..output import clean, excerpt, redact, sent, sent_url, split_url
from ..telemetry import active, gen_ai_messages
from .cache import CallCache
from .structured import REFUSED, Ladder, parse_json, response_format, without_thinking
from .usage import Usage

if TYPE_CHECKING:
    from openai import OpenAI

    from .batch import BatchState

REASK = (
    "Your reply could not be used: {problem}. Reply again with only the JSON object asked for, "
    "and nothing else."
)


class _Malformed(Exception):
    """The server answered 200 with something that is not a chat completion (retried)."""


class _Refused(Exception):
    """The server refused a request's ``response_format`` (HTTP 400 or 422): the request is
    sent again one rung down (``structured.Ladder``)."""


# Statuses that no retry can mend: the key or the permission is wrong. After one, the model
# is dead for the rest of the run and every later call fails at once.
_FATAL_STATUS = {401: "authentication failed", 403: "permission denied"}
# A model that is not found, or a server nobody answers, may be a passing fault: the model is
# given up only after this many calls in a row have failed that way (a success resets it).
DEAD_AFTER = 3


@dataclass(frozen=True)
class ChatSettings:
    model: str
    base_url: str | None
    seed: int = 0
    # The defaults of --ambig-judge-timeout, -retries, -reasks and -concurrency (tests/test_layout.py).
    timeout: float = 60.0  # per request
    max_retries: int = 4  # on 429, 5xx, timeouts and connection errors
    retry_budget: float = 120.0  # total seconds of backoff per call
    max_reasks: int = 2  # after an invalid reply
    concurrency: int = 4
    price_in: float | None = None  # $ per million prompt tokens
    price_out: float | None = None  # $ per million completion tokens
    role: str = "judge"  # who the messages name: the judge, or the model of an llm: system
    # Decoding that overrides every call's (--ambig-llm-temperature, --ambig-llm-max-tokens);
    # max_tokens 0 sends no limit at all.
    temperature: float | None = None
    max_tokens: int | None = None


DEFAULT_URL = "https://api.openai.com/v1"  # with neither a base URL option nor $OPENAI_BASE_URL


def server_url(given: str | None) -> str:
    """The server a client with the base URL ``given`` (None: not given) sends to; a password
    written with "/", "?", "#" or "@" unencoded is sent percent-encoded (the client's parser
    would take it for the host, and print it), as :func:`output.split_url` finds it."""
    url = given or os.environ.get("OPENAI_BASE_URL") or DEFAULT_URL
    parts = split_url(url)
    return parts.encoded() if parts is not None and parts.unencoded else url


def completion_problem(raw: Any) -> str | None:
    """What makes ``raw`` not a chat completion we can read, or None.

    Only the parts we read are required: a first choice with a message whose content is a
    string (or null). A malformed ``usage`` is not a reason to drop a good answer; it is
    simply not counted (:meth:`ChatClient._account`).
    """
    if not isinstance(raw, dict):
        return f"the reply is {type(raw).__name__}, not a JSON object"
    choices = raw.get("choices")
    if not isinstance(choices, list) or not choices:
        return "the reply has no choices"
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return "the first choice has no message"
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        return f"the message content is {type(content).__name__}, not text"
    return None


class ChatClient:
    def __init__(self, settings: ChatSettings, cache: CallCache | None) -> None:
        self.settings = settings
        self.cache = cache
        self.base_url = server_url(settings.base_url)
        sent_url(self.base_url)  # what the client sends (the URL's credentials, the key) is scrubbed
        sent(os.environ.get("OPENAI_API_KEY") or "")
        self._slots = threading.BoundedSemaphore(settings.concurrency)
        self._client: OpenAI | None = None
        self._lock = threading.Lock()
        self._dead: str | None = None  # why the model cannot answer at all (auth, dead server)
        self._failing = 0  # calls in a row that found no server or no model
        self.structured = Ladder()  # how this server takes a call that needs structure
        self.batch: BatchState | None = None  # batch judging (``batch.py``), or batches to collect

    @property
    def client(self) -> OpenAI:
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
        schema: dict[str, Any] | None = None,
        prose: Callable[[str], Any] | None = None,
        **params: Any,
    ) -> tuple[Any, dict[str, Any]]:
        """The parsed JSON reply (and the raw completion) that passes ``check``.

        ``check(data)`` returns None when the reply is usable, else what is wrong with it;
        the model is then re-asked, up to ``max_reasks`` times. ``schema`` (a JSON schema of
        the reply) asks with the server's structured output; ``prose(text)`` makes the data of
        a reply that holds no JSON at all (a step whose paper output is prose), checked
        alike. Only a reply that passed is cached, under the first request (the structured
        output asked for is not part of the key), so a re-run reads the usable answer and
        nothing else. With batch judging (``self.batch``) a miss may be recorded for the
        batch instead of sent, or refused with why the batch left it unanswered. Traced
        (``--ambig-otel``), the call is a ``chat`` span (:meth:`_traced`).
        """
        tracer = active()
        if tracer.enabled:
            return self._traced(messages, check, usage, seed=seed, schema=schema, prose=prose, **params)
        return self._chat_json(messages, check, usage, seed=seed, schema=schema, prose=prose, **params)

    def _traced(
        self,
        messages: list[dict[str, str]],
        check: Callable[[Any], str | None],
        usage: Usage,
        **params: Any,
    ) -> tuple[Any, dict[str, Any]]:
        """The call within a ``chat MODEL`` span, attributed as the GenAI conventions say
        (gen-ai-spans.md: operation, provider, request model, server, token usage, the
        response's model and id; the cost, which they do not name, as ``ambigqa.usage.cost_usd``);
        the messages and the reply only with ``--ambig-otel-content``."""
        tracer = active()
        model = self.settings.model
        where = urllib.parse.urlsplit(self.base_url)
        before = Usage()
        before.add(usage)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": model,
            "server.address": where.hostname,
            "server.port": _port(where),
            "ambigqa.role": self.settings.role,
        }
        if tracer.content:
            attributes["gen_ai.input.messages"] = json.dumps(messages)
        with tracer.span(f"chat {model}", attributes) as span:
            try:
                data, raw = self._chat_json(messages, check, usage, **params)
            except Exception as exc:
                span.set({"error.type": type(exc).__name__})
                span.fail(str(exc))
                raise
            finally:
                span.set(_spent(before, usage))
            content = raw["choices"][0]["message"].get("content") or ""
            span.set(
                {
                    "gen_ai.response.model": raw.get("model") if isinstance(raw.get("model"), str) else None,
                    "gen_ai.response.id": raw.get("id") if isinstance(raw.get("id"), str) else None,
                    "gen_ai.output.messages": (
                        gen_ai_messages("assistant", content) if tracer.content else None
                    ),
                }
            )
        return data, raw

    def _chat_json(
        self,
        messages: list[dict[str, str]],
        check: Callable[[Any], str | None],
        usage: Usage,
        *,
        seed: int | None = None,
        schema: dict[str, Any] | None = None,
        prose: Callable[[str], Any] | None = None,
        **params: Any,
    ) -> tuple[Any, dict[str, Any]]:
        key = self._key(messages, seed, params)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None and completion_problem(hit) is None:
                data, problem = _checked(hit, check, prose)
                if problem is None:
                    if self.batch is None or not self.batch.account(key, usage):
                        usage.cached += 1
                    return data, hit
        if self.batch is not None:
            self.batch.missed(key, self._batched(messages, seed, schema, params), check, prose, usage)
        conversation = list(messages)
        problem = "no reply"
        for attempt in range(self.settings.max_reasks + 1):
            raw = self.complete(conversation, usage, seed=seed, schema=schema, **params)
            content = raw["choices"][0]["message"].get("content") or ""
            data, problem = _checked(raw, check, prose)
            if problem is None:
                if self.cache is not None:
                    self.cache.put(key, clean(raw, secrets=True))  # an echoed key never reaches the disk
                return data, raw
            if attempt < self.settings.max_reasks:
                usage.reasks += 1
                conversation += [
                    {"role": "assistant", "content": content},
                    {"role": "user", "content": REASK.format(problem=problem)},
                ]
        attempts = self.settings.max_reasks + 1
        raise ModelUnavailable(
            f"{self.settings.role} reply still unusable after {attempts} attempts: {problem}"
        )

    def decoding(self, params: dict[str, Any]) -> dict[str, Any]:
        """The temperature and token limit a call asking ``params`` is sent with: the caller's
        (temperature 0 when it names none), under the settings' overrides."""
        sent = {"temperature": 0, **{k: v for k, v in params.items() if k in ("temperature", "max_tokens")}}
        if self.settings.temperature is not None:
            sent["temperature"] = self.settings.temperature
        if self.settings.max_tokens is not None:
            sent.pop("max_tokens", None)
            if self.settings.max_tokens:
                sent["max_tokens"] = self.settings.max_tokens
        return sent

    def _request(
        self, messages: list[dict[str, str]], seed: int | None, params: dict[str, Any]
    ) -> dict[str, Any]:
        return {
            "model": self.settings.model,
            "messages": messages,
            "seed": self.settings.seed if seed is None else seed,
            **{k: v for k, v in params.items() if k not in ("temperature", "max_tokens")},
            **self.decoding(params),
        }

    def _batched(
        self,
        messages: list[dict[str, str]],
        seed: int | None,
        schema: dict[str, Any] | None,
        params: dict[str, Any],
    ) -> dict[str, Any]:
        """A request as a batch sends it: on the rung a synchronous call found, else with the
        prompt alone (a batch's refused line cannot step down a rung)."""
        shape = response_format(self.structured.mode, schema) if schema and self.structured.mode else None
        return self._request(messages, seed, {**params, "response_format": shape} if shape else params)

    def _key(self, messages: list[dict[str, str]], seed: int | None, params: dict[str, Any]) -> str:
        return CallCache.key(self.base_url, self._request(messages, seed, params))

    def complete(
        self,
        messages: list[dict[str, str]],
        usage: Usage,
        *,
        seed: int | None = None,
        schema: dict[str, Any] | None = None,
        **params: Any,
    ) -> dict[str, Any]:
        """One chat completion from the server, as a checked plain dict; with ``schema``, asked
        on the run's rung of structured output, a rung lower when the server refuses it."""
        if self._dead is not None:
            raise ModelGivenUp(self._dead)
        if schema is None:
            with self._slots:
                raw = self._with_retries(self._request(messages, seed, params), usage)
        else:
            raw = self._structured(messages, usage, seed, schema, params)
        self._account(raw, usage)
        return raw

    def _structured(
        self,
        messages: list[dict[str, str]],
        usage: Usage,
        seed: int | None,
        schema: dict[str, Any],
        params: dict[str, Any],
    ) -> dict[str, Any]:
        """The completion on the highest rung the server takes, from the run's rung down; the
        last rung, the prompt alone, sends no ``response_format`` and so is never refused for it."""
        with self.structured.detecting():
            for mode in self.structured.rungs():
                shape = response_format(mode, schema)
                asked = {**params, "response_format": shape} if shape else params
                try:
                    with self._slots:
                        raw = self._with_retries(self._request(messages, seed, asked), usage)
                except _Refused:
                    continue
                self.structured.settle(mode)
                return raw
        raise AssertionError("unreachable: the prompt-alone rung raises or returns")

    def _account(self, raw: dict[str, Any], usage: Usage) -> None:
        usage.requests += 1
        message = raw["choices"][0]["message"] if raw.get("choices") else {}
        usage.last_reply = message.get("content") if isinstance(message, dict) else None
        prompt, completion, cached = tokens(raw)
        usage.prompt_tokens += prompt
        usage.completion_tokens += completion
        usage.cached_tokens += cached
        price_in, price_out = self.settings.price_in, self.settings.price_out
        if price_in is not None and price_out is not None:
            usage.cost += (prompt * price_in + completion * price_out) / 1_000_000
        fingerprint = raw.get("system_fingerprint")
        if isinstance(fingerprint, str) and fingerprint and fingerprint not in usage.fingerprints:
            usage.fingerprints.append(fingerprint)

    def _post(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request; the body is read as JSON here, not through the client's models, so
        that no reply can crash the caller: anything unreadable is :class:`_Malformed`."""
        response = self.client.chat.completions.with_raw_response.create(**request)
        try:
            raw = json.loads(response.text)
        except (ValueError, RecursionError) as exc:
            raise _Malformed(f"the reply is not JSON ({type(exc).__name__}: {excerpt(exc, 80)})") from None
        problem = completion_problem(raw)
        if problem is not None:
            raise _Malformed(problem)
        return raw

    def _with_retries(self, request: dict[str, Any], usage: Usage) -> dict[str, Any]:
        import openai

        transient = (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError, _Malformed)
        waited = 0.0
        last: Exception | None = None
        for attempt in range(self.settings.max_retries + 1):
            if self._dead is not None:  # given up by another call meanwhile
                raise (ModelGivenUp if attempt == 0 else ModelUnavailable)(self._dead)
            try:
                raw = self._post(request)
                self._failing = 0
                return raw
            except transient as exc:
                last = exc
            except openai.APIStatusError as exc:
                if exc.status_code in _FATAL_STATUS:
                    self._dead = (
                        f"{self.settings.role} {_FATAL_STATUS[exc.status_code]}: HTTP {exc.status_code}: "
                        f"{_brief(exc)} (no further {self.settings.role} calls this run)"
                    )
                    raise ModelUnavailable(self._dead) from None
                if exc.status_code < 500 and exc.status_code != 429:
                    reason = (
                        f"{self.settings.role} refused the request: HTTP {exc.status_code}: {_brief(exc)}"
                    )
                    if exc.status_code in REFUSED and "response_format" in request:
                        raise _Refused(reason) from None
                    raise ModelUnavailable(
                        self._give_up(reason) if exc.status_code == 404 else reason
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
        reason = f"{self.settings.role} unavailable after {attempt + 1} attempts: {_describe(last)}"
        if isinstance(last, openai.APIConnectionError) and not isinstance(last, openai.APITimeoutError):
            reason = self._give_up(reason)  # nobody is listening
        raise ModelUnavailable(reason)

    def _give_up(self, reason: str) -> str:
        """Count a call that found no server or no model; after ``DEAD_AFTER`` in a row, stop."""
        with self._lock:
            self._failing += 1
            if self._failing >= DEAD_AFTER and self._dead is None:
                self._dead = (
                    f"{reason} ({DEAD_AFTER} calls in a row to {redact(self.base_url)}; no further "
                    f"{self.settings.role} calls this run)"
                )
            return self._dead or reason


def _port(where: urllib.parse.SplitResult) -> int | None:
    try:
        return where.port
    except ValueError:
        return None


def _spent(before: Usage, after: Usage) -> dict[str, Any]:
    """What one traced call cost, as the conventions' usage attributes (and ours for the rest)."""
    cost = after.cost - before.cost
    return {
        "gen_ai.usage.input_tokens": after.prompt_tokens - before.prompt_tokens,
        "gen_ai.usage.output_tokens": after.completion_tokens - before.completion_tokens,
        "gen_ai.usage.cache_read.input_tokens": (after.cached_tokens - before.cached_tokens) or None,
        "ambigqa.usage.cost_usd": cost if cost else None,
        "ambigqa.cache_hit": after.cached > before.cached,
        "ambigqa.retries": after.retries - before.retries,
        "ambigqa.reasks": after.reasks - before.reasks,
    }


def _checked(
    raw: dict[str, Any], check: Callable[[Any], str | None], prose: Callable[[str], Any] | None = None
) -> tuple[Any, str | None]:
    """(data, None) when the reply's content is JSON that passes ``check`` (or, with
    ``prose``, text without JSON that passes as prose), else (None, why)."""
    content = raw["choices"][0]["message"].get("content") or ""
    try:
        data = parse_json(content)
    except (ValueError, RecursionError) as exc:
        text = without_thinking(content)
        if prose is None or not text:
            return None, f"it is not JSON ({excerpt(exc, 80)})"
        data = prose(text)
    try:
        problem = check(data)
    except Exception as exc:  # noqa: BLE001 - a check that trips over odd data: the reply is unusable
        problem = f"it has an unexpected shape ({type(exc).__name__})"
    return (data, None) if problem is None else (None, problem)


def tokens(raw: dict[str, Any]) -> tuple[int, int, int]:
    """A completion's prompt, completion and prompt-cache tokens as the server counted them
    (0 for any it did not count, or counted as something other than a count)."""
    counted = raw.get("usage")
    counted = counted if isinstance(counted, dict) else {}
    details = counted.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    return _count(counted.get("prompt_tokens")), _count(counted.get("completion_tokens")), cached


def _count(value: Any) -> int:
    """A token count as the server sent it, or 0 when it sent something else."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _backoff(attempt: int, error: Exception | None) -> float:
    """Exponential backoff with full jitter; a server's Retry-After is honoured when it is a
    sane number of seconds (finite, from 0 to 30), and ignored otherwise."""
    response = getattr(error, "response", None)
    header = response.headers.get("retry-after") if response is not None else None
    if header:
        try:
            delay = float(header)
        except ValueError:
            delay = math.nan
        if math.isfinite(delay) and delay >= 0:
            return min(delay, 30.0)
    return random.uniform(0, min(0.5 * 2**attempt, 20.0))


def _brief(exc: Exception) -> str:
    """The server's own error message when it sent one, else the client's."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return excerpt(body["message"], 200)
    return excerpt(getattr(exc, "message", exc), 200)


def _describe(exc: Exception | None) -> str:
    if exc is None:
        return "no attempt made"
    if isinstance(exc, _Malformed):
        return f"not a chat completion: {exc}"
    status = getattr(exc, "status_code", None)
    return f"HTTP {status}: {_brief(exc)}" if status else f"{type(exc).__name__}: {_brief(exc)}"
