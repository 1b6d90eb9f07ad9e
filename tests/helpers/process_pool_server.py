"""A server whose CPU-bound tool runs in its process pool: for the end-to-end tests over stdio and HTTP.

Its tools are defined here, in the script itself, as a user's would be: a worker process imports this
file again (as `__mp_main__`), which is why the server starts only under `if __name__ == "__main__"`.

    python tests/helpers/process_pool_server.py                                  # stdio
    python tests/helpers/process_pool_server.py --transport http --port 8000     # Streamable HTTP
    (the options of `mcp-kit run`: `add_run_arguments`)
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from mcp_kit import MCPServer, ToolError, add_run_arguments

app = MCPServer("process-pool", max_tool_processes=2)


@app.tool(run_in="process")
def primes_below(limit: int) -> dict[str, int]:
    """Count the primes below `limit` (pure-Python CPU work), and say which process did it."""
    if limit > 10_000_000:
        raise ToolError("limit must be at most 10,000,000")
    sieve = bytearray([1]) * max(limit, 2)
    sieve[0:2] = b"\x00\x00"
    for i in range(2, int(limit**0.5) + 1):
        if sieve[i]:
            sieve[i * i::i] = bytearray(len(range(i * i, limit, i)))
    return {"primes": sum(sieve[:limit]), "pid": os.getpid()}


@app.tool(run_in="process")
def hold(gate: str) -> str:
    """Write `<gate>.started` (the worker's pid) and wait until `<gate>.release` exists (at most a minute)."""
    print(f"holding {gate}")  # a stray print in a worker process must not reach the protocol's stdout
    Path(f"{gate}.started.tmp").write_text(str(os.getpid()))
    os.replace(f"{gate}.started.tmp", f"{gate}.started")  # whole when it appears: the test reads it at once
    deadline = time.monotonic() + 60
    while not Path(f"{gate}.release").exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    return "released"


@app.tool
async def server_pid() -> int:
    """The pid of the server process itself."""
    return os.getpid()


if __name__ == "__main__":
    app.run_from_args(add_run_arguments(argparse.ArgumentParser(description="process-pool test server")).parse_args())
