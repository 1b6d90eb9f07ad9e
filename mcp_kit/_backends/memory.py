"""The in-memory backend: one process, nothing shared, nothing to install (the default).

The transports look at `shared` and skip the backend on the hot path; what they would share
stays in the process's own objects (the session table, event streams, the subscription hub).
The methods below exist so code written against `Backend` runs unchanged on one process.

Must not import anything of mcp_kit outside `backends`.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from .base import BusHandler


class MemoryBackend:
    """Everything in this process (see the module docstring)."""

    shared = False
    url = "memory"

    def __init__(self) -> None:
        self.process_id = uuid.uuid4().hex[:8]
        self._sessions: dict[str, bytes] = {}
        self._holders: dict[tuple[str, str], str] = {}
        self._secret = os.urandom(32)
        self._values: dict[str, tuple[bytes, float | None]] = {}  # key -> (value, monotonic deadline)

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    async def load_session(self, session_id: str, ttl: float) -> bytes | None:
        return self._sessions.get(session_id)

    async def save_session(self, session_id: str, record: bytes, ttl: float) -> None:
        self._sessions[session_id] = record

    async def delete_session(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    async def set_holder(self, kind: str, session_id: str, ttl: float) -> None:
        self._holders[kind, session_id] = self.process_id

    async def holder(self, kind: str, session_id: str) -> str | None:
        return self._holders.get((kind, session_id))

    async def drop_holder(self, kind: str, session_id: str) -> None:
        self._holders.pop((kind, session_id), None)

    async def append_events(self, session_id: str, stream_id: str, events: list[tuple[int, bytes]],
                            finished: bool = False) -> None:
        return None  # the process's own event streams are the store

    async def read_events(self, session_id: str, stream_id: str, after: int, wait: float
                          ) -> tuple[list[tuple[int, bytes]], bool, bool]:
        return [], False, False

    async def publish(self, kind: str, payload: dict[str, Any]) -> None:
        return None  # no other process to tell

    def on(self, kind: str, handler: BusHandler) -> None:
        return None

    async def run_exclusive(self, name: str, work: Callable[[], Awaitable[None]], standby: Callable[[], None]) -> None:
        await work()

    async def shared_secret(self) -> bytes:
        return self._secret

    # ------------------------------------------------------------------ key-value records

    def _live(self, key: str) -> bytes | None:
        found = self._values.get(key)
        if found is None:
            return None
        value, deadline = found
        if deadline is not None and time.monotonic() >= deadline:
            del self._values[key]
            return None
        return value

    async def kv_put(self, key: str, value: bytes, ttl: float | None, *, only_new: bool = False) -> bool:
        if only_new and self._live(key) is not None:
            return False
        if len(self._values) > 4096:  # sweep lapsed records now and then, so abandoned keys do not pile up
            for stale in [k for k, (_, deadline) in self._values.items() if deadline and time.monotonic() >= deadline]:
                del self._values[stale]
        self._values[key] = (value, None if ttl is None else time.monotonic() + ttl)
        return True

    async def kv_get(self, key: str) -> bytes | None:
        return self._live(key)

    async def kv_take(self, key: str) -> bytes | None:
        value = self._live(key)
        self._values.pop(key, None)
        return value

    async def kv_delete(self, key: str) -> None:
        self._values.pop(key, None)
