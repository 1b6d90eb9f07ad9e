"""OpenAI Chat Completions: `tools` entries, `message.tool_calls`, and `role: tool` replies.

    {"type": "function", "function": {"name", "description", "parameters", "strict"}}
    -> choices[0].message.tool_calls[i] = {"id", "type": "function", "function": {"name", "arguments": "<JSON>"}}
    <- {"role": "tool", "tool_call_id": id, "content": text}      (one message per call, in call order)

Also what any OpenAI-compatible endpoint speaks. Must not import the client, the bridge or the executor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._calls import ToolCall, ToolOutcome, error_text
from .._names import OPENAI_NAMES
from .._strict_schema import to_strict_schema
from .base import ExportedTool, ToolChoice, entries, field, mapping, text_field


class OpenAIChatFormat:
    key = "openai"
    rules = OPENAI_NAMES
    supports_strict = True

    def definition(self, tool: ExportedTool, *, strict: bool) -> dict[str, Any]:
        function: dict[str, Any] = {"name": tool.name, "description": tool.description,
                                    "parameters": parameters(tool, strict)}
        if strict:
            function["strict"] = True
        return {"type": "function", "function": function}

    def calls(self, response: Any) -> list[ToolCall]:
        data = mapping(response, "the response")
        if "choices" in data:
            choices = entries(data["choices"], "choices")
            if not choices:
                return []
            message = mapping(choices[0], "choices[0]").get("message")
            if message is None:
                return []
            data = mapping(message, "choices[0].message")
        found: list[ToolCall] = []
        for index, item in enumerate(entries(field(data, "tool_calls"), "tool_calls")):
            item = mapping(item, f"tool_calls[{index}]")
            if field(item, "type") not in (None, "function"):
                continue
            function = mapping(field(item, "function"), f"tool_calls[{index}].function")
            found.append(ToolCall(field(item, "id"), text_field(function, "name"), field(function, "arguments")))
        return found

    def results(self, outcomes: Sequence[ToolOutcome]) -> list[dict[str, Any]]:
        return [{"role": "tool", "tool_call_id": outcome.call.id,
                 "content": error_text(outcome.text) if outcome.is_error else outcome.text}
                for outcome in outcomes]

    def request_options(self, tools: list[dict[str, Any]], choice: ToolChoice | Mapping[str, Any] | None,
                        parallel_tool_calls: bool | None) -> dict[str, Any]:
        options: dict[str, Any] = {"tools": tools} if tools else {}
        if isinstance(choice, ToolChoice):
            options["tool_choice"] = ({"type": "function", "function": {"name": choice.name}}
                                      if choice.mode == "named" else choice.mode)
        elif choice is not None:
            options["tool_choice"] = choice
        if parallel_tool_calls is not None:
            options["parallel_tool_calls"] = parallel_tool_calls
        return options


def parameters(tool: ExportedTool, strict: bool) -> dict[str, Any]:
    """The input schema as OpenAI takes it: converted for strict mode when asked."""
    if strict:
        return to_strict_schema(tool.input_schema)
    schema = {k: v for k, v in tool.input_schema.items() if k != "$schema"}
    return schema or {"type": "object", "properties": {}}
