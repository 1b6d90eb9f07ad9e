"""Sync tools on worker threads: at most `max_sync_threads` at once, the GIL switch interval while they run.

The bound is observed by the tools themselves: each counts how many of them run at the same moment
and blocks on its own event until the test lets it go.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from mcp_kit import MCPServer
from mcp_kit._execution import threads
from mcp_kit._execution.threads import DEFAULT_SWITCH_INTERVAL, ToolThreads, default_thread_limit, machine_cpus
from mcp_kit._protocol.jsonrpc import Request
from mcp_kit.testing import connect
from tests.helpers.live_http import until

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


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


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


async def test_a_cancelled_running_sync_call_keeps_its_thread_until_it_returns_then_frees_it() -> None:
    gauge = Gauge()
    async with connect(gauged_app(gauge, max_sync_threads=1)) as client:
        await client._send(Request("running", "tools/call", {"name": "hold", "arguments": {"tag": "first"}}))
        assert await anyio.to_thread.run_sync(gauge.wait_started, 1)
        await client.cancel("running")
        await until(lambda: client._dispatcher.in_flight == 0, "the cancelled call to be dropped", WAIT_S)
        assert gauge.running == 1  # the function cannot be stopped: it still holds the only thread
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "hold", {"tag": "second"})
            await client.request("ping")
            assert gauge.started == ["first"]  # the next call waits for the thread
            gauge.release("first")
            assert await anyio.to_thread.run_sync(gauge.wait_started, 2)  # ... and gets it once "first" returned
            gauge.release("second")
    assert gauge.started == ["first", "second"] and gauge.most == 1


async def test_the_worker_threads_end_when_the_server_stops() -> None:
    seen: list[threading.Thread] = []
    app = MCPServer("threads")

    @app.tool
    def where() -> str:
        """The worker thread this runs on."""
        seen.append(threading.current_thread())
        return threading.current_thread().name

    async with connect(app) as client:
        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(client.call_tool, "where")
        assert seen and all(thread.is_alive() for thread in seen)  # idle pool threads, kept for the next call
        assert all(thread.name.startswith(threads.THREAD_NAME_PREFIX) for thread in seen)
    await until(lambda: not any(thread.is_alive() for thread in seen), "the pool's threads to end", WAIT_S)
    assert app.executors.threads.started is False


def interval_is(value: float) -> Callable[[], bool]:
    return lambda: sys.getswitchinterval() == value


async def test_a_long_sync_call_lowers_the_switch_interval_until_it_ends() -> None:
    before = sys.getswitchinterval()
    assert before > DEFAULT_SWITCH_INTERVAL
    gauge = Gauge()
    async with connect(gauged_app(gauge)) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "hold", {"tag": "long"})
            assert await anyio.to_thread.run_sync(gauge.wait_started, 1)
            await until(interval_is(DEFAULT_SWITCH_INTERVAL), "the interval to be lowered", WAIT_S)
            gauge.release("long")
        await until(interval_is(before), "the interval to be given back", WAIT_S)
        assert float(text(await client.call_tool("switch_interval"))) == before  # a short call changes nothing
    assert sys.getswitchinterval() == before


async def test_a_function_whose_last_call_ran_long_lowers_the_interval_as_its_next_call_starts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "LONG_CALL_S", 0.2)  # generous: a "quick" call here takes microseconds
    before = sys.getswitchinterval()
    app = MCPServer("threads")

    @app.tool
    def spin(seconds: float) -> float:
        """Wait `seconds`, and say what the switch interval was when the call started."""
        seen = sys.getswitchinterval()
        time.sleep(seconds)
        return seen

    async with connect(app) as client:

        async def interval_at_start(seconds: float) -> float:
            value = float(text(await client.call_tool("spin", {"seconds": seconds})))
            await until(interval_is(before), "the interval to be given back", WAIT_S)
            return value

        assert await interval_at_start(0) == before  # never ran long: nothing lowered
        assert await interval_at_start(0.4) == before  # lowered only once it had run long
        assert await interval_at_start(0) == DEFAULT_SWITCH_INTERVAL  # its last call ran long: lowered at once
        assert await interval_at_start(0) == before  # ... and that quick call ended it
    assert sys.getswitchinterval() == before


class Overlap:
    """How many calls of each tool run at the same moment, at most."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: dict[str, int] = {}
        self.most: dict[str, int] = {}

    def enter(self, name: str) -> None:
        with self.lock:
            self.running[name] = self.running.get(name, 0) + 1
            self.most[name] = max(self.most.get(name, 0), self.running[name])

    def leave(self, name: str) -> None:
        with self.lock:
            self.running[name] -= 1


