"""Streamable HTTP in the handshake era (2025-03-26 ... 2025-11-25) on `/mcp`: sessions by `Mcp-Session-Id`.

POST carries messages (already decoded by the endpoint) and is answered as JSON or as an SSE
stream carrying the request's notifications first; a POST carrying a request while the session
already has its maximum in flight (`Dispatcher.max_in_flight`) is answered 429 with Retry-After,
and its body is dropped (answers and notifications still go through). GET opens the session's standalone stream or
resumes one with `Last-Event-ID` (410 Gone, naming the gap, when the events after it are no longer kept,
in this process's store or in the shared event log: never a replay that silently skips some); DELETE
ends the session. `initialize` opens a session (the one
MCP fact this module needs besides the priming rule, which it asks the connection about).

Must not import: session, server, or anything MCP.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.responses import Response as HTTPResponse

from .._backends import Backend, BackendUnavailable
from .._protocol.jsonrpc import INVALID_REQUEST, Batch, Decoded, ErrorResponse, JSONRPCError, Request, encode_message
from ..auth._principal import session_owner
from .connection import Served
from .event_streams import EventStream
from .http_admission import Admit, rate_refusal
from .http_common import SESSION_HEADER, HTTPRequestLike, accepts
from .http_options import HttpOptions
from .http_responses import (
    KEEP_ALIVE_SECONDS,
    EventStreamResponse,
    JSONBytesResponse,
    error_response,
    events_lost,
    followed_stream,
    too_busy,
    too_many_requests,
    unavailable,
)
from .http_scopes import RequiredScopes, caller, owns, scope_refusal
from .http_sessions import SessionTable
from .http_writer import STANDALONE

logger = logging.getLogger("mcp_kit.http")


class StreamableHTTP:
    """POST, GET and DELETE on `/mcp` for handshake-era sessions."""

    def __init__(self, table: SessionTable, options: HttpOptions, required_scopes: RequiredScopes | None = None,
                 admit: Admit | None = None) -> None:
        self.table = table
        self.options = options
        self.required_scopes = required_scopes  # OAuth scopes per tool/resource/prompt (http_scopes.py)
        self.admit = admit  # rate limits counted before dispatch (http_admission.py)

    async def _session(self, request: HTTPRequestLike) -> Served | HTTPResponse:
        session_id = request.headers.get(SESSION_HEADER)
        if not session_id:
            return error_response(
                400, INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header; send initialize first"
            )
        if not self.table.shared:
            served = self.table.touch(session_id)
        else:
            try:
                served = await self.table.find(session_id, caller(request))
            except BackendUnavailable as exc:
                return unavailable(str(exc))
            except JSONRPCError:
                return too_busy()
        if served is None or not owns(served, request):  # not another caller's
            return error_response(
                404, INVALID_REQUEST, "Session not found: it expired or was deleted; initialize a new one"
            )
        return served

    async def post(self, request: HTTPRequestLike, decoded: Decoded) -> Any:
        """Serve a POST whose body the endpoint decoded (and checked: JSON-RPC, not the stateless envelope)."""
        items = decoded.items if isinstance(decoded, Batch) else [decoded]
        requests = [item for item in items if isinstance(item, Request)]
        request.state.rpc_method = ",".join(r.method for r in requests) or "-"
        principal = caller(request)
        headers: dict[str, str] = {}
        if any(r.method == "initialize" for r in requests):
            if len(items) > 1:
                return error_response(
                    400, INVALID_REQUEST, "Bad Request: initialize must be sent alone, not in a batch"
                )
            if self.table.full():
                return too_busy()
            served = self.table.open_streamable()
            served.owner = session_owner(principal)
            headers["Mcp-Session-Id"] = served.session_id
        else:
            found = await self._session(request)
            if isinstance(found, HTTPResponse):
                return found
            served = found
            if isinstance(decoded, Batch) and not served.connection.accepts_batches():
                return error_response(
                    400, INVALID_REQUEST, "Invalid Request: batches are not supported in this protocol version"
                )
        if principal is not None and isinstance(decoded, Request):  # a lone request can still get a 403 challenge
            refused = scope_refusal(request, principal, decoded, self.required_scopes)
            if refused is not None:
                return refused
        if self.admit is not None and isinstance(decoded, Request):  # a lone request can still get a 429
            limited = await rate_refusal(self.admit, decoded, principal, served.session_id, None)
            if limited is not None:
                return limited
        dispatcher, writer = served.dispatcher, served.writer
        if not requests:
            await dispatcher.feed(decoded, principal=principal)
            return HTTPResponse(status_code=202)
        if dispatcher.full:  # the body was read (bounded by max_body); what it asks is not kept
            return too_many_requests(dispatcher.max_in_flight)
        json_reply = self.options.json_response or not accepts(request, "text/event-stream")
        stream = writer.streams.open(resumable=not json_reply)  # a JSON reply can never be resumed: not kept
        duplicates = writer.bind(requests, stream)
        if not json_reply and served.connection.primes_event_streams():
            stream.append(b"")  # the priming event: an id to resume from before anything else happens
        if duplicates:  # answered here, on this POST: the request already using the id keeps its own stream
            for duplicate in duplicates:
                stream.append(
                    encode_message(
                        ErrorResponse(
                            duplicate.id, INVALID_REQUEST, f"Invalid Request: id {duplicate.id!r} is already in use"
                        )
                    ),
                    answer=True,
                )
            if len(duplicates) == len(requests):
                stream.finish()
            remaining = [item for item in items if not any(item is d for d in duplicates)]
            if isinstance(decoded, Batch) and remaining:
                await dispatcher.feed(Batch(remaining), principal=principal)
        else:
            await dispatcher.feed(decoded, principal=principal)
        if json_reply:
            return await self._json_reply(stream, headers)
        return self._sse_reply(stream, headers, start=0)

    async def _json_reply(self, stream: EventStream, headers: dict[str, str]) -> Any:
        await anyio.lowlevel.checkpoint()  # a quick handler finishes here: no need to wait on the stream
        if not stream.finished:
            await stream.wait_finished()
        answers = [event.data for event in stream.events if event.answer]  # no notifications in JSON
        if not answers:
            return HTTPResponse(status_code=202, headers=headers)
        body = answers[0] if len(answers) == 1 else b"[" + b",".join(a.strip(b"[]") for a in answers) + b"]"
        return JSONBytesResponse(body, headers)

    def _sse_reply(self, stream: EventStream, headers: dict[str, str], start: int) -> Any:
        """A request's events as SSE. Long-lived streams (GET, resumption) get keep-alive pings and disconnect
        handling."""
        if stream.id != STANDALONE and start == 0:
            return EventStreamResponse(stream, self.options.retry_ms, headers)
        if stream.id != STANDALONE:
            stream.followed = True
        return followed_stream(stream, start=start, retry_ms=self.options.retry_ms, headers=headers)

    async def get(self, request: HTTPRequestLike) -> HTTPResponse:
        if not accepts(request, "text/event-stream"):
            return error_response(
                406, INVALID_REQUEST, "Not Acceptable: GET /mcp opens an SSE stream; accept text/event-stream"
            )
        found = await self._session(request)
        if isinstance(found, HTTPResponse):
            return found
        writer = found.writer
        last_event_id = request.headers.get("last-event-id")
        if last_event_id:
            located = writer.streams.find_event(last_event_id)
            if located is not None:
                stream, position = located
                if position < stream.dropped:  # the events after it were forgotten: no replay with a silent gap
                    return events_lost(last_event_id, stream.id, stream.dropped + 1)
                if stream.finished and position >= stream.dropped + len(stream.events):
                    # The client already has every event of a stream that will carry no more. The
                    # spec lets a GET be answered 405 when no SSE stream is offered; clients that
                    # resume after an error response (TypeScript SDK 1.x) stop quietly on it.
                    return error_response(405, INVALID_REQUEST, f"Method Not Allowed: stream {stream.id} is "
                                          "complete and its last event was delivered; nothing to resume",
                                          {"Allow": "GET, POST, DELETE"})
                request.state.rpc_method = f"resume {stream.id}"
                return self._sse_reply(stream, {}, start=position)
            if writer.streams.forgotten(last_event_id):  # complete and written whole, or past its grace
                return error_response(405, INVALID_REQUEST, f"Method Not Allowed: the stream of event {last_event_id} "
                                      "is complete, or past its resumption window; nothing to resume",
                                      {"Allow": "GET, POST, DELETE"})
            if self.table.shared:  # a stream another process served: follow its copy in the event log
                remote = await self._resume_elsewhere(request, found.session_id, last_event_id)
                if remote is not None:
                    return remote
        writer.holds_standalone = True
        standalone = writer.standalone()
        if standalone.consumers:
            return error_response(409, INVALID_REQUEST, "Conflict: this session already has an open GET stream")
        return self._sse_reply(standalone, {}, start=standalone.index_after(None)
                               if not last_event_id else standalone.dropped + len(standalone.events))

    async def _resume_elsewhere(self, request: HTTPRequestLike, session_id: str,
                                last_event_id: str) -> HTTPResponse | None:
        stream_id, _, seq = last_event_id.rpartition("-")
        if not seq.isdigit():
            return None
        backend = self.table.backend
        try:
            first, finished, exists = await backend.read_events(session_id, stream_id, int(seq), 0)
        except BackendUnavailable as exc:
            return unavailable(str(exc))
        if not exists:
            return None
        if first and first[0][0] > int(seq) + 1:  # the log is capped: the events between are gone
            return events_lost(last_event_id, stream_id, first[0][0])
        if finished and not first:
            return error_response(405, INVALID_REQUEST, f"Method Not Allowed: stream {stream_id} is complete and its "
                                  "last event was delivered; nothing to resume", {"Allow": "GET, POST, DELETE"})
        request.state.rpc_method = f"resume {stream_id} (shared)"
        return EventSourceResponse(
            _follow_log(backend, session_id, stream_id, int(seq), first, finished),
            headers={"Cache-Control": "no-cache, no-transform"},
            ping=KEEP_ALIVE_SECONDS,
            sep="\n",
        )

    async def delete(self, request: HTTPRequestLike) -> HTTPResponse:
        found = await self._session(request)
        if isinstance(found, HTTPResponse):
            return found
        try:
            await self.table.end_everywhere(found.session_id)
        except BackendUnavailable as exc:
            return unavailable(str(exc))
        return HTTPResponse(status_code=200)


async def _follow_log(backend: Backend, session_id: str, stream_id: str, after: int, first: list[tuple[int, bytes]],
                      finished: bool) -> AsyncIterator[ServerSentEvent]:
    """The events of a stream's copy in the event log after `after` (`first` already read), until its end
    mark (or the copy expires)."""
    entries = first
    last = after
    while True:
        if entries and entries[0][0] > last + 1:  # the log dropped events this follower has not had
            logger.warning("session %s: a follower of stream %s fell behind its capped event log; ending its response "
                           "(it resumes from event %d and is told what was lost)", session_id, stream_id, last)
            return
        for seq, data in entries:
            last = seq
            if data:
                yield ServerSentEvent(data=data.decode(), id=f"{stream_id}-{seq}", event="message")
        if finished:
            return
        try:
            entries, finished, exists = await backend.read_events(session_id, stream_id, last, 1.0)
        except BackendUnavailable as exc:
            logger.warning("session %s: following stream %s stopped: %s", session_id, stream_id, exc)
            return
        if not exists:
            return
