"""The outbound port: what an MCP session may ask of the connection that carries it.

A session never builds or reaches into its connection. Whoever serves the connection (the stdio
runner, an HTTP transport, `mcp_kit.testing`) builds the dispatcher and hands it to the session as
this port; `Dispatcher` implements it. Another implementation (one that relays to the process
holding a client's stream) can stand in for it without the session noticing.

Imports nothing from mcp_kit but `jsonrpc`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from .._protocol.jsonrpc import RequestId


class OutboundPort(Protocol):
    """Messages to the peer, background work and request state of one connection."""

    async def notify(self, method: str, params: dict[str, Any] | None = None,
                     related_to: RequestId | None = None) -> None:
        """Send a notification; `related_to` names the inbound request it belongs to."""
        ...

    def post(self, method: str, params: dict[str, Any] | None = None, related_to: RequestId | None = None) -> None:
        """Send a notification without waiting (from synchronous code); failures are logged."""
        ...

    async def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = 60.0,
                      related_to: RequestId | None = None) -> Any:
        """Ask the peer and wait for its answer; raises JSONRPCError (its refusal) or TimeoutError."""
        ...

    def start_soon(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run background work of this connection; it is cancelled when the connection closes."""
        ...

    def was_cancelled(self, request_id: RequestId) -> bool:
        """Whether the peer cancelled the inbound request `request_id`, which is still in flight."""
        ...

    def close_stream(self, request_id: RequestId) -> bool:
        """End the transport stream carrying `request_id` now (the client resumes it); False when there is none."""
        ...
