"""The official SDK client cancels a tool over stdio, and the server really stops it.

The client side of cancellation (the SDK sends notifications/cancelled when the call is abandoned) is not
enough: a probe server's slow tool reports, through a second tool, that it saw its cancellation.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.anyio


CANCEL_PROBE = textwrap.dedent('''
    """A server whose slow tool reports, through a second tool, that it was stopped."""
    import anyio

    from mcp_kit import Context, MCPServer

    app = MCPServer("cancel-probe")
    events: dict[str, anyio.Event] = {}


    def stopped() -> anyio.Event:
        return events.setdefault("stopped", anyio.Event())


    @app.tool
    async def wait_forever(ctx: Context) -> str:
        """Report progress once, then wait for a minute (or until cancelled)."""
        await ctx.report_progress(0, 1, "started")
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            stopped().set()
            raise
        return "finished"


    @app.tool
    async def was_stopped(within: float) -> str:
        """'stopped' once wait_forever saw its cancellation (waiting up to `within` s for it), else 'running'."""
        with anyio.move_on_after(within):
            await stopped().wait()
            return "stopped"
        return "running"


    if __name__ == "__main__":
        app.run()
''')


async def test_sdk_client_cancels_a_slow_tool_and_the_server_stops_it(tmp_path: Path) -> None:
    script = tmp_path / "cancel_probe.py"
    script.write_text(CANCEL_PROBE)
    params = StdioServerParameters(command=sys.executable, args=[str(script)], cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        assert (await session.call_tool("was_stopped", {"within": 0})).content[0].text == "running"
        started = anyio.Event()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            started.set()

        async def call() -> None:
            await session.call_tool("wait_forever", {}, progress_callback=on_progress)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            with anyio.fail_after(10):
                await started.wait()  # the tool is running on the server
            tg.cancel_scope.cancel()  # the SDK sends notifications/cancelled for us
        assert (await session.call_tool("was_stopped", {"within": 10})).content[0].text == "stopped"
