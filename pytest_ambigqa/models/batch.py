"""Batch judging: the judge's requests through the server's batch API (OpenAI's Batch API and
the servers that copy it: a JSONL of requests uploaded to ``/v1/files``, a ``/v1/batches``
job, polled, its output and error files downloaded), at OpenAI's batch price, half the
synchronous one.

A :class:`BatchState` sits in the judge's :class:`~.chat.ChatClient` (``client.batch``).
While a thread records (:meth:`BatchState.recording`, the rounds of ``judge/batch.py``), a
call the cache does not hold is recorded (its cache key and request body) and raises
:class:`~pytest_ambigqa.errors.Deferred` instead of being sent. :meth:`BatchState.send`
submits what was recorded (deduplicated by key, split at the server's limits, ordered so that
requests sharing a prompt prefix are adjacent for the server's prompt cache), waits, and
fills the cache with the replies that pass the caller's check, as ``chat_json`` does; an
invalid reply becomes a re-ask, recorded in the next round. A key the batch did not fill
keeps why (its line's error; the batch expired, was cancelled or failed; it is still
pending), and a call for it raises ModelUnavailable with that reason: its metrics are
unscored, never 0. A batch not done in time stays in the cache file's ``batches`` table
(``cache.py``); every later run with the judge collects it before it asks anything, and
never sends its requests again. Expired, cancelled and failed requests are not charged, so
a later batch run may send them again.

Creating a batch is idempotent: before the request, the intent (a fresh key and the request
keys) is written to that table; the batch is created with the key in its ``metadata``; a
create retried after a lost reply first looks for the batch with that key among the
server's batches, and so does a later run that finds an intent left without its batch (a run
killed between the create and the record): it collects the batch it finds instead of paying
for another. An intent whose batch the server does not hold is dropped, its requests free to
be sent; one that cannot be checked (the list failed) keeps its requests held. Nothing here
writes a file: the JSONL is uploaded from memory, and the table keeps the base URL without
credentials.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ..errors import Deferred, ModelUnavailable
from ..output import clean, excerpt, for_terminal, redact
from .chat import REASK, _backoff, _brief, _checked, completion_problem, tokens
from .usage import Usage

if TYPE_CHECKING:
    from .chat import ChatClient

# OpenAI's limits on one batch's input file (https://platform.openai.com/docs/guides/batch).
MAX_REQUESTS = 50_000
MAX_BYTES = 200 * 1024 * 1024
ENDPOINT = "/v1/chat/completions"
WINDOW = "24h"  # the only completion window OpenAI offers
FINISHED = ("completed", "failed", "expired", "cancelled")
INTENT = "intent:"  # a batches row whose create was asked, its batch not yet known
METADATA_KEY = "ambigqa_intent"  # the batch's metadata field that holds the intent's key
LIST_PAGES = 20  # of 100 batches each: how far back a lost create is looked for
NOT_CHARGED = {
    "expired": "expired before this request was answered",
    "cancelled": "was cancelled before this request was answered",
}


@dataclass(frozen=True)
class BatchSettings:
    """``--ambig-judge-batch*``: how long a run waits for its batches (0: it only collects
    what is done), how often it asks, and the batch price ($ per million tokens)."""

    wait: float
    poll: float = 10.0
    price_in: float | None = None
    price_out: float | None = None


@dataclass
class Recording:
    """What one thread's scoring recorded while recording: how many calls it deferred."""

    deferred: int = 0


@dataclass
class _Request:
    body: dict[str, Any]
    check: Callable[[Any], str | None]
    prose: Callable[[str], Any] | None


@dataclass
class _Conversation:
    """A key whose batch reply was unusable: the messages of its re-ask, and how many replies it had."""

    messages: list[dict[str, str]]
    replies: int


@dataclass
class _Batch:
    id: str
    keys: list[str]
    mine: bool  # sent by this process, or by an earlier run: its replies are accounted here
    status: dict[str, Any] = field(default_factory=dict)


