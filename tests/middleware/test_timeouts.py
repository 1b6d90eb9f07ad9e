"""`Timeouts`: a tool that never ends is answered `isError` at its limit, whether async, thread- or process-run."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from mcp_kit import MCPServer
from mcp_kit.middleware import Timeouts
from mcp_kit.testing import connect
from tests.middleware.process_tools import quick, sleep_forever

pytestmark = pytest.mark.anyio


def assert_timed_out(result: dict, name: str, seconds: str) -> None:
    text = result["content"][0]["text"]
    assert result["isError"] is True
    assert f"Tool '{name}' timed out" in text and f"limit of {seconds} s" in text and "--tool-timeout" in text


async def test_an_async_tool_is_cancelled_at_its_own_timeout() -> None:
    app = MCPServer("t")
    stopped = anyio.Event()

    @app.tool(timeout=2)
    async def forever() -> str:
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()
        return "never"

    async with connect(app) as client:
        started = time.monotonic()
        with anyio.fail_after(3):
            result = await client.call_tool("forever", {})
        assert time.monotonic() - started < 3
        assert_timed_out(result, "forever", "2")
        assert stopped.is_set()  # really cancelled


async def test_a_thread_tool_is_answered_at_the_deadline_and_keeps_its_place_until_it_returns() -> None:
    app = MCPServer("t", max_sync_threads=1, middleware=[Timeouts(default=2)])
    release = threading.Event()

    @app.tool
    def blocking() -> str:
        release.wait(60)
        return "late"

    @app.tool
    def fast() -> str:
        return "fast"

    async with connect(app) as client:
        try:
            with anyio.fail_after(3):
                result = await client.call_tool("blocking", {})
            assert_timed_out(result, "blocking", "2")
            with anyio.move_on_after(0.3) as waited:  # the one thread is still busy: the next call waits
                await client.call_tool("fast", {})
            assert waited.cancelled_caught
        finally:
            release.set()
        with anyio.fail_after(10):
            assert (await client.call_tool("fast", {}))["content"][0]["text"] == "fast"


async def test_a_process_tool_has_its_worker_killed_and_replaced() -> None:
    app = MCPServer("t", max_tool_processes=1, middleware=[Timeouts(per_tool={"sleep_forever": 2})])
    app.tool(sleep_forever, run_in="process")
    app.tool(quick, run_in="process")
    async with connect(app) as client:
        with anyio.fail_after(3):
            result = await client.call_tool("sleep_forever", {})
        assert_timed_out(result, "sleep_forever", "2")
        assert app.executors.processes.killed == 1
        with anyio.fail_after(30):  # a fresh pool serves the next call (the only worker was killed)
            assert (await client.call_tool("quick", {"n": 1}))["content"][0]["text"] == "2"


async def test_a_calls_limit_is_the_maps_then_the_tools_then_the_default() -> None:
    app = MCPServer("t")

    @app.tool(timeout=5)
    async def own() -> str:
        return "x"

    @app.tool
    async def plain() -> str:
        return "x"

    limits = Timeouts(default=7, per_tool={"own": 1})
    assert (limits.limit_for(app, "own"), limits.limit_for(app, "plain")) == (1, 7)
    assert Timeouts().limit_for(app, "own") == 5 and Timeouts().limit_for(app, "plain") is None
    with pytest.raises(ValueError):
        Timeouts(default=0)
    assert "timeouts" in app.builtin_middleware  # a tool's own timeout installs the middleware enforcing it
