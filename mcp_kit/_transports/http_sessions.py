"""The session table of the HTTP app: who is connected, through which transport, and until when.

- `streamable`: Streamable HTTP sessions by `Mcp-Session-Id` (each a `Served`: connection,
  dispatcher, `StreamableWriter`, last activity); an idle one expires after `session_ttl`.
- `legacy`: legacy HTTP+SSE sessions by `session_id`; each ends with its `/sse` stream.
- `stateless`: 2026-07-28 requests in flight, each on a connection of its own for one exchange.

All three count against `max_sessions`. The table opens connections only while the app runs
(its lifespan), and on the way out closes every connection and waits, boundedly, for their tasks.
Expiry waits on deadlines and on the table changing, never on a polling interval.

With a shared backend (`backend.shared`, see `mcp_kit._backends`) a session is served by any
process: `find` renews the session's record in the registry on each request and continues a
session another process opened (`open_streamable(record=...)`); a record change is saved
before the answer leaves (`Connection.on_change`) and announced on the bus, so copies on other
processes refresh; SSE replies are copied into the event log for resumption elsewhere; an
answer to a server->client request that lands here is relayed to the process waiting for it; a
legacy POST for a `/sse` stream held elsewhere is relayed to its holder. With the in-memory
backend none of this runs.

Must not import: session, server, or anything MCP.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import orjson
from anyio.abc import TaskGroup

from .._backends import Backend, BackendUnavailable, MemoryBackend
from .._protocol.dispatcher import MessageWriter
from .._protocol.jsonrpc import INTERNAL_ERROR, ErrorResponse, JSONRPCError, Response, decode_message, encode_message
from ..auth._principal import Owner, may_use, owner_from_record, principal_from_dict
from .connection import ConnectionFactory, Served, open_connection
from .event_streams import StoreBudget
from .http_options import HttpOptions
from .http_writer import StreamableWriter

logger = logging.getLogger("mcp_kit.http")


class SessionTable:
    """Connections of the HTTP app, bounded by `max_sessions`."""

    def __init__(self, factory: ConnectionFactory, options: HttpOptions, backend: Backend | None = None) -> None:
        self.factory = factory
        self.options = options
        self.backend: Backend = backend if backend is not None else MemoryBackend()
        self.shared = self.backend.shared
        self.budget = StoreBudget()  # bytes every session's event store holds, bounded per server
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
            if self.shared:
                self._listen_on_bus()
                tg.start_soon(self._renew_legacy_holders)
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

    def open_streamable(self, record: bytes | None = None) -> Served:
        """A new Streamable HTTP session, registered under its id (continuing `record`, a shared backend's)."""
        if not self.shared:
            served = self.open(StreamableWriter(budget=self.budget))
        else:
            if self._tg is None:
                raise RuntimeError("the MCP HTTP app is not running: serve it with its lifespan (see MCPServer.asgi)")
            writer = StreamableWriter(budget=self.budget, prefix=f"s{self.backend.process_id}x")
            writer.holds_standalone = False  # until a GET stream opens on this process
            state, owner = _unpack(record)
            served = open_connection(self.factory, writer, state)
            served.record = record
            served.owner = owner
            self._share(served, writer)
        self.streamable[served.session_id] = served
        self._opened.set()
        return served

    async def find(self, session_id: str, caller: object | None = None) -> Served | None:
        """The Streamable HTTP session `session_id`, here or (shared backend) recorded by another process.

        None when unknown, or when it is not held here yet and `caller` (the request's AccessToken,
        None without OAuth) may not use it (`principal.may_use`); raises BackendUnavailable when the registry does not
        answer, and JSONRPCError when
        this process cannot take one more session.
        """
        served = self.touch(session_id)
        if not self.shared:
            return served
        record = await self.backend.load_session(session_id, self.options.session_ttl)
        if record is None:
            if served is not None:
                self.end_streamable(session_id)
            return None
        if served is None:
            if not may_use(_unpack(record)[1], caller):  # another caller's session: not opened here for them
                return None
            if self.full():
                raise JSONRPCError(INTERNAL_ERROR, "too many sessions on this process")
            return self.open_streamable(record)
        if record != served.record:
            state, served.owner = _unpack(record)
            served.record = record
            if state is not None:
                served.connection.restore(state)
        return served

    def _share(self, served: Served, writer: StreamableWriter) -> None:
        """Wire a session to the shared backend: persist its record, mirror its streams, relay answers."""
        backend = self.backend
        session_id = served.session_id

        async def persist() -> None:
            record = _pack(served)
            if record == served.record:
                return
            try:
                await backend.save_session(session_id, record, self.options.session_ttl)
                served.record = record
                await backend.publish("s", {"sid": session_id})
            except BackendUnavailable as exc:
                raise JSONRPCError(INTERNAL_ERROR, f"The session store is unavailable ({exc}); the change was not "
                                   "saved. Retry in a few seconds.", {"retryAfter": 2}) from None

        async def mirror(stream_id: str, events: list[tuple[int, bytes]], finished: bool) -> None:
            try:
                await backend.append_events(session_id, stream_id, events, finished)
            except BackendUnavailable as exc:
                logger.warning(
                    "session %s: stream %s not copied for resumption elsewhere: %s", session_id, stream_id, exc
                )

        served.connection.on_change = persist
        writer.mirror = mirror
        served.dispatcher.id_prefix = f"s{backend.process_id}x"
        served.dispatcher.on_unknown_reply = lambda reply: self._relay("r", session_id, encode_message(reply))

    def _relay(self, kind: str, session_id: str, body: bytes) -> None:
        if self._tg is not None:
            self._tg.start_soon(self._publish, kind, session_id, body)

    async def _publish(self, kind: str, session_id: str, body: bytes) -> None:
        try:
            await self.backend.publish(kind, {"sid": session_id, "body": body.decode()})
        except BackendUnavailable as exc:
            logger.warning("session %s: dropped a message for another process (%s): %s", session_id, kind, exc)

    def _listen_on_bus(self) -> None:
        self.backend.on("s", self._on_state_changed)
        self.backend.on("e", self._on_ended)
        self.backend.on("r", self._on_reply)
        self.backend.on("m", self._on_legacy_message)

    def _on_state_changed(self, message: dict[str, Any]) -> None:
        session_id = str(message.get("sid"))
        if session_id in self.streamable and self._tg is not None:
            self._tg.start_soon(self._refresh, session_id)

    async def _refresh(self, session_id: str) -> None:
        try:
            await self.find(session_id)
        except (BackendUnavailable, JSONRPCError) as exc:
            logger.warning("session %s: not refreshed: %s", session_id, exc)

    def _on_ended(self, message: dict[str, Any]) -> None:
        self.end_streamable(str(message.get("sid")))

    def _on_reply(self, message: dict[str, Any]) -> None:
        session_id = str(message.get("sid"))
        served = self.streamable.get(session_id) or self.legacy.get(session_id)
        reply = decode_message(str(message.get("body", "")).encode())
        if served is not None and isinstance(reply, (Response, ErrorResponse)):
            served.dispatcher.deliver_reply(reply)

    def _on_legacy_message(self, message: dict[str, Any]) -> None:
        served = self.legacy.get(str(message.get("sid")))
        if served is None or self._tg is None:
            return
        relayed = message.get("principal")
        principal = principal_from_dict(relayed) if isinstance(relayed, dict) else None
        if not may_use(served.owner, principal):  # checked where it landed too
            logger.warning("legacy session %s: a relayed message from another caller dropped", served.session_id)
            return
        decoded = decode_message(str(message.get("body", "")).encode())
        if not served.dispatcher.refuse(decoded):  # past the session's maximum in flight its requests are refused
            self._tg.start_soon(functools.partial(served.dispatcher.feed, decoded, principal=principal))

    async def end_everywhere(self, session_id: str) -> None:
        """DELETE: end the session here, in the registry and (through the bus) on every process."""
        self.end_streamable(session_id)
        if self.shared:
            await self.backend.delete_session(session_id)
            await self.backend.publish("e", {"sid": session_id})

    def forget_holder(self, kind: str, session_id: str) -> None:
        """This process no longer holds `session_id`'s stream of `kind` (dropped in the background)."""
        if self._tg is not None:
            self._tg.start_soon(self._drop_holder, kind, session_id)

    async def _drop_holder(self, kind: str, session_id: str) -> None:
        try:
            await self.backend.drop_holder(kind, session_id)
        except BackendUnavailable as exc:
            logger.warning("%s session %s: holder record left to expire: %s", kind, session_id, exc)

    async def _renew_legacy_holders(self) -> None:
        """Keep the records of the legacy `/sse` streams held here alive (they lapse if this process dies)."""
        while True:
            await anyio.sleep(30)
            for session_id in list(self.legacy):
                try:
                    await self.backend.set_holder("legacy", session_id, 90)
                except BackendUnavailable as exc:
                    logger.warning("legacy session %s: holder record not renewed: %s", session_id, exc)

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


OWNER_KEY = "_owner"  # beside the session's own record: the OAuth identity it is bound to, [issuer, kind, id]


def _pack(served: Served) -> bytes:
    """The shared record of a session: its state, and the identity that opened it (when it came with OAuth),
    so that every process refuses another caller's requests as the opening process does."""
    record = dict(served.connection.record())
    if served.owner is not None:
        record[OWNER_KEY] = list(served.owner)
    return orjson.dumps(record)


def _unpack(record: bytes | None) -> tuple[dict[str, Any] | None, Owner | None]:
    """A shared record's session state and owner (see `_pack`; an owner of another shape matches nobody)."""
    if record is None:
        return None, None
    state = orjson.loads(record)
    return state, owner_from_record(state.pop(OWNER_KEY, None))