class BatchState:
    def __init__(self, client: ChatClient, settings: BatchSettings, run: str) -> None:
        self.client = client
        self.settings = settings
        self.run = run
        self.server = redact(client.base_url)
        self.api = BatchAPI(client)
        self.say: Callable[[str], None] = lambda text: None  # progress, where a terminal shows it
        self._local = threading.local()
        self._lock = threading.Lock()
        self._recorded: dict[str, _Request] = {}
        self._sent: dict[str, _Request] = {}  # keys sent by this process: how to check their replies
        self._conversations: dict[str, _Conversation] = {}
        self._reasons: dict[str, str] = {}  # keys left unfilled, and why
        self._pending: dict[str, str] = {}  # keys of batches not done in time, and their batch
        self._replies: dict[str, list[dict[str, Any]]] = {}  # collected, not yet accounted to an item
        self._open: dict[str, _Batch] = {}  # batches sent or found, not yet collected
        self._held: dict[str, str] = {}  # the keys of the open batches, and their batch
        self._deadline: float | None = None

    # -- in the chat client ---------------------------------------------------------------

    @contextlib.contextmanager
    def recording(self) -> Iterator[Recording]:
        """While it lasts, this thread's cache misses are recorded for the batch, not sent."""
        self._local.recording = Recording()
        try:
            yield self._local.recording
        finally:
            self._local.recording = None

    def missed(
        self,
        key: str,
        body: dict[str, Any],
        check: Callable[[Any], str | None],
        prose: Callable[[str], Any] | None,
        usage: Usage,
    ) -> None:
        """A call the cache does not hold: raises Deferred (recorded), or ModelUnavailable with
        the reason a batch left it unfilled; returns when the call is to be asked now."""
        recording: Recording | None = getattr(self._local, "recording", None)
        with self._lock:
            reason = self._reasons.get(key)
            if reason is not None:
                self._account(key, usage)  # unusable replies were paid for all the same
                raise ModelUnavailable(reason)
            if key in self._pending:
                raise ModelUnavailable(f"pending batch {self._pending[key]}")
            waiting = self._held.get(key)
            if recording is None:
                if waiting is not None:
                    raise ModelUnavailable(f"pending batch {waiting}")
                return
            recording.deferred += 1
            if waiting is None:
                asked = self._conversations.get(key)
                if asked is not None:
                    body = {**body, "messages": asked.messages}
                self._recorded[key] = _Request(body, check, prose)
        raise Deferred(f"{self.client.settings.role} request recorded for a batch")

    def account(self, key: str, usage: Usage) -> bool:
        """Whether a cache hit is a reply a batch of this run brought (then counted as batched
        at the batch price, once), not a reply from the cache."""
        with self._lock:
            return self._account(key, usage)

    def _account(self, key: str, usage: Usage) -> bool:
        replies = self._replies.pop(key, None)
        if replies is None:
            return False
        sync = self.client.settings
        for raw in replies:
            prompt, completion, cached = tokens(raw)
            usage.batched += 1
            usage.prompt_tokens += prompt
            usage.completion_tokens += completion
            usage.cached_tokens += cached
            paid = _cost(prompt, completion, self.settings.price_in, self.settings.price_out)
            usage.cost += paid or 0.0
            full = _cost(prompt, completion, sync.price_in, sync.price_out)
            if paid is not None and full is not None:
                usage.saved += full - paid
        usage.reasks += len(replies) - 1
        return True

    # -- the rounds -----------------------------------------------------------------------

    def find(self, wanted: set[str] | frozenset[str] = frozenset()) -> None:
        """The batches of this server and model the cache file holds, to be collected before
        anything is asked again: every one an earlier run left, and those another worker of
        this run sent that hold a ``wanted`` key (the others are that worker's to wait for).
        An earlier run's create that was never recorded is looked for on the server first."""
        cache = self.client.cache
        if cache is None:
            return
        for batch, run, keys in cache.batches(self.server, self.client.settings.model):
            earlier = run != self.run  # an earlier run's replies are this run's to account
            if batch.startswith(INTENT):
                if earlier:
                    self._resolve(batch, run, keys)
                continue
            with self._lock:
                if batch not in self._open and (earlier or not wanted.isdisjoint(keys)):
                    self._opened(_Batch(batch, keys, mine=earlier))

    def _resolve(self, intent: str, run: str, keys: list[str]) -> None:
        """An earlier run's create whose batch was never recorded: the batch it made, if the
        server holds one with its key, is collected as any batch left; else its keys are free."""
        cache = self.client.cache
        assert cache is not None
        try:
            made = self.api.lookup(intent.removeprefix(INTENT))
        except ModelUnavailable as exc:  # unknown: held, never sent again while it may exist
            with self._lock:
                why = f"{intent} (an earlier run's batch create, not yet confirmed: {exc})"
                self._pending.update(dict.fromkeys(keys, why))
            return
        if made is not None:
            cache.add_batch(made["id"], self.server, self.client.settings.model, run, keys)
        cache.drop_batch(intent)
        if made is not None:
            with self._lock:
                if made["id"] not in self._open:
                    self._opened(_Batch(made["id"], keys, mine=True, status=made))

    def send(self) -> bool:
        """Submit what was recorded, wait for every open batch (until the wait is over), and
        collect those done. False when there was nothing to send or wait for."""
        first = self._deadline is None  # the first round is sent whatever the wait (0: send, collect later)
        deadline = self._deadline = self._deadline or time.monotonic() + self.settings.wait
        self.find(set(self._recorded))
        with self._lock:
            recorded, self._recorded = self._recorded, {}
            recorded = {k: r for k, r in recorded.items() if k not in self._held}
        if not recorded and not self._open:
            return False
        if recorded and not first and time.monotonic() >= deadline:
            why = (
                f"not sent: the wait for the judge's batches (--ambig-judge-batch={self.settings.wait:g}) "
                "was over before this request was known (a later batch run sends it)"
            )
            with self._lock:
                self._reasons.update(dict.fromkeys(recorded, why))
        elif recorded:
            self._submit(recorded)
        self._wait()
        return True

    def collect(self) -> None:
        """Without batch mode: the batches an earlier run left, collected when done (no
        wait). Only the keys of those still pending are held back; the others are asked as
        any call is."""
        self._deadline = time.monotonic()
        self.find()
        if self._open:
            self._wait()
        with self._lock:
            self._reasons.clear()

    def _submit(self, recorded: dict[str, _Request]) -> None:
        ordered = sorted(recorded.items(), key=lambda kv: json.dumps(kv[1].body["messages"]))
        cache = self.client.cache
        model = self.client.settings.model
        for chunk in chunks([(key, _line(key, r.body)) for key, r in ordered], MAX_REQUESTS, MAX_BYTES):
            keys = [key for key, _ in chunk]
            nonce = uuid.uuid4().hex
            if cache is not None:  # the intent first: a run killed after the create finds its batch
                cache.add_batch(INTENT + nonce, self.server, model, self.run, keys)
            try:
                batch = self.api.submit(b"".join(line for _, line in chunk), nonce)
            except Unconfirmed as exc:  # it may exist: the intent stays, a later run looks for it
                with self._lock:
                    why = f"{INTENT}{nonce} (a batch create not confirmed: {exc})"
                    self._pending.update(dict.fromkeys(keys, why))
                continue
            except ModelUnavailable as exc:
                if cache is not None:
                    cache.drop_batch(INTENT + nonce)
                with self._lock:
                    self._reasons.update(dict.fromkeys(keys, f"judge batch not created: {exc}"))
                continue
            if cache is not None:
                if _storable(batch["id"]):  # a server-chosen id is kept only when it is safe to
                    cache.add_batch(batch["id"], self.server, model, self.run, keys)
                cache.drop_batch(INTENT + nonce)
            with self._lock:
                self._opened(_Batch(batch["id"], keys, mine=True, status=batch))
                self._sent.update((k, recorded[k]) for k in keys)

    def _opened(self, batch: _Batch) -> None:
        """A batch to wait for (the lock is held)."""
        self._open[batch.id] = batch
        self._held.update(dict.fromkeys(batch.keys, batch.id))

    def _wait(self) -> None:
        """Poll the open batches until each is finished or the wait is over; collect the finished."""
        assert self._deadline is not None
        started = time.monotonic()
        while self._open:
            for batch in list(self._open.values()):
                try:
                    batch.status = self.api.retrieve(batch.id)
                except ModelUnavailable as exc:
                    batch.status = {"status": "unknown", "problem": str(exc)}
                if batch.status.get("status") in FINISHED:
                    self._collect(batch)
                self.say(_progress(batch, time.monotonic() - started, self.settings.wait))
            left = self._deadline - time.monotonic()
            if not self._open or left <= 0:
                break
            time.sleep(min(self.settings.poll, left))
        with self._lock:
            for batch in self._open.values():  # not done in time: kept for a later run
                self._pending.update(dict.fromkeys(batch.keys, batch.id))
            self._open.clear()
            self._held.clear()

    def _collect(self, batch: _Batch) -> None:
        """Fill the cache from a finished batch's files; every key not filled keeps why."""
        status = batch.status
        lines: dict[str, dict[str, Any]] = {}
        doubled: set[str] = set()  # a request with two replies: neither is taken
        problem = None
        for name in ("output_file_id", "error_file_id"):
            file = status.get(name)
            if isinstance(file, str) and file:
                try:
                    found, twice = _read_lines(self.api.content(file))
                    doubled |= twice | (found.keys() & lines.keys())
                    lines.update(found)
                except ModelUnavailable as exc:
                    problem = f"its {name.split('_')[0]} file could not be read: {exc}"
        state = status.get("status")
        cache = self.client.cache
        with self._lock:
            for key in batch.keys:
                line = lines.get(key)
                if key in doubled:
                    self._reasons[key] = (
                        f"judge batch {batch.id} holds two replies for this request: both refused "
                        "(which one the judge meant is unknown)"
                    )
                elif line is not None:
                    self._reply(batch, key, line)
                elif problem is not None:  # charged, perhaps: kept for a later run to read again
                    self._reasons[key] = (
                        f"judge batch {batch.id} {state}, but {problem} (a later run reads it again)"
                    )
                elif state in NOT_CHARGED:
                    self._reasons[key] = (
                        f"judge batch {batch.id} {NOT_CHARGED[state]} "
                        "(not charged; a later batch run sends it again)"
                    )
                elif state == "failed":
                    self._reasons[key] = f"judge batch {batch.id} failed: {_errors(status)}"
                else:
                    self._reasons[key] = f"judge batch {batch.id} {state} without a reply for this request"
            del self._open[batch.id]
            for key in batch.keys:
                self._held.pop(key, None)
        if cache is not None and problem is None:
            cache.drop_batch(batch.id)

    def _reply(self, batch: _Batch, key: str, line: dict[str, Any]) -> None:
        """One line of a batch's output or error file, for ``key`` (the lock is held)."""
        response = line["response"] if isinstance(line.get("response"), dict) else {}
        body, status = response.get("body"), response.get("status_code")
        problem = completion_problem(body) if status == 200 else "no reply"
        if problem is not None:
            error = line.get("error") if isinstance(line.get("error"), dict) else None
            error = error or (body.get("error") if isinstance(body, dict) else None)
            what = f"HTTP {status}" if isinstance(status, int) and status != 200 else problem
            message = error.get("message") if isinstance(error, dict) else None
            detail = f"{what}: {excerpt(message, 200)}" if message else what
            self._reasons[key] = f"judge batch {batch.id}: {detail}"
            return
        assert isinstance(body, dict)
        body = clean(body, secrets=True)  # an echoed key never reaches the disk
        if batch.mine:
            self._replies.setdefault(key, []).append(body)
        asked = self._sent.get(key)
        cache = self.client.cache
        if asked is None:  # an earlier run's request: the call checks it when it reads it
            if cache is not None:
                cache.put(key, body)
            return
        _, problem = _checked(body, asked.check, asked.prose)
        if problem is None:
            if cache is not None:
                cache.put(key, body)
            self._conversations.pop(key, None)
            return
        conversation = self._conversations.get(key) or _Conversation(list(asked.body["messages"]), 0)
        conversation.replies += 1
        if conversation.replies > self.client.settings.max_reasks:
            self._conversations.pop(key, None)
            role = self.client.settings.role
            self._reasons[key] = (
                f"{role} reply still unusable after {conversation.replies} attempts: {problem}"
            )
            return
        content = body["choices"][0]["message"].get("content") or ""
        conversation.messages = conversation.messages + [
            {"role": "assistant", "content": content},
            {"role": "user", "content": REASK.format(problem=problem)},
        ]
        self._conversations[key] = conversation

    def abandon(self) -> None:
        """Re-asks left after the last round: unfilled, saying so."""
        why = "not sent: the judge's batch rounds ran out (a later batch run sends it)"
        with self._lock:
            self._reasons.update(dict.fromkeys(self._conversations, why))

    def holding(self) -> bool:
        """Whether calls still need this state: keys pending in a batch, or replies to account."""
        with self._lock:
            return bool(self._pending or self._replies)


