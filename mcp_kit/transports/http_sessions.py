"""The session table of the HTTP app: who is connected, through which transport, and until when.

- `streamable`: Streamable HTTP sessions by `Mcp-Session-Id` (each a `Served`: connection,
  dispatcher, `StreamableWriter`, last activity); an idle one expires after `session_ttl`.
- `legacy`: legacy HTTP+SSE sessions by `session_id`; each ends with its `/sse` stream.
- `stateless`: 2026-07-28 requests in flight, each on a connection of its own for one exchange.

All three count against `max_sessions`. The table opens connections only while the app runs
(its lifespan), and on the way out closes every connection and waits, boundedly, for their tasks.
Expiry waits on deadlines and on the table changing, never on a polling interval.

Must not import: session, server, or anything MCP.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator

import anyio
from anyio.abc import TaskGroup

from ..dispatcher import MessageWriter
from .connection import ConnectionFactory, Served, open_connection
from .http_options import HttpOptions
from .http_writer import StreamableWriter

logger = logging.getLogger("mcp_kit.http")


class SessionTable:
    """Connections of the HTTP app, bounded by `max_sessions`."""

    def __init__(self, factory: ConnectionFactory, options: HttpOptions) -> None:
        self.factory = factory
        self.options = options
        self.streamable: dict[str, Served] = {}
        self.legacy: dict[str, Served] = {}
        self.stateless: set[Served] = set()
        self._tg: TaskGroup | None = None
        self._opened = anyio.Event()  # set when a Streamable HTTP session opens: expiry may have a new deadline

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Serve while inside: expire idle sessions; on the way out, close everything and wait for its tasks."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._expire_idle_sessions)
            try:
                yield
            finally:
                served = [*self.streamable.values(), *self.stateless, *self.legacy.values()]
                for entry in served:
                    entry.dispatcher.close()
                for entry in self.streamable.values():
                    entry.writer.close()
                self.streamable.clear()
                self.stateless.clear()
                self.legacy.clear()
                tg.cancel_scope.cancel()
                self._tg = None
                with anyio.CancelScope(shield=True):
                    for entry in served:  # every task of every connection has ended (each wait bounded)
                        await entry.dispatcher.aclose()

    def full(self) -> bool:
        """Whether `max_sessions` is reached: sessions of both transports plus stateless requests in flight."""
        return len(self.streamable) + len(self.legacy) + len(self.stateless) >= self.options.max_sessions

    def open(self, writer: MessageWriter) -> Served:
        """A new connection over `writer` (the app must be running: its lifespan started)."""
        if self._tg is None:
            raise RuntimeError("the MCP HTTP app is not running: serve it with its lifespan (see MCPServer.asgi)")
        return open_connection(self.factory, writer)

    def open_streamable(self) -> Served:
        """A new Streamable HTTP session, registered under its id."""
        served = self.open(StreamableWriter())
        self.streamable[served.session_id] = served
        self._opened.set()
        return served

    def touch(self, session_id: str) -> Served | None:
        """The Streamable HTTP session `session_id` (None when unknown), marked active now."""
        served = self.streamable.get(session_id)
        if served is not None:
            served.last_active = time.monotonic()
        return served

    def end_streamable(self, session_id: str) -> bool:
        """End a Streamable HTTP session (DELETE, expiry); False when there was none."""
        served = self.streamable.pop(session_id, None)
        if served is None:
            return False
        served.dispatcher.close()
        served.writer.close()
        return True

    async def _expire_idle_sessions(self) -> None:
        """End sessions idle for `session_ttl`, waking at the next deadline or when a session opens.

        A session still busy at its deadline (a request in flight, a client reading a stream) is
        looked at again a quarter of the TTL later (between 0.05 and 60 seconds).
        """
        ttl = self.options.session_ttl
        grace = max(0.05, min(60.0, ttl / 4))
        while True:
            now = time.monotonic()
            next_deadline = math.inf
            for session_id, served in list(self.streamable.items()):
                deadline = served.last_active + ttl
                if deadline <= now:
                    if not (served.dispatcher.in_flight or served.writer.busy()):
                        logger.info("session %s expired after %.0f s idle", session_id, ttl)
                        self.end_streamable(session_id)
                        continue
                    deadline = now + grace
                next_deadline = min(next_deadline, deadline)
            self._opened = anyio.Event()
            with anyio.move_on_after(next_deadline - now):
                await self._opened.wait()
