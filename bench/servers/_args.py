"""Command-line flags shared by the reference benchmark servers (no framework imports)."""

from __future__ import annotations

import argparse


def parse_bench_args(prog: str) -> argparse.Namespace:
    """Parse `--transport stdio|http|sse`, `--host`, `--port`, `--json-response`, `--log-level`."""
    parser = argparse.ArgumentParser(
        prog=prog, description="Tiny MCP server used by bench/run.py"
    )
    parser.add_argument("--transport", choices=["stdio", "http", "sse"], default="stdio",
                        help="sse: the legacy HTTP+SSE transport (GET /sse, POST /messages/)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--json-response",
        action="store_true",
        help="Streamable HTTP: answer POSTs with application/json instead of an SSE stream",
    )
    parser.add_argument(
        "--log-level", default="WARNING", help="server log level (stderr)"
    )
    return parser.parse_args()


def tool_style() -> str:
    """`async` (default) or `sync`: how the benchmark's tools are written, the same in every framework."""
    import os

    return "sync" if os.environ.get("BENCH_TOOL_STYLE") == "sync" else "async"
