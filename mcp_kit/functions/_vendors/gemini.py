"""Gemini (Developer API and Vertex AI): function declarations, `functionCall` parts, `functionResponse` parts.

    {"name", "description", "parameters": <OpenAPI-subset schema>}      (inside tools[].functionDeclarations)
    -> candidates[0].content.parts[i] = {"functionCall": {"name", "args": {...}, "id"?}}
    <- {"role": "user", "parts": [{"functionResponse": {"name", "id"?, "response": {"output": ...}}}]}

A failed call answers `{"error": text}` instead of `{"output": ...}`, as Gemini's documentation suggests.
Results are paired with calls by id when the model gave one, else by name and order. There is no switch
for parallel calls. Must not import the client, the bridge or the executor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._calls import ToolCall, ToolOutcome
from .._gemini_schema import to_gemini_schema
from .._names import GEMINI_NAMES
from .base import ExportedTool, ToolChoice, entries, field, mapping, plain, text_field

MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE", "named": "ANY"}


class GeminiFormat:
    key = "gemini"
    rules = GEMINI_NAMES
    supports_strict = False

    def definition(self, tool: ExportedTool, *, strict: bool) -> dict[str, Any]:
        declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
        parameters = to_gemini_schema(tool.input_schema)
        if parameters is not None:
            declaration["parameters"] = parameters
        return declaration

    def calls(self, response: Any) -> list[ToolCall]:
        data = plain(response)
        if isinstance(data, Mapping) and "candidates" in data:
            candidates = entries(data["candidates"], "candidates")
            if not candidates:
                return []
            data = mapping(candidates[0], "candidates[0]")
        content = field(data, "content")
        if content is not None:
            data = mapping(content, "content")
        parts = entries(field(data, "parts") if isinstance(data, Mapping) else data, "parts")
        found: list[ToolCall] = []
        for index, part in enumerate(parts):
            call = field(mapping(part, f"parts[{index}]"), "functionCall", "function_call")
            if call is not None:
                call = mapping(call, f"parts[{index}].functionCall")
                found.append(ToolCall(field(call, "id"), text_field(call, "name"), field(call, "args") or {}))
        return found

    def results(self, outcomes: Sequence[ToolOutcome]) -> list[dict[str, Any]]:
        if not outcomes:
            return []
        parts = []
        for outcome in outcomes:
            answer: dict[str, Any] = {"name": outcome.call.name}
            if outcome.call.id is not None:
                answer["id"] = outcome.call.id
            if outcome.is_error:
                answer["response"] = {"error": outcome.text}
            else:
                structured = outcome.structured
                answer["response"] = {"output": structured if isinstance(structured, Mapping) else outcome.text}
            parts.append({"functionResponse": answer})
        return [{"role": "user", "parts": parts}]

    def request_options(self, tools: list[dict[str, Any]], choice: ToolChoice | Mapping[str, Any] | None,
                        parallel_tool_calls: bool | None) -> dict[str, Any]:
        if parallel_tool_calls is False:
            raise ValueError("Gemini has no switch to turn off parallel function calls; leave parallel_tool_calls "
                             "unset for Gemini")
        options: dict[str, Any] = {"tools": [{"functionDeclarations": tools}]} if tools else {}
        if isinstance(choice, Mapping):
            options["toolConfig"] = choice
        elif choice is not None:
            config: dict[str, Any] = {"mode": MODES[choice.mode]}
            if choice.mode == "named":
                config["allowedFunctionNames"] = [choice.name]
            options["toolConfig"] = {"functionCallingConfig": config}
        return options
