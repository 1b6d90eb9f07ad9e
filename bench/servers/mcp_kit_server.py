"""The benchmark's tiny server written with mcp_kit (this project).

Tools `echo(text) -> str` and `add(a, b) -> int`, one static text resource `bench://static`.
Run: `python mcp_kit_server.py --transport stdio` or `--transport http --port N [--json-response]`.
"""

from __future__ import annotations

import inspect
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _args import parse_bench_args  # noqa: E402
from mcp_kit import MCPServer  # noqa: E402

STATIC_TEXT = "static resource text for the benchmark"
logger = logging.getLogger("bench.mcp_kit_server")


def build_app() -> MCPServer:
    """Create the mcp_kit server with the two tools and the static resource."""
    app = MCPServer("bench")

    @app.tool
    def echo(text: str) -> str:
        """Return the given text unchanged."""
        return text

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @app.resource("bench://static", name="static", mime_type="text/plain")
    def static() -> str:
        """A constant text resource."""
        return STATIC_TEXT

    return app


def main() -> None:
    """Parse the flags and serve on stdio or Streamable HTTP."""
    args = parse_bench_args("mcp_kit_server.py")
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    app = build_app()
    if args.transport == "stdio":
        app.run(transport="stdio")
        return
    options = {"host": args.host, "port": args.port}
    if args.json_response:
        if "json_response" in inspect.signature(app.run).parameters:
            options["json_response"] = True
        else:
            logger.error("this mcp_kit version has no JSON-response mode for Streamable HTTP")
            sys.exit(3)
    app.run(transport="http", **options)


if __name__ == "__main__":
    main()
