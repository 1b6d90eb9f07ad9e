"""OpenAI Responses API: flat `tools` entries, `function_call` output items, `function_call_output` inputs.

    {"type": "function", "name", "description", "parameters", "strict"}
    -> output[i] = {"type": "function_call", "call_id", "name", "arguments": "<JSON>"}
    <- {"type": "function_call_output", "call_id": call_id, "output": text}   (one input item per call)

Must not import the client, the bridge or the executor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._calls import ToolCall, ToolOutcome, error_text
from .._names import OPENAI_NAMES
from .base import ExportedTool, ToolChoice, entries, field, mapping, plain, text_field
from .openai_chat import parameters


class OpenAIResponsesFormat:
    key = "openai-responses"
    rules = OPENAI_NAMES
    supports_strict = True

    def definition(self, tool: ExportedTool, *, strict: bool) -> dict[str, Any]:
        # `strict` is always sent: the Responses API requires the field and treats a missing value as strict.
        return {"type": "function", "name": tool.name, "description": tool.description,
                "parameters": parameters(tool, strict), "strict": strict}

    def calls(self, response: Any) -> list[ToolCall]:
        data = plain(response)
        items = entries(field(data, "output") if isinstance(data, Mapping) else data, "output")
        found: list[ToolCall] = []
        for index, item in enumerate(items):
            item = mapping(item, f"output[{index}]")
            if field(item, "type") == "function_call":
                found.append(ToolCall(field(item, "call_id"), text_field(item, "name"), field(item, "arguments")))
        return found

    def results(self, outcomes: Sequence[ToolOutcome]) -> list[dict[str, Any]]:
        return [{"type": "function_call_output", "call_id": outcome.call.id,
                 "output": error_text(outcome.text) if outcome.is_error else outcome.text}
                for outcome in outcomes]

    def request_options(self, tools: list[dict[str, Any]], choice: ToolChoice | Mapping[str, Any] | None,
                        parallel_tool_calls: bool | None) -> dict[str, Any]:
        options: dict[str, Any] = {"tools": tools} if tools else {}
        if isinstance(choice, ToolChoice):
            options["tool_choice"] = (
                {"type": "function", "name": choice.name} if choice.mode == "named" else choice.mode
            )
        elif choice is not None:
            options["tool_choice"] = choice
        if parallel_tool_calls is not None:
            options["parallel_tool_calls"] = parallel_tool_calls
        return options
