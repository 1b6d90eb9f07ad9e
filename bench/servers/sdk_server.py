"""The benchmark's tiny server written with the official MCP Python SDK (mcp==2.3.0, MCPServer).

Tools `echo(text) -> str` and `add(a, b) -> int`, one static text resource `bench://static`, plus
whatever `_workload.py` adds from the environment (generated tools, `busy`, `bump` + `bench://counter`).
Tools are registered with `structured_output=False`: plain text content, the same bytes every
benchmark server sends (the SDK's default would add `structuredContent` with a copy of the result).
Run: `python sdk_server.py --transport stdio` or `--transport http --port N [--json-response]`.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _bench_loop  # noqa: F401  # applies BENCH_LOOP before any framework is imported
import _workload
from _args import parse_bench_args, tool_style
from mcp.server.mcpserver import Context, MCPServer


def build_app(log_level: str) -> MCPServer:
    """Create the SDK server with the two tools, the static resource and the requested extras."""
    app = MCPServer("bench", log_level=log_level.upper())

    if tool_style() == "sync":  # BENCH_TOOL_STYLE=sync: plain functions (run in worker threads)

        @app.tool(structured_output=False)
        def echo(text: str) -> str:
            """Return the given text unchanged."""
            return text

        @app.tool(structured_output=False)
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    else:  # the default: coroutine functions, the same code in every framework

        @app.tool(structured_output=False)
        async def echo(text: str) -> str:
            """Return the given text unchanged."""
            return text

        @app.tool(structured_output=False)
        async def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    @app.resource("bench://static", name="static", mime_type="text/plain")
    def static() -> str:
        """A constant text resource."""
        return _workload.STATIC_TEXT

    for index in range(_workload.extra_tool_count()):
        app.tool(structured_output=False)(_workload.generated_tool(index))
    if _workload.feature("busy"):
        app.tool(description=_workload.BUSY_DESCRIPTION, structured_output=False)(_workload.busy)
    if _workload.feature("fanout"):

        @app.resource(_workload.COUNTER_URI, name="counter", mime_type="text/plain")
        def counter() -> str:
            """A resource whose subscribers `bump` notifies."""
            return "0"

        # MCPServer's notify_resource_updated reaches `subscriptions/listen` streams (2026-07-28);
        # it serves no `resources/subscribe` (the handshake era), so only that era is measured.
        @app.tool(description=_workload.BUMP_DESCRIPTION, structured_output=False)
        async def bump(ctx: Context) -> str:
            await ctx.notify_resource_updated(_workload.COUNTER_URI)
            return "ok"

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
