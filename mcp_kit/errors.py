"""Exceptions users raise (or catch) and the MCP error codes they map to.

    JSONRPCError (jsonrpc.py)      -> a JSON-RPC error response with its code
    └── MCPError                   -> the same, raised by mcp_kit and user code
        └── ResourceNotFound       -> -32002 (handshake era) / -32602 (2026-07-28)
    ToolError                      -> a tool result with isError: true and exactly this message
"""

from __future__ import annotations

from typing import Any

from .jsonrpc import INVALID_PARAMS, JSONRPCError

RESOURCE_NOT_FOUND = -32002
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022


class MCPError(JSONRPCError):
    """A protocol-level error: the request fails with this JSON-RPC code and message."""


class ResourceNotFound(MCPError):
    """Raised by a resource handler when the URI names nothing that exists."""

    def __init__(self, uri: str, message: str | None = None) -> None:
        super().__init__(RESOURCE_NOT_FOUND, message or f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri


class ToolError(Exception):
    """Raised inside a tool: the model sees `isError: true` with this message, verbatim."""


def invalid_params(message: str, data: Any = None) -> MCPError:
    """A -32602 error with a message that says what was wrong."""
    return MCPError(INVALID_PARAMS, message, data)
