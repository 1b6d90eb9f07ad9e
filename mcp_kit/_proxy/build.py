"""`mcp_kit.proxy(target)`: `MCPServer.proxy` as a function."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._serving.server import MCPServer


def proxy(target: str | Sequence[str] | Mapping[str, Any], **options: Any) -> MCPServer:
    """An `MCPServer` fronting the server(s) at `target` (see `MCPServer.proxy`)."""
    return MCPServer.proxy(target, **options)
