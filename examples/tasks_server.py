"""Long-running tools as tasks: a server whose `build_report` runs as a task when the client supports tasks.

    python examples/tasks_server.py                     # serve it over stdio (or --transport http --port 8000)
    python examples/tasks_server.py --demo              # watch a client create, poll, cancel and fetch tasks

A client that declares the tasks extension (2026-07-28) gets a task handle at once and polls
`tasks/get`; a 2025-11-25 client asks for a task with a `task` param and fetches with
`tasks/result`; any other client gets the report as an ordinary (slow) result.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import anyio
from pydantic import Field

from mcp_kit import Context, MCPServer

app = MCPServer("reports", instructions="build_report may take a while: it runs as a task when you can poll it.")


@app.tool(task="optional", read_only=True)
async def build_report(items: Annotated[int, Field(ge=1, le=1000, description="How many items to cover")],
                       ctx: Context) -> str:
    """Build a report over `items` items (about 20 ms per item).

    Runs as a task when the client supports tasks: the call answers at once with a task id; poll it
    (its status message says how far it got) and fetch the report when it completes. Cancelling the
    task stops the work.
    """
    for done in range(1, items + 1):
        await anyio.sleep(0.02)  # the slow part: a query, a computation, a download...
        await ctx.report_progress(done, items, f"item {done}/{items}")
    return f"Report over {items} items: all fine."


async def demo() -> None:
    """Drive the server in memory as a 2026-07-28 client declaring the tasks extension would."""
    from mcp_kit.testing import connect

    envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "demo", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}

    async def send(method: str, **params: Any) -> Any:
        return await client.request(method, {**params, "_meta": envelope})

    async with connect(app) as client:
        task = await send("tools/call", name="build_report", arguments={"items": 25})
        print(f"created   {task['taskId'][:8]}… status={task['status']} pollIntervalMs={task['pollIntervalMs']}")
        doomed = await send("tools/call", name="build_report", arguments={"items": 1000})
        await send("tasks/cancel", taskId=doomed["taskId"])
        print(
            f"cancelled {doomed['taskId'][:8]}… status={(await send('tasks/get', taskId=doomed['taskId']))['status']}"
        )
        while True:
            state = await send("tasks/get", taskId=task["taskId"])
            if state["status"] in ("completed", "failed", "cancelled"):
                break
            print(f"polled    {task['taskId'][:8]}… status={state['status']} ({state.get('statusMessage', '-')})")
            await anyio.sleep(0.2)
        print(f"completed {task['taskId'][:8]}… result: {state['result']['content'][0]['text']}")


if __name__ == "__main__":
    if "--demo" in sys.argv[1:]:
        anyio.run(demo)
    else:
        import argparse

        from mcp_kit import add_run_arguments

        app.run_from_args(add_run_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0])).parse_args())
