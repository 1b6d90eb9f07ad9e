"""The values one model turn is made of: the tool calls it asked for, their outcomes, and the turn itself.

Vendor-neutral: each vendor module turns its response shape into `ToolCall`s and `ToolOutcome`s into its
message shape; a response that does not have its format's shape raises `MalformedResponseError`.
`result_text` says what a model reads of an MCP tool result. Must not import anything
from mcp_kit but the root exception.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from .._errors import MCPKitError

ErrorKind = Literal["unknown_tool", "bad_arguments", "tool_error", "declined", "server_gone", "timeout",
                    "protocol_error", "internal_error"]


class MalformedResponseError(MCPKitError, ValueError):
    """A model response does not have the shape its format promises (say, `tool_calls` that is not a list)."""


@dataclass(frozen=True)
class ToolCall:
    """One function call a model asked for, as the vendor gave it."""

    id: str | None  # the id the result must echo (Gemini may leave it out: then the name pairs them)
    name: str  # the function name the model used (an exported name)
    arguments: Any  # a JSON text (OpenAI) or an object (Anthropic, Gemini)


@dataclass
class ToolOutcome:
    """What came of one call: the text the model reads, whether it is an error, and the MCP result."""

    call: ToolCall
    text: str
    is_error: bool = False
    error_kind: ErrorKind | None = None
    server: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] | None = None  # what was sent to the server, after restoring and validation
    result: dict[str, Any] | None = None  # the MCP CallToolResult, when the server answered one

    @property
    def structured(self) -> Any:
        return (self.result or {}).get("structuredContent")

    @property
    def content(self) -> list[dict[str, Any]]:
        return list((self.result or {}).get("content") or [])


@dataclass
class Turn:
    """One model turn's tool calls, their outcomes in call order, and the messages to send back."""

    calls: list[ToolCall]
    outcomes: list[ToolOutcome]
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def has_calls(self) -> bool:
        return bool(self.calls)


def result_text(result: dict[str, Any]) -> str:
    """What a model reads of an MCP CallToolResult: its content blocks as text (structured content if none)."""
    blocks = result.get("content") or []
    if blocks:
        return "\n".join(block_text(block) for block in blocks)
    if "structuredContent" in result:
        return json.dumps(result["structuredContent"], ensure_ascii=False)
    return ""


def block_text(block: dict[str, Any]) -> str:
    """One MCP content block as text; binary data is described, not dumped."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType', '?')}, {decoded_size(block.get('data', ''))} bytes]"
    if kind == "resource":
        contents = block.get("resource") or {}
        if "text" in contents:
            return str(contents["text"])
        return f"[binary resource {contents.get('uri')} ({contents.get('mimeType', 'unknown type')})]"
    if kind == "resource_link":
        return f"[resource link] {block.get('uri')}" + (f" - {block['name']}" if block.get("name") else "")
    return json.dumps(block, ensure_ascii=False)


def decoded_size(data: Any) -> int:
    try:
        return len(base64.b64decode(str(data), validate=False))
    except (ValueError, binascii.Error):
        return 0


def error_text(text: str) -> str:
    """An error as the model reads it where the vendor has no error flag."""
    return text if text.lower().startswith("error") else f"Error: {text}"
