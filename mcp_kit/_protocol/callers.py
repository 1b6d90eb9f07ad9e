"""Who is calling, for per-caller limits: one identity per caller, and a counter of what each caller holds.

`caller_identity` names the caller of a request. Per-caller limits key on it (the live tasks of a
caller, `tasks/store.py`; the request pipeline's rate limits use the same function):

- an OAuth-authenticated request: its token's issuer and subject, `principal:<issuer>|<subject>`
  (`client:<client id>` for a token without a subject), whatever connection it arrives on;
- else a request on a lasting session: `session:<id>`, i.e. a handshake-era session (Streamable
  HTTP's `Mcp-Session-Id`, legacy SSE, stdio), or the stdio (or in-memory) connection that carries
  2026-07-28 requests, whose one peer is the client process;
- else, 2026-07-28 over HTTP, where every request is its own connection: the client's network
  address as the ASGI server reports it, `address:<ip>` (an IPv6 address stands for its /64, the
  block one host usually holds). Behind a reverse proxy that is the proxy's address, shared by
  every client, unless the ASGI server rewrites it from forwarded headers it trusts (uvicorn
  `--proxy-headers --forwarded-allow-ips=<proxy>`); forwarded headers are never read here, since a
  client can write any. An ASGI server that reports no address (a Unix socket) gives
  `address:unknown`, one identity for all such callers.

The HTTP transport records the address for the request it dispatches with `client_address_scope`
(a context variable: the request's task, created while it is set, inherits it); elsewhere it is
None.

`CallerCounter` counts, per caller, entries that lapse at a time of their own (a task until its
TTL ends; a request until its rate window passes) and refuses an entry past a limit.
`InMemoryCallerCounter` is one process's; the Redis one (`backends/redis_counter.py`) makes the
limit hold across processes.

Imports nothing from mcp_kit but `versions`.
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import ipaddress
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from .versions import is_stateless

UNKNOWN_ADDRESS = "unknown"

_client_address: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcp_kit_client_address", default=None)


def client_address_of(asgi_scope: Mapping[str, Any]) -> str:
    """The client's address as the ASGI server reports it (`scope["client"]`), "unknown" when it reports none."""
    client = asgi_scope.get("client")
    host = client[0] if isinstance(client, (tuple, list)) and client else None
    return host if isinstance(host, str) and host else UNKNOWN_ADDRESS


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


def caller_identity(principal: object | None, session_id: str, address: str | None) -> str:
    """The caller's identity (see the module docstring).

    `address` is the client's network address when the request is a connection of its own
    (2026-07-28 over HTTP), else None: then the session, which outlives the request, names it.
    """
    subject = getattr(principal, "subject", None)
    client_id = getattr(principal, "client_id", None)
    if principal is not None and (subject or client_id):
        who = subject if subject else f"client:{client_id}"
        return f"principal:{getattr(principal, 'issuer', '') or ''}|{who}"
    if address is None:
        return f"session:{session_id}"
    return f"address:{network_of(address)}"


def caller_of(ctx: Any) -> str:
    """The identity of the caller of the request `ctx` (a `Context`) serves."""
    address = current_client_address() if is_stateless(ctx.protocol_version) else None
    return caller_identity(ctx.principal, ctx.session_id, address)


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