class Deferrals:
    """Independent calls of one scorer, each made even when an earlier one was deferred, so
    that one recording round records them all; :meth:`close` then raises the first deferral.
    Outside a recording round nothing is deferred, and this changes nothing."""

    def __init__(self) -> None:
        self.first: Deferred | None = None
        self.at = 0  # the step of the first deferral (a scorer whose later calls depend on earlier ones)

    def call(
        self, fn: Callable[..., Any], *args: Any, default: Any = None, at: int = 0, **kwargs: Any
    ) -> Any:
        try:
            return fn(*args, **kwargs)
        except Deferred as exc:
            if self.first is None:
                self.first, self.at = exc, at
            return default

    def before(self, at: int) -> None:
        """Step ``at`` depends on the replies of earlier steps: it waits for the next round."""
        if self.first is not None and self.at < at:
            raise self.first

    def close(self) -> None:
        if self.first is not None:
            raise self.first


class Unconfirmed(ModelUnavailable):
    """A batch create that may have made a batch: its reply was lost, and the server's
    batches could not be listed to find it."""


class BatchAPI:
    """The files and batches endpoints, through the client's ``openai`` client: retried on
    429, 5xx and connection faults with the client's backoff; anything else is ModelUnavailable."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def submit(self, jsonl: bytes, nonce: str) -> dict[str, Any]:
        """Upload the requests and create their batch, ``nonce`` in its metadata: the batch as
        the server describes it. A create retried after a lost reply, or that failed, is looked
        for first (:meth:`lookup`): the batch it made is returned, never made twice; where it
        cannot be looked for, :class:`Unconfirmed`."""
        uploaded = self._json(
            "upload",
            lambda c: c.files.with_raw_response.create(file=("judge-batch.jsonl", jsonl), purpose="batch"),
        )

        def create(c: Any) -> Any:
            return c.batches.with_raw_response.create(
                input_file_id=str(uploaded.get("id")),
                endpoint=ENDPOINT,
                completion_window=WINDOW,
                metadata={METADATA_KEY: nonce},
            )

        def made() -> dict[str, Any] | None:
            try:
                return self.lookup(nonce)
            except ModelUnavailable as exc:
                raise Unconfirmed(f"batch create: its reply was lost, and {exc}") from None

        try:
            batch = self._json("create", create, again=made)
        except Unconfirmed:
            raise
        except ModelUnavailable:
            found = made()  # a reply lost on the last attempt, or a refusal after one was lost
            if found is None:
                raise
            batch = found
        if not isinstance(batch.get("id"), str) or not batch["id"]:
            raise ModelUnavailable("the server created a batch without an id")
        return batch

    def lookup(self, nonce: str) -> dict[str, Any] | None:
        """The server's batch created with ``nonce`` in its metadata, among its newest
        ``LIST_PAGES`` pages of batches; None when it holds none (ModelUnavailable when the
        list cannot be read)."""
        after: str | None = None
        for _ in range(LIST_PAGES):
            since: dict[str, str] = {"after": after} if after else {}
            page = self._json("list", partial(_list, since=since))
            data: list[Any] = page["data"] if isinstance(page.get("data"), list) else []
            for batch in data:
                metadata = batch.get("metadata") if isinstance(batch, dict) else None
                if isinstance(metadata, dict) and metadata.get(METADATA_KEY) == nonce:
                    if isinstance(batch.get("id"), str) and batch["id"]:
                        return batch
            last = page.get("last_id") or (
                data[-1].get("id") if data and isinstance(data[-1], dict) else None
            )
            if not page.get("has_more") or not isinstance(last, str):
                return None
            after = last
        return None

    def retrieve(self, batch: str) -> dict[str, Any]:
        return self._json("poll", lambda c: c.batches.with_raw_response.retrieve(batch))

    def content(self, file: str) -> str:
        return self._call("download", lambda c: c.files.with_raw_response.content(file)).text

    def _json(
        self,
        what: str,
        request: Callable[[Any], Any],
        again: Callable[[], dict[str, Any] | None] | None = None,
    ) -> dict[str, Any]:
        reply = self._call(what, request, again)
        if isinstance(reply, dict):  # what ``again`` found before a retry
            return reply
        try:
            data = json.loads(reply.text)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            raise ModelUnavailable(f"batch {what}: the reply is not a JSON object")
        return data

    def _call(
        self,
        what: str,
        request: Callable[[Any], Any],
        again: Callable[[], dict[str, Any] | None] | None = None,
    ) -> Any:
        """``request``'s reply, retried on 429, 5xx and connection faults; before a retry,
        ``again`` may find what an attempt whose reply was lost did (it is returned instead)."""
        import openai

        settings = self.client.settings
        waited = 0.0
        last: Exception | None = None
        for attempt in range(settings.max_retries + 1):
            if attempt and again is not None:
                found = again()
                if found is not None:
                    return found
            try:
                return request(self.client.client)
            except (openai.RateLimitError, openai.APIConnectionError) as exc:
                last = exc
            except openai.APIStatusError as exc:
                if exc.status_code < 500:
                    raise ModelUnavailable(f"batch {what}: HTTP {exc.status_code}: {_brief(exc)}") from None
                last = exc
            pause = _backoff(attempt, last)
            if attempt == settings.max_retries or waited + pause > settings.retry_budget:
                break
            time.sleep(pause)
            waited += pause
        status = getattr(last, "status_code", None)
        assert last is not None
        fault = f"HTTP {status}: {_brief(last)}" if status else f"{type(last).__name__}: {_brief(last)}"
        raise ModelUnavailable(f"batch {what} failed after {settings.max_retries + 1} attempts: {fault}")


def _list(client: Any, since: dict[str, str]) -> Any:
    """One page of the server's batches, newest first (``since``: after which batch)."""
    return client.batches.with_raw_response.list(limit=100, **since)


