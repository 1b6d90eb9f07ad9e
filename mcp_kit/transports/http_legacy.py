"""The legacy HTTP+SSE transport (protocol 2024-11-05) on the same app.

GET `/sse` opens a session: its first event, `endpoint`, names the URL to POST messages to
(`/messages/?session_id=...`); every message from the server arrives on that one stream as an
event `message`. POSTs answer 202 (400 for a malformed body, 404 for an unknown session).
Closing the stream ends the session.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request as HTTPRequest
from starlette.responses import Response as HTTPResponse

from ..jsonrpc import INVALID_REQUEST, Message, RequestId, encode_message
from .event_streams import EventStream
from .http_common import error_response, read_message

if TYPE_CHECKING:
    from .http import Served

logger = logging.getLogger("mcp_kit.http")

MAX_QUEUED_EVENTS = 1000


class LegacyWriter:
    """Everything goes down the one SSE stream of a legacy HTTP+SSE session."""

    def __init__(self) -> None:
        self.stream = EventStream("legacy")

    async def send(self, message: Message | list[Message], related_to: RequestId | None = None) -> None:
        self.stream.append(encode_message(message))
        if len(self.stream.events) > MAX_QUEUED_EVENTS:
            self.stream.forget_oldest(MAX_QUEUED_EVENTS // 2)


class LegacySSE:
    """The `/sse` and `/messages/` endpoints over their sessions."""

    def __init__(self, open_connection: Callable[[LegacyWriter], Served | HTTPResponse]) -> None:
        self.open_connection = open_connection
        self.sessions: dict[str, Served] = {}

    async def sse_endpoint(self, request: HTTPRequest) -> HTTPResponse:
        writer = LegacyWriter()
        served = self.open_connection(writer)
        if isinstance(served, HTTPResponse):
            return served
        connection = served.connection
        self.sessions[connection.session_id] = served
        endpoint = f"{request.scope.get('root_path', '')}/messages/?session_id={connection.session_id}"
        logger.info("GET /sse session %s opened", connection.session_id)

        async def events() -> AsyncIterator[ServerSentEvent]:
            try:
                yield ServerSentEvent(data=endpoint, event="endpoint")
                async for event in writer.stream.follow():
                    yield ServerSentEvent(data=event.data.decode(), event="message")
            finally:
                self.sessions.pop(connection.session_id, None)
                served.dispatcher.close()
                logger.info("GET /sse session %s closed", connection.session_id)

        return EventSourceResponse(events(), ping=15, sep="\n")

    async def messages_endpoint(self, request: HTTPRequest) -> HTTPResponse:
        session_id = request.query_params.get("session_id")
        if not session_id:
            return error_response(400, INVALID_REQUEST, "Bad Request: missing session_id query parameter")
        served = self.sessions.get(session_id)
        if served is None:
            return error_response(404, INVALID_REQUEST, "Session not found: open GET /sse again")
        served.connection.last_active = time.monotonic()
        decoded = await read_message(request)
        if isinstance(decoded, HTTPResponse):
            return decoded
        await served.dispatcher.feed(decoded)
        return HTTPResponse("Accepted", status_code=202)
