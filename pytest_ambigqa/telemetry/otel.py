"""The OpenTelemetry tracer of ``--ambig-otel``: a trace per run, exported over OTLP/HTTP.

The tree: ``ambigqa session`` > ``ambigqa suite NAME`` > ``ambigqa item KEY`` > the calls of
that item: ``invoke_agent SYSTEM`` (the system under test) and ``chat MODEL`` (every model the
plugin asks: the judge, the LLM reader, an ``llm:`` system's steps, the simulated user), named
and attributed as the GenAI semantic conventions say (gen-ai-spans.md, gen-ai-agent-spans.md:
``gen_ai.operation.name``, ``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` ...). Each
item's span carries one ``gen_ai.evaluation.result`` event per metric (gen-ai-events.md:
``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``, and for a metric that could not
be scored ``gen_ai.evaluation.score.label`` "n/a" with ``gen_ai.evaluation.explanation``, the
reason). Under xdist the workers put their items under the controller's suite spans, whose
W3C ``traceparent`` they are given (``carrier``).

The exporter is the SDK's own (``OTEL_EXPORTER_OTLP_*`` configure it), behind a guard: a
receiver that fails is never asked again in the process, and :meth:`OtelTracer.close` says
why (the run warns once, ``session/tracing.py``); no number and no exit status depend on it.
Every text is scrubbed of credentials (``output.scrub``).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from .. import __version__
from ..output import excerpt, redact, scrub
from . import Attributes, Span, Tracer, activated

if TYPE_CHECKING:
    from ..schema import AmbigItem, ItemResult

EVALUATION_EVENT = "gen_ai.evaluation.result"
FLUSH_MS = 30_000  # at the session's end, the spans still queued get this long to go
_QUIET = "opentelemetry.exporter"  # its logger: a dead receiver is said once, by us
_PROPAGATOR = TraceContextTextMapPropagator()


class _Scrubbed:
    """``output.scrub`` of every text an attribute holds; the short ones (ids, metric names,
    n/a reasons: the same few on every item) remembered, which halves what tracing costs an
    item (bench/otel.py)."""

    KEPT = 256  # characters: longer texts (prompts, answers) are scrubbed each time
    LIMIT = 50_000  # remembered texts, then forgotten all at once

    def __init__(self) -> None:
        self._known: dict[str, str] = {}

    def text(self, value: str) -> str:
        if len(value) > self.KEPT:
            return scrub(value)
        found = self._known.get(value)
        if found is None:
            if len(self._known) >= self.LIMIT:
                self._known.clear()
            found = self._known[value] = scrub(value)
        return found

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, (list, tuple)):
            return [self.text(v) if isinstance(v, str) else v for v in value]
        return value

    def __call__(self, attributes: Attributes) -> dict[str, Any]:
        """Attributes as OpenTelemetry takes them: no None, every text scrubbed."""
        return {k: self.value(v) for k, v in attributes.items() if v is not None}


class _OtelSpan(Span):
    def __init__(self, span: trace.Span, values: _Scrubbed) -> None:
        self.span = span
        self.values = values

    def set(self, attributes: Attributes) -> None:
        self.span.set_attributes(self.values(attributes))

    def event(self, name: str, attributes: Attributes) -> None:
        self.span.add_event(name, self.values(attributes))

    def fail(self, message: str) -> None:
        self.span.set_status(Status(StatusCode.ERROR, scrub(message)))

    def end(self) -> None:
        self.span.end()


class _Guarded(SpanExporter):
    """The OTLP exporter, which after its first failure is not asked again (a dead receiver
    costs the run one request's timeout, not one per batch); the failure is kept to be said."""

    def __init__(self, inner: OTLPSpanExporter) -> None:
        self.inner = inner
        self.failure: str | None = None

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self.failure is not None:
            return SpanExportResult.FAILURE
        try:
            result = self.inner.export(spans)
        except Exception as exc:  # noqa: BLE001 - an exporter's fault never reaches the run
            self.failure = f"{type(exc).__name__}: {excerpt(exc, 200)}"
            return SpanExportResult.FAILURE
        if result is not SpanExportResult.SUCCESS:
            self.failure = "it did not take the spans"
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = FLUSH_MS) -> bool:
        return True


