"""The backend protocols, one per concern, and the error a backend raises when it cannot answer.

Every call is bounded: a backend that cannot answer within its timeout raises
`BackendUnavailable` (the HTTP transport turns it into 503 with `Retry-After`, a request into a
JSON-RPC error), never hangs. Records and payloads are bytes (JSON), so the protocols hold no
objects of the layers above.

Must not import anything of mcp_kit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .._errors import MCPKitError

RETRY_AFTER_SECONDS = 2  # what a 503 caused by an unreachable backend tells clients
DEFAULT_MAX_VALUE_BYTES = 64 * 1024  # a key-value store's largest value, unless the caller says otherwise
DEFAULT_MAX_KEYS = 1000  # keys one namespace of a key-value store holds, unless the caller says otherwise


class BackendUnavailable(MCPKitError):
    """The shared backend did not answer in time (or refused); the message says which operation."""


class StoreLimitExceeded(MCPKitError):
    """A key-value store refused a write: the value is over its size, or its namespace (or store) is full.

    `limit` names which ("value", "namespace", or "store": the in-memory store's values that are never
    evicted), `bound` the number it is over (bytes or keys).
    """

    def __init__(self, message: str, *, limit: str, bound: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.bound = bound


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


@dataclass(frozen=True)
class Take:
    """What taking tokens from a bucket did: `allowed`, the tokens left, and (refused) the seconds until
    enough are back."""

    allowed: bool
    remaining: float
    retry_after: float


class TokenBuckets(Protocol):
    """Token buckets by name, each taken from atomically, so every process shares one bucket per name."""

    async def take(self, bucket: str, rate: float, burst: float, cost: float = 1.0) -> Take:
        """Take `cost` tokens from `bucket`, refilled at `rate` tokens per second up to `burst` (a new
        bucket starts full); refused, nothing is taken. A bucket left idle until full is forgotten."""
        ...


class KeyValueStore(Protocol):
    """Small values (bytes) by (namespace, key), each with its own TTL; a namespace is cleared at once.

    Bounded: a value over `max_value` bytes, or a new key in a namespace already holding `max_keys`
    live keys, raises `StoreLimitExceeded` and stores nothing. A store that forgets values to make room
    (the in-memory one) never forgets one written with `evictable=False`: past its own bound for those it
    refuses the write instead (`StoreLimitExceeded`, limit "store"), so nothing a caller relies on (a
    refresh token's family, a signing key) disappears silently.
    """

    async def kv_get(self, namespace: str, key: str) -> bytes | None:
        """The value, or None when it was never set, expired, or was deleted."""
        ...

    async def kv_set(self, namespace: str, key: str, value: bytes, ttl: float, *, only_new: bool = False,
                     max_value: int = DEFAULT_MAX_VALUE_BYTES, max_keys: int = DEFAULT_MAX_KEYS,
                     evictable: bool = True) -> bool:
        """Store `value` for `ttl` seconds; with `only_new`, only when `key` holds no live value (a claim, a
        lock). Whether it was stored."""
        ...

    async def kv_take(self, namespace: str, key: str) -> bytes | None:
        """The value, deleted in the same step (None when absent): of many callers at most one gets it
        (one-time codes, rotating tokens)."""
        ...

    async def kv_delete(self, namespace: str, key: str) -> None: ...

    async def kv_clear(self, namespace: str) -> None:
        """Forget every key of `namespace`."""
        ...


InvalidationHandler = Callable[[str], None]


class Invalidation(Protocol):
    """Telling every process a namespace of the key-value store is stale."""

    async def invalidate(self, namespace: str) -> None:
        """Clear `namespace` and publish it on the bus, so other processes' `on_invalidate` handlers hear it."""
        ...

    def on_invalidate(self, handler: InvalidationHandler) -> None:
        """Call `handler(namespace)` for every namespace another process invalidated."""
        ...


def check_value(namespace: str, key: str, value: bytes, max_value: int) -> None:
    """StoreLimitExceeded when `value` is over `max_value` bytes."""
    if len(value) > max_value:
        raise StoreLimitExceeded(f"a value of {len(value)} bytes is over the {max_value}-byte limit "
                                 f"({namespace[:100]} / {key[:100]})", limit="value", bound=max_value)


def namespace_full(namespace: str, max_keys: int) -> StoreLimitExceeded:
    return StoreLimitExceeded(f"{namespace[:100]} already holds {max_keys} keys, its limit; delete some or let them "
                              "expire", limit="namespace", bound=max_keys)


class Backend(SessionRegistry, EventLog, Bus, Leases, TokenBuckets, KeyValueStore, Invalidation, Protocol):
    """All concerns of one deployment. `shared` is False for the in-memory backend."""

    shared: bool
    process_id: str
    url: str

    async def start(self) -> None: ...

    async def aclose(self) -> None: ...

    async def shared_secret(self) -> bytes:
        """The request-state signing key every process of the deployment uses."""
        ...
