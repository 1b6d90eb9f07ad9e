"""What every vendor format provides, and the small helpers they share.

A format knows four things about one function-calling API: how a tool definition looks, where a response
keeps its tool calls, how results go back, and how `tool_choice` / `parallel_tool_calls` are spelled.
Formats are stateless. Must not import the client, the bridge or the executor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .._calls import MalformedResponseError, ToolCall, ToolOutcome
from .._names import NameRules

ChoiceMode = Literal["auto", "required", "none", "named"]


@dataclass(frozen=True)
class ToolChoice:
    """A tool_choice decided by the host: a mode, plus the exported function name when `named`."""

    mode: ChoiceMode
    name: str | None = None


@dataclass(frozen=True)
class ExportedTool:
    """What a format needs to write one definition."""

    name: str  # the exported function name
    description: str
    input_schema: dict[str, Any]  # the MCP tool's inputSchema, untouched


class FunctionFormat(Protocol):
    """One vendor's function-calling shapes."""

    key: str
    rules: NameRules
    supports_strict: bool

    def definition(self, tool: ExportedTool, *, strict: bool) -> dict[str, Any]:
        """The tool definition for the request's `tools` list (raises SchemaConversionError)."""
        ...

    def calls(self, response: Any) -> list[ToolCall]:
        """The function calls in a model response (a whole response, or the part that holds them).

        Raises MalformedResponseError when the response does not have the format's shape.
        """
        ...

    def results(self, outcomes: Sequence[ToolOutcome]) -> list[dict[str, Any]]:
        """The messages (or input items) that carry the outcomes back, in call order."""
        ...

    def request_options(self, tools: list[dict[str, Any]], choice: ToolChoice | Mapping[str, Any] | None,
                        parallel_tool_calls: bool | None) -> dict[str, Any]:
        """The request fields for these tools and options (a Mapping choice goes through unchanged)."""
        ...


def plain(value: Any) -> Any:
    """A vendor SDK object (pydantic) as plain JSON data; plain data as it is."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_none=True)
    return value


def entries(value: Any, where: str) -> list[Any]:
    """A list from a response (absent: empty), each entry as plain data; anything else is malformed."""
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise MalformedResponseError(f"{where} is {json_kind(value)}, not a list")
    return [plain(item) for item in value]


def mapping(value: Any, where: str) -> Mapping[str, Any]:
    """`value` as plain data when it is a JSON object; anything else is malformed."""
    value = plain(value)
    if not isinstance(value, Mapping):
        raise MalformedResponseError(f"{where} is {json_kind(value)}, not a JSON object")
    return value


def json_kind(value: Any) -> str:
    """What a value is, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"


def text_field(data: Mapping[str, Any], *names: str) -> str:
    """A name field of a call as text (a missing or non-text name is "": no tool has it)."""
    value = field(data, *names)
    return value if isinstance(value, str) else ""


def field(data: Any, *names: str) -> Any:
    """The first of `names` present in a mapping (vendors and their SDKs differ in case style)."""
    if isinstance(data, Mapping):
        for name in names:
            if name in data:
                return data[name]
    return None


def description_of(tool: Mapping[str, Any]) -> str:
    """The text a model reads about an MCP tool: its description, else its title."""
    annotations = tool.get("annotations") or {}
    return str(tool.get("description") or tool.get("title") or annotations.get("title") or "")
