"""Spans of one tracer: a request's SERVER span, a request to the client's CLIENT span, a backend operation's.

A span is made current while its work runs (the context token is kept with it), so what the work
starts (a request to the client, a Redis call, a tool's own httpx call through `ctx.trace_headers()`)
continues its trace. The trace context travels as W3C `traceparent`/`tracestate` through the global
propagator (`OTEL_PROPAGATORS`; tracecontext by default). Baggage a client sends is not read: it is the
client's data, and nothing here records it.

Imports OpenTelemetry's API, the pipeline's `Call` (types only) and the hooks.
"""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Link, SpanKind, StatusCode

from . import hooks

if TYPE_CHECKING:
    from .._app.pipeline import Call


class _Open:
    """A span and the context token that made it current."""

    __slots__ = ("span", "token")

    def __init__(self, span: Any, token: Any) -> None:
        self.span = span
        self.token = token


def _context_of(headers: dict[str, str]) -> Any:
    return propagate.extract(headers)


def _link(headers: dict[str, str], reason: str) -> Link | None:
    span_context = trace.get_current_span(_context_of(headers)).get_span_context()
    return Link(span_context, {"mcp.link.reason": reason}) if span_context.is_valid else None


class Spans:
    def __init__(self, tracer: Any) -> None:
        self.tracer = tracer
        # (method, wire method, target, version, transport, stateless) -> (span name, the attributes those fix)
        self._shapes: dict[tuple[str, str, str | None, str, str, bool], tuple[str, dict[str, Any]]] = {}

    def _shape(self, call: Call, method: str, target: str | None, version: str,
               transport: str) -> tuple[str, dict[str, Any]]:
        key = (method, call.method, target, version, transport, call.stateless)
        found = self._shapes.get(key)
        if found is not None:
            return found
        attributes: dict[str, Any] = {"mcp.method.name": method, "mcp.protocol.version": version,
                                      "network.transport": transport}
        if transport == "tcp":
            attributes["network.protocol.name"] = "http"
        if target is not None:
            if call.method == "tools/call":
                attributes["gen_ai.tool.name"] = target
                attributes["gen_ai.operation.name"] = "execute_tool"
            else:
                attributes["gen_ai.prompt.name"] = target
        shape = (f"{method} {target}" if target is not None else method, attributes)
        if len(self._shapes) < 4096:  # bounded: methods, registered names and versions are
            self._shapes[key] = shape
        return shape

    def start(self, call: Call, method: str, target: str | None, version: str, transport: str,
              links: list[dict[str, str]]) -> _Open:
        ctx = call.ctx
        incoming = hooks.incoming_context(ctx.meta)
        parent = _context_of(incoming) if incoming is not None else None  # None: the current context
        name, fixed = self._shape(call, method, target, version, transport)
        attributes = dict(fixed)
        if ctx.request_id is not None:
            attributes["jsonrpc.request.id"] = str(ctx.request_id)
        if not call.stateless:
            attributes["mcp.session.id"] = ctx.session_id
        uri = call.uri
        if uri is not None:
            attributes["mcp.resource.uri"] = uri[:2048]
        if call.in_task:
            attributes["mcp.task.run"] = True
            if ctx.task_id is not None:
                attributes["mcp.task.id"] = ctx.task_id
        made_links = [link for link in (_link(each, "input_round" if not call.in_task else "task_created")
                                        for each in links) if link is not None] if links else None
        span = self.tracer.start_span(name, context=parent, kind=SpanKind.SERVER, attributes=attributes,
                                      links=made_links)
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        return _Open(span, token)

    def failed(self, open_span: _Open, error_type: str, description: str | None, *, code: str | None = None) -> None:
        span = open_span.span
        span.set_attribute("error.type", error_type)
        if code is not None:
            span.set_attribute("rpc.response.status_code", code)
        span.set_status(StatusCode.ERROR, description)

    def crashed(self, open_span: _Open, exc: BaseException, error_type: str = "tool_error") -> None:
        span = open_span.span
        span.add_event("exception", exception_attributes(exc))
        span.set_attribute("error.type", error_type)
        span.set_status(StatusCode.ERROR, type(exc).__qualname__)

    def capture(self, open_span: _Open, arguments: str, result: str) -> None:
        open_span.span.set_attribute("gen_ai.tool.call.arguments", arguments)
        open_span.span.set_attribute("gen_ai.tool.call.result", result)

    def end(self, open_span: _Open) -> None:
        try:
            otel_context.detach(open_span.token)
        finally:
            open_span.span.end()

    def current_headers(self) -> dict[str, str] | None:
        span_context = trace.get_current_span().get_span_context()
        if not span_context.is_valid:
            return None
        headers: dict[str, str] = {}
        propagate.inject(headers)
        return headers or None

    def link_current(self, headers: dict[str, str], reason: str) -> None:
        checked = hooks.incoming_context(headers)
        link = _link(checked, reason) if checked is not None else None
        span = trace.get_current_span()
        if link is not None and span.is_recording():
            span.add_link(link.context, link.attributes)

    def start_client(self, method: str, request_id: Any, transport: str) -> tuple[_Open, dict[str, str]]:
        """The CLIENT span of a request to the client (sampling, elicitation, roots), and its headers for `_meta`."""
        attributes: dict[str, Any] = {"mcp.method.name": method, "network.transport": transport}
        if request_id is not None:
            attributes["jsonrpc.request.id"] = str(request_id)
        span = self.tracer.start_span(method, kind=SpanKind.CLIENT, attributes=attributes)
        token = otel_context.attach(trace.set_span_in_context(span))
        headers: dict[str, str] = {}
        propagate.inject(headers)
        return _Open(span, token), headers

    def start_backend(self, system: str, operation: str) -> _Open | None:
        """A CLIENT span for one backend operation, inside a traced request only (background work makes none)."""
        if not trace.get_current_span().get_span_context().is_valid:
            return None
        span = self.tracer.start_span(f"{system} {operation}", kind=SpanKind.CLIENT,
                                      attributes={"db.system.name": system, "db.operation.name": operation})
        return _Open(span, otel_context.attach(trace.set_span_in_context(span)))


def exception_attributes(exc: BaseException) -> dict[str, str]:
    """`exception.type` and `exception.stacktrace` (frames only): the message may carry a tool's arguments."""
    frames = "".join(traceback.format_tb(exc.__traceback__))
    return {"exception.type": f"{type(exc).__module__}.{type(exc).__qualname__}",
            "exception.stacktrace": f"Traceback (most recent call last):\n{frames}"}
