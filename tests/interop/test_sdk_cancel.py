"""The official SDK client cancels a tool over stdio, and the server really stops it, on both stdio paths.

The client side of cancellation (the SDK sends notifications/cancelled when the call is abandoned) is not
enough: the probe server's slow tool reports, through a second tool, that it saw its cancellation. The
server runs with each stdio path forced (`MCP_KIT_STDIO_MODE=loop|threads`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.anyio


def probe_params(stdio_mode: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "tests.helpers.sdk_probe_server"], cwd=str(ROOT),
                                 env={"MCP_KIT_STDIO_MODE": stdio_mode})


@pytest.mark.parametrize("stdio_mode", ["loop", "threads"])
async def test_sdk_client_cancels_a_slow_tool_and_the_server_stops_it(stdio_mode: str) -> None:
    async with stdio_client(probe_params(stdio_mode)) as (read, write), ClientSession(read, write) as session:
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
        assert (await session.call_tool("meet", {"at": "after", "parties": 1})).content[0].text == "met 1"  # goes on
