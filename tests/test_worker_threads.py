"""Sync tools on worker threads: at most `max_sync_threads` at once, the GIL switch interval while they run.

The bound is observed by the tools themselves: each counts how many of them run at the same moment
and blocks on its own event until the test lets it go.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import anyio
import pytest

from mcp_kit import MCPServer
from mcp_kit.jsonrpc import Request
from mcp_kit.testing import connect
from mcp_kit.threads import DEFAULT_SWITCH_INTERVAL, WorkerThreads, default_thread_limit, machine_cpus

pytestmark = pytest.mark.anyio
WAIT_S = 10.0


class Gauge:
    """How many `hold` calls run now and at most; each waits for its own release."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.running = 0
        self.most = 0
        self.started: list[str] = []
        self.releases: dict[str, threading.Event] = {}

    def hold(self, tag: str) -> str:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.started.append(tag)
            release = self.releases.setdefault(tag, threading.Event())
            self.lock.notify_all()
        try:
            if not release.wait(WAIT_S):
                raise TimeoutError(f"{tag} was never released")
        finally:
            with self.lock:
                self.running -= 1
        return tag

    def release(self, tag: str) -> None:
        with self.lock:
            self.releases.setdefault(tag, threading.Event()).set()

    def wait_started(self, count: int) -> bool:
        with self.lock:
            return self.lock.wait_for(lambda: len(self.started) >= count, WAIT_S)


def gauged_app(gauge: Gauge, **options: Any) -> MCPServer:
    app = MCPServer("threads", **options)

    @app.tool
    def hold(tag: str) -> str:
        """Block a worker thread until the test releases `tag`."""
        return gauge.hold(tag)

    @app.tool
    def switch_interval() -> float:
        """The interpreter's switch interval, as seen from a worker thread."""
        return sys.getswitchinterval()

    return app


async def test_no_more_sync_tools_run_at_once_than_max_sync_threads() -> None:
    gauge = Gauge()
    tags = [f"call{i}" for i in range(6)]
    results: dict[str, str] = {}
    async with connect(gauged_app(gauge, max_sync_threads=2)) as client:

        async def call(tag: str) -> None:
            results[tag] = (await client.call_tool("hold", {"tag": tag}))["content"][0]["text"]

        async with anyio.create_task_group() as tg:
            for tag in tags:
                tg.start_soon(call, tag)
            assert await anyio.to_thread.run_sync(gauge.wait_started, 2)
            await client.request("ping")  # every call has reached the pool by now
            assert len(gauge.started) == 2 and gauge.running == 2  # the other four wait, holding no thread
            for round_ in range(len(tags)):
                waiting = [tag for tag in gauge.started if not gauge.releases[tag].is_set()]
                gauge.release(waiting[0])
                if round_ + 3 <= len(tags):
                    assert await anyio.to_thread.run_sync(gauge.wait_started, round_ + 3)
    assert results == {tag: tag for tag in tags}
    assert gauge.most == 2


async def test_a_cancelled_waiting_sync_call_never_runs() -> None:
    gauge = Gauge()
    async with connect(gauged_app(gauge, max_sync_threads=1)) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "hold", {"tag": "first"})
            assert await anyio.to_thread.run_sync(gauge.wait_started, 1)
            # sent raw, to know its id: it waits for the only thread
            await client._send(Request("second", "tools/call", {"name": "hold", "arguments": {"tag": "second"}}))
            await client.request("ping")
            await client.cancel("second")
            await client.request("ping")  # the cancellation has been handled
            gauge.release("first")
            gauge.release("third")
            assert (await client.call_tool("hold", {"tag": "third"}))["content"][0]["text"] == "third"
    assert gauge.started == ["first", "third"]  # "second" was queued before "third" and never started


async def test_the_switch_interval_is_lowered_while_sync_tools_run_and_restored_after() -> None:
    before = sys.getswitchinterval()
    assert before > DEFAULT_SWITCH_INTERVAL
    app = gauged_app(Gauge())
    async with connect(app) as client:
        assert sys.getswitchinterval() == before  # nothing lowered until a sync tool runs
        seen = await client.call_tool("switch_interval")
        assert float(seen["content"][0]["text"]) == DEFAULT_SWITCH_INTERVAL
    assert sys.getswitchinterval() == before
    async with connect(gauged_app(Gauge(), switch_interval=None)) as client:
        seen = await client.call_tool("switch_interval")
        assert float(seen["content"][0]["text"]) == before


async def test_two_servers_lowering_the_switch_interval_restore_it_once_both_stopped() -> None:
    before = sys.getswitchinterval()
    async with connect(gauged_app(Gauge(), switch_interval=0.001)) as one:
        await one.call_tool("switch_interval")
        async with connect(gauged_app(Gauge(), switch_interval=0.002)) as two:
            assert float((await two.call_tool("switch_interval"))["content"][0]["text"]) == 0.001  # never raised
        assert sys.getswitchinterval() == 0.001  # the first server still runs sync tools
    assert sys.getswitchinterval() == before


def test_the_default_bound_is_sized_to_the_machine() -> None:
    assert default_thread_limit() == min(32, machine_cpus() + 4)
    assert MCPServer("x").executors.threads.limit == default_thread_limit()
    assert MCPServer("x", max_sync_threads=3).executors.threads.limit == 3


@pytest.mark.parametrize("value", [0, -1, 2.5, "4", True])
def test_a_bad_max_sync_threads_is_refused_in_words(value: Any) -> None:
    with pytest.raises(ValueError, match="max_sync_threads must be a positive integer"):
        MCPServer("x", max_sync_threads=value)


@pytest.mark.parametrize("value", [0, -0.001, "fast"])
def test_a_bad_switch_interval_is_refused_in_words(value: Any) -> None:
    with pytest.raises(ValueError, match="switch_interval must be a positive number of seconds"):
        WorkerThreads(switch_interval=value)


def test_run_in_thread_is_for_plain_functions_only() -> None:
    app = MCPServer("x")

    async def coroutine() -> str:
        return "x"

    with pytest.raises(TypeError, match="run_in='thread' applies to plain"):
        app.add_tool(coroutine, run_in="thread")
    with pytest.raises(ValueError, match="run_in must be one of 'thread', 'process'"):
        app.add_tool(lambda: "x", name="bad", run_in="elsewhere")  # type: ignore[arg-type]
    app.add_tool(lambda: "x", name="fine", run_in="thread")
    assert app.tools.names() == ["fine"]
