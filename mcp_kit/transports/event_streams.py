"""Server-sent event streams of one HTTP session, kept so a dropped client can resume.

Every message sent on a stream gets an event id `<stream>-<seq>`. Events stay in memory, so a
client that reconnects with `Last-Event-ID` gets what it missed and then the rest as it
happens. Streams still in progress are always kept; finished ones are forgotten oldest first
once a session holds more than its budget of events or bytes.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import anyio

MAX_EVENTS_PER_SESSION = 1_000
MAX_BYTES_PER_SESSION = 4 << 20


@dataclass(slots=True)
class Event:
    """One SSE event: its id, its JSON payload (b"" for a priming event), whether it answers a request."""

    id: str
    data: bytes
    answer: bool = False


@dataclass
class EventStream:
    """The events of one POST response (or of the standalone GET stream)."""

    id: str
    events: list[Event] = field(default_factory=list)
    finished: bool = False
    closed_by_server: bool = False
    _seq: itertools.count = field(default_factory=lambda: itertools.count(1))
    _changed: anyio.Event | None = None  # created only while someone waits
    consumers: int = 0
    dropped: int = 0  # events forgotten from the front (absolute positions stay valid)
    size: int = 0  # bytes held
    owner: SessionStreams | None = None  # keeps running totals for the session's budget

    def append(self, data: bytes, answer: bool = False) -> Event:
        event = Event(f"{self.id}-{next(self._seq)}", data, answer)
        self.events.append(event)
        self.size += len(data)
        if self.owner is not None:
            self.owner.total_events += 1
            self.owner.total_bytes += len(data)
        self._wake()
        return event

    def finish(self) -> None:
        """No more events will come (all responses were sent)."""
        self.finished = True
        self._wake()

    def close_connection(self) -> None:
        """Ask the consumer to end its HTTP response after what is already queued (the client resumes with GET).

        The request is honoured once, by the consumer attached now or by the next one.
        """
        self.closed_by_server = True
        self._wake()

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def _next_change(self) -> None:
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()

    async def wait_for_event(self) -> None:
        """Return once the stream has an event or is finished."""
        while not self.events and not self.finished:
            await self._next_change()

    async def wait_finished(self) -> None:
        """Return once every request on the stream was answered."""
        while not self.finished:
            await self._next_change()

    def index_after(self, event_id: str | None) -> int:
        """The absolute position just after `event_id` (the start when it is unknown)."""
        if event_id is None:
            return self.dropped
        for index, event in enumerate(self.events):
            if event.id == event_id:
                return self.dropped + index + 1
        return self.dropped

    def forget_oldest(self, count: int) -> None:
        freed = sum(len(e.data) for e in self.events[:count])
        self.size -= freed
        del self.events[:count]
        self.dropped += count
        if self.owner is not None:
            self.owner.total_events -= count
            self.owner.total_bytes -= freed

    async def follow_chunks(self, start: int = 0) -> AsyncIterator[list[Event]]:
        """Like `follow`, but yields every event available at once as one list (fewer writes)."""
        position = max(start, self.dropped)
        self.consumers += 1
        try:
            while True:
                offset = position - self.dropped
                if offset < len(self.events):
                    chunk = self.events[max(offset, 0):]
                    position = self.dropped + len(self.events)
                    yield chunk
                    continue
                if self.finished:
                    return
                if self.closed_by_server:
                    self.closed_by_server = False
                    return
                await self._next_change()
        finally:
            self.consumers -= 1

    async def follow(self, start: int = 0) -> AsyncIterator[Event]:
        """Yield events from absolute position `start`, waiting for more until finished or closed by the server."""
        async for chunk in self.follow_chunks(start):
            for event in chunk:
                yield event


class SessionStreams:
    """All event streams of one session, with a bound on stored events."""

    def __init__(self, max_events: int = MAX_EVENTS_PER_SESSION, max_bytes: int = MAX_BYTES_PER_SESSION) -> None:
        self.streams: dict[str, EventStream] = {}
        self._ids = itertools.count(1)
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.total_events = 0
        self.total_bytes = 0

    def open(self, stream_id: str | None = None) -> EventStream:
        stream = EventStream(stream_id or f"s{next(self._ids)}", owner=self)
        self.streams[stream.id] = stream
        self._trim()
        return stream

    def find_event(self, event_id: str) -> tuple[EventStream, int] | None:
        stream_id = event_id.rsplit("-", 1)[0]
        stream = self.streams.get(stream_id)
        if stream is None:
            return None
        return stream, stream.index_after(event_id)

    def _trim(self) -> None:
        """Forget the oldest finished streams while over budget (in-progress streams stay)."""
        if self.total_events <= self.max_events and self.total_bytes <= self.max_bytes:
            return
        forgotten: list[str] = []  # oldest first, and usually just one: no copy of the whole table per request
        for stream in self.streams.values():
            if self.total_events <= self.max_events and self.total_bytes <= self.max_bytes:
                break
            if stream.finished and stream.id != "standalone":
                self.total_events -= len(stream.events)
                self.total_bytes -= stream.size
                forgotten.append(stream.id)
        for stream_id in forgotten:
            del self.streams[stream_id]
        standalone = self.streams.get("standalone")
        if standalone is not None and len(standalone.events) > self.max_events:
            standalone.forget_oldest(len(standalone.events) - self.max_events // 2)
