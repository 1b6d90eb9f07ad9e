"""mcp_kit: typed Python functions served over the Model Context Protocol, fast.

The public API is what this module exports, and what these public modules export in their
`__all__`: `mcp_kit.testing` (an in-memory client for tests), `mcp_kit.auth` (the OAuth resource
server), `mcp_kit.client` and `mcp_kit.client.oauth` (a client for any MCP server), `mcp_kit.functions`
(MCP tools for model APIs), `mcp_kit.extensions` (write an extension), `mcp_kit.tasks` and `mcp_kit.skills`
(the two extensions' data), `mcp_kit.apps` (MCP Apps views),
`mcp_kit.telemetry` (traces, metrics, readiness and JSON logs).
Everything else is private by name (a leading underscore) and may change in any release;
tests/project/test_public_api.py pins each `__all__`. Every exception mcp_kit raises derives from
`MCPKitError` (the tree is drawn in `_errors.py`).
"""

try:
    from ._app.audit import AuditRecord, ToolCallRecord
    from ._app.context import Context
    from ._app.mounts import MountCollision
    from ._app.pipeline import Call, CallNext, Middleware
    from ._app.polling import poll_for_changes
    from ._app.state import StateTooLarge, StateUnavailable
    from ._errors import MCPKitError
    from ._primitives.content import AssistantMessage, Audio, Image, UserMessage
    from ._primitives.tools import ToolCrashed
    from ._primitives.transforms import Arg
    from ._protocol.errors import InsufficientScopeError, MCPError, ResourceNotFound, ToolError, UpstreamUnavailable
    from ._serving.serve import add_run_arguments
    from ._serving.server import MCPServer
    from ._telemetry.hooks import current_trace_headers
    from .apps import Apps
    from .auth._principal import AccessToken
except ModuleNotFoundError as missing:  # usually the wrong interpreter: say which one to use
    if (missing.name or "").partition(".")[0] == "mcp_kit":
        raise
    from ._serving.interpreter import explain_missing

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

    from ._proxy.build import proxy

# Protocol models re-exported from the official `mcp_types` package, imported on first use
# (the import costs ~200 ms and ~20 MiB that a server not using them should not pay).
_PROTOCOL_MODELS = frozenset(
    {
        "AudioContent",
        "BlobResourceContents",
        "CallToolResult",
        "Completion",
        "CreateMessageResult",
        "ElicitResult",
        "EmbeddedResource",
        "GetPromptResult",
        "ImageContent",
        "PromptMessage",
        "Resource",
        "ResourceLink",
        "Root",
        "TextContent",
        "TextResourceContents",
        "ToolAnnotations",
    }
)


def __getattr__(name: str) -> object:
    if name == "proxy":  # imported on first use: it brings the client (httpx)
        from ._proxy.build import proxy

        return proxy
    if name in _PROTOCOL_MODELS:
        import mcp_types

        return getattr(mcp_types, name)
    raise AttributeError(f"module 'mcp_kit' has no attribute {name!r}")

__all__ = [
    "AccessToken",
    "Arg",
    "Apps",
    "AssistantMessage",
    "AuditRecord",
    "Audio",
    "AudioContent",
    "BlobResourceContents",
    "Call",
    "CallNext",
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
    "MCPKitError",
    "MCPServer",
    "Middleware",
    "MountCollision",
    "PromptMessage",
    "Resource",
    "ResourceLink",
    "ResourceNotFound",
    "StateTooLarge",
    "StateUnavailable",
    "Root",
    "TextContent",
    "TextResourceContents",
    "ToolAnnotations",
    "ToolCallRecord",
    "ToolCrashed",
    "ToolError",
    "UpstreamUnavailable",
    "UserMessage",
    "add_run_arguments",
    "current_trace_headers",
    "poll_for_changes",
    "proxy",
    "__version__",
]