async def test_calls_of_a_cpu_heavy_function_run_at_most_heavy_limit_at_once_and_waiting_ones_are_not_held_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "LONG_CALL_S", 0.02)
    overlap = Overlap()
    app = MCPServer("threads")
    app.executors.threads.heavy_limit = 1

    @app.tool
    def burn(seconds: float) -> str:
        """Use `seconds` of this thread's CPU time."""
        overlap.enter("burn")
        try:
            deadline = time.thread_time() + seconds
            while time.thread_time() < deadline:
                pass
        finally:
            overlap.leave("burn")
        return "burnt"

    @app.tool
    def nap(seconds: float) -> str:
        """Wait `seconds` (long, using no CPU)."""
        overlap.enter("nap")
        try:
            time.sleep(seconds)
        finally:
            overlap.leave("nap")
        return "rested"

    async with connect(app) as client:
        for name in ("burn", "nap"):  # the first call is seen to run long, the second to use CPU (or not)
            for _ in range(2):
                await client.call_tool(name, {"seconds": 0.05})
        assert overlap.most == {"burn": 1, "nap": 1}
        async with anyio.create_task_group() as tg:
            for name in ("burn", "nap"):
                for _ in range(3):
                    tg.start_soon(client.call_tool, name, {"seconds": 0.05})
    assert overlap.most == {"burn": 1, "nap": 3}  # waiting functions keep the pool's full width


async def test_short_sync_calls_leave_the_switch_interval_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "LONG_CALL_S", 1.0)  # a generous bound: each call here takes microseconds
    before = sys.getswitchinterval()
    async with connect(gauged_app(Gauge())) as client:
        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(client.call_tool, "switch_interval")
        seen = {float(text(await client.call_tool("switch_interval"))) for _ in range(20)}
    assert seen == {before}


async def test_a_server_that_stops_during_a_long_call_gives_the_interval_back() -> None:
    before = sys.getswitchinterval()
    gauge = Gauge()
    async with connect(gauged_app(gauge)) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "hold", {"tag": "long"})
            await until(interval_is(DEFAULT_SWITCH_INTERVAL), "the interval to be lowered", WAIT_S)
            tg.cancel_scope.cancel()
    assert sys.getswitchinterval() == before  # given back when the server stopped, the thread still blocked
    gauge.release("long")


async def test_switch_interval_none_leaves_the_interpreter_alone() -> None:
    before = sys.getswitchinterval()
    gauge = Gauge()
    async with connect(gauged_app(gauge, switch_interval=None)) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "hold", {"tag": "long"})
            assert await anyio.to_thread.run_sync(gauge.wait_started, 1)
            assert float(text(await client.call_tool("switch_interval"))) == before
            gauge.release("long")


def lowered_by(app: MCPServer) -> Callable[[], bool]:
    """Whether `app`'s pool holds the interval lowered (its own bookkeeping: the value is shared)."""
    return lambda: bool(app.executors.threads._watch and app.executors.threads._watch._lowered)


async def test_two_servers_lowering_the_switch_interval_give_it_back_once_both_are_done() -> None:
    before = sys.getswitchinterval()
    first, second = Gauge(), Gauge()
    app_one, app_two = gauged_app(first, switch_interval=0.001), gauged_app(second, switch_interval=0.002)
    async with connect(app_one) as one, connect(app_two) as two:
        async with anyio.create_task_group() as tg:
            tg.start_soon(one.call_tool, "hold", {"tag": "one"})
            await until(interval_is(0.001), "the first server to lower it", WAIT_S)
            tg.start_soon(two.call_tool, "hold", {"tag": "two"})
            await until(lowered_by(app_two), "the second server to lower it too", WAIT_S)
            assert sys.getswitchinterval() == 0.001  # never raised by the second
            first.release("one")
            await until(lambda: not lowered_by(app_one)(), "the first server to give it back", WAIT_S)
            assert sys.getswitchinterval() == 0.001  # the second server still has a long call
            second.release("two")
        await until(interval_is(before), "the interval to be given back", WAIT_S)


def test_the_default_bound_is_sized_to_the_machine() -> None:
    assert default_thread_limit() == min(32, machine_cpus() + 4)
    assert MCPServer("x").executors.threads.limit == default_thread_limit()
    assert MCPServer("x", max_sync_threads=3).executors.threads.limit == 3
    assert MCPServer("x").executors.threads.heavy_limit == machine_cpus()
    assert MCPServer("x", max_sync_threads=1).executors.threads.heavy_limit == 1  # never above the pool's bound


@pytest.mark.parametrize("value", [0, -1, 2.5, "4", True])
def test_a_bad_max_sync_threads_is_refused_in_words(value: Any) -> None:
    with pytest.raises(ValueError, match="max_sync_threads must be a positive integer"):
        MCPServer("x", max_sync_threads=value)


@pytest.mark.parametrize("value", [0, -0.001, "fast"])
def test_a_bad_switch_interval_is_refused_in_words(value: Any) -> None:
    with pytest.raises(ValueError, match="switch_interval must be a positive number of seconds"):
        ToolThreads(switch_interval=value)


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
