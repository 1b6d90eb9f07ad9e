"""Writer routing for Streamable HTTP: each outbound message goes onto the SSE stream of the request it belongs to.

A session's streams live in its `SessionStreams` (`event_streams.py`): one per POST that carried
requests, plus the standalone stream a GET reads. A stream ends once each of its requests was
answered, or released (cancelled): a cancelled request's stream ends with a -32800 error when
`answer_cancelled` (the handshake era, whose streams end only with an answer, also on replay),
silently otherwise (2026-07-28). Messages that belong to no open request go to the standalone stream.

With a shared backend the writer copies the events of each followed stream (one whose reply was
not written whole: the client reads it as it comes) into the backend's event log (`mirror`), and keeps standalone
messages only once a GET stream was opened on this process
(`holds_standalone`): the process holding a session's GET stream delivers its notifications;
copies of the session on other processes drop theirs.

Must not import: session, server, or anything MCP.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from .._protocol.jsonrpc import ErrorResponse, Message, Request, RequestId, Response, encode_message
from .event_streams import EventStream, SessionStreams, StoreBudget

Mirror = Callable[[str, list[tuple[int, bytes]], bool], Awaitable[None]]

STANDALONE = "standalone"
REQUEST_CANCELLED = -32800  # ends the stream of a cancelled request (as LSP's RequestCancelled; what the SDK sends)


class StreamableWriter:
    """A session's MessageWriter: routes messages to per-request streams (see the module docstring)."""

    def __init__(self, answer_cancelled: bool = True, budget: StoreBudget | None = None, prefix: str = "s") -> None:
        self.streams = SessionStreams(budget=budget, prefix=prefix)
        self.answer_cancelled = answer_cancelled
        self.mirror: Mirror | None = None  # copies resumable events to a shared backend
        self.holds_standalone = True  # False for a shared session until a GET stream opens here
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
        if self.mirror is not None and stream.owner is not None:
            stream.copier = self._copy
        return duplicates

    def standalone(self) -> EventStream:
        return self.streams.streams.get(STANDALONE) or self.streams.open(STANDALONE)

    def busy(self) -> bool:
        """Whether a client is reading one of the session's streams now."""
        return any(stream.consumers for stream in self.streams.streams.values())

    async def send(self, message: Message | list[Message], related_to: RequestId | None = None) -> None:
        answered: list[RequestId] = [m.id for m in (message if isinstance(message, list) else [message])
                                     if isinstance(m, (Response, ErrorResponse)) and m.id is not None]
        key = answered[0] if answered else related_to
        stream = self._stream_of.get(key) if key is not None else None
        if stream is None:
            if not self.holds_standalone:
                return  # a shared session: the process holding its GET stream delivers this
            stream = self.standalone()
            stream.append(encode_message(message))
            if len(stream.events) > self.streams.max_events:
                stream.forget_oldest(len(stream.events) // 2)
            return
        stream.append(encode_message(message), answer=bool(answered))
        self._settle(stream, answered)
        if self.mirror is not None and stream.followed and stream.owner is not None:
            await self._copy(stream)

    async def _copy(self, stream: EventStream) -> None:
        """Copy the events of a followed stream not copied yet (its backlog too) to the shared event log.

        A reply written whole is never copied: only the process that wrote it could be asked to resume it.
        """
        assert self.mirror is not None
        pending: list[tuple[int, bytes]] = []
        for event in stream.events:
            seq = int(event.id.rsplit("-", 1)[1])
            if seq > stream.mirrored:
                pending.append((seq, event.data))
        if pending:
            stream.mirrored = pending[-1][0]
        if pending or stream.finished:
            await self.mirror(stream.id, pending, stream.finished)

    def release(self, request_id: RequestId) -> None:
        """The request ended without an answer (cancelled): end its stream once nothing else is pending."""
        stream = self._stream_of.get(request_id)
        if stream is None:
            return
        if self.answer_cancelled:
            stream.append(
                encode_message(ErrorResponse(request_id, REQUEST_CANCELLED, "Request cancelled")), answer=True
            )
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
