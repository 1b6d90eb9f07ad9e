"""From MCP to function calling: MCP servers' tools for the OpenAI, Anthropic and Gemini APIs.

    from mcp_kit.functions import ToolBridge

    async with ToolBridge.connect({"stock": "python -m servers.stock"}) as bridge:
        tools = bridge.openai_tools(strict=True)        # or openai_responses_tools(), anthropic_tools(), gemini_tools()
        ...                                              # the model answers with tool calls
        turn = await bridge.run_turn("openai", reply)    # every call of the turn, concurrently
        messages.extend(turn.messages)                   # role: tool messages with the right ids, in order

The private pieces, one job each: `_bridge` (servers in, definitions out, turns run), `_vendors/` (one
module per API shape), `_strict_schema` (OpenAI strict mode), `_gemini_schema` (Gemini's OpenAPI subset),
`_names` (valid, unique, reversible function names), `_arguments` (parse, restore, validate), `_executor`
(one turn's calls, concurrently, errors as data), `_schema_walk` (how far any of them follows a server's
schema: local references only, cycles refused, depth and size bounded). Host-side code: it builds on
`mcp_kit.client` and must not import the server side (server, session, transports). Kept out of
`mcp_kit.__all__`, which is the server API.
"""

from ._arguments import ArgumentChecker, ArgumentError, parse_arguments
from ._bridge import Export, ExportNote, ToolBridge
from ._calls import MalformedResponseError, ToolCall, ToolOutcome, Turn
from ._gemini_schema import GeminiSchemaError, to_gemini_schema
from ._names import ANTHROPIC_NAMES, GEMINI_NAMES, OPENAI_NAMES, NameMap, NameRules, Renamed
from ._remote import ConfirmationRequest, RemoteTool, ToolSession
from ._schema_document import SchemaConversionError
from ._strict_schema import StrictSchemaError, check_strict_limits, to_strict_schema
from ._vendors import FORMATS

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
