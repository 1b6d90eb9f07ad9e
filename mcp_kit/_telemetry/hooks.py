"""The seams telemetry reaches that the middleware chain cannot see, as one switch: `active`.

`active` is None until telemetry is configured (`Telemetry.install`), so every seam costs one
module attribute check when it is off: the dispatcher's outbound requests (sampling, elicitation,
roots), a task's creation (its record keeps the creating span's context), a 2026-07-28 input
round's signed state (it carries the asking span's context), the session's end, counted events
(rate-limit refusals, timeouts) and the Redis backend's operations (`attach.py` hands the backend
`active.backend_call`).

`REQUEST` names the request the running code serves (session id, subject, the span's or the
client's trace and span ids), for the JSON log formatter (`logs.py`).

Imports nothing from mcp_kit: the lowest layer may use it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

TRACE_KEYS = ("traceparent", "tracestate")
_TRACEPARENT = re.compile(r"[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}")
MAX_TRACESTATE = 512  # W3C: 32 list members of at most 256 characters; longer is cut, as the propagator does


class Probe(Protocol):
    """What the seams call while telemetry is on (implemented by `middleware.Telemetry`)."""

    def outbound(self, method: str, params: dict[str, Any] | None, request_id: Any,
                 send: Callable[[dict[str, Any] | None], Awaitable[Any]]) -> Awaitable[Any]:
        """Send a request to the client (`send(params)`) inside a CLIENT span, its trace context in `_meta`."""
        ...

    def backend_call(self, system: str, operation: str, call: Awaitable[Any]) -> Awaitable[Any]:
        """Await one backend operation, as a child span of the current request when there is one."""
        ...

    def trace_context(self) -> dict[str, str] | None:
        """The current span's `traceparent`/`tracestate`, None without a sampled span."""
        ...

    def link(self, headers: dict[str, str], reason: str) -> None:
        """Link the current span to the span whose trace context `headers` holds."""
        ...

    def count(self, event: str, kind: str) -> None:
        """One event: "rate_limited" (kind: the method), "timeout" (kind: "tool", "client_request", "backend")."""
        ...

    def session_closed(self, seconds: float, protocol_version: str | None) -> None: ...

    def task_finished(self, status: str) -> None: ...


active: Probe | None = None


@dataclass(frozen=True, slots=True)
class RequestChannel:
    """Who and what the running request is, for log records."""

    session_id: str | None
    subject: str | None
    trace_id: str | None
    span_id: str | None
    incoming: dict[str, str] | None = None  # the client's trace context, passed on when no span of ours is made


REQUEST: ContextVar[RequestChannel | None] = ContextVar("mcp_kit_request", default=None)


def incoming_context(meta: Mapping[str, Any] | None) -> dict[str, str] | None:
    """The W3C trace context a request's `_meta` carries (`traceparent`, `tracestate`), checked; None without one.

    Hostile data: only a well-formed, non-zero `traceparent` counts; `tracestate` is kept only beside it and cut
    to `MAX_TRACESTATE` characters.
    """
    if not meta:
        return None
    parent = meta.get("traceparent")
    if not isinstance(parent, str) or len(parent) != 55:
        return None
    match = _TRACEPARENT.fullmatch(parent)
    if match is None or match.group(1) == "0" * 32 or match.group(2) == "0" * 16 or parent.startswith("ff"):
        return None
    found = {"traceparent": parent}
    state = meta.get("tracestate")
    if isinstance(state, str) and state:
        found["tracestate"] = state[:MAX_TRACESTATE]
    return found


def ids_of(traceparent: str) -> tuple[str, str]:
    """(trace id, span id) of a checked `traceparent`."""
    return traceparent[3:35], traceparent[36:52]


def trace_headers(meta: Mapping[str, Any] | None) -> dict[str, str]:
    """The headers continuing the trace a request belongs to: the current span's, else the client's own."""
    probe = active
    if probe is not None:
        own = probe.trace_context()
        if own is not None:
            return own
    return incoming_context(meta) or {}


def current_trace_headers() -> dict[str, str]:
    """The headers continuing the trace of the request the running code serves ({} outside one, or with
    telemetry off): the current span's, else the client's context from `_meta` when no span is made."""
    probe = active
    if probe is not None:
        own = probe.trace_context()
        if own is not None:
            return own
    scope = REQUEST.get()
    return dict(scope.incoming) if scope is not None and scope.incoming else {}


def count(event: str, kind: str) -> None:
    """Count an event while telemetry is on (a no-op otherwise)."""
    probe = active
    if probe is not None:
        probe.count(event, kind)
