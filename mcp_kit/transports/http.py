"""One Starlette app for every HTTP client generation.

- Streamable HTTP at `/mcp` (2025-03-26 ... 2025-11-25): sessions by `Mcp-Session-Id`, POST
  answered as JSON or as an SSE stream carrying the request's notifications first, GET for the
  server-to-client stream, DELETE to end a session, resumption with `Last-Event-ID`.
- The 2026-07-28 stateless shape on the same `/mcp` (`http_modern.py`), chosen per request.
- Legacy HTTP+SSE (2024-11-05) at `/sse` and `/messages/` (`http_legacy.py`).
- `/healthz` for load balancers. Guards (Origin/Host, bearer token, body size) in front
  (`http_security.py`); the resumable event store is `event_streams.py`.

The transport moves frames. It creates connections through a factory and needs from them only
what the `Connection` protocol lists, so it never imports the session or server. It does know
the few MCP facts HTTP carries: the protocol-version header, that `initialize` opens a session,
and the stateless envelope.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.requests import Request as HTTPRequest
from starlette.responses import JSONResponse
from starlette.responses import Response as HTTPResponse
from starlette.routing import Route

from ..dispatcher import Dispatcher, Handler
from ..jsonrpc import (
    INVALID_REQUEST,
    Batch,
    ErrorResponse,
    Message,
    Request,
    RequestId,
    Response,
    decode_message,
    encode_message,
)
from ..versions import ALL_VERSIONS, is_known, is_stateless
from .event_streams import Event, EventStream, SessionStreams
from .http_common import accepts, error_response, read_message
from .http_legacy import LegacySSE, LegacyWriter
from .http_modern import carries_envelope, handle_modern
from .http_security import DEFAULT_BODY_TIMEOUT, BodyTimeout, BodyTooLarge, SecurityMiddleware, SecurityPolicy

logger = logging.getLogger("mcp_kit.http")

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
STANDALONE = "standalone"
REQUEST_CANCELLED = -32800  # ends the stream of a cancelled request (as LSP's RequestCancelled; what the SDK sends)


class Connection(Handler, Protocol):
    """What the transport needs from an MCP session (besides serving its dispatcher)."""

    last_active: float

    @property
    def session_id(self) -> str: ...

    def primes_event_streams(self) -> bool:
        """Whether its SSE responses open with a priming event (an id to resume from)."""
        ...


ConnectionFactory = Callable[[Dispatcher], Connection]  # builds a session over its outbound port


@dataclass(slots=True, eq=False)  # hashed by identity: kept in sets
class Served:
    """A connection and the dispatcher serving it (closing the dispatcher closes the connection)."""

    connection: Connection
    dispatcher: Dispatcher
    writer: Any


def open_connection(factory: ConnectionFactory, writer: Any) -> Served:
    """Build a dispatcher over `writer` and the connection it serves."""
    dispatcher = Dispatcher(writer)
    connection = factory(dispatcher)
    dispatcher.attach(connection)
    return Served(connection, dispatcher, writer)


@dataclass
class HttpOptions:
    """Knobs of the HTTP app."""

    json_response: bool = False
    session_ttl: float = 3600.0
    max_sessions: int = 1000
    retry_ms: int = 1000
    param_headers: Callable[[str], dict[str, str]] | None = None  # tool -> {argument: Mcp-Param-* suffix}


class StreamableWriter:
    """Routes a session's outbound messages onto the SSE stream of the request they belong to.

    A stream ends once each of its requests was answered, or released (cancelled): a cancelled
    request's stream ends with a -32800 error when `answer_cancelled` (the handshake era, whose
    streams end only with an answer, also on replay), silently otherwise (2026-07-28).
    """

    def __init__(self, answer_cancelled: bool = True) -> None:
        self.streams = SessionStreams()
        self.answer_cancelled = answer_cancelled
        self._stream_of: dict[RequestId, EventStream] = {}
        self._pending: dict[str, set[RequestId]] = {}

    def bind(self, requests: list[Request], stream: EventStream) -> list[Request]:
        """Route the answers of `requests` to `stream`; returns those whose id is already in flight (not bound).

        A stream with no request bound to it is finished at once.
        """
        duplicates: list[Request] = []
        bound: set[RequestId] = set()
        for request in requests:
            if request.id in bound or request.id in self._stream_of:
                duplicates.append(request)
                continue
            bound.add(request.id)
            self._stream_of[request.id] = stream
        if bound:
            self._pending[stream.id] = bound
        return duplicates

    def standalone(self) -> EventStream:
        return self.streams.streams.get(STANDALONE) or self.streams.open(STANDALONE)

    async def send(self, message: Message | list[Message], related_to: RequestId | None = None) -> None:
        answered: list[RequestId] = [m.id for m in (message if isinstance(message, list) else [message])
                                     if isinstance(m, (Response, ErrorResponse)) and m.id is not None]
        key = answered[0] if answered else related_to
        stream = self._stream_of.get(key) if key is not None else None
        if stream is None:
            stream = self.standalone()
            stream.append(encode_message(message))
            if len(stream.events) > self.streams.max_events:
                stream.forget_oldest(len(stream.events) // 2)
            return
        stream.append(encode_message(message), answer=bool(answered))
        self._settle(stream, answered)

    def release(self, request_id: RequestId) -> None:
        """The request ended without an answer (cancelled): end its stream once nothing else is pending."""
        stream = self._stream_of.get(request_id)
        if stream is None:
            return
        if self.answer_cancelled:
            stream.append(encode_message(ErrorResponse(request_id, REQUEST_CANCELLED, "Request cancelled")), answer=True)
        self._settle(stream, [request_id])

    def _settle(self, stream: EventStream, answered: list[RequestId]) -> None:
        pending = self._pending.get(stream.id)
        for request_id in answered:
            if self._stream_of.get(request_id) is stream:
                del self._stream_of[request_id]
            if pending is not None:
                pending.discard(request_id)
        if pending is not None and not pending:
            del self._pending[stream.id]
            stream.finish()

    def close_stream_of(self, request_id: RequestId) -> bool:
        """End the HTTP response carrying `request_id` now; the client resumes with GET + Last-Event-ID."""
        stream = self._stream_of.get(request_id)
        if stream is None:
            return False
        stream.close_connection()
        return True

    def close(self) -> None:
        for stream in self.streams.streams.values():
            stream.finish()


class HttpTransport:
    """The MCP endpoints over the sessions they serve."""

    def __init__(self, factory: ConnectionFactory, options: HttpOptions) -> None:
        self.factory = factory
        self.options = options
        self.sessions: dict[str, Served] = {}
        self.stateless: set[Served] = set()  # 2026-07-28 requests in flight, each on its own connection
        self.legacy = LegacySSE(self._open_legacy)
        self._tg: TaskGroup | None = None

    # ------------------------------------------------------------------ lifespan

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._expire_idle_sessions)
            try:
                yield
            finally:
                served = [*self.sessions.values(), *self.stateless, *self.legacy.sessions.values()]
                for entry in served:
                    entry.dispatcher.close()
                for entry in self.sessions.values():
                    entry.writer.close()
                self.sessions.clear()
                self.stateless.clear()
                self.legacy.sessions.clear()
                tg.cancel_scope.cancel()
                self._tg = None
                with anyio.CancelScope(shield=True):
                    for entry in served:  # every task of every connection has ended (each wait bounded)
                        await entry.dispatcher.aclose()

    def full(self) -> bool:
        """Whether `max_sessions` is reached: sessions of both transports plus stateless requests in flight."""
        return len(self.sessions) + len(self.legacy.sessions) + len(self.stateless) >= self.options.max_sessions

    def open(self, writer: Any) -> Served:
        """A new connection over `writer` (the app must be running: its lifespan started)."""
        if self._tg is None:
            raise RuntimeError("the MCP HTTP app is not running: serve it with its lifespan (see MCPServer.asgi)")
        return open_connection(self.factory, writer)

    def _open_legacy(self, writer: LegacyWriter) -> Served | HTTPResponse:
        if self.full():
            return too_busy()
        return self.open(writer)

    async def _expire_idle_sessions(self) -> None:
        interval = max(0.05, min(60.0, self.options.session_ttl / 4))
        while True:
            await anyio.sleep(interval)
            deadline = time.monotonic() - self.options.session_ttl
            for session_id, entry in list(self.sessions.items()):
                busy = entry.dispatcher.in_flight or any(s.consumers for s in entry.writer.streams.streams.values())
                if entry.connection.last_active < deadline and not busy:
                    logger.info("session %s expired after %.0f s idle", session_id, self.options.session_ttl)
                    self._end_session(session_id)

    def _end_session(self, session_id: str) -> bool:
        entry = self.sessions.pop(session_id, None)
        if entry is None:
            return False
        entry.dispatcher.close()
        entry.writer.close()
        return True

    # ------------------------------------------------------------------ Streamable HTTP

    async def mcp_endpoint(self, request: HTTPRequest) -> HTTPResponse:
        started = time.perf_counter()
        try:
            response = await self._route(request)
        except BodyTooLarge as exc:
            response = error_response(413, INVALID_REQUEST, str(exc), {"Connection": "close"})
        except BodyTimeout as exc:
            response = error_response(408, INVALID_REQUEST, str(exc), {"Connection": "close"})
        logger.info("%s /mcp %s %d %.1f ms", request.method, getattr(request.state, "rpc_method", "-"),
                    response.status_code, (time.perf_counter() - started) * 1000)
        return response

    async def _route(self, request: HTTPRequest) -> HTTPResponse:
        version = request.headers.get(VERSION_HEADER)
        if is_stateless(version) or (version is not None and not is_known(version)
                                     and await self._carries_envelope(request)):
            return await handle_modern(self, request)
        if version is not None and not is_known(version):
            return error_response(400, INVALID_REQUEST,
                                  f"Bad Request: unsupported MCP-Protocol-Version {version!r}; supported: {', '.join(ALL_VERSIONS)}")
        if request.method == "POST":
            return await self._post(request)
        if request.method == "GET":
            return await self._get(request)
        if request.method == "DELETE":
            return self._delete(request)
        return HTTPResponse(status_code=405, headers={"Allow": "GET, POST, DELETE"})

    @staticmethod
    async def _carries_envelope(request: HTTPRequest) -> bool:
        if request.method != "POST":
            return False
        return carries_envelope(decode_message(await request.body()))  # a body too large or too slow propagates

    def _session(self, request: HTTPRequest) -> Served | HTTPResponse:
        session_id = request.headers.get(SESSION_HEADER)
        if not session_id:
            return error_response(400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header; send initialize first")
        entry = self.sessions.get(session_id)
        if entry is None:
            return error_response(404, INVALID_REQUEST, "Session not found: it expired or was deleted; initialize a new one")
        entry.connection.last_active = time.monotonic()
        return entry

    async def _post(self, request: HTTPRequest) -> Any:
        content_type = request.headers.get("content-type", "")
        if "application/json" not in content_type:
            return error_response(415, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json")
        if not (accepts(request, "application/json") or accepts(request, "text/event-stream")):
            return error_response(406, INVALID_REQUEST, "Not Acceptable: accept application/json and text/event-stream")
        decoded = await read_message(request)
        if isinstance(decoded, HTTPResponse):
            return decoded
        if carries_envelope(decoded):  # a stateless-era request without its version header
            return await handle_modern(self, request)
        items = decoded.items if isinstance(decoded, Batch) else [decoded]
        requests = [item for item in items if isinstance(item, Request)]
        request.state.rpc_method = ",".join(r.method for r in requests) or "-"
        initialize = any(r.method == "initialize" for r in requests)
        headers: dict[str, str] = {}
        if initialize:
            if len(items) > 1:
                return error_response(400, INVALID_REQUEST, "Bad Request: initialize must be sent alone, not in a batch")
            if self.full():
                return too_busy()
            served = self.open(StreamableWriter())
            self.sessions[served.connection.session_id] = served
            headers["Mcp-Session-Id"] = served.connection.session_id
        else:
            found = self._session(request)
            if isinstance(found, HTTPResponse):
                return found
            served = found
            if isinstance(decoded, Batch) and not served.connection.accepts_batches():
                return error_response(400, INVALID_REQUEST, "Invalid Request: batches are not supported in this protocol version")
        connection, dispatcher, writer = served.connection, served.dispatcher, served.writer
        if not requests:
            await dispatcher.feed(decoded)
            return HTTPResponse(status_code=202)
        stream = writer.streams.open()
        duplicates = writer.bind(requests, stream)
        json_reply = self.options.json_response or not accepts(request, "text/event-stream")
        if not json_reply and connection.primes_event_streams():
            stream.append(b"")  # the priming event: an id to resume from before anything else happens
        if duplicates:  # answered here, on this POST: the request already using the id keeps its own stream
            for duplicate in duplicates:
                stream.append(encode_message(ErrorResponse(
                    duplicate.id, INVALID_REQUEST, f"Invalid Request: id {duplicate.id!r} is already in use")), answer=True)
            if len(duplicates) == len(requests):
                stream.finish()
            remaining = [item for item in items if not any(item is d for d in duplicates)]
            if isinstance(decoded, Batch) and remaining:
                await dispatcher.feed(Batch(remaining))
        else:
            await dispatcher.feed(decoded)
        if json_reply:
            return await self._json_reply(stream, writer, headers, isinstance(decoded, Batch))
        return self._sse_reply(stream, writer, headers, connection, start=0)

    async def _json_reply(self, stream: EventStream, writer: StreamableWriter, headers: dict[str, str],
                          batch: bool) -> Any:
        await anyio.lowlevel.checkpoint()  # a quick handler finishes here: no need to wait on the stream
        if not stream.finished:
            await stream.wait_finished()
        answers = [event.data for event in stream.events if event.answer]  # no notifications in JSON
        if not answers:
            return HTTPResponse(status_code=202, headers=headers)
        body = answers[0] if len(answers) == 1 else b"[" + b",".join(a.strip(b"[]") for a in answers) + b"]"
        return JSONBytesResponse(body, headers)

    def _sse_reply(self, stream: EventStream, writer: StreamableWriter, headers: dict[str, str],
                   connection: Connection, start: int) -> Any:
        """A request's events as SSE (an ASGI response). Long-lived streams (GET) get keep-alive pings and disconnect handling."""
        if stream.id != STANDALONE and start == 0:
            return EventStreamResponse(stream, self.options.retry_ms, headers)

        async def events() -> AsyncIterator[ServerSentEvent]:
            async for event in stream.follow(start):
                if event.data:
                    yield ServerSentEvent(data=event.data.decode(), id=event.id, event="message")
                else:  # priming event: empty data, and how long to wait before resuming
                    yield ServerSentEvent(id=event.id, data="", retry=self.options.retry_ms)

        return EventSourceResponse(events(), headers={**headers, "Cache-Control": "no-cache, no-transform"},
                                   ping=15, sep="\n")

    async def _get(self, request: HTTPRequest) -> HTTPResponse:
        if not accepts(request, "text/event-stream"):
            return error_response(406, INVALID_REQUEST, "Not Acceptable: GET /mcp opens an SSE stream; accept text/event-stream")
        found = self._session(request)
        if isinstance(found, HTTPResponse):
            return found
        connection, writer = found.connection, found.writer
        last_event_id = request.headers.get("last-event-id")
        if last_event_id:
            located = writer.streams.find_event(last_event_id)
            if located is not None:
                stream, position = located
                if stream.finished and position >= stream.dropped + len(stream.events):
                    # The client already has every event of a stream that will carry no more. The
                    # spec lets a GET be answered 405 when no SSE stream is offered; clients that
                    # resume after an error response (TypeScript SDK 1.x) stop quietly on it.
                    return error_response(405, INVALID_REQUEST, f"Method Not Allowed: stream {stream.id} is "
                                          "complete and its last event was delivered; nothing to resume",
                                          {"Allow": "GET, POST, DELETE"})
                request.state.rpc_method = f"resume {stream.id}"
                return self._sse_reply(stream, writer, {}, connection, start=position)
        standalone = writer.standalone()
        if standalone.consumers:
            return error_response(409, INVALID_REQUEST, "Conflict: this session already has an open GET stream")
        return self._sse_reply(standalone, writer, {}, connection, start=standalone.index_after(None)
                               if not last_event_id else standalone.dropped + len(standalone.events))

    def _delete(self, request: HTTPRequest) -> HTTPResponse:
        found = self._session(request)
        if isinstance(found, HTTPResponse):
            return found
        self._end_session(found.connection.session_id)
        return HTTPResponse(status_code=200)

