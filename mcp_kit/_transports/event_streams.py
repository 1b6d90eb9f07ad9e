"""Server-sent event streams of one HTTP session, kept so a dropped client can resume.

Every message sent on a stream gets an event id `<stream>-<seq>`. Events stay in memory, so a
client that reconnects with `Last-Event-ID` gets what it missed and then the rest as it
happens. Only what can be resumed is kept, and only while it can be:
- a JSON reply is never resumable: its stream is not registered (`open(resumable=False)`);
- an SSE reply written whole in one write (the usual case) stays only among the session's last
  `KEEP_WRITTEN` such replies (a connection that broke mid-body), within the grace;
- any other stream stays while in progress, then for `RESUME_GRACE` seconds after it finished;
- kept bytes are copies (the encoder's buffers are over-allocated), bounded per session
  (`max_events`, `max_bytes`) and per server (`StoreBudget`), oldest finished streams first.

A stream's sequence numbers run from 1 without gaps, so event `<stream>-<n>` sits at absolute
position n - 1, and the event after it at n. The standalone stream forgets its oldest events past
`max_events`: a position below `dropped` names events that are gone (the HTTP transport answers 410
rather than replay with a silent gap), and a kept stream whose follower fell that far behind ends
its response (the client resumes, and is told the same).

Imports nothing from mcp_kit.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import anyio

MAX_EVENTS_PER_SESSION = 1_000
MAX_BYTES_PER_SESSION = 4 << 20
MAX_BYTES_PER_SERVER = 64 << 20
RESUME_GRACE = 60.0  # seconds a finished stream stays resumable
KEEP_WRITTEN = 8  # replies written whole that a session keeps for resumption

logger = logging.getLogger("mcp_kit.http")


class StoreBudget:
    """The bytes kept by every session's event store of one server, against one bound."""

    __slots__ = ("max_bytes", "total_bytes", "_warned")

    def __init__(self, max_bytes: int = MAX_BYTES_PER_SERVER) -> None:
        self.max_bytes = max_bytes
        self.total_bytes = 0
        self._warned = False

    def over(self) -> bool:
        return self.total_bytes > self.max_bytes

    def warn_once(self) -> None:
        if not self._warned:
            self._warned = True
            logger.warning("the server's event stores hold more than %d bytes: finished streams are dropped before "
                           "their resumption grace ends", self.max_bytes)


@dataclass(slots=True)
class Event:
    """One SSE event: its id, its JSON payload (b"" for a priming event), whether it answers a request."""

    id: str
    data: bytes
    answer: bool = False


