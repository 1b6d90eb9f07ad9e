"""A stdio server for the official SDK client's tests: tools that report what the server saw.

`wait_forever` reports progress once (the call is running), then waits until cancelled and records
that it saw its cancellation; `was_stopped` tells the client so. `meet` returns only once `parties`
calls of it are running at the same time, an event-based proof of concurrency (no clock). Run it as
`python -m tests.helpers.sdk_probe_server` from the repository root.
"""

from __future__ import annotations

import anyio

from mcp_kit import Context, MCPServer, ToolError

app = MCPServer("sdk-probe")
_stopped = anyio.Event()
_meetings: dict[str, tuple[list[int], anyio.Event]] = {}


@app.tool
async def wait_forever(ctx: Context) -> str:
    """Report progress once, then wait for a minute (or until cancelled)."""
    await ctx.report_progress(0, 1, "started")
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        _stopped.set()
        raise
    return "finished"


@app.tool
async def was_stopped(within: float) -> str:
    """'stopped' once wait_forever saw its cancellation (waiting up to `within` s for it), else 'running'."""
    with anyio.move_on_after(within):
        await _stopped.wait()
        return "stopped"
    return "running"


@app.tool
async def meet(at: str, parties: int, within: float = 30) -> str:
    """Return 'met N' once `parties` calls naming the meeting `at` are running at once; an error after `within` s."""
    arrived, everyone = _meetings.setdefault(at, ([0], anyio.Event()))
    arrived[0] += 1
    if arrived[0] >= parties:
        everyone.set()
    with anyio.move_on_after(within):
        await everyone.wait()
        return f"met {arrived[0]}"
    raise ToolError(f"only {arrived[0]} of {parties} calls were running at once after {within:g} s")


if __name__ == "__main__":
    app.run()