def too_busy() -> HTTPResponse:
    """503: `max_sessions` sessions and stateless requests are in flight."""
    return error_response(503, INVALID_REQUEST, "Service Unavailable: too many sessions and requests in flight "
                                                "(--max-sessions); try again later", {"Retry-After": "5"})


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
            return
        await send({"type": "http.response.start", "status": 200, "headers": self.headers})
        async for chunk in self.stream.follow_chunks():
            body = b"".join(self.frame(event) for event in chunk)
            await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def healthz(request: HTTPRequest) -> HTTPResponse:
    """Liveness for load balancers (no credentials needed)."""
    return JSONResponse({"status": "ok"})


class MCPHttpApp:
    """The ASGI entry point: `/mcp` goes straight to the transport (behind the guard), the rest to Starlette.

    The MCP endpoint carries nearly all traffic; skipping the router and exception middleware
    for it saves a good part of each request's cost.
    """

    def __init__(self, starlette: Starlette, transport: HttpTransport, policy: SecurityPolicy) -> None:
        self.starlette = starlette
        self.transport = transport
        self.state = starlette.state
        self._guarded = SecurityMiddleware(self._mcp, policy)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            root = scope.get("root_path", "")
            path = scope["path"][len(root):] if root and scope["path"].startswith(root) else scope["path"]
            if path == "/mcp":
                await self._guarded(scope, receive, send)
                return
        await self.starlette(scope, receive, send)

    async def _mcp(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            response = await self.transport.mcp_endpoint(HTTPRequest(scope, receive))
        except Exception:
            logger.exception("error while serving %s /mcp", scope.get("method"))
            response = error_response(500, -32603, "Internal error")
        await response(scope, receive, send)

    @property
    def router(self) -> Any:
        """The Starlette router (its `lifespan_context` runs the MCP app's lifespan when mounted)."""
        return self.starlette.router


def create_app(
    factory: ConnectionFactory,
    lifespan: Callable[[], contextlib.AbstractAsyncContextManager[Any]],
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    auth_token: str | None = None,
    allowed_origins: list[str] | None = None,
    allowed_hosts: list[str] | None = None,
    max_body: int = 16 << 20,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    options: HttpOptions | None = None,
) -> MCPHttpApp:
    """The ASGI app: /mcp, /sse, /messages/, /healthz behind the security guard."""
    transport = HttpTransport(factory, options or HttpOptions())

    @contextlib.asynccontextmanager
    async def app_lifespan(app: Starlette) -> AsyncIterator[None]:
        async with lifespan(), transport.running():
            yield

    routes = [
        Route("/mcp", transport.mcp_endpoint, methods=["GET", "POST", "DELETE"]),
        Route("/sse", transport.legacy.sse_endpoint, methods=["GET"]),
        Route("/messages/", transport.legacy.messages_endpoint, methods=["POST"]),
        Route("/messages", transport.legacy.messages_endpoint, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
    ]
    app = Starlette(routes=routes, lifespan=app_lifespan)
    app.state.transport = transport
    policy = SecurityPolicy.for_bind(host, port, allowed_origins=allowed_origins, allowed_hosts=allowed_hosts,
                                     auth_token=auth_token, max_body=max_body, body_timeout=body_timeout)
    app.add_middleware(SecurityMiddleware, policy=policy)
    return MCPHttpApp(app, transport, policy)
