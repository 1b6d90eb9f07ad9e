"""The legacy HTTP+SSE transport (protocol 2024-11-05) on the same app.

GET `/sse` opens a session: its first event, `endpoint`, names the URL to POST messages to
(`/messages/?session_id=...`); every message from the server arrives on that one stream as an
event `message`. POSTs answer 202 (400 for a malformed body, 404 for an unknown session or one another OAuth
caller opened, 429 with Retry-After for a request while the session already has its maximum in
flight). A tool, resource or prompt the caller lacks scopes for is refused in the answer
on the stream (`_app/methods.py`): the 202 has already told the client its post arrived.
Closing the stream ends the session.

With a shared backend the process holding a `/sse` stream records itself as its holder; a POST
landing on another process is checked (400 for a malformed body, 404 when no process holds the
session) and relayed on the bus to the holder, which feeds it to the session: its answer goes
down the one stream, as if the POST had landed there (a relayed request past the session's maximum in
flight is answered there with the dispatcher's TOO_MANY_REQUESTS error).

Must not import: session, server, or anything MCP.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.requests import Request as HTTPRequest
from starlette.responses import Response as HTTPResponse

from .._backends import BackendUnavailable
from .._protocol.jsonrpc import INVALID_REQUEST, Batch, Message, Request, RequestId, encode_message
from ..auth._principal import principal_to_dict, session_owner
from .event_streams import EventStream
from .http_common import read_message
from .http_responses import KEEP_ALIVE_SECONDS, error_response, too_busy, too_many_requests, unavailable
from .http_scopes import caller, owns
from .http_sessions import SessionTable

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
    """The `/sse` and `/messages/` endpoints over their sessions (the table's `legacy` entries)."""

    def __init__(self, table: SessionTable) -> None:
        self.table = table

    async def sse_endpoint(self, request: HTTPRequest) -> HTTPResponse:
        if self.table.full():
            return too_busy()
        writer = LegacyWriter()
        served = self.table.open(writer)
        served.owner = session_owner(caller(request))
        session_id = served.session_id
        if self.table.shared:
            try:
                await self.table.backend.set_holder("legacy", session_id, 90)
            except BackendUnavailable as exc:
                served.dispatcher.close()
                return unavailable(str(exc))
            served.dispatcher.id_prefix = f"s{self.table.backend.process_id}x"
            served.dispatcher.on_unknown_reply = lambda reply: self.table._relay("r", session_id, encode_message(reply))
        self.table.legacy[session_id] = served
        endpoint = f"{request.scope.get('root_path', '')}/messages/?session_id={session_id}"
        logger.info("GET /sse session %s opened", session_id)

        async def events() -> AsyncIterator[ServerSentEvent]:
            try:
                yield ServerSentEvent(data=endpoint, event="endpoint")
                async for event in writer.stream.follow():
                    yield ServerSentEvent(data=event.data.decode(), event="message")
            finally:
                self.table.legacy.pop(session_id, None)
                served.dispatcher.close()
                if self.table.shared:
                    self.table.forget_holder("legacy", session_id)
                logger.info("GET /sse session %s closed", session_id)

        return EventSourceResponse(events(), ping=KEEP_ALIVE_SECONDS, sep="\n")

    async def messages_endpoint(self, request: HTTPRequest) -> HTTPResponse:
        session_id = request.query_params.get("session_id")
        if not session_id:
            return error_response(400, INVALID_REQUEST, "Bad Request: missing session_id query parameter")
        served = self.table.legacy.get(session_id)
        if served is None and self.table.shared:
            return await self._relay(request, session_id)
        if served is None or not owns(served, request):  # another caller's session is not theirs to find
            return error_response(404, INVALID_REQUEST, "Session not found: open GET /sse again")
        decoded = await read_message(request)
        if isinstance(decoded, HTTPResponse):
            return decoded
        dispatcher = served.dispatcher
        if dispatcher.full and (
            isinstance(decoded, Request)
            or (isinstance(decoded, Batch) and any(isinstance(item, Request) for item in decoded.items))
        ):
            return too_many_requests(dispatcher.max_in_flight)
        await dispatcher.feed(decoded, principal=caller(request))
        return HTTPResponse("Accepted", status_code=202)

    async def _relay(self, request: HTTPRequest, session_id: str) -> HTTPResponse:
        """A POST for a `/sse` stream another process holds: checked here, fed there (through the bus)."""
        backend = self.table.backend
        try:
            holder = await backend.holder("legacy", session_id)
            if holder is None:
                return error_response(404, INVALID_REQUEST, "Session not found: open GET /sse again")
            decoded = await read_message(request)
            if isinstance(decoded, HTTPResponse):
                return decoded
            principal = caller(request)  # the holder checks the session's owner and the scopes with it
            await backend.publish("m", {"sid": session_id, "body": (await request.body()).decode(),
                                        "principal": principal_to_dict(principal) if principal is not None else None})
        except BackendUnavailable as exc:
            return unavailable(str(exc))
        return HTTPResponse("Accepted", status_code=202)
