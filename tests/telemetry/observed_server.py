"""A server for the observability tests: which process answered, a question to the user, a task, a log line
written while serving, and an upstream fetch that carries the trace on.

Run: python tests/telemetry/observed_server.py --transport http --backend redis://127.0.0.1:PORT/0 --metrics
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from anywhere: mcp_kit and tests

from mcp_kit import Context, MCPServer, add_run_arguments  # noqa: E402

app = MCPServer("observed")
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
log = logging.getLogger("observed")


@app.tool
def whoami() -> str:
    """The id of the process that answered (its PID)."""
    return str(os.getpid())


@app.tool
async def ask(ctx: Context) -> str:
    """Ask the user for a name, then greet them (and say which process ran it)."""
    answer = await ctx.elicit("Your name?", NAME_SCHEMA, key="name")
    name = answer.content["name"] if answer.content else "?"
    return f"hello {name} from {os.getpid()}"


@app.tool(task="optional")
async def slow_report(gate: str = "") -> str:
    """A long job (a task when the client asks): waits until the file `gate` exists."""
    while gate and not os.path.exists(gate):
        await anyio.sleep(0.05)
    return f"report from {os.getpid()}"


@app.tool
def note(text: str) -> str:
    """Writes a log line while serving the call."""
    log.info("noting a call")
    return "noted"


@app.tool
async def fetch(url: str, ctx: Context) -> str:
    """Fetch `url` (a loopback test server), continuing this call's trace."""
    async with httpx.AsyncClient() as client:
        response = await client.get(url, headers=ctx.trace_headers(), timeout=10)
    return response.text


if __name__ == "__main__":
    app.run_from_args(add_run_arguments(argparse.ArgumentParser()).parse_args())
