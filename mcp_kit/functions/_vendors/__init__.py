"""One module per function-calling API; `FORMATS` finds a format by the name the CLI uses."""

from __future__ import annotations

from .anthropic import AnthropicFormat
from .base import ExportedTool, FunctionFormat, ToolChoice
from .gemini import GeminiFormat
from .openai_chat import OpenAIChatFormat
from .openai_responses import OpenAIResponsesFormat

FORMATS: dict[str, FunctionFormat] = {
    "openai": OpenAIChatFormat(),
    "openai-responses": OpenAIResponsesFormat(),
    "anthropic": AnthropicFormat(),
    "gemini": GeminiFormat(),
}


def get_format(name: str) -> FunctionFormat:
    """The format called `name` (openai, openai-responses, anthropic, gemini)."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r}; choose from {', '.join(FORMATS)}") from None


__all__ = ["FORMATS", "AnthropicFormat", "ExportedTool", "FunctionFormat", "GeminiFormat", "OpenAIChatFormat",
           "OpenAIResponsesFormat", "ToolChoice", "get_format"]
