"""The request scope: what a running request knows of its era and its client, and how it reaches them.

A request's era is decided once, where it enters the session (`_eras/session.py`), and the request
gets the scope of that era:

- `session.SessionChannel`, the handshake era (2024-11-05 ... 2025-11-25): one per session. It
  answers from the session record (negotiated version, client capabilities, log level) and asks
  the client with a round trip through the dispatcher.
- `stateless.StatelessChannel`, the 2026-07-28 era: one per request, from the request's own
  envelope. Questions to the client become an input-required round (`_eras/input_rounds.py`).

`Context` (what a handler sees) delegates to the scope, so nothing above this line asks which
era a request belongs to. Request-specific calls take the request id (a session scope serves
every request of its session).

Imports nothing from mcp_kit but `jsonrpc`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .._protocol.jsonrpc import RequestId

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class RequestChannel(Protocol):
    """One era's answers for a request: version, client, log threshold, and how to reach the client."""

    @property
    def session_id(self) -> str:
        """The session the request arrived on (a fresh id per request for stateless HTTP requests)."""
        ...

    @property
    def protocol_version(self) -> str: ...

    @property
    def client_capabilities(self) -> Mapping[str, Any]: ...

    @property
    def log_threshold(self) -> str | None:
        """The least severe level the client wants to receive; None: send it no log messages."""
        ...

    @property
    def lifespan_state(self) -> Any:
        """What the server's lifespan yielded."""
        ...

    @property
    def app(self) -> Any:
        """The `Application` serving the request (its backend keeps `ctx.state`)."""
        ...

    async def notify(self, method: str, params: dict[str, Any], request_id: RequestId | None) -> None:
        """Send a notification belonging to request `request_id` (progress, log messages)."""
        ...

    async def ask(self, method: str, params: dict[str, Any], *, request_id: RequestId | None, timeout: float,
                  key: str | None) -> Any:
        """Ask the client (elicitation, sampling, roots, ping) and return its answer.

        Raises what the handler should see when the client cannot answer: a `ToolError` (handshake
        era: refused, timed out), or nothing at all in the stateless era, where the handler is
        suspended until the client answers in a later round.
        """
        ...

    async def list_roots(self, *, request_id: RequestId | None, key: str | None) -> list[Any]:
        """The client's roots (`mcp_types.Root`); [] when it offers none or they cannot be asked for.

        In the stateless era only tools/call, prompts/get and resources/read can ask the client (an
        input round), and the envelope carries no roots: any other request (`subscriptions/listen`,
        whose URIs are checked as a read would check them) gets [], so the server applies its own
        bounds, as for a client without roots.
        """
        ...

    async def ping(self, *, request_id: RequestId | None, timeout: float) -> None: ...

    def missing_capability(self, capability: str, doing: str) -> Exception:
        """The error for a request that needs a client capability the client did not declare."""
        ...

    def was_cancelled(self, request_id: RequestId) -> bool: ...

    def close_stream(self, request_id: RequestId) -> bool:
        """End the transport stream carrying the request's messages now (the client resumes it); False if none."""
        ...
