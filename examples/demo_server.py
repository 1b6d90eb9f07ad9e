"""A small server using every feature: the end-to-end tests launch it as a subprocess."""

from __future__ import annotations

from typing import Annotated, Literal

import anyio
from pydantic import BaseModel, Field

from mcp_kit import Context, MCPServer, ResourceNotFound, ToolError

app = MCPServer("demo", version="1.0.0", title="Demo server", instructions="A demo of mcp_kit features.")

NOTES = {"welcome": "Hello from mcp_kit.", "todo": "Write more tests."}


class Sum(BaseModel):
    total: float
    terms: int


@app.tool(read_only=True)
def add(a: Annotated[float, Field(description="First number")], b: float = 0) -> Sum:
    """Add two numbers.

    Args:
        b: Second number (default 0).
    """
    return Sum(total=a + b, terms=2)


@app.tool
async def echo(text: str, style: Literal["plain", "upper"] = "plain") -> str:
    """Return the text as given, or upper-cased."""
    return text.upper() if style == "upper" else text


@app.tool
async def slow(seconds: Annotated[float, Field(ge=0, le=30)], ctx: Context) -> str:
    """Sleep for `seconds`, reporting progress every 0.1 s."""
    steps = max(1, int(seconds * 10))
    for step in range(steps):
        await anyio.sleep(seconds / steps)
        await ctx.report_progress(step + 1, steps, f"step {step + 1}/{steps}")
    return f"slept {seconds} s"


@app.tool
def fail(kind: Literal["tool", "crash"] = "tool") -> str:
    """Fail on purpose (for tests)."""
    if kind == "tool":
        raise ToolError("this tool failed on purpose; try kind='crash' for an unexpected error")
    raise RuntimeError("unexpected crash")


@app.tool
async def touch_note(name: str, text: str, ctx: Context) -> str:
    """Replace a note's text and notify subscribers of note://{name}."""
    NOTES[name] = text
    app.notify_resource_updated(f"note://{name}")
    await ctx.info(f"note {name} changed")
    return f"note {name} updated"


@app.resource("note://index", mime_type="application/json")
def note_index() -> dict[str, list[str]]:
    """The names of all notes."""
    return {"notes": sorted(NOTES)}


@app.resource("note://{name}", mime_type="text/plain")
def note(name: str) -> str:
    """One note's text."""
    if name not in NOTES:
        raise ResourceNotFound(f"note://{name}", f"No note named '{name}'. Notes: {', '.join(sorted(NOTES))}")
    return NOTES[name]


@app.resource("data://blob", mime_type="application/octet-stream")
def blob() -> bytes:
    """Four raw bytes."""
    return b"\x00\x01\x02\xff"


@app.prompt(title="Summarise a note")
def summarise(name: Annotated[str, Field(description="Note name")], tone: str = "neutral") -> str:
    """Ask for a summary of a note."""
    return f"Summarise note '{name}' in a {tone} tone:\n{NOTES.get(name, '(missing)')}"


@app.completion("note://{name}", "name")
@app.completion("summarise", "name")
def complete_note(value: str, context: dict[str, str]) -> list[str]:
    return [n for n in sorted(NOTES) if n.startswith(value)]


if __name__ == "__main__":
    import argparse

    from mcp_kit import add_run_arguments

    app.run_from_args(add_run_arguments(argparse.ArgumentParser(description="mcp_kit demo server")).parse_args())
