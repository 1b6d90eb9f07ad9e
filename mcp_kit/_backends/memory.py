"""The in-memory backend: one process, nothing shared, nothing to install (the default).

The transports look at `shared` and skip the backend on the hot path; what they would share
stays in the process's own objects (the session table, event streams, the subscription hub).
The methods below exist so code written against `Backend` runs unchanged on one process.
Token buckets and the key-value store do hold state here, bounded: at most `MAX_BUCKETS`
buckets and `MAX_ENTRIES` values (`MAX_BYTES` in all), the least recently used forgotten first
(a forgotten bucket is full again). Values written with `evictable=False` (the OAuth facade's
registrations, grants, refresh-token families, its signing key) are never forgotten to make room:
they are kept apart, at most `MAX_KEPT_ENTRIES` (`MAX_KEPT_BYTES` in all), and a write past that is
refused with `StoreLimitExceeded` (limit "store") once expired ones have made what room they can.
`clock` (seconds, monotonic) is what they measure time with.

Must not import anything of mcp_kit outside `backends`.
"""

from __future__ import annotations

import os
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from .base import (
    DEFAULT_MAX_KEYS,
    DEFAULT_MAX_VALUE_BYTES,
    BusHandler,
    InvalidationHandler,
    StoreLimitExceeded,
    Take,
    check_value,
    namespace_full,
)

MAX_BUCKETS = 100_000
MAX_ENTRIES = 10_000
MAX_BYTES = 64 * 1024 * 1024
MAX_KEPT_ENTRIES = 100_000  # values that are never evicted (evictable=False): past these, writes are refused
MAX_KEPT_BYTES = 64 * 1024 * 1024
KEPT_SWEEP_INTERVAL = 1.0  # seconds between two sweeps of expired kept values while the kept store is full


class MemoryBackend:
    """Everything in this process (see the module docstring)."""

    shared = False
    url = "memory"

    def __init__(self) -> None:
        self.process_id = uuid.uuid4().hex[:8]
        self._sessions: dict[str, bytes] = {}
        self._holders: dict[tuple[str, str], str] = {}
        self._secret = os.urandom(32)
        self.clock: Callable[[], float] = time.monotonic
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # name -> (tokens, at)
        self._values: OrderedDict[tuple[str, str], tuple[float, bytes]] = OrderedDict()  # -> (expires at, value)
        self._kept: dict[tuple[str, str], tuple[float, bytes]] = {}  # evictable=False: -> (expires at, value)
        self._keys: dict[str, set[str]] = {}  # namespace -> its keys (evictable or not)
        self._bytes = 0
        self._kept_bytes = 0
        self._next_kept_sweep = 0.0

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

    # ------------------------------------------------------------------ token buckets

    async def take(self, bucket: str, rate: float, burst: float, cost: float = 1.0) -> Take:
        now = self.clock()
        tokens, at = self._buckets.pop(bucket, (burst, now))
        tokens = min(burst, tokens + max(0.0, now - at) * rate)
        if tokens >= cost:
            tokens -= cost
            allowed, wait = True, 0.0
        else:
            allowed, wait = False, (cost - tokens) / rate
        if tokens < burst:  # a full bucket is the same as none
            self._buckets[bucket] = (tokens, now)
            while len(self._buckets) > MAX_BUCKETS:
                self._buckets.popitem(last=False)
        return Take(allowed, tokens, wait)

    # ------------------------------------------------------------------ key-value store

    async def kv_get(self, namespace: str, key: str) -> bytes | None:
        entry = self._values.get((namespace, key)) or self._kept.get((namespace, key))
        if entry is None:
            return None
        if entry[0] <= self.clock():
            self._drop(namespace, key)
            return None
        if (namespace, key) in self._values:
            self._values.move_to_end((namespace, key))
        return entry[1]

    async def kv_set(self, namespace: str, key: str, value: bytes, ttl: float, *, only_new: bool = False,
                     max_value: int = DEFAULT_MAX_VALUE_BYTES, max_keys: int = DEFAULT_MAX_KEYS,
                     evictable: bool = True) -> bool:
        check_value(namespace, key, value, max_value)
        if only_new and await self.kv_get(namespace, key) is not None:
            return False
        keys = self._keys.get(namespace, set())
        if key not in keys and len(keys) >= max_keys:
            now = self.clock()
            for stale in [k for k in keys if self._entry(namespace, k)[0] <= now]:
                self._drop(namespace, stale)
            if len(self._keys.get(namespace, ())) >= max_keys:
                raise namespace_full(namespace, max_keys)
        self._drop(namespace, key)
        if not evictable:
            self._make_kept_room(len(value))
            self._kept[namespace, key] = (self.clock() + ttl, value)
            self._keys.setdefault(namespace, set()).add(key)
            self._kept_bytes += len(value)
            return True
        self._values[namespace, key] = (self.clock() + ttl, value)
        self._keys.setdefault(namespace, set()).add(key)
        self._bytes += len(value)
        while len(self._values) > MAX_ENTRIES or self._bytes > MAX_BYTES:
            (old_namespace, old_key), _ = next(iter(self._values.items()))
            self._drop(old_namespace, old_key)
        return True

    def _entry(self, namespace: str, key: str) -> tuple[float, bytes]:
        return self._values.get((namespace, key)) or self._kept[namespace, key]

    def _make_kept_room(self, size: int) -> None:
        """Room for one more kept value of `size` bytes, from expired ones; StoreLimitExceeded when there is none."""
        def full() -> bool:
            return len(self._kept) >= MAX_KEPT_ENTRIES or self._kept_bytes + size > MAX_KEPT_BYTES

        now = self.clock()
        if full() and now >= self._next_kept_sweep:
            self._next_kept_sweep = now + KEPT_SWEEP_INTERVAL
            for namespace, key in [k for k, (expires, _) in self._kept.items() if expires <= now]:
                self._drop(namespace, key)
        if full():
            raise StoreLimitExceeded(f"the in-memory store already keeps {len(self._kept)} values that are never "
                                     f"evicted ({self._kept_bytes} bytes; at most {MAX_KEPT_ENTRIES} values, "
                                     f"{MAX_KEPT_BYTES} bytes); let some expire, or use a Redis backend",
                                     limit="store", bound=MAX_KEPT_ENTRIES)

    async def kv_take(self, namespace: str, key: str) -> bytes | None:
        value = await self.kv_get(namespace, key)
        self._drop(namespace, key)
        return value

    async def kv_delete(self, namespace: str, key: str) -> None:
        self._drop(namespace, key)

    async def kv_clear(self, namespace: str) -> None:
        for key in list(self._keys.get(namespace, ())):
            self._drop(namespace, key)

    def _drop(self, namespace: str, key: str) -> None:
        entry = self._values.pop((namespace, key), None)
        if entry is not None:
            self._bytes -= len(entry[1])
        else:
            entry = self._kept.pop((namespace, key), None)
            if entry is None:
                return
            self._kept_bytes -= len(entry[1])
        keys = self._keys[namespace]
        keys.discard(key)
        if not keys:
            del self._keys[namespace]

    async def invalidate(self, namespace: str) -> None:
        await self.kv_clear(namespace)  # no other process to tell

    def on_invalidate(self, handler: InvalidationHandler) -> None:
        return None
