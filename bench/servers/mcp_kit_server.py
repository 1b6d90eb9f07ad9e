"""The benchmark's tiny server written with mcp_kit (this project).

Tools `echo(text) -> str` and `add(a, b) -> int`, one static text resource `bench://static`, plus
whatever `_workload.py` adds from the environment (generated tools, `busy`, `bump` + `bench://counter`).
Results are plain text content without `structuredContent` (mcp_kit's default for `str`/`int`
returns), exactly the bytes the other benchmark servers send.
Run: `python mcp_kit_server.py --transport stdio` or `--transport http --port N [--json-response]`.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _bench_loop  # noqa: F401  # applies BENCH_LOOP before any framework is imported
import _workload
from _args import parse_bench_args, tool_style

from mcp_kit import MCPServer


def build_app() -> MCPServer:
    """Create the mcp_kit server with the two tools, the static resource and the requested extras."""
    app = MCPServer("bench")

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
        return _workload.STATIC_TEXT

    for index in range(_workload.extra_tool_count()):
        app.tool(_workload.generated_tool(index))
    if _workload.feature("busy"):  # BENCH_BUSY_RUN_IN=process: mcp_kit's process pool instead of a worker thread
        run_in = os.environ.get("BENCH_BUSY_RUN_IN") or None
        app.tool(description=_workload.BUSY_DESCRIPTION, run_in=run_in)(_workload.busy)
    if _workload.feature("fanout"):

        @app.resource(_workload.COUNTER_URI, name="counter", mime_type="text/plain")
        def counter() -> str:
            """A resource whose subscribers `bump` notifies."""
            return "0"

        @app.tool(description=_workload.BUMP_DESCRIPTION)
        async def bump() -> str:
            app.notify_resource_updated(_workload.COUNTER_URI)
            return "ok"

    return app


def main() -> None:
    """Parse the flags and serve on stdio or Streamable HTTP."""
    args = parse_bench_args("mcp_kit_server.py")
    app = build_app()
    log_level = args.log_level.lower()
    if args.transport == "stdio":
        app.run(transport="stdio", log_level=log_level)
        return
    options: dict[str, object] = {
        "host": args.host,
        "port": args.port,
        "log_level": log_level,
    }
    try:  # the fan-out curve holds 1000+ streams: above the default connection and session caps
        from mcp_kit._transports.http_options import HttpOptions

        if hasattr(HttpOptions, "max_connections"):
            options.update(max_connections=4096, max_sessions=4096)
    except ImportError:
        pass
    if os.environ.get("MCP_BACKEND"):  # bench/scaleout_load.py: processes sharing a Redis
        options["backend"] = os.environ["MCP_BACKEND"]
    if args.json_response:
        options["json_response"] = (
            True  # an mcp_kit without this option fails loudly (TypeError), by design
        )
    app.run(transport=args.transport, **options)  # "http" and "sse" are one app with both endpoints


if __name__ == "__main__":
    main()
