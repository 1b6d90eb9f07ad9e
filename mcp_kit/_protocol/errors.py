"""Exceptions users raise (or catch) and the MCP error codes they map to.

    JSONRPCError (jsonrpc.py)      -> a JSON-RPC error response with its code
    └── MCPError                   -> the same, raised by mcp_kit and user code
        ├── ResourceNotFound       -> -32002 (handshake era) / -32602 (2026-07-28)
        ├── UpstreamUnavailable    -> -31001 with {"source", "retryable"[, "retryAfter"]}; in a tool, isError: true
        ├── InsufficientScopeError -> -31002 with {"error": "insufficient_scope", "scope", "missing"} (OAuth)
        └── RateLimited            -> -31003 with {"retryAfter", "limit"}; for a tool, isError: true
    ToolError                      -> a tool result with isError: true and exactly this message

Codes: -32700 ... -32603 are JSON-RPC's; -32002 and -32020 ... -32022 the MCP specification's. The
specification reserves -32020 ... -32099 for itself and retires -32000 ... -32019, and asks for
application-defined codes outside -32768 ... -32000: mcp_kit's own start at -31000 (TOO_MANY_REQUESTS,
-31004, is the dispatcher's: a request past the connection's maximum in flight).
"""

from __future__ import annotations

from typing import Any

from .._errors import MCPKitError
from .dispatcher import TOO_MANY_REQUESTS as TOO_MANY_REQUESTS  # the dispatcher's code, named here with the others
from .jsonrpc import INVALID_PARAMS, JSONRPCError

RESOURCE_NOT_FOUND = -32002
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
UPSTREAM_UNAVAILABLE = -31001  # mcp_kit's: a data source behind the server failed
INSUFFICIENT_SCOPE = -31002  # mcp_kit's: the caller's OAuth token lacks a scope the primitive needs
RATE_LIMITED = -31003  # mcp_kit's: the caller is over a rate limit; data.retryAfter says when to try again


class MCPError(JSONRPCError):
    """A protocol-level error: the request fails with this JSON-RPC code and message."""


class ResourceNotFound(MCPError):
    """Raised by a resource handler when the URI names nothing that exists."""

    def __init__(self, uri: str, message: str | None = None) -> None:
        super().__init__(RESOURCE_NOT_FOUND, message or f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri


class UpstreamUnavailable(MCPError):
    """The data source behind the server failed: down, unreachable, too slow, rate limiting, or answering garbage.

    Not the client's fault and not a bug of the server, so neither -32602 nor -32603: the request
    fails with `UPSTREAM_UNAVAILABLE` and data saying which source failed, whether trying again
    may help (`retryable`) and, when the source said so, after how many seconds (`retryAfter`).
    Raised inside a tool it becomes a tool result with `isError: true` and this message, which is
    what a model can act on.
    """

    def __init__(self, message: str, *, source: str | None = None, retryable: bool = True,
                 retry_after: float | None = None) -> None:
        data: dict[str, Any] = {"retryable": retryable}
        if source:
            data["source"] = source
        if retry_after is not None:
            data["retryAfter"] = retry_after
        super().__init__(UPSTREAM_UNAVAILABLE, message, data)
        self.source = source
        self.retryable = retryable
        self.retry_after = retry_after


class InsufficientScopeError(MCPError):
    """The caller's OAuth access token does not grant a scope the tool, resource or prompt needs.

    Over HTTP the transport answers such a request with 403 `insufficient_scope` before it runs;
    this error (or, for a tool, an `isError` result with the same words) is what a request gets
    where no HTTP challenge can be sent any more: inside a batch, over legacy SSE.
    """

    def __init__(self, what: str, needed: tuple[str, ...], missing: tuple[str, ...]) -> None:
        super().__init__(INSUFFICIENT_SCOPE, scope_refusal(what, missing),
                         {"error": "insufficient_scope", "scope": " ".join(needed), "missing": list(missing)})
        self.needed = needed
        self.missing = missing


class RateLimited(MCPError):
    """The caller is over a rate limit: -31003 with `retryAfter` (seconds) and the `limit` in `data`.

    A tool call gets an `isError` result with the same words instead (a model reads it and can wait);
    over HTTP a lone request is answered 429 with `Retry-After` before it is dispatched.
    """

    def __init__(self, message: str, *, retry_after: float, limit: str) -> None:
        super().__init__(RATE_LIMITED, message, {"retryAfter": retry_after, "limit": limit})
        self.retry_after = retry_after
        self.limit = limit


def scope_refusal(what: str, missing: tuple[str, ...]) -> str:
    """Why `what` (e.g. "Tool 'write_file'") is refused, and how to get access."""
    plural = "s" if len(missing) > 1 else ""
    return (f"{what} needs the OAuth scope{plural} {' '.join(missing)}, which this access token does not grant. "
            f"Authorize again asking for {' '.join(missing)} (HTTP clients get a 403 insufficient_scope challenge "
            "naming it), then retry.")


class ToolError(MCPKitError):
    """Raised inside a tool: the model sees `isError: true` with this message, verbatim."""


def invalid_params(message: str, data: Any = None) -> MCPError:
    """A -32602 error with a message that says what was wrong."""
    return MCPError(INVALID_PARAMS, message, data)