@dataclass(slots=True, eq=False)
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
    owner: SessionStreams | None = None  # keeps running totals for the session's budget (None: not kept)
    finished_at: float = 0.0
    followed: bool = False  # its reply is not written whole: a client follows it (and may resume it elsewhere)
    mirrored: int = 0  # the last sequence number copied to a shared event log
    copier: Callable[[EventStream], Awaitable[None]] | None = None  # copies it there (a shared backend's writer)

    def append(self, data: bytes, answer: bool = False) -> Event:
        owner = self.owner
        if owner is not None:
            data = bytes(memoryview(data))  # a kept event holds its bytes, not the encoder's whole buffer
            owner.total_events += 1
            owner.total_bytes += len(data)
            owner.budget.total_bytes += len(data)
        event = Event(f"{self.id}-{next(self._seq)}", data, answer)
        self.events.append(event)
        self.size += len(data)
        self._wake()
        return event

    def finish(self) -> None:
        """No more events will come (all responses were sent)."""
        if not self.finished:
            self.finished = True
            self.finished_at = time.monotonic()
        self._wake()

    def discard(self) -> None:
        """Its reply was written whole: kept only among the session's last few such streams (a connection
        that broke mid-body can still resume), within the grace."""
        if self.owner is not None:
            self.owner.written(self)

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
        """The absolute position just after `event_id`: below `dropped` when the events after it were
        forgotten; the oldest kept when it is None or names no event this stream has had."""
        if event_id is None:
            return self.dropped
        stream_id, _, seq = event_id.rpartition("-")
        if stream_id != self.id or not seq.isdigit() or int(seq) > self.dropped + len(self.events):
            return self.dropped
        return int(seq)

    def forget_oldest(self, count: int) -> None:
        freed = sum(len(e.data) for e in self.events[:count])
        self.size -= freed
        del self.events[:count]
        self.dropped += count
        if self.owner is not None:
            self.owner.total_events -= count
            self.owner.total_bytes -= freed
            self.owner.budget.total_bytes -= freed

    async def follow_chunks(self, start: int = 0) -> AsyncIterator[list[Event]]:
        """Like `follow`, but yields every event available at once as one list (fewer writes).

        A kept stream (one a client can resume) ends when its follower fell so far behind that events it
        has not had were forgotten: the client resumes from the last event it got and learns of the gap.
        """
        position = max(start, self.dropped)
        self.consumers += 1
        try:
            while True:
                offset = position - self.dropped
                if offset < 0 and self.owner is not None:
                    logger.warning("stream %s: %d events a client had not had yet were forgotten; ending its response",
                                   self.id, -offset)
                    return
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
    """All resumable event streams of one session, bounded (see the module docstring)."""

    def __init__(self, max_events: int = MAX_EVENTS_PER_SESSION, max_bytes: int = MAX_BYTES_PER_SESSION,
                 budget: StoreBudget | None = None, prefix: str = "s", grace: float = RESUME_GRACE) -> None:
        self.streams: dict[str, EventStream] = {}
        self._ids = itertools.count(1)
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.budget = budget if budget is not None else StoreBudget()
        self.prefix = prefix  # stream ids unique across the processes that share a session
        self.grace = grace
        self.total_events = 0
        self.total_bytes = 0
        self._written: deque[str] = deque()
        self._json_ids = itertools.count(1)

    def open(self, stream_id: str | None = None, resumable: bool = True) -> EventStream:
        """A new stream; one that is not `resumable` (a JSON reply) is not kept at all."""
        if not resumable:
            return EventStream(stream_id or f"j{next(self._json_ids)}")
        stream = EventStream(stream_id or f"{self.prefix}{next(self._ids)}", owner=self)
        self.streams[stream.id] = stream
        if self.streams and (self.total_events > self.max_events or self.total_bytes > self.max_bytes
                             or len(self.streams) > 1):
            self._trim()
        return stream

    def written(self, stream: EventStream) -> None:
        """`stream`'s reply was written whole: keep it among the last `KEEP_WRITTEN` such, forget older ones."""
        self._written.append(stream.id)
        if len(self._written) > KEEP_WRITTEN:
            oldest = self.streams.get(self._written.popleft())
            if oldest is not None and oldest.finished:
                self.forget(oldest)

    def forget(self, stream: EventStream) -> None:
        """Drop `stream` and what it holds."""
        if self.streams.pop(stream.id, None) is stream:
            self.total_events -= len(stream.events)
            self.total_bytes -= stream.size
            self.budget.total_bytes -= stream.size
            stream.owner = None

    def find_event(self, event_id: str) -> tuple[EventStream, int] | None:
        stream_id = event_id.rsplit("-", 1)[0]
        stream = self.streams.get(stream_id)
        if stream is None:
            return None
        return stream, stream.index_after(event_id)

    def forgotten(self, event_id: str) -> bool:
        """Whether `event_id` names a stream of this store that was complete and is forgotten."""
        stream_id = event_id.rsplit("-", 1)[0]
        number = stream_id[len(self.prefix):]
        if not stream_id.startswith(self.prefix) or not number.isdigit() or stream_id in self.streams:
            return False
        return 0 < int(number) < next(self._peek())

    def _peek(self) -> itertools.count:
        upcoming = next(self._ids)
        self._ids = itertools.count(upcoming)
        return itertools.count(upcoming)

    def _trim(self) -> None:
        """Forget finished streams past their grace, and the oldest finished ones while over a budget.

        Streams in progress stay. Walks from the oldest and stops at the first finished stream
        still within its grace once every budget is met: no copy of the whole table per request.
        """
        now = time.monotonic()
        budget = self.budget
        for stream in list(self.streams.values()):
            over = self.total_events > self.max_events or self.total_bytes > self.max_bytes or budget.over()
            if not stream.finished or stream.id == "standalone":
                continue
            if stream.consumers and not over:
                continue
            if over or now - stream.finished_at > self.grace:
                if budget.over():
                    budget.warn_once()
                self.forget(stream)
            else:
                break
        standalone = self.streams.get("standalone")
        if standalone is not None and len(standalone.events) > self.max_events:
            standalone.forget_oldest(len(standalone.events) - self.max_events // 2)
