"""The 2026-07-28 (stateless) era: server/discover and the per-request `_meta` envelope.

Placeholder until the stateless era lands: requests that carry the envelope are refused with
the spec's unsupported-version error so clients fall back to the initialize handshake.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .errors import UNSUPPORTED_PROTOCOL_VERSION, MCPError
from .jsonrpc import METHOD_NOT_FOUND, Request, RequestId
from .versions import HANDSHAKE_VERSIONS

if TYPE_CHECKING:
    from .session import Session

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"


async def handle(session: Session, request: Request, params: dict[str, Any]) -> Any:
    if request.method == "server/discover":
        raise MCPError(METHOD_NOT_FOUND, "Method not found: server/discover")
    raise MCPError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version; use the initialize handshake",
        {"supported": list(HANDSHAKE_VERSIONS), "requested": (params.get("_meta") or {}).get(PROTOCOL_VERSION_KEY)},
    )


def log_level(meta: dict[str, Any]) -> str | None:
    level = meta.get(LOG_LEVEL_KEY)
    return level if isinstance(level, str) else None


async def ask(session: Session, method: str, params: dict[str, Any], related_to: RequestId | None, meta: dict[str, Any]) -> Any:
    raise MCPError(METHOD_NOT_FOUND, f"{method} is not available in the stateless era yet")


def listeners_of(session: Session) -> Iterator[Any]:
    return iter(())
