"""An mcp_kit server for the client and proxy tests: the same tools as `sdk_upstream`, and a few more.

`python -m tests.helpers.kit_upstream` serves stdio (or `--transport http ...`).
"""

from __future__ import annotations

import json
import os

from mcp_kit import Context, MCPServer

MOTD = ["mcp_kit says hi"]  # kit://motd, until touch(motd=...) changes it
app = MCPServer("kit-upstream", instructions="mcp_kit behind the tests",
                page_size=int(os.environ.get("KIT_PAGE_SIZE", "100")))


@app.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool
async def ask_name(ctx: Context) -> str:
    """Ask the user for a name and greet them."""
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"hello {answer.content['name']}" if answer.action == "accept" and answer.content else "no name"


@app.tool
async def shout(words: str, ctx: Context) -> str:
    """Log the words at info level, then return them."""
    await ctx.info(words)
    return words


@app.tool
def pid() -> int:
    """This process's id (a restarted upstream has another)."""
    return os.getpid()


@app.tool
def die() -> str:
    """Exit the process at once, in the middle of this call."""
    os._exit(3)


@app.tool
def meta_echo(ctx: Context) -> str:
    """The request's _meta as JSON."""
    return json.dumps(ctx.meta, sort_keys=True)


@app.tool
def touch(motd: str | None = None) -> str:
    """Tell subscribers kit://motd changed (to `motd`, when given)."""
    if motd is not None:
        MOTD[0] = motd
    app.notify_resource_updated("kit://motd")
    return "touched"


@app.tool
def subscribers(uri: str) -> int:
    """How many sessions and listen streams are subscribed to `uri` here."""
    return app.hub.subscribers(uri)


@app.tool
def grow() -> str:
    """Add a tool (the tool list changes)."""
    app.add_tool(lambda: "new", name="grown")
    return "grown"


@app.prompt
def greet(who: str) -> str:
    """A greeting prompt."""
    return f"Say hello to {who}."


@app.resource("kit://motd")
def motd() -> str:
    """Message of the day."""
    return MOTD[0]


if __name__ == "__main__":
    import argparse

    from mcp_kit._serving.serve import add_run_arguments

    app.run_from_args(add_run_arguments(argparse.ArgumentParser()).parse_args())
