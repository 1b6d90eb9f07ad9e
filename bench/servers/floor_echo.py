"""Floor reference: a pure-Python newline-delimited JSON-RPC loop that answers like the tiny MCP server.

No framework, no validation, no tasks: read a line, build the answer dict, write it. It exists to
show what the protocol itself costs in CPython (the lower bound for any framework). With
`--transport http` it serves the same answers over a bare HTTP protocol (floor_http.py): the ceiling
of what the harness's HTTP client can measure. `BENCH_EXTRA_TOOLS=N` adds the generated tools of
`_workload.py` as plain definitions, listed 100 per page like mcp_kit's. The stdio floor has no event
loop; `BENCH_LOOP` applies to the HTTP floor only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

STATIC_TEXT = "static resource text for the benchmark"
PAGE_SIZE = 100
TOOLS = [
    {
        "name": "echo",
        "description": "Return the given text unchanged.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
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
        return {
            "content": [{"type": "text", "text": arguments["text"]}],
            "isError": False,
        }
    if params.get("name") == "add":
        total = arguments["a"] + arguments["b"]
        return {"content": [{"type": "text", "text": str(total)}], "isError": False}
    return {"content": [{"type": "text", "text": "unknown tool"}], "isError": True}


def _read_resource(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "contents": [
            {"uri": params["uri"], "mimeType": "text/plain", "text": STATIC_TEXT}
        ]
    }


def _generated_tools(count: int) -> list[dict[str, Any]]:
    """Definitions of the generated tools of `_workload.py` (written out: no framework, no inspection)."""
    return [
        {
            "name": f"forecast_{index:05d}",
            "description": f"Weather forecast for a city (generated tool {index}).",
            "inputSchema": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer", "default": 1}},
                "required": ["city"],
            },
        }
        for index in range(count)
    ]


ALL_TOOLS = TOOLS + _generated_tools(int(os.environ.get("BENCH_EXTRA_TOOLS", "0") or 0))


def _list_tools(params: dict[str, Any]) -> dict[str, Any]:
    start = int(params.get("cursor") or 0)
    result: dict[str, Any] = {"tools": ALL_TOOLS[start : start + PAGE_SIZE]}
    if start + PAGE_SIZE < len(ALL_TOOLS):
        result["nextCursor"] = str(start + PAGE_SIZE)
    return result


HANDLERS = {
    "initialize": _initialize,
    "tools/call": _call_tool,
    "tools/list": _list_tools,
    "resources/read": _read_resource,
    "resources/subscribe": lambda params: {},  # floor_http.py keeps the subscribers
    "ping": lambda params: {},
}


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON-RPC response to `message` (None for notifications)."""
    if "id" not in message:
        return None
    handler = HANDLERS.get(message.get("method"))
    if handler is None:
        return {
            "jsonrpc": "2.0",
            "id": message["id"],
            "error": {"code": -32601, "message": "Method not found"},
        }
    return {
        "jsonrpc": "2.0",
        "id": message["id"],
        "result": handler(message.get("params") or {}),
    }


def serve_stdio() -> None:
    """Serve until stdin closes."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:
        reply = answer(json.loads(line))
        if reply is not None:
            stdout.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
            stdout.flush()


def main() -> None:
    """Serve on stdio (default) or HTTP."""
    parser = argparse.ArgumentParser(prog="floor_echo.py")
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--log-level", default="WARNING")
    args = parser.parse_args()
    if args.transport == "stdio":
        serve_stdio()
    else:
        import _bench_loop  # noqa: F401  # applies BENCH_LOOP (the HTTP floor runs an asyncio loop)
        from floor_http import (
            serve,  # imported lazily: the stdio floor stays free of asyncio
        )

        serve(args.host, args.port, args.json_response)


if __name__ == "__main__":
    main()
