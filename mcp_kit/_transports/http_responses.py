"""The HTTP responses the MCP endpoints send, hand-written where the hot path needs it.

- `error_response`, `too_busy`, `too_many_requests`, `events_lost`: a JSON-RPC error object (id null) with an
  HTTP status.
- `JSONBytesResponse`: an already-encoded JSON body, sent as is.
- `EventStreamResponse`: one POST's events as SSE, in a single write when the answer is ready at once.
- `followed_stream` (`LiveEventStream`): a long-lived SSE stream (GET, resumption, 2026-07-28 streams), with
  keep-alive pings and disconnect handling; pre-framed bytes straight to ASGI `send`, sse-starlette's framing.
- `Finally`: runs a cleanup when an HTTP exchange ends, however it ends.

Must not import: session, server, or anything MCP.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.lowlevel
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.datastructures import MutableHeaders
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
                    headers: dict[str, str] | None = None) -> Any:
    """A long-lived SSE response following `stream` from absolute position `start`, with keep-alive pings.

    A priming event (empty data) carries `retry_ms` when given.
    """
    return LiveEventStream(stream, start=start, retry_ms=retry_ms, headers=headers)


class LiveEventStream:
    """A long-lived SSE response following `stream` from absolute position `start` (GET, resumption,
    2026-07-28 streams): what is ready goes out as one pre-framed write straight to ASGI `send`.

    It writes the bytes sse-starlette wrote for the same events (its headers, `\\r\\n`-separated fields, a
    `: ping - <time>` comment every `ping` seconds without events), with one follower task per stream,
    no per-event objects, and every event available at once in one write. It ends when the stream
    finishes, when the server asks (`close_connection`), when the client disconnects, and on server
    shutdown (sse-starlette's exit signal, which also ends the responses it serves).
    """

    def __init__(self, stream: EventStream, *, start: int = 0, retry_ms: int | None = None,
                 headers: dict[str, str] | None = None, ping: float = KEEP_ALIVE_SECONDS) -> None:
        self.stream = stream
        self.start = start
        self.retry_ms = retry_ms
        self.ping = ping
        self.status_code = 200
        self.headers = _sse_head({**(headers or {}), "Cache-Control": "no-cache, no-transform"})

    def frame(self, event: Event) -> bytes:
        data = event.data
        if not data:  # the priming event: empty data, and how long to wait before resuming
            return ServerSentEvent(id=event.id, data="", retry=self.retry_ms).encode()
        if b"\n" in data or b"\r" in data:  # not one JSON line: sse-starlette's framing splits it
            return ServerSentEvent(data=data.decode(), id=event.id, event="message").encode()
        return b"id: " + event.id.encode() + b"\r\nevent: message\r\ndata: " + data + b"\r\n\r\n"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.headers})
        lock = asyncio.Lock()  # uncontended, it never yields (anyio's does, once per acquire)
        ended_by_client = False

        async def disconnect(cancel: anyio.CancelScope) -> None:
            nonlocal ended_by_client
            while (await receive())["type"] != "http.disconnect":
                pass
            ended_by_client = True
            cancel.cancel()

        async def keep_alive() -> None:
            while True:
                await anyio.sleep(self.ping)
                comment = ServerSentEvent(comment=f"ping - {datetime.now(UTC)}", sep="\n").encode()
                async with lock:
                    await send({"type": "http.response.body", "body": comment, "more_body": True})

        async def exit_signal(cancel: anyio.CancelScope) -> None:
            await EventSourceResponse._listen_for_exit_signal()
            cancel.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(disconnect, tg.cancel_scope)
            if self.ping > 0:
                tg.start_soon(keep_alive)
            tg.start_soon(exit_signal, tg.cancel_scope)
            frame = self.frame
            async for chunk in self.stream.follow_chunks(self.start):
                body = frame(chunk[0]) if len(chunk) == 1 else b"".join(frame(event) for event in chunk)
                async with lock:
                    await send({"type": "http.response.body", "body": body, "more_body": True})
            tg.cancel_scope.cancel()
        if not ended_by_client:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def _sse_head(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    """The headers sse-starlette's `EventSourceResponse` sends with `headers` (the same names, values and order)."""
    mutable = MutableHeaders()
    mutable.update(headers)
    mutable.setdefault("Cache-Control", "no-store")
    mutable["Connection"] = "keep-alive"
    mutable["X-Accel-Buffering"] = "no"
    return [*mutable.raw, (b"content-type", b"text/event-stream; charset=utf-8")]


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
