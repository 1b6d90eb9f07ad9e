"""An mcp_kit server whose tools run as tasks, for the proxy's task tests: `job` waits for `open_gate`.

`python -m tests.helpers.kit_tasks_upstream` serves stdio.
"""

from __future__ import annotations

import anyio

from mcp_kit import Context, MCPServer

app = MCPServer("kit-tasks-upstream")
gate = anyio.Event()


@app.tool(task="optional")
async def job(n: int, ctx: Context) -> str:
    """Wait until `open_gate` is called, then answer."""
    await ctx.report_progress(1, 2, "waiting for the gate")
    await gate.wait()
    return f"done {n}"


@app.tool(task="required")
async def ask_first(ctx: Context) -> str:
    """A task that asks the user a name, then greets them."""
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"hello {(answer.content or {}).get('name')}"


@app.tool
def open_gate() -> str:
    """Let every waiting `job` finish."""
    gate.set()
    return "open"


if __name__ == "__main__":
    app.run("stdio")
