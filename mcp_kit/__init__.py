"""mcp_kit: typed Python functions served over the Model Context Protocol, fast.

The public API is what this module exports; everything else is internal.
"""

try:
    from .audit import AuditRecord, ToolCallRecord
    from .auth.principal import AccessToken
    from .content import AssistantMessage, Audio, Image, UserMessage
    from .context import Context
    from .errors import InsufficientScopeError, MCPError, ResourceNotFound, ToolError, UpstreamUnavailable
    from .polling import poll_for_changes
    from .runner import add_run_arguments
    from .server import MCPServer
except ModuleNotFoundError as missing:  # usually the wrong interpreter: say which one to use
    if (missing.name or "").partition(".")[0] == "mcp_kit":
        raise
    from .dependencies import explain_missing

    raise explain_missing(missing) from None

__version__ = "0.1.0"

import typing

if typing.TYPE_CHECKING:  # what __getattr__ below hands out, as type checkers must see it
    from mcp_types import (
        AudioContent,
        BlobResourceContents,
        CallToolResult,
        Completion,
        CreateMessageResult,
        ElicitResult,
        EmbeddedResource,
        GetPromptResult,
        ImageContent,
        PromptMessage,
        Resource,
        ResourceLink,
        Root,
        TextContent,
        TextResourceContents,
        ToolAnnotations,
    )

# Protocol models re-exported from the official `mcp_types` package, imported on first use
# (the import costs ~200 ms and ~20 MiB that a server not using them should not pay).
_PROTOCOL_MODELS = frozenset({"AudioContent", "BlobResourceContents", "CallToolResult", "Completion", "CreateMessageResult", "ElicitResult", "EmbeddedResource", "GetPromptResult", "ImageContent", "PromptMessage", "Resource", "ResourceLink", "Root", "TextContent", "TextResourceContents", "ToolAnnotations"})


def __getattr__(name: str) -> object:
    if name in _PROTOCOL_MODELS:
        import mcp_types

        return getattr(mcp_types, name)
    raise AttributeError(f"module 'mcp_kit' has no attribute {name!r}")

__all__ = [
    "AccessToken",
    "AssistantMessage",
    "AuditRecord",
    "Audio",
    "AudioContent",
    "BlobResourceContents",
    "CallToolResult",
    "Completion",
    "Context",
    "CreateMessageResult",
    "ElicitResult",
    "EmbeddedResource",
    "GetPromptResult",
    "Image",
    "ImageContent",
    "InsufficientScopeError",
    "MCPError",
    "MCPServer",
    "PromptMessage",
    "Resource",
    "ResourceLink",
    "ResourceNotFound",
    "Root",
    "TextContent",
    "TextResourceContents",
    "ToolAnnotations",
    "ToolCallRecord",
    "ToolError",
    "UpstreamUnavailable",
    "UserMessage",
    "add_run_arguments",
    "poll_for_changes",
    "__version__",
]
