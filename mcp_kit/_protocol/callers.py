"""Who is calling: one identity per caller, what the transport knows of a request, and a per-caller counter.

`caller_identity` is the one rule for who a caller is; per-caller limits (a caller's live tasks,
`tasks/_store.py`; the rate limits, `middleware/_rate_limit.py`), private cache entries and user state
key on it:

1. an OAuth-authenticated request: its token's canonical identity (issuer, kind, id: the same triple
   that owns sessions, `auth/_principal.py`), as `principal:["<issuer>","sub","<subject>"]` — a user
   whose subject reads like a client id can never pass for that client;
2. else a request on a lasting session: `session:<id>`, i.e. a handshake-era session (Streamable HTTP's
   `Mcp-Session-Id`, legacy SSE, stdio), or the stdio (or in-memory) connection that carries 2026-07-28
   requests, whose one peer is the client process;
3. else, 2026-07-28 over HTTP, where every request is its own connection: the client's network address
   as the ASGI server reports it, `address:<ip>` (an IPv6 address stands for its /64, the block one
   host usually holds). Behind a reverse proxy that is the proxy's address, shared by every client,
   unless the ASGI server rewrites it from forwarded headers it trusts (uvicorn `--proxy-headers
   --forwarded-allow-ips=<proxy>`); forwarded headers are never read here, since a client can write
   any. An ASGI server that reports no address (a Unix socket) gives `address:unknown`.

What the transport knows travels in context variables, set by the HTTP endpoint before it feeds the
dispatcher (whose request tasks copy the context, so every handler of that request, and nothing else,
sees them); a client cannot set either, they are never part of a message:
- the client's address (`client_address_scope`, `current_client_address`), None off HTTP;
- `ADMITTED`: the rate limits the HTTP transport already counted this lone request against before
  dispatching it (where it could still answer 429); those do not count it again.

`CallerCounter` counts, per caller, entries that lapse at a time of their own (a task until its TTL
ends) and refuses an entry past a limit. `InMemoryCallerCounter` is one process's; the Redis one
(`_backends/redis_counter.py`) makes the limit hold across processes.

Imports nothing from mcp_kit but `versions`.
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import ipaddress
import json
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from .versions import is_stateless

UNKNOWN_ADDRESS = "unknown"

_client_address: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcp_kit_client_address", default=None)
ADMITTED: contextvars.ContextVar[tuple[object, ...]] = contextvars.ContextVar("mcp_kit_rate_admitted", default=())


def client_address_of(asgi_scope: Mapping[str, Any]) -> str:
    """The client's address as the ASGI server reports it (`scope["client"]`), "unknown" when it reports none."""
    client = asgi_scope.get("client")
    host = client[0] if isinstance(client, (tuple, list)) and client else None
    return host if isinstance(host, str) and host else UNKNOWN_ADDRESS


def record_client_address(asgi_scope: Mapping[str, Any]) -> None:
    """Set the client's address for the rest of the current context (the HTTP request's task and what it starts)."""
    _client_address.set(client_address_of(asgi_scope))


@contextlib.contextmanager
def client_address_scope(address: str) -> Iterator[None]:
    """Within the block (and in tasks started from it), `current_client_address()` is `address`."""
    token = _client_address.set(address)
    try:
        yield
    finally:
        _client_address.reset(token)


def current_client_address() -> str | None:
    """The address the HTTP transport recorded for the request being served; None off HTTP."""
    return _client_address.get()


def network_of(address: str) -> str:
    """The identity an address stands for: an IPv4 address itself, an IPv6 address its /64."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:100]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def principal_key(principal: object | None) -> str | None:
    """An OAuth caller's canonical identity as one string (None without a principal that names someone)."""
    identity = getattr(principal, "identity", None)  # (issuer, kind, id): AccessToken.identity
    if identity is None:
        return None
    return "principal:" + json.dumps(list(identity), separators=(",", ":"))


def caller_identity(principal: object | None, session_id: str | None, stateless: bool) -> str:
    """The caller's identity (see the module docstring): `stateless` for a 2026-07-28 request, whose
    HTTP exchange is a connection of its own, so the client's address names it there."""
    key = principal_key(principal)
    if key is not None:
        return key
    if stateless or session_id is None:
        address = current_client_address()
        if address is not None:
            return f"address:{network_of(address)}"
    return f"session:{session_id}"


def caller_of(ctx: Any) -> str:
    """The identity of the caller of the request `ctx` (a `Context`) serves."""
    return caller_identity(ctx.principal, ctx.session_id, is_stateless(ctx.protocol_version))


class CallerCounter(Protocol):
    """Entries per caller, each counted until its own expiry time; at most `limit` at once per caller."""

    async def acquire(self, caller: str, entry: str, *, until_ms: int, limit: int, now_ms: int) -> int | None:
        """Count `entry` for `caller` until `until_ms`: None when counted (or already counted). When the
        caller already holds `limit` live entries, nothing changes and the answer is when its earliest
        entry lapses (ms since the epoch), which is when it has room again."""
        ...

    async def release(self, caller: str, entry: str) -> None:
        """Stop counting `entry` (it ended before its time)."""
        ...

    async def count(self, caller: str, now_ms: int) -> int:
        """How many live entries `caller` holds."""
        ...


class InMemoryCallerCounter:
    """A `CallerCounter` in this process's memory. Each method completes without suspending, so on
    one event loop it is atomic; the `*_now` forms are the same operations for synchronous callers."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, int]] = {}  # caller -> entry -> until_ms
        self._expiry: list[tuple[int, str, str]] = []  # (until_ms, caller, entry): lapsed entries go in O(log n)

    def acquire_now(self, caller: str, entry: str, *, until_ms: int, limit: int, now_ms: int) -> int | None:
        self._purge(now_ms)
        held = self._entries.get(caller)
        if held is not None and entry in held:
            return None
        if held is not None and len(held) >= limit:
            return min(held.values())
        self._entries.setdefault(caller, {})[entry] = until_ms
        heapq.heappush(self._expiry, (until_ms, caller, entry))
        return None

    def release_now(self, caller: str, entry: str) -> None:
        held = self._entries.get(caller)
        if held is not None and held.pop(entry, None) is not None and not held:
            del self._entries[caller]

    def count_now(self, caller: str, now_ms: int) -> int:
        self._purge(now_ms)
        return len(self._entries.get(caller, ()))

    async def acquire(self, caller: str, entry: str, *, until_ms: int, limit: int, now_ms: int) -> int | None:
        return self.acquire_now(caller, entry, until_ms=until_ms, limit=limit, now_ms=now_ms)

    async def release(self, caller: str, entry: str) -> None:
        self.release_now(caller, entry)

    async def count(self, caller: str, now_ms: int) -> int:
        return self.count_now(caller, now_ms)

    def _purge(self, now_ms: int) -> None:
        while self._expiry and self._expiry[0][0] <= now_ms:
            until_ms, caller, entry = heapq.heappop(self._expiry)
            held = self._entries.get(caller)
            if held is not None and held.get(entry) == until_ms:
                self.release_now(caller, entry)
