"""The server the fault suite attacks: a few tools, resources and a prompt, each exposing one failure path.

Run it as `python -m tests.fault_server [--transport http ...]` (stdio by default), or import `build()`
for an in-process app. Gates let a test hold a call in flight until it chooses to release it.
"""

from __future__ import annotations

import argparse
from typing import Annotated

import anyio
from pydantic import Field

from mcp_kit import Context, MCPServer, add_run_arguments

Code = Annotated[str, Field(min_length=1, max_length=8, pattern=r"^[a-z0-9]+$",
                            description="An item code: 1-8 lower-case letters or digits, e.g. 'abc1'.")]
UNENCODABLE = "bad\udcff.txt"  # what os.listdir gives for a file named b"bad\xff.txt"


def build() -> MCPServer:
    app = MCPServer("fault", instructions="Targets for the fault suite.")
    app.started = anyio.Event()  # type: ignore[attr-defined]  # set when `forever` starts
    app.cancelled = anyio.Event()  # type: ignore[attr-defined]  # set when `forever` is cancelled
    app.item_reads: list[str] = []  # type: ignore[misc]  # codes that reached the template function
    app.gates: dict[str, tuple[anyio.Event, anyio.Event]] = {}  # type: ignore[misc]  # key -> (entered, release)

    def gate(key: str) -> tuple[anyio.Event, anyio.Event]:
        return app.gates.setdefault(key, (anyio.Event(), anyio.Event()))  # type: ignore[attr-defined]

    app.gate = gate  # type: ignore[attr-defined]

    @app.tool
    async def echo(text: str) -> str:
        """Return the text as given."""
        return text

    @app.tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @app.tool
    async def forever(ctx: Context, report: bool = False) -> str:
        """Run until cancelled (reports progress once first when `report` and the client gave a token)."""
        if report:
            await ctx.report_progress(1, None, "started")
        app.started.set()  # type: ignore[attr-defined]
        try:
            await anyio.sleep_forever()
        finally:
            app.cancelled.set()  # type: ignore[attr-defined]
        return "never"

    @app.tool
    async def gated(key: str) -> str:
        """Wait until the test opens the gate `key`."""
        entered, release = gate(key)
        entered.set()
        await release.wait()
        return f"released {key}"

    @app.tool
    async def unencodable() -> str:
        """Return a string that JSON cannot carry (a lone surrogate)."""
        return UNENCODABLE

    @app.tool(title="Look up an item")
    async def lookup(code: Code) -> str:
        """Look an item up by code (the same constraints as the item template)."""
        return f"item {code}"

    @app.resource("fault://unencodable", mime_type="text/plain")
    def unencodable_resource() -> str:
        """A text that JSON cannot carry."""
        return UNENCODABLE

    @app.resource("fault://item/{code}", mime_type="text/plain")
    def item(code: Code) -> str:
        """One item."""
        app.item_reads.append(code)  # type: ignore[attr-defined]
        return f"item {code}"

    @app.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}"

    return app


if __name__ == "__main__":
    build().run_from_args(add_run_arguments(argparse.ArgumentParser(description="fault-suite server")).parse_args())