def _cost(prompt: int, completion: int, price_in: float | None, price_out: float | None) -> float | None:
    if price_in is None or price_out is None:
        return None
    return (prompt * price_in + completion * price_out) / 1_000_000


def _line(key: str, body: dict[str, Any]) -> bytes:
    request = {"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}
    return (json.dumps(request, ensure_ascii=False) + "\n").encode("utf-8")


def chunks(
    lines: list[tuple[str, bytes]], most: int = MAX_REQUESTS, size_limit: int = MAX_BYTES
) -> Iterator[list[tuple[str, bytes]]]:
    """The lines in order, in as few batches as the server's limits allow: each as full as
    it may be (``most`` lines, ``size_limit`` bytes; a longer line alone, for the server to refuse)."""
    chunk: list[tuple[str, bytes]] = []
    size = 0
    for key, line in lines:
        if chunk and (len(chunk) == most or size + len(line) > size_limit):
            yield chunk
            chunk, size = [], 0
        chunk.append((key, line))
        size += len(line)
    if chunk:
        yield chunk


def _read_lines(text: str) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """An output or error file's lines by their ``custom_id``, and the ids given more than
    once (the last would win: those are refused); a line that is not a JSON object with one
    is skipped (its request stays unfilled, with the batch's reason)."""
    lines: dict[str, dict[str, Any]] = {}
    twice: set[str] = set()
    for row in text.splitlines():
        try:
            line = json.loads(row)
        except (ValueError, RecursionError):
            continue
        if isinstance(line, dict) and isinstance(line.get("custom_id"), str):
            if line["custom_id"] in lines:
                twice.add(line["custom_id"])
            lines[line["custom_id"]] = line
    return lines, twice


def _storable(batch_id: str) -> bool:
    """Whether a batch id the server chose may be kept on disk for a later run: not one that
    holds a credential or a control character (a hostile or echoing server's). Such a batch
    is waited for in this run only; its id reaches no file."""
    return for_terminal(batch_id, one_line=True) == batch_id


def _errors(status: dict[str, Any]) -> str:
    errors = status.get("errors")
    data = errors.get("data") if isinstance(errors, dict) else None
    messages = [e["message"] for e in data or [] if isinstance(e, dict) and isinstance(e.get("message"), str)]
    return excerpt("; ".join(messages), 300) or "no reason given"


def _progress(batch: _Batch, elapsed: float, wait: float) -> str:
    status = batch.status
    counts = status["request_counts"] if isinstance(status.get("request_counts"), dict) else {}
    total = counts.get("total") or len(batch.keys)
    done, failed = counts.get("completed", 0), counts.get("failed", 0)
    state = status.get("status", "unknown")
    return (
        f"judge batch {batch.id}: {done}/{total} done, {failed} failed ({state}), "
        f"{elapsed:.0f} s of {wait:g} s"
    )
