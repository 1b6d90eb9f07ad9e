"""From MCP to function calling: MCP servers' tools for the OpenAI, Anthropic and Gemini APIs.

    from mcp_kit.functions import ToolBridge

    async with ToolBridge.connect({"stock": "python -m servers.stock"}) as bridge:
        tools = bridge.openai_tools(strict=True)        # or openai_responses_tools(), anthropic_tools(), gemini_tools()
        ...                                              # the model answers with tool calls
        turn = await bridge.run_turn("openai", reply)    # every call of the turn, concurrently
        messages.extend(turn.messages)                   # role: tool messages with the right ids, in order

The pieces, one job each: `bridge` (servers in, definitions out, turns run), `vendors/` (one module per
API shape), `strict_schema` (OpenAI strict mode), `gemini_schema` (Gemini's OpenAPI subset), `names`
(valid, unique, reversible function names), `arguments` (parse, restore, validate), `executor` (one turn's
calls, concurrently, errors as data), `_schema_walk` (how far any of them follows a server's schema: local
references only, cycles refused, depth and size bounded). Host-side code: it builds on `mcp_kit.client` and must not import the
server side (server, session, transports). Kept out of `mcp_kit.__all__`, which is the server API.
"""

from .arguments import ArgumentChecker, ArgumentError, parse_arguments
from .bridge import Export, ExportNote, ToolBridge
from .calls import MalformedResponseError, ToolCall, ToolOutcome, Turn
from .gemini_schema import GeminiSchemaError, to_gemini_schema
from .names import ANTHROPIC_NAMES, GEMINI_NAMES, OPENAI_NAMES, NameMap, NameRules, Renamed
from .remote import ConfirmationRequest, RemoteTool, ToolSession
from .schema_document import SchemaConversionError
from .strict_schema import StrictSchemaError, check_strict_limits, to_strict_schema
from .vendors import FORMATS

__all__ = [
    "ANTHROPIC_NAMES",
    "FORMATS",
    "GEMINI_NAMES",
    "OPENAI_NAMES",
    "ArgumentChecker",
    "ArgumentError",
    "ConfirmationRequest",
    "Export",
    "ExportNote",
    "GeminiSchemaError",
    "MalformedResponseError",
    "NameMap",
    "NameRules",
    "RemoteTool",
    "Renamed",
    "SchemaConversionError",
    "StrictSchemaError",
    "ToolBridge",
    "ToolCall",
    "ToolOutcome",
    "ToolSession",
    "Turn",
    "check_strict_limits",
    "parse_arguments",
    "to_gemini_schema",
    "to_strict_schema",
]
