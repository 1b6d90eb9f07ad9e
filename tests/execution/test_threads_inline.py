"""Sync tools that prove short run inline on the event loop; slow or blocking ones stay on (or go back to) threads.

Where a call ran is observed by the tool itself: it returns the name of the thread it ran on. No
assertion depends on how long anything took; the tools that must count as slow are slow by far
(milliseconds against the 200 µs rule).
"""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from mcp_kit import MCPServer
from mcp_kit._execution import threads
from mcp_kit.testing import connect

pytestmark = [pytest.mark.anyio,
              pytest.mark.skipif(not threads.FINE_THREAD_CLOCK, reason="no inline runs without a fine thread clock")]
WAIT_S = 10.0
PATIENCE = threads.PROOF_RUNS * 20  # calls a short tool gets to prove itself (a preempted run starts it again)


def spin(seconds: float) -> None:
    """Busy for `seconds` of this thread's CPU time, never off the CPU by choice (slow, not blocking): a loaded
    machine that preempts it stretches the wall clock, never the work."""
    deadline = time.thread_time() + seconds
    while time.thread_time() < deadline:
        pass


class Where:
    """A tool that answers with the thread it ran on, and can be told to be slow or to block."""

    def __init__(self) -> None:
        self.mode = "fast"
        self.entered = threading.Event()
        self.release = threading.Event()

    def where(self) -> str:
        if self.mode == "spin":
            spin(0.002)
        elif self.mode == "sleep":
            time.sleep(0.002)
        elif self.mode == "block":
            self.entered.set()
            if not self.release.wait(WAIT_S):
                raise TimeoutError("never released")
        return threading.current_thread().name


def app_with(where: Where, run_in: str | None = None) -> MCPServer:
    app = MCPServer("inline")
    app.tool(name="where", run_in=run_in)(where.where)  # type: ignore[arg-type]
    return app


async def ran_on(client: object) -> str:
    result = await client.call_tool("where")  # type: ignore[attr-defined]
    assert result["isError"] is False, result
    return str(result["content"][0]["text"])


async def until_inline(client: object, loop_thread: str) -> list[str]:
    """Call `where` until a call runs on the loop's thread (bounded); the threads of every call."""
    seen = []
    for _ in range(PATIENCE):
        seen.append(await ran_on(client))
        if seen[-1] == loop_thread:
            return seen
    raise AssertionError(f"no call ran inline in {PATIENCE} calls")


async def test_a_short_sync_tool_runs_on_threads_first_then_inline() -> None:
    loop_thread = threading.current_thread().name
    async with connect(app_with(Where())) as client:
        seen = await until_inline(client, loop_thread)
        assert len(seen) > threads.PROOF_RUNS
        assert all(name.startswith(threads.THREAD_NAME_PREFIX) for name in seen[:threads.PROOF_RUNS])
        assert await ran_on(client) == loop_thread  # ... and stays there


async def test_a_tool_that_turns_slow_goes_back_to_threads_at_once() -> None:
    loop_thread = threading.current_thread().name
    where = Where()
    async with connect(app_with(where)) as client:
        await until_inline(client, loop_thread)
        where.mode = "spin"
        assert await ran_on(client) == loop_thread  # the run that turned slow ran inline ...
        where.mode = "fast"
        assert (await ran_on(client)).startswith(threads.THREAD_NAME_PREFIX)  # ... the next one is on a thread
        for _ in range(threads.PROOF_RUNS * 2):  # proving itself again takes more runs than the first time
            assert (await ran_on(client)).startswith(threads.THREAD_NAME_PREFIX)


async def test_a_tool_that_waits_stays_on_threads() -> None:
    where = Where()
    where.mode = "sleep"
    async with connect(app_with(where)) as client:
        for _ in range(threads.MAX_WAITS):
            assert (await ran_on(client)).startswith(threads.THREAD_NAME_PREFIX)
        where.mode = "fast"
        for _ in range(threads.PROOF_RUNS * 4):
            assert (await ran_on(client)).startswith(threads.THREAD_NAME_PREFIX)


async def test_run_in_thread_keeps_a_short_tool_on_threads() -> None:
    async with connect(app_with(Where(), run_in="thread")) as client:
        for _ in range(threads.PROOF_RUNS * 4):
            assert (await ran_on(client)).startswith(threads.THREAD_NAME_PREFIX)


async def test_ping_is_answered_while_a_blocking_tool_runs() -> None:
    where = Where()
    where.mode = "block"
    async with connect(app_with(where)) as client, anyio.create_task_group() as tg:
        tg.start_soon(ran_on, client)
        assert await anyio.to_thread.run_sync(where.entered.wait, WAIT_S)
        await client.request("ping")  # the loop is free while the tool blocks
        where.release.set()


async def test_ping_is_answered_while_a_demoted_tool_blocks() -> None:
    loop_thread = threading.current_thread().name
    where = Where()
    async with connect(app_with(where)) as client:
        await until_inline(client, loop_thread)
        where.mode = "spin"
        await ran_on(client)  # turned slow inline: back to threads
        where.mode = "block"
        async with anyio.create_task_group() as tg:
            tg.start_soon(ran_on, client)
            assert await anyio.to_thread.run_sync(where.entered.wait, WAIT_S)
            await client.request("ping")
            where.release.set()


async def test_an_inline_call_keeps_its_context_variables_to_itself() -> None:
    import contextvars

    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")
    loop_thread = threading.current_thread().name
    app = MCPServer("inline")

    @app.tool
    def mark() -> str:
        before = marker.get()
        marker.set("set by the tool")
        return f"{threading.current_thread().name}|{before}"

    async with connect(app) as client:
        for _ in range(PATIENCE):
            text = (await client.call_tool("mark"))["content"][0]["text"]
            thread, before = text.split("|")
            assert before == "unset"
            if thread == loop_thread:
                break
        else:
            raise AssertionError("never ran inline")
        assert marker.get() == "unset"