class OtelTracer(Tracer):
    enabled = True

    def __init__(
        self,
        suites: list[str],
        run_id: str,
        attributes: Attributes,
        *,
        content: bool,
        carrier: dict[str, str] | None,
    ) -> None:
        self.content = content
        self._values = _values = _Scrubbed()
        named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "pytest-ambigqa"}
        self._provider = TracerProvider(resource=Resource.create(named))  # never the global one
        inner = OTLPSpanExporter()
        self._endpoint = redact(getattr(inner, "_endpoint", "") or "")
        self._exporter = _Guarded(inner)
        self._provider.add_span_processor(BatchSpanProcessor(self._exporter))
        self._tracer = self._provider.get_tracer("pytest_ambigqa", __version__)
        quiet = logging.getLogger(_QUIET)
        self._level = quiet.level
        quiet.setLevel(logging.CRITICAL)
        self._closed = False
        self._session: _OtelSpan | None = None
        self._suites: dict[str, _OtelSpan] = {}
        self._parents: dict[str, otel_context.Context] = {}
        if carrier is not None:  # an xdist worker: under the controller's suite spans
            self._parents = {s: _PROPAGATOR.extract({"traceparent": tp}) for s, tp in carrier.items()}
            return
        given = os.environ.get("TRACEPARENT")  # a CI job's own trace, when it passes one down
        parent = _PROPAGATOR.extract({"traceparent": given}) if given else None
        session = self._tracer.start_span(
            "ambigqa session", context=parent, attributes=_values({"ambigqa.run_id": run_id, **attributes})
        )
        self._session = _OtelSpan(session, _values)
        within = trace.set_span_in_context(session)
        for name in suites:
            span = self._tracer.start_span(
                f"ambigqa suite {name}", context=within, attributes={"ambigqa.suite": name}
            )
            self._suites[name] = _OtelSpan(span, _values)
            self._parents[name] = trace.set_span_in_context(span)

    def item(self, item: AmbigItem) -> Span:
        span = self._tracer.start_span(
            f"ambigqa item {item.key}",
            context=self._parents.get(item.suite),
            attributes=self._values(
                {
                    "ambigqa.suite": item.suite,
                    "ambigqa.item.id": item.id,
                    "ambigqa.ambiguity_type": item.ambiguity_type,
                }
            ),
        )
        return _OtelSpan(span, self._values)

    @contextlib.contextmanager
    def within(self, span: Span) -> Iterator[None]:
        if not isinstance(span, _OtelSpan):
            yield
            return
        token = otel_context.attach(trace.set_span_in_context(span.span))
        try:
            with activated(self):
                yield
        finally:
            otel_context.detach(token)

    @contextlib.contextmanager
    def span(self, name: str, attributes: Attributes) -> Iterator[Span]:
        kind = SpanKind.CLIENT if attributes.get("gen_ai.operation.name") == "chat" else SpanKind.INTERNAL
        with self._tracer.start_as_current_span(
            name, kind=kind, attributes=self._values(attributes), record_exception=False
        ) as span:
            yield _OtelSpan(span, self._values)

    def finished(self, span: Span, result: ItemResult) -> ItemResult:
        usage = result.usage or {}
        span.set(
            {
                "ambigqa.status": result.status,
                "ambigqa.cached": result.cached,
                "ambigqa.duration_s": result.duration,
                "ambigqa.usage.input_tokens": usage.get("prompt_tokens"),
                "ambigqa.usage.output_tokens": usage.get("completion_tokens"),
                "ambigqa.usage.cost_usd": usage.get("cost") or None,
            }
        )
        for metric, score in result.scores.items():
            span.event(
                EVALUATION_EVENT, {"gen_ai.evaluation.name": metric, "gen_ai.evaluation.score.value": score}
            )
        for metric, reason in result.unscored.items():
            span.event(
                EVALUATION_EVENT,
                {
                    "gen_ai.evaluation.name": metric,
                    "gen_ai.evaluation.score.label": "n/a",
                    "gen_ai.evaluation.explanation": reason,
                },
            )
        if result.status != "ok":
            span.fail(result.error or result.status)
        span.end()
        return result

    def traceparent(self) -> str | None:
        headers: dict[str, str] = {}
        _PROPAGATOR.inject(headers)
        return headers.get("traceparent")

    def carrier(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for name, parent in self._parents.items():
            headers: dict[str, str] = {}
            _PROPAGATOR.inject(headers, context=parent)
            if "traceparent" in headers:
                found[name] = headers["traceparent"]
        return found

    def summarise(self, suites: Mapping[str, Attributes], session: Attributes) -> None:
        for name, values in suites.items():
            if name in self._suites:
                self._suites[name].set(values)
        if self._session is not None:
            self._session.set(session)

    def close(self) -> str | None:
        if self._closed:
            return None
        self._closed = True
        for span in self._suites.values():
            span.end()
        if self._session is not None:
            self._session.end()
        self._suites, self._session = {}, None
        try:
            self._provider.force_flush(FLUSH_MS)
            self._provider.shutdown()
        finally:
            logging.getLogger(_QUIET).setLevel(self._level)
        if self._exporter.failure is None:
            return None
        return (
            f"--ambig-otel: the trace receiver at {self._endpoint or 'the default endpoint'} "
            f"failed ({self._exporter.failure}); spans from then on were dropped. "
            "The run's numbers and exit status are unaffected"
        )
