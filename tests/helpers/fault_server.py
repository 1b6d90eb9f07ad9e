"""The server the fault suite attacks: a few tools, resources and a prompt, each exposing one failure path.

Run it as `python -m tests.helpers.fault_server [--transport http ...]` (stdio by default), or import `build()`
for an in-process app. Gates let a test hold a call in flight until it chooses to release it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated

import anyio
from pydantic import Field

from mcp_kit import Context, MCPServer, add_run_arguments

Code = Annotated[str, Field(min_length=1, max_length=8, pattern=r"^[a-z0-9]+$",
                            description="An item code: 1-8 lower-case letters or digits, e.g. 'abc1'.")]
UNENCODABLE = "bad\udcff.txt"  # what os.listdir gives for a file named b"bad\xff.txt"


@dataclass
class Gate:
    """What a test sees of one held call: it started, it may finish, it was cancelled."""

    entered: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)
    cancelled: anyio.Event = field(default_factory=anyio.Event)

    def __iter__(self) -> Iterator[anyio.Event]:  # entered, release = app.gate(key)
        return iter((self.entered, self.release))


def build() -> MCPServer:
    app = MCPServer("fault", instructions="Targets for the fault suite.")
    app.item_reads: list[str] = []  # type: ignore[misc]  # codes that reached the template function
    app.gates: dict[str, Gate] = {}  # type: ignore[misc]

    def gate(key: str) -> Gate:
        return app.gates.setdefault(key, Gate())  # type: ignore[attr-defined]

    app.gate = gate  # type: ignore[attr-defined]
    app.started = gate("").entered  # type: ignore[attr-defined]  # `forever` with no key started
    app.cancelled = gate("").cancelled  # type: ignore[attr-defined]  # ... and was cancelled

    @app.tool
    async def echo(text: str) -> str:
        """Return the text as given."""
        return text

    @app.tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @app.tool
    async def forever(ctx: Context, report: bool = False, key: str = "") -> str:
        """Run until cancelled (reports progress once first when `report` and the client gave a token)."""
        if report:
            await ctx.report_progress(1, None, "started")
        held = gate(key)
        held.entered.set()
        try:
            await anyio.sleep_forever()
        finally:
            held.cancelled.set()
        return "never"

    @app.tool
    async def was_cancelled(key: str = "", within: float = 0) -> str:
        """'cancelled' once the held call `key` (forever or gated) saw its cancellation (waiting up to `within`
        s for it), 'running' while it is held, 'not started' when no such call started within 5 s."""
        held = gate(key)
        with anyio.move_on_after(5):
            await held.entered.wait()
        if not held.entered.is_set():
            return "not started"
        with anyio.move_on_after(within):
            await held.cancelled.wait()
            return "cancelled"
        return "running"

    @app.tool
    async def gated(key: str) -> str:
        """Wait until the test opens the gate `key`."""
        held = gate(key)
        held.entered.set()
        try:
            await held.release.wait()
        finally:
            if not held.release.is_set():
                held.cancelled.set()
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
