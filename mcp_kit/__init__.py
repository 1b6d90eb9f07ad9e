"""mcp_kit: typed Python functions served over the Model Context Protocol, fast.

The public API is what this module exports; everything else is internal.
"""

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

from .audit import ToolCallRecord
from .content import AssistantMessage, Audio, Image, UserMessage
from .context import Context
from .errors import MCPError, ResourceNotFound, ToolError
from .runner import add_run_arguments
from .server import MCPServer

__version__ = "0.1.0"

__all__ = [
    "AssistantMessage",
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
    "UserMessage",
    "add_run_arguments",
    "__version__",
]
