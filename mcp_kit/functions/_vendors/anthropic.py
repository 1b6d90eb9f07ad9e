"""Anthropic Messages API: `tools` entries, `tool_use` content blocks, and `tool_result` blocks.

    {"name", "description", "input_schema"}
    -> content[i] = {"type": "tool_use", "id", "name", "input": {...}}
    <- {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": [...], "is_error": bool}]}

Every result of a turn goes in one user message, in call order, as the API requires. Images from MCP
results travel as image blocks; other content as text. Must not import the client, the bridge or the executor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._calls import ToolCall, ToolOutcome, block_text
from .._names import ANTHROPIC_NAMES
from .base import ExportedTool, ToolChoice, entries, field, mapping, plain, text_field

IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
CHOICE_TYPES = {"auto": "auto", "required": "any", "none": "none", "named": "tool"}


class AnthropicFormat:
    key = "anthropic"
    rules = ANTHROPIC_NAMES
    supports_strict = False

    def definition(self, tool: ExportedTool, *, strict: bool) -> dict[str, Any]:
        schema = {k: v for k, v in tool.input_schema.items() if k != "$schema"}
        schema.setdefault("type", "object")
        return {"name": tool.name, "description": tool.description, "input_schema": schema}

    def calls(self, response: Any) -> list[ToolCall]:
        data = plain(response)
        blocks = entries(field(data, "content") if isinstance(data, Mapping) else data, "content")
        found: list[ToolCall] = []
        for index, block in enumerate(blocks):
            block = mapping(block, f"content[{index}]")
            if field(block, "type") == "tool_use":
                found.append(ToolCall(field(block, "id"), text_field(block, "name"), field(block, "input")))
        return found

    def results(self, outcomes: Sequence[ToolOutcome]) -> list[dict[str, Any]]:
        if not outcomes:
            return []
        blocks: list[dict[str, Any]] = []
        for outcome in outcomes:
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": outcome.call.id}
            content = result_content(outcome)
            if content:
                block["content"] = content
            block["is_error"] = outcome.is_error
            blocks.append(block)
        return [{"role": "user", "content": blocks}]

    def request_options(self, tools: list[dict[str, Any]], choice: ToolChoice | Mapping[str, Any] | None,
                        parallel_tool_calls: bool | None) -> dict[str, Any]:
        options: dict[str, Any] = {"tools": tools} if tools else {}
        if isinstance(choice, Mapping):
            options["tool_choice"] = choice
            return options
        if choice is None and parallel_tool_calls is None:
            return options
        mode = choice.mode if choice is not None else "auto"
        tool_choice: dict[str, Any] = {"type": CHOICE_TYPES[mode]}
        if choice is not None and choice.mode == "named":
            tool_choice["name"] = choice.name
        if parallel_tool_calls is not None and mode != "none":
            tool_choice["disable_parallel_tool_use"] = not parallel_tool_calls
        options["tool_choice"] = tool_choice
        return options


def result_content(outcome: ToolOutcome) -> list[dict[str, Any]]:
    """An outcome as tool_result content blocks (empty text blocks are left out: the API rejects them)."""
    if outcome.is_error or outcome.result is None or not outcome.content:
        return [{"type": "text", "text": outcome.text}] if outcome.text else []
    blocks: list[dict[str, Any]] = []
    for item in outcome.content:
        if item.get("type") == "image" and item.get("mimeType") in IMAGE_TYPES:
            blocks.append({"type": "image", "source": {"type": "base64", "media_type": item["mimeType"],
                                                       "data": item.get("data", "")}})
        elif text := block_text(item):
            blocks.append({"type": "text", "text": text})
    return blocks
