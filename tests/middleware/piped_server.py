"""A server with a middleware that sees, refuses and rewrites calls, for the transport tests.

    python -m tests.middleware.piped_server [--transport stdio|http ...]
"""

from __future__ import annotations

import argparse
from typing import Any

from mcp_kit import Call, CallNext, MCPServer, Middleware, ToolError, add_run_arguments


class Rewriter(Middleware):
    """Refuses `forbidden`, doubles an argument `a`, and says in every tool result which era it saw."""

    async def on_call_tool(self, call: Call, call_next: CallNext) -> Any:
        if call.name == "forbidden":
            raise ToolError("refused by the middleware")
        if "a" in call.arguments:
            call = call.replace(params={**call.params, "arguments": {**call.arguments, "a": call.arguments["a"] * 2}})
        result = await call_next(call)
        era = "stateless" if call.stateless else "handshake"
        return {**result, "content": [*result["content"], {"type": "text", "text": f"seen:{era}:{call.method}"}]}

    async def on_list_tools(self, call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        return {**result, "tools": [t for t in result["tools"] if t["name"] != "forbidden"]}


def build() -> MCPServer:
    app = MCPServer("piped", middleware=[Rewriter()])

    @app.tool(structured_output=False)
    async def add(a: int, b: int) -> str:
        return str(a + b)

    @app.tool
    async def forbidden() -> str:
        return "never"

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    build().run_from_args(parser.parse_args())


if __name__ == "__main__":
    main()
