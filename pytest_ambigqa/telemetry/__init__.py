"""Traces of a run (``--ambig-otel``): what the rest of the package calls, and the no-op it
calls when the option is off, so that such a run imports nothing of OpenTelemetry.

The OpenTelemetry tracer itself is ``otel.py``, imported only by :func:`open_tracer`. A span
of a model call is opened by a client that knows nothing of the run (``models/chat.py``): it
asks :func:`active`, the tracer of the item being evaluated in its thread (a context
variable, which the system's calling thread copies), else the no-op.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

    from ..schema import AmbigItem, ItemResult

CARRIER_INPUT = "ambigqa_otel"  # workerinput: {suite: its span's W3C traceparent}
Attributes = Mapping[str, Any]


class Span:
    """A span, or the no-op one: attributes, events, an error, and its end."""

    def set(self, attributes: Attributes) -> None:
        pass

    def event(self, name: str, attributes: Attributes) -> None:
        pass

    def fail(self, message: str) -> None:
        pass

    def end(self) -> None:
        pass


NO_SPAN = Span()


class Tracer:
    """The no-op tracer of a run without ``--ambig-otel``; ``otel.OtelTracer`` the real one."""

    enabled = False
    content = False  # prompts and answers in the spans (--ambig-otel-content)

    def item(self, item: AmbigItem) -> Span:
        """The span of one item or episode, under its suite's span (started, not current)."""
        return NO_SPAN

    @contextlib.contextmanager
    def within(self, span: Span) -> Iterator[None]:
        """``span`` is the current span (its children nest under it) and this the active tracer."""
        yield

    @contextlib.contextmanager
    def span(self, name: str, attributes: Attributes) -> Iterator[Span]:
        """A child of the current span, for the length of the block."""
        yield NO_SPAN

    def finished(self, span: Span, result: ItemResult) -> ItemResult:
        """The item's span ended with its status and one evaluation event per metric."""
        return result

    def traceparent(self) -> str | None:
        """The current span's W3C ``traceparent``, for a call that runs in another process
        (a Ray actor: ``executors/ray/system.py``); None when not traced."""
        return None

    def carrier(self) -> dict[str, str]:
        """What an xdist worker needs to put its items under the controller's suite spans."""
        return {}

    def summarise(self, suites: Mapping[str, Attributes], session: Attributes) -> None:
        """The scorecard's numbers on the suite spans (``{suite: attributes}``) and the session's."""

    def close(self) -> str | None:
        """The session's spans ended and every span exported; what failed, if the receiver did
        (None: nothing failed). Closed again: nothing."""
        return None


NO_TRACER = Tracer()
_ACTIVE: ContextVar[Tracer] = ContextVar("ambigqa_tracer", default=NO_TRACER)


def active() -> Tracer:
    """The tracer of the item evaluated in this context (the no-op outside one)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def activated(tracer: Tracer) -> Iterator[None]:
    token = _ACTIVE.set(tracer)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def wanted(config: pytest.Config) -> bool:
    """Whether the run is traced (``--ambig-otel``); a refused combination is a usage error."""
    from .. import options

    if options.value(config, "--ambig-otel") is not None:
        return True
    if options.value(config, "--ambig-otel-content") is not None:
        options.refuse("--ambig-otel-content: the prompts and answers go into a trace; set --ambig-otel")
    return False


def open_tracer(config: pytest.Config, suites: list[str], run_id: str, attributes: Attributes) -> Tracer:
    """The run's tracer: the no-op unless ``--ambig-otel`` (only then is OpenTelemetry imported)."""
    from .. import options

    if not wanted(config):
        return NO_TRACER
    content = options.value(config, "--ambig-otel-content") is not None
    try:
        from .otel import OtelTracer
    except ImportError as exc:
        options.refuse(
            f"--ambig-otel: OpenTelemetry is not installed ({exc.name}); pip install 'pytest-ambigqa[otel]'"
        )
    worker = getattr(config, "workerinput", None)
    carrier = worker.get(CARRIER_INPUT) if worker else None
    return OtelTracer(suites, run_id, attributes, content=content, carrier=carrier)


def gen_ai_messages(role: str, text: str) -> str:
    """One message as the conventions' ``gen_ai.input.messages`` / ``gen_ai.output.messages``
    hold it (gen-ai-spans.md: a JSON list of messages, each a role and its parts)."""
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


@contextlib.contextmanager
def continued(traceparent: str | None) -> Iterator[None]:
    """In a process the run sent a call to (a Ray actor): the call runs in the run's trace
    context, so a span the system starts with OpenTelemetry's API is a child of the run's
    ``invoke_agent`` span. Nothing without a ``traceparent`` or without OpenTelemetry there."""
    if traceparent is None:
        yield
        return
    try:
        from opentelemetry import context
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
    except ImportError:
        yield
        return
    token = context.attach(TraceContextTextMapPropagator().extract({"traceparent": traceparent}))
    try:
        yield
    finally:
        context.detach(token)
