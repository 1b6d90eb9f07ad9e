"""The benchmark's tiny server written with FastMCP (fastmcp==4.1.6).

Tools `echo(text) -> str` and `add(a, b) -> int`, one static text resource `bench://static`, plus
whatever `_workload.py` adds from the environment (generated tools, `busy`). FastMCP has no resource
subscriptions (it declares `subscribe: false`), so `BENCH_FEATURES=fanout` adds nothing here.
Tools are registered with `output_schema=None`: plain text content, the same bytes every benchmark
server sends (FastMCP's default would add `structuredContent` and a `_meta` marker). `tools/list`
pages hold 100 tools, as mcp_kit's do (FastMCP's default is one page with every tool).
Run: `python fastmcp_server.py --transport stdio` or `--transport http --port N [--json-response]`.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _bench_loop  # noqa: F401  # applies BENCH_LOOP before any framework is imported
import _workload
from _args import parse_bench_args, tool_style
from fastmcp import FastMCP

PAGE_SIZE = 100


def build_app() -> FastMCP:
    """Create the FastMCP server with the two tools, the static resource and the requested extras."""
    app = FastMCP("bench", list_page_size=PAGE_SIZE)

    if tool_style() == "sync":  # BENCH_TOOL_STYLE=sync: plain functions (run in worker threads)

        @app.tool(output_schema=None)
        def echo(text: str) -> str:
            """Return the given text unchanged."""
            return text

        @app.tool(output_schema=None)
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    else:  # the default: coroutine functions, the same code in every framework

        @app.tool(output_schema=None)
        async def echo(text: str) -> str:
            """Return the given text unchanged."""
            return text

        @app.tool(output_schema=None)
        async def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

    @app.resource("bench://static", name="static", mime_type="text/plain")
    def static() -> str:
        """A constant text resource."""
        return _workload.STATIC_TEXT

    for index in range(_workload.extra_tool_count()):
        app.tool(_workload.generated_tool(index), output_schema=None)
    if _workload.feature("busy"):
        app.tool(_workload.busy, description=_workload.BUSY_DESCRIPTION, output_schema=None)
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
