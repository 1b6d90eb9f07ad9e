"""Why a client could not talk to a server: raised for transport failures, never for JSON-RPC errors.

    ClientError          -> anything that stopped the conversation
    ├── ServerNotFound   -> the stdio command does not exist or cannot be executed
    └── ConnectionClosed -> the server went away (exited, closed its stream, refused the connection)

A JSON-RPC error answer is an `mcp_kit.MCPError` instead: the server is alive and said no.
"""

from __future__ import annotations

from .._errors import MCPKitError


class ClientError(MCPKitError):
    """The client could not (or can no longer) talk to the server."""


class ServerNotFound(ClientError):
    """The command of a stdio server could not be started."""


class ConnectionClosed(ClientError):
    """The server closed the connection; `stderr_tail` holds its last stderr lines (stdio only)."""

    def __init__(self, message: str, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.stderr_tail = stderr_tail
