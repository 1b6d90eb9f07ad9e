"""What the middleware pipeline costs per tools/call: no middleware, and N pass-through middlewares.

    PYTHONPATH=. .venv/bin/python bench/middleware_overhead.py [--calls 3000] [--rounds 5] [--middlewares 5]

Calls `add` through `mcp_kit.testing` in memory (real JSON, one dispatcher, no sockets) and reports
the CPU time of one call (the least of `--rounds` rounds, each of `--calls` sequential calls). On a
checkout without `mcp_kit.Middleware` only the first line is printed.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import anyio

import mcp_kit
from mcp_kit.testing import connect


def build(middlewares: int) -> Any:
    chain: list[Any] = []
    if middlewares:
        class PassThrough(mcp_kit.Middleware):
            async def on_request(self, call: Any, call_next: Any) -> Any:
                return await call_next(call)

            async def on_call_tool(self, call: Any, call_next: Any) -> Any:
                return await call_next(call)

        chain = [PassThrough() for _ in range(middlewares)]
    app = mcp_kit.MCPServer("bench", middleware=chain) if chain else mcp_kit.MCPServer("bench")

    @app.tool
    async def add(a: int, b: int) -> int:
        return a + b

    return app


async def per_call_us(middlewares: int, calls: int, rounds: int) -> float:
    best = float("inf")
    async with connect(build(middlewares)) as client:
        for _ in range(50):  # warm up: schemas, argument models
            await client.call_tool("add", {"a": 1, "b": 2})
        for _ in range(rounds):
            started = time.process_time()
            for _ in range(calls):
                await client.call_tool("add", {"a": 1, "b": 2})
            best = min(best, (time.process_time() - started) / calls)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--middlewares", type=int, default=5)
    args = parser.parse_args()
    empty = anyio.run(per_call_us, 0, args.calls, args.rounds)
    print(f"no middleware:            {empty:7.2f} us CPU per tools/call")
    if hasattr(mcp_kit, "Middleware"):
        chained = anyio.run(per_call_us, args.middlewares, args.calls, args.rounds)
        print(f"{args.middlewares} pass-through middlewares: {chained:7.2f} us CPU per tools/call "
              f"({chained - empty:+.2f} us)")


if __name__ == "__main__":
    main()
