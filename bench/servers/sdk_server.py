"""The benchmark's tiny server written with the official MCP Python SDK (mcp==2.3.0, MCPServer).

Tools `echo(text) -> str` and `add(a, b) -> int`, one static text resource `bench://static`.
Run: `python sdk_server.py --transport stdio` or `--transport http --port N [--json-response]`.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _args import parse_bench_args, tool_style
from mcp.server.mcpserver import MCPServer

STATIC_TEXT = "static resource text for the benchmark"


def build_app(log_level: str) -> MCPServer:
    """Create the SDK server with the two tools and the static resource."""
    app = MCPServer("bench", log_level=log_level.upper())

    if tool_style() == "sync":  # BENCH_TOOL_STYLE=sync: plain functions (run in worker threads)

        @app.tool()
        def echo(text: str) -> str:
            """Return the given text unchanged."""
            return text

        @app.tool()
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    else:  # the default: coroutine functions, the same code in every framework

        @app.tool()
        async def echo(text: str) -> str:
            """Return the given text unchanged."""
            return text

        @app.tool()
        async def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    @app.resource("bench://static", name="static", mime_type="text/plain")
    def static() -> str:
        """A constant text resource."""
        return STATIC_TEXT

    return app


def main() -> None:
    """Parse the flags and serve on stdio or Streamable HTTP."""
    args = parse_bench_args("sdk_server.py")
    app = build_app(args.log_level)
    if args.transport == "stdio":
        app.run("stdio")
    elif args.transport == "sse":
        app.run("sse", host=args.host, port=args.port)
    else:
        app.run(
            "streamable-http",
            host=args.host,
            port=args.port,
            streamable_http_path="/mcp",
            json_response=args.json_response,
        )


if __name__ == "__main__":
    main()
