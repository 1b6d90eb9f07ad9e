"""The benchmark's tiny server written with FastMCP (fastmcp==4.1.6).

Tools `echo(text) -> str` and `add(a, b) -> int`, one static text resource `bench://static`.
Run: `python fastmcp_server.py --transport stdio` or `--transport http --port N [--json-response]`.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _args import parse_bench_args, tool_style
from fastmcp import FastMCP

STATIC_TEXT = "static resource text for the benchmark"


def build_app() -> FastMCP:
    """Create the FastMCP server with the two tools and the static resource."""
    app = FastMCP("bench")

    if tool_style() == "sync":  # BENCH_TOOL_STYLE=sync: plain functions (run in worker threads)

        @app.tool
        def echo(text: str) -> str:
            """Return the given text unchanged."""
            return text

        @app.tool
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    else:  # the default: coroutine functions, the same code in every framework

        @app.tool
        async def echo(text: str) -> str:
            """Return the given text unchanged."""
            return text

        @app.tool
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
    args = parse_bench_args("fastmcp_server.py")
    app = build_app()
    if args.transport == "stdio":
        app.run("stdio", show_banner=False, log_level=args.log_level)
    elif args.transport == "sse":
        app.run("sse", show_banner=False, log_level=args.log_level, host=args.host, port=args.port)
    else:
        app.run(
            "http",
            show_banner=False,
            log_level=args.log_level,
            host=args.host,
            port=args.port,
            path="/mcp",
            json_response=args.json_response,
        )


if __name__ == "__main__":
    main()
