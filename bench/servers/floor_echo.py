"""Floor reference: a pure-Python newline-delimited JSON-RPC loop that answers like the tiny MCP server.

No framework, no validation, no tasks: read a line, build the answer dict, write it. It speaks only
stdio and exists to show what the protocol itself costs in CPython (the lower bound for any framework).
"""

from __future__ import annotations

import json
import sys
from typing import Any

STATIC_TEXT = "static resource text for the benchmark"
TOOLS = [
    {
        "name": "echo",
        "description": "Return the given text unchanged.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
]


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "protocolVersion": params.get("protocolVersion", "2025-11-25"),
        "capabilities": {"tools": {}, "resources": {}},
        "serverInfo": {"name": "bench", "version": "0"},
    }


def _call_tool(params: dict[str, Any]) -> dict[str, Any]:
    arguments = params.get("arguments") or {}
    if params.get("name") == "echo":
        return {"content": [{"type": "text", "text": arguments["text"]}], "isError": False}
    if params.get("name") == "add":
        total = arguments["a"] + arguments["b"]
        return {
            "content": [{"type": "text", "text": str(total)}],
            "structuredContent": {"result": total},
            "isError": False,
        }
    return {"content": [{"type": "text", "text": "unknown tool"}], "isError": True}


def _read_resource(params: dict[str, Any]) -> dict[str, Any]:
    return {"contents": [{"uri": params["uri"], "mimeType": "text/plain", "text": STATIC_TEXT}]}


HANDLERS = {
    "initialize": _initialize,
    "tools/call": _call_tool,
    "tools/list": lambda params: {"tools": TOOLS},
    "resources/read": _read_resource,
    "ping": lambda params: {},
}


def main() -> None:
    """Serve until stdin closes."""
    if "--transport" in sys.argv and sys.argv[sys.argv.index("--transport") + 1] != "stdio":
        sys.exit("floor_echo.py speaks stdio only")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # notification
        handler = HANDLERS.get(message.get("method"))
        if handler is None:
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": handler(message.get("params") or {})}
        stdout.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
        stdout.flush()


if __name__ == "__main__":
    main()
