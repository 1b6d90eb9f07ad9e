"""Content blocks: what tools and prompts return, turned into wire JSON in one place.

Accepted return values of a tool (see `tool_result`): None, str, numbers, pydantic models,
dicts, lists, bytes, `Image`, `Audio`, any `mcp_types` content block, a list mixing these, or a
full `CallToolResult`.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_jsonable_python

from .._protocol.jsonrpc import EncodeError, dumps

# `mcp_types` (the official protocol models) is imported only when a value is one of its models:
# importing it costs ~200 ms and ~20 MiB, which a server that never uses the models should not pay.


@dataclasses.dataclass(slots=True)
class Image:
    """Image bytes returned by a tool or a prompt; sent base64-encoded with its MIME type."""

    data: bytes
    mime_type: str = "image/png"

    def to_wire(self) -> dict[str, Any]:
        return {"type": "image", "data": base64.b64encode(self.data).decode(), "mimeType": self.mime_type}


@dataclasses.dataclass(slots=True)
class Audio:
    """Audio bytes returned by a tool; sent base64-encoded with its MIME type."""

    data: bytes
    mime_type: str = "audio/wav"

    def to_wire(self) -> dict[str, Any]:
        return {"type": "audio", "data": base64.b64encode(self.data).decode(), "mimeType": self.mime_type}


@dataclasses.dataclass(slots=True)
class UserMessage:
    """A prompt message from the user: text or a content block."""

    content: Any
    role: str = "user"


@dataclasses.dataclass(slots=True)
class AssistantMessage:
    """A prompt message from the assistant: text or a content block."""

    content: Any
    role: str = "assistant"


_IMAGE_SIGNATURES = {
    b"\x89PNG\r\n\x1a\n": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"GIF87a": "image/gif",
    b"GIF89a": "image/gif",
}


def is_protocol_model(value: Any, name: str | None = None) -> bool:
    """Whether `value` is an `mcp_types` model (optionally of the class called `name`), without importing it."""
    if not isinstance(value, BaseModel) or not type(value).__module__.startswith("mcp_types"):
        return False
    return name is None or any(cls.__name__ == name for cls in type(value).__mro__)


# The protocol models a tool's result *is* (content blocks, resource contents, a whole result), by class name.
_CONTENT_MODELS = frozenset({"TextContent", "ImageContent", "AudioContent", "EmbeddedResource", "ResourceLink",
                             "TextResourceContents", "BlobResourceContents", "CallToolResult"})


def is_content_type(annotation: Any) -> bool:
    """Whether a return annotation names content rather than data: `Image`, `Audio`, or a protocol content
    model (`EmbeddedResource`, `TextContent`, `CallToolResult`, ...), which a tool's result carries as content
    blocks and never as structured content."""
    if not isinstance(annotation, type):
        return False
    if issubclass(annotation, (Image, Audio)):
        return True
    return annotation.__module__.startswith("mcp_types") and any(
        cls.__name__ in _CONTENT_MODELS for cls in annotation.__mro__)


def dump_model(model: BaseModel) -> dict[str, Any]:
    """Wire JSON of a pydantic model (aliases, no None fields)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def to_jsonable(value: Any) -> Any:
    """Plain JSON data for a return value: models dumped, dataclasses converted, sets as lists, datetimes,
    dates and times as ISO 8601, UUIDs, decimals and paths as strings, enums as their values (pydantic's
    JSON mode), anywhere in the value. What has no JSON form is left as it is."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, (dict, list, tuple)):
        try:
            return json.loads(dumps(value))  # the fast path: orjson takes plain data, dates and dataclasses
        except EncodeError:
            pass
    try:
        return to_jsonable_python(value, by_alias=True)
    except PydanticSerializationError:
        return value


def json_text(value: Any) -> str:
    """Readable JSON text for a model to read."""
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def content_block(item: Any) -> dict[str, Any] | None:
    """One content block for an item that *is* content, else None."""
    if isinstance(item, str):
        return {"type": "text", "text": item}
    if isinstance(item, (Image, Audio)):
        return item.to_wire()
    if isinstance(item, BaseModel) and is_protocol_model(item):
        import mcp_types as t

        if isinstance(item, (t.TextContent, t.ImageContent, t.AudioContent, t.EmbeddedResource, t.ResourceLink)):
            return dump_model(item)
        if isinstance(item, (t.TextResourceContents, t.BlobResourceContents)):
            return {"type": "resource", "resource": dump_model(item)}
        return None
    if isinstance(item, (bytes, bytearray)):
        mime = next((m for sig, m in _IMAGE_SIGNATURES.items() if item.startswith(sig)), None)
        if mime:
            return Image(bytes(item), mime).to_wire()
        blob = base64.b64encode(bytes(item)).decode()
        return {
            "type": "resource",
            "resource": {"uri": "data:application/octet-stream", "mimeType": "application/octet-stream", "blob": blob},
        }
    return None


def tool_result(value: Any, structured: bool, wrap_structured: bool = False) -> dict[str, Any]:
    """Normalise whatever a tool returned into a CallToolResult wire dict."""
    result: dict[str, Any]
    if is_protocol_model(value, "CallToolResult"):
        result = dump_model(value)
        result.pop("resultType", None)  # added per protocol version by the session
        return result
    if value is None:
        return {"content": [], "isError": False}
    block = content_block(value)
    if block is not None:
        result = {"content": [block], "isError": False}
        if structured and wrap_structured:
            result["structuredContent"] = {"result": value}
        return result
    if isinstance(value, (list, tuple)) and value and all(content_block(v) is not None for v in value):
        result = {"content": [content_block(v) for v in value], "isError": False}
        if structured:
            data = to_jsonable(value)
            result["structuredContent"] = {"result": data} if wrap_structured else data
        return result
    data = to_jsonable(value)
    text = data if isinstance(data, str) else json_text(data)
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    if structured:
        result["structuredContent"] = {"result": data} if wrap_structured else data
    return result


def error_result(message: str) -> dict[str, Any]:
    """A tool result that tells the model what went wrong."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def prompt_message(item: Any) -> dict[str, Any]:
    """One prompt message for a str, a User/AssistantMessage, a PromptMessage or a dict."""
    if is_protocol_model(item, "PromptMessage"):
        return dump_model(item)
    if isinstance(item, dict):
        return item
    role = "user"
    if isinstance(item, (UserMessage, AssistantMessage)):
        role, item = item.role, item.content
    block = content_block(item)
    if block is None:
        block = {"type": "text", "text": json_text(to_jsonable(item))}
    return {"role": role, "content": block}
