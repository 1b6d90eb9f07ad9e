"""The tools of connected MCP servers as a host sees them, and the narrow port a server session offers.

Any object with `list_tools()` and `call_tool(name, arguments, timeout=...)` is a `ToolSession`: the
stdio/HTTP `ClientSession` of `mcp_kit.client`, or the in-memory client of `mcp_kit.testing`.
Must not import the client, the vendor modules or the executor.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol


class ToolSession(Protocol):
    """What the bridge needs from a connection to one MCP server."""

    async def list_tools(self) -> list[dict[str, Any]]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *,
                        timeout: float | None = None) -> dict[str, Any]: ...


@dataclass(frozen=True)
class RemoteTool:
    """One tool of one server: its MCP definition as listed (name, description, inputSchema, annotations)."""

    server: str
    definition: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.definition["name"])

    @property
    def input_schema(self) -> dict[str, Any]:
        return dict(self.definition.get("inputSchema") or {"type": "object"})

    @property
    def annotations(self) -> dict[str, Any]:
        return dict(self.definition.get("annotations") or {})

    @property
    def destructive(self) -> bool:
        """May change or delete things, by the MCP defaults: not read-only and not declared non-destructive."""
        hints = self.annotations
        return not hints.get("readOnlyHint", False) and hints.get("destructiveHint", True) is not False


@dataclass(frozen=True)
class ConfirmationRequest:
    """What the confirmation hook is asked about before a destructive tool runs."""

    server: str
    tool: str
    arguments: dict[str, Any]
    annotations: dict[str, Any]
    call_id: str | None


Confirm = Callable[[ConfirmationRequest], "bool | Awaitable[bool]"]
