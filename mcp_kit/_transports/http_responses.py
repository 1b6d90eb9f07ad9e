"""The HTTP responses the MCP endpoints send, hand-written where the hot path needs it.

- `error_response`, `too_busy`, `too_many_requests`, `events_lost`: a JSON-RPC error object (id null) with an
  HTTP status.
- `JSONBytesResponse`: an already-encoded JSON body, sent as is.
- `EventStreamResponse`: one POST's events as SSE, in a single write when the answer is ready at once.
- `followed_stream`: a long-lived SSE stream (GET, resumption, 2026-07-28 streams), with keep-alive
  pings and disconnect handling (sse-starlette).
- `Finally`: runs a cleanup when an HTTP exchange ends, however it ends.

Must not import: session, server, or anything MCP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.lowlevel
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.responses import JSONResponse
from starlette.responses import Response as HTTPResponse

from .._backends.base import RETRY_AFTER_SECONDS
from .._protocol.dispatcher import TOO_MANY_REQUESTS
from .._protocol.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST
from .event_streams import Event, EventStream

KEEP_ALIVE_SECONDS = 15


def error_response(status: int, code: int, message: str, headers: dict[str, str] | None = None,
                   request_id: object = None, data: dict[str, Any] | None = None) -> HTTPResponse:
    """A JSON-RPC error object (id null unless the request's id could be read) with an HTTP status."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error}, status_code=status, headers=headers)


def events_lost(last_event_id: str, stream_id: str, first_kept: int) -> HTTPResponse:
    """410: the events of `stream_id` after `last_event_id` are no longer all kept (a bounded store forgot the
    oldest), so the stream cannot be resumed without a gap; `first_kept` is the oldest kept sequence number.

    The data names the gap and the `Last-Event-ID` that resumes with what is still kept (`resumeWith`).
    """
    resume_with = f"{stream_id}-{first_kept - 1}"
    after = last_event_id.rpartition("-")[2]
    lost = first_kept - 1 - int(after) if after.isdigit() else None
    return error_response(410, INVALID_REQUEST, f"Gone: the events of stream {stream_id} after {last_event_id} are no "
                          f"longer kept (the oldest kept is {stream_id}-{first_kept}); they cannot be replayed. "
                          f"Resume with Last-Event-ID: {resume_with} to receive the events still kept",
                          data={"lastEventId": last_event_id, "firstKeptEventId": f"{stream_id}-{first_kept}",
                                "lostEvents": lost, "resumeWith": resume_with})


def too_busy() -> HTTPResponse:
    """503: `max_sessions` sessions and stateless requests are in flight."""
    return error_response(503, INVALID_REQUEST, "Service Unavailable: too many sessions and requests in flight "
                                                "(--max-sessions); try again later", {"Retry-After": "5"})


def too_many_requests(max_in_flight: int) -> HTTPResponse:
    """429: the session already runs its maximum of requests at once; the client retries once one is answered."""
    return error_response(429, TOO_MANY_REQUESTS, f"Too Many Requests: this session already has {max_in_flight} "
                          "requests in flight, the most it runs at once; retry once one of them is answered",
                          {"Retry-After": "1"})


def unavailable(reason: str) -> HTTPResponse:
    """503: the shared backend (Redis) did not answer; the client may retry shortly."""
    return error_response(503, INTERNAL_ERROR, f"Service Unavailable: {reason}; retry shortly",
                          {"Retry-After": str(RETRY_AFTER_SECONDS)})


class JSONBytesResponse:
    """An already-encoded JSON body as an ASGI response (no header normalisation on the hot path)."""

    def __init__(self, body: bytes, headers: dict[str, str]) -> None:
        self.body = body
        self.status_code = 200
        self.headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        self.headers += [(k.lower().encode(), v.encode()) for k, v in headers.items()]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.headers})
        await send({"type": "http.response.body", "body": self.body})


class EventStreamResponse:
    """The SSE reply to one POST: its events as they come, then the end of the response.

    Lighter than a general SSE response: the stream ends by itself once its requests are
    answered, so it needs no keep-alive task, and a client that drops it loses nothing (the
    events stay in the session's store for GET + Last-Event-ID; a write to a closed connection
    is ignored by the server). Framing follows sse-starlette's (`ServerSentEvent`) for the rare
    events that are not a single JSON line.
    """

    def __init__(self, stream: EventStream, retry_ms: int, headers: dict[str, str]) -> None:
        self.stream = stream
        self.retry_ms = retry_ms
        self.status_code = 200
        self.headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache, no-transform"),
                        (b"x-accel-buffering", b"no")] + [(k.lower().encode(), v.encode()) for k, v in headers.items()]

    def frame(self, event: Event) -> bytes:
        if not event.data:
            return ServerSentEvent(id=event.id, data="", retry=self.retry_ms, sep="\n").encode()
        return b"id: " + event.id.encode() + b"\nevent: message\ndata: " + event.data + b"\n\n"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await anyio.lowlevel.checkpoint()  # a quick handler finishes here, and the reply leaves in one write
        stream = self.stream
        if stream.finished and not stream.consumers:
            body = b"".join(self.frame(event) for event in stream.events)
            headers = self.headers + [(b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body, "more_body": False})
            stream.discard()  # written whole: a client has all of it or none of it (no id to resume from)
            return
        stream.followed = True  # from now on a shared backend copies its events (it can be resumed elsewhere)
        if stream.copier is not None:
            await stream.copier(stream)  # what it holds already
        await send({"type": "http.response.start", "status": 200, "headers": self.headers})
        async for chunk in self.stream.follow_chunks():
            body = b"".join(self.frame(event) for event in chunk)
            await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def followed_stream(stream: EventStream, *, start: int = 0, retry_ms: int | None = None,
                    headers: dict[str, str] | None = None) -> HTTPResponse:
    """A long-lived SSE response following `stream` from absolute position `start`, with keep-alive pings.

    A priming event (empty data) carries `retry_ms` when given.
    """

    async def events() -> AsyncIterator[ServerSentEvent]:
        async for event in stream.follow(start):
            if event.data:
                yield ServerSentEvent(data=event.data.decode(), id=event.id, event="message")
            else:  # priming event: empty data, and how long to wait before resuming
                yield ServerSentEvent(id=event.id, data="", retry=retry_ms)

    return EventSourceResponse(events(), headers={**(headers or {}), "Cache-Control": "no-cache, no-transform"},
                               ping=KEEP_ALIVE_SECONDS, sep="\n")


class Finally:
    """An ASGI response that runs `cleanup` when the HTTP exchange ends, however it ends.

    (A response never sent at all is cleaned up when the transport stops: it tracks every stateless request.)
    """

    def __init__(self, response: Any, cleanup: Callable[[], None]) -> None:
        self.response = response
        self.cleanup = cleanup
        self.status_code = response.status_code

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self.response(scope, receive, send)
        finally:
            self.cleanup()
