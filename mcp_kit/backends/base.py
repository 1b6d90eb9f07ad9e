"""The backend protocols, one per concern, and the error a backend raises when it cannot answer.

Every call is bounded: a backend that cannot answer within its timeout raises
`BackendUnavailable` (the HTTP transport turns it into 503 with `Retry-After`, a request into a
JSON-RPC error), never hangs. Records and payloads are bytes (JSON), so the protocols hold no
objects of the layers above.

Must not import anything of mcp_kit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

RETRY_AFTER_SECONDS = 2  # what a 503 caused by an unreachable backend tells clients


class BackendUnavailable(Exception):
    """The shared backend did not answer in time (or refused); the message says which operation."""


class SessionRegistry(Protocol):
    """Handshake-era session records (`SessionState.to_dict()` as JSON) by session id, with a TTL."""

    async def load_session(self, session_id: str, ttl: float) -> bytes | None:
        """The record, its TTL renewed; None when it does not exist (expired or deleted)."""
        ...

    async def save_session(self, session_id: str, record: bytes, ttl: float) -> None: ...

    async def delete_session(self, session_id: str) -> None: ...

    async def set_holder(self, kind: str, session_id: str, ttl: float) -> None:
        """Record that this process holds `session_id`'s stream of `kind` ("legacy")."""
        ...

    async def holder(self, kind: str, session_id: str) -> str | None:
        """The process holding that stream, or None."""
        ...

    async def drop_holder(self, kind: str, session_id: str) -> None: ...


class EventLog(Protocol):
    """Copies of resumable SSE streams, readable from any process: (seq, data) entries, then an end mark."""

    async def append_events(self, session_id: str, stream_id: str, events: list[tuple[int, bytes]],
                            finished: bool = False) -> None: ...

    async def read_events(self, session_id: str, stream_id: str, after: int, wait: float
                          ) -> tuple[list[tuple[int, bytes]], bool, bool]:
        """Entries with seq > `after` (waiting up to `wait` seconds for the first); (entries, finished, exists).

        A stream's sequence numbers run from 1 without gaps; a log that keeps only a stream's latest
        entries returns what it kept, so entries starting above `after + 1` tell the caller that the
        ones between are gone."""
        ...


BusHandler = Callable[[dict[str, Any]], None]


class Bus(Protocol):
    """Broadcast to every process of the deployment (the sender does not hear its own messages)."""

    async def publish(self, kind: str, payload: dict[str, Any]) -> None: ...

    def on(self, kind: str, handler: BusHandler) -> None:
        """Call `handler(payload)` for every message of `kind` from another process."""
        ...


class Leases(Protocol):
    async def run_exclusive(self, name: str, work: Callable[[], Awaitable[None]],
                            standby: Callable[[], None]) -> None:
        """Run `work` while holding lease `name`; wait for it while another process holds it."""
        ...


class Backend(SessionRegistry, EventLog, Bus, Leases, Protocol):
    """All concerns of one deployment. `shared` is False for the in-memory backend."""

    shared: bool
    process_id: str
    url: str

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...

    async def shared_secret(self) -> bytes:
        """The request-state signing key every process of the deployment uses."""
        ...
