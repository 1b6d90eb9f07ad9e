"""`Telemetry`: the built-in middleware tracing and measuring every request, and the probe of the other seams.

Each request (both eras, every transport, each round of an input-required request, the run of a task)
gets a SERVER span named `{mcp.method.name} {target}` (the target: the tool's or prompt's name; none for
other methods), attributes per OpenTelemetry's MCP conventions (`mcp.method.name`, `mcp.session.id` in
the handshake era, `mcp.protocol.version`, `jsonrpc.request.id`, `gen_ai.tool.name`,
`gen_ai.prompt.name`, `gen_ai.operation.name` = `execute_tool` for a tool call, `mcp.resource.uri`,
`network.transport`, `error.type`, `rpc.response.status_code`), and a sample of
`mcp.server.operation.duration`. Its parent is the trace context in the request's `params._meta`
(`traceparent`, `tracestate`) when there is one, else the context current where it runs.

Links: the retry of a 2026-07-28 input round links to the span of the round that asked (its context
travels in the signed request state); the run of a task links to the call that created it (its context
is kept in the task record, so a process serving the task's `tasks/*` requests links to it too).

`error.type`: the JSON-RPC error code as a string; `tool_error` for an `isError` tool result (a tool's
unexpected exception too: the exception is recorded on the span with its type and stack, not its
message); `cancelled` for a request the client cancelled; the exception's class name for anything else.

Privacy: arguments, results and resource contents never reach spans or metrics, except for the tools
named in `capture_tools` (`gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` on their spans, as JSON).
Label values are bounded: tool and prompt names come from the registries (an unknown one is `_OTHER`),
so no client can grow the number of series.

Imports the pipeline, the input rounds' state reader and the telemetry modules; OpenTelemetry is imported
only when tracing or OTel metrics are configured.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from .._app.pipeline import Call, CallNext, Middleware
from .._primitives.tools import ToolCrashed
from .._protocol.errors import ToolError, UpstreamUnavailable
from .._protocol.jsonrpc import JSONRPCError
from .._protocol.versions import ALL_VERSIONS, is_stateless
from . import hooks
from .metrics import OTHER, Readings

KNOWN_NOTIFICATIONS = frozenset({"notifications/initialized", "notifications/cancelled", "notifications/progress",
                                 "notifications/message", "notifications/roots/list_changed",
                                 "notifications/tasks/status", "notifications/elicitation/complete"})
KNOWN_METHODS = frozenset({"initialize", "ping", "logging/setLevel", "tools/list", "tools/call", "resources/list",
                           "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
                           "prompts/list", "prompts/get", "completion/complete", "server/discover",
                           "subscriptions/listen", "tasks/get", "tasks/result", "tasks/cancel", "tasks/update",
                           "tasks/list", "skills/list", "skills/get", "resources/directory/read"})
MAX_CAPTURED = 8192  # characters of captured arguments or results (opted-in tools only)
_CANCELLED = asyncio.CancelledError  # anyio on asyncio cancels with it


class Telemetry(Middleware):
    """Traces and measures every request (see the module docstring); one per server, outermost in the chain.

    `tracer_provider` / `meter_provider`: OpenTelemetry providers (default: from the environment,
    `otel.py`; None and none configured: no spans, no OTel metrics). `prometheus`: also record into a
    Prometheus registry (`--metrics`). `capture_tools`: tool names whose arguments and results go into
    their spans. `logs_only`: neither spans nor metrics, only the request scope for JSON log lines.
    """

    def __init__(self, *, tracer_provider: Any = None, meter_provider: Any = None, prometheus: bool = False,
                 capture_tools: frozenset[str] | set[str] | tuple[str, ...] = (), from_environment: bool = True,
                 logs_only: bool = False) -> None:
        from . import otel

        if not logs_only and from_environment:
            tracer_provider = tracer_provider or otel.tracer_provider_from_environment()
            meter_provider = meter_provider or otel.meter_provider_from_environment()
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.want_prometheus = prometheus and not logs_only
        self.capture_tools = frozenset(capture_tools)
        self.transport = "pipe"  # "tcp" once an HTTP app serves (`serving_http`)
        self.prometheus: Any = None  # the PromSink, once bound
        self.readings: Readings | None = None
        self._sinks: list[Any] = []
        self._attributes: dict[tuple[str, str | None, str | None, str], dict[str, str]] = {}
        self._app: Any = None
        self._tracer: Any = None
        if tracer_provider is not None:
            from . import spans

            self._tracer = spans.Spans(tracer_provider.get_tracer("mcp_kit"))

    # ------------------------------------------------------------------ wiring

    def bind(self, app: Any) -> None:
        """Serve `app`: its gauges, and the seams' probe (`hooks.active`)."""
        if self._app is app:
            return
        self._app = app
        self.readings = Readings(app)
        sinks: list[Any] = []
        if self.meter_provider is not None:
            from .metrics import OtelSink

            sinks.append(OtelSink(self.meter_provider, self.readings))
        if self.want_prometheus:
            from .prometheus import PromSink

            self.prometheus = PromSink(self.readings)
            sinks.append(self.prometheus)
        self._sinks = sinks
        if self._tracer is not None or sinks:
            hooks.active = self

    def serving_http(self, table: Any) -> None:
        """An HTTP app serves the application: spans say `tcp`, and the event-store gauge reads its budget."""
        self.transport = "tcp"
        self._attributes.clear()
        if self.readings is not None:
            self.readings.event_budget = getattr(table, "budget", None)

    @property
    def tracing(self) -> bool:
        return self._tracer is not None

    # ------------------------------------------------------------------ the chain

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        return await self._observe(call, call_next, notification=False)

    async def on_notification(self, call: Call, call_next: CallNext) -> Any:
        return await self._observe(call, call_next, notification=True)

    async def _observe(self, call: Call, call_next: CallNext, *, notification: bool) -> Any:
        method = call.method
        if notification and method not in KNOWN_NOTIFICATIONS:
            method = OTHER
        target = self._target(call)
        ctx = call.ctx
        version = ctx.protocol_version
        if version not in ALL_VERSIONS:
            version = OTHER
        span = None
        incoming = None
        if self._tracer is not None:  # log lines read the ids from the current span
            span = self._tracer.start(call, method, target, version, self.transport, self._links(call))
            scope_ids: tuple[str | None, str | None] = (None, None)
        else:  # no span of ours: log lines and upstream calls carry the client's context
            incoming = hooks.incoming_context(ctx.meta)
            scope_ids = hooks.ids_of(incoming["traceparent"]) if incoming else (None, None)
        scope = hooks.REQUEST.set(hooks.RequestChannel(None if is_stateless(version) else ctx.session_id,
                                                     _subject(ctx.principal), *scope_ids, incoming))
        labels = self._labels(method, call.method, target, None, version)
        sinks = self._sinks
        in_flight = self.readings.in_flight if self.readings is not None else {}
        in_flight[method] = in_flight.get(method, 0) + 1
        started = time.perf_counter()
        error: str | None = None
        try:
            result = await call_next(call)
        except JSONRPCError as exc:
            error = str(exc.code)
            if span is not None:
                self._tracer.failed(span, error, exc.message, code=error)
            raise
        except ToolCrashed as crashed:
            error = "tool_error"
            if span is not None:
                self._tracer.crashed(span, crashed.error)
            raise
        except (ToolError, UpstreamUnavailable) as exc:
            error = "tool_error" if call.method == "tools/call" else "-32603"
            if span is not None:
                self._tracer.failed(span, error, str(exc))
            raise
        except _CANCELLED:
            error = "cancelled"
            if span is not None:
                self._tracer.failed(span, error, "cancelled by the client or the connection's end")
            raise
        except BaseException as exc:
            error = type(exc).__qualname__
            if span is not None:
                self._tracer.crashed(span, exc, error)
            raise
        else:
            if isinstance(result, dict) and result.get("isError") is True:
                error = "tool_error"
                if span is not None:
                    self._tracer.failed(span, error, None)
            if span is not None and target is not None and target in self.capture_tools and call.method == "tools/call":
                self._tracer.capture(span, _json(call.arguments), _json(result))
            return result
        finally:
            seconds = time.perf_counter() - started
            in_flight[method] -= 1
            for sink in sinks:
                sink.operation(labels if error is None else self._labels(method, call.method, target, error, version),
                               seconds)
            if span is not None:
                self._tracer.end(span)
            hooks.REQUEST.reset(scope)

    def _target(self, call: Call) -> str | None:
        """The tool's or prompt's registered name; `_OTHER` for a name the registry does not know."""
        if call.method == "tools/call":
            name = call.name
            return name if name is not None and call.app.tools.get(name) is not None else OTHER
        if call.method == "prompts/get":
            name = call.name
            return name if name is not None and name in call.app.prompts else OTHER
        return None

    def _labels(self, method: str, wire_method: str, target: str | None, error: str | None,
                version: str) -> dict[str, str]:
        key = (method, target, error, version)
        found = self._attributes.get(key)
        if found is not None:
            return found
        labels = {"mcp.method.name": method, "mcp.protocol.version": version, "network.transport": self.transport}
        if target is not None:
            labels["gen_ai.tool.name" if wire_method == "tools/call" else "gen_ai.prompt.name"] = target
        if error is not None:
            labels["error.type"] = error
        if len(self._attributes) < 4096:
            self._attributes[key] = labels
        return labels

    def _links(self, call: Call) -> list[dict[str, str]]:
        """The trace contexts this request's span links to: the round that asked, the call that made the task."""
        links: list[dict[str, str]] = []
        state = call.params.get("requestState")
        if isinstance(state, str):
            from .._eras.input_rounds import trace_of_state

            asked = trace_of_state(state)
            if asked is not None:
                links.append(asked)
        if call.in_task:
            record = getattr(getattr(call.ctx.channel, "_call", None), "record", None)
            created = getattr(record, "trace_context", None)
            if created:
                links.append(created)
        return links

    # ------------------------------------------------------------------ the probe (hooks.Probe)

    def trace_context(self) -> dict[str, str] | None:
        return self._tracer.current_headers() if self._tracer is not None else None

    async def outbound(self, method: str, params: dict[str, Any] | None, request_id: Any,
                       send: Callable[[dict[str, Any] | None], Awaitable[Any]]) -> Any:
        if self._tracer is None:
            try:
                return await send(params)
            except TimeoutError:
                self.count("timeout", "client_request")
                raise
        span, headers = self._tracer.start_client(method if method in _CLIENT_METHODS else OTHER, request_id,
                                                  self.transport)
        if headers:
            meta = dict((params or {}).get("_meta") or {})
            meta.update(headers)
            params = {**(params or {}), "_meta": meta}
        try:
            answer = await send(params)
        except JSONRPCError as exc:
            self._tracer.failed(span, str(exc.code), exc.message, code=str(exc.code))
            raise
        except TimeoutError as exc:
            self.count("timeout", "client_request")
            self._tracer.failed(span, "timeout", str(exc))
            raise
        except BaseException as exc:
            self._tracer.failed(span, "cancelled" if isinstance(exc, _CANCELLED) else type(exc).__qualname__, None)
            raise
        finally:
            self._tracer.end(span)
        return answer

    async def backend_call(self, system: str, operation: str, call: Awaitable[Any]) -> Any:
        span = self._tracer.start_backend(system, operation) if self._tracer is not None else None
        try:
            return await call
        except BaseException as exc:
            if not isinstance(exc, _CANCELLED):
                self.count("backend_error", operation)
                if "in time" in str(exc):
                    self.count("timeout", "backend")
            if span is not None:
                self._tracer.failed(span, type(exc).__qualname__, None)
            raise
        finally:
            if span is not None:
                self._tracer.end(span)

    def link(self, headers: dict[str, str], reason: str) -> None:
        if self._tracer is not None:
            self._tracer.link_current(headers, reason)

    def count(self, event: str, kind: str) -> None:
        if event == "rate_limited" and kind not in KNOWN_METHODS:
            kind = OTHER  # the method a refused HTTP request named: the client's string
        for sink in self._sinks:
            sink.count(event, kind)

    def session_closed(self, seconds: float, protocol_version: str | None) -> None:
        if not self._sinks:
            return
        version = protocol_version if protocol_version in ALL_VERSIONS else OTHER
        attributes = {"mcp.protocol.version": version or OTHER, "network.transport": self.transport}
        for sink in self._sinks:
            sink.session(attributes, seconds)

    def task_finished(self, status: str) -> None:
        self.count("task_finished", status)

    def uninstall(self) -> None:
        """Stop being the seams' probe (a server that stopped serving)."""
        if hooks.active is self:
            hooks.active = None


_CLIENT_METHODS = frozenset({"sampling/createMessage", "elicitation/create", "roots/list", "ping"})


def _subject(principal: Any) -> str | None:
    if principal is None:
        return None
    subject = getattr(principal, "subject", None)
    return subject if subject is not None else f"client:{getattr(principal, 'client_id', '?')}"


def _json(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text[:MAX_CAPTURED]
