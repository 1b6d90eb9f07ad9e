"""The dispatcher: concurrency, exactly-once answers, cancellation, batches, outbound requests.

Part one drives `Dispatcher` with a fake JSON-RPC handler (no MCP). Part two feeds raw frames to
a real MCP `Session` and records every frame the server writes, to check batches per version,
progress and cancellation on the wire.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import pytest

from mcp_kit import Context, MCPServer
from mcp_kit._eras.session import Session
from mcp_kit._protocol.dispatcher import Dispatcher
from mcp_kit._protocol.jsonrpc import JSONRPCError, Notification, Request, encode_message
from tests.helpers.support import Meeting

pytestmark = pytest.mark.anyio


class Recorder:
    """A MessageWriter that keeps every frame the server sends, as wire JSON."""

    def __init__(self) -> None:
        self.frames: list[Any] = []
        self._changed = anyio.Event()

    async def send(self, message: Any, related_to: Any = None) -> None:
        self.frames.append(json.loads(encode_message(message)))
        self._changed.set()
        self._changed = anyio.Event()

    def messages(self) -> list[dict[str, Any]]:
        """Every single message, batch answers flattened."""
        out: list[dict[str, Any]] = []
        for frame in self.frames:
            out.extend(frame if isinstance(frame, list) else [frame])
        return out

    def answers_to(self, request_id: Any) -> list[dict[str, Any]]:
        return [m for m in self.messages() if "method" not in m and m.get("id") == request_id]

    async def wait_for(self, predicate: Callable[[Any], bool], timeout: float = 5) -> Any:
        with anyio.fail_after(timeout):
            while True:
                for frame in self.frames:
                    if predicate(frame):
                        return frame
                await self._changed.wait()

    async def answer(self, request_id: Any, timeout: float = 5) -> dict[str, Any]:
        return await self.wait_for(
            lambda f: isinstance(f, dict) and "method" not in f and f.get("id") == request_id, timeout
        )


class FakeHandler:
    """A JSON-RPC handler: `sleep` sleeps, `meet` waits for the other parties of its meeting, `fail` raises,
    `boom` crashes, anything else echoes."""

    def __init__(self, batches: bool = False) -> None:
        self.batches = batches
        self.meetings: dict[str, Meeting] = {}
        self.notifications: list[Notification] = []
        self.started: list[Any] = []
        self.cancelled: list[Any] = []
        self._changed = anyio.Event()

    def _note(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_until(self, condition: Callable[[], bool], timeout: float = 5) -> None:
        """Return once `condition()` holds, re-checked whenever the handler sees something."""
        with anyio.fail_after(timeout):
            while not condition():
                await self._changed.wait()

    async def handle_request(self, request: Request, principal: object | None = None) -> Any:
        self.started.append(request.id)
        self._note()
        params = request.params or {}
        if request.method == "sleep":
            try:
                await anyio.sleep(params.get("seconds", 1))
            except anyio.get_cancelled_exc_class():
                self.cancelled.append(request.id)
                self._note()
                raise
            return {"slept": params.get("seconds", 1)}
        if request.method == "meet":
            meeting = self.meetings.setdefault(params["at"], Meeting(params["parties"]))
            return {"met": await meeting.attend()}
        if request.method == "fail":
            raise JSONRPCError(-32602, "bad params", {"field": "x"})
        if request.method == "boom":
            raise RuntimeError("kaput")
        return {"echo": request.method}

    async def handle_notification(self, notification: Notification) -> None:
        self.notifications.append(notification)
        self._note()

    def accepts_batches(self) -> bool:
        return self.batches

    def close(self) -> None:
        return None


@contextlib.asynccontextmanager
async def fake_dispatcher(batches: bool = False) -> AsyncIterator[tuple[Dispatcher, Recorder, FakeHandler]]:
    recorder, handler = Recorder(), FakeHandler(batches)
    async with Dispatcher(recorder, handler) as dispatcher:
        yield dispatcher, recorder, handler


def frame(id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


# ---------------------------------------------------------------------------- dispatcher alone


async def test_request_answered_with_its_id() -> None:
    async with fake_dispatcher() as (dispatcher, out, _):
        await dispatcher.feed_frame(frame("a", "hello"))
        assert (await out.answer("a")) == {"jsonrpc": "2.0", "id": "a", "result": {"echo": "hello"}}


async def test_handler_errors_become_error_responses_never_code_zero() -> None:
    async with fake_dispatcher() as (dispatcher, out, _):
        await dispatcher.feed_frame(frame(1, "fail"))
        await dispatcher.feed_frame(frame(2, "boom"))
        fail, boom = await out.answer(1), await out.answer(2)
        assert fail["error"] == {"code": -32602, "message": "bad params", "data": {"field": "x"}}
        assert boom["error"]["code"] == -32603 and "kaput" in boom["error"]["message"]


async def test_bad_frames_get_errors_and_the_dispatcher_keeps_going() -> None:
    async with fake_dispatcher() as (dispatcher, out, _):
        for bad in (b"garbage", b"\xff\xff", frame(1.5, "x"), b'{"jsonrpc":"2.0","id":9}'):
            await dispatcher.feed_frame(bad)
        await dispatcher.feed_frame(frame(10, "still"))
        await out.answer(10)
        codes = [m["error"]["code"] for m in out.messages() if "error" in m]
        assert codes == [-32700, -32700, -32600, -32600]
        assert out.answers_to(10)[0]["result"] == {"echo": "still"}


async def test_notifications_are_never_answered() -> None:
    async with fake_dispatcher() as (dispatcher, out, handler):
        await dispatcher.feed_frame(b'{"jsonrpc":"2.0","method":"note","params":{"x":1}}')
        await dispatcher.feed_frame(frame("p", "ping"))
        await out.answer("p")
        assert handler.notifications == [Notification("note", {"x": 1})]
        assert len(out.frames) == 1


async def test_an_error_response_with_null_id_from_the_peer_is_not_answered() -> None:
    """A peer's error response (e.g. its own parse error, id null) must not be answered: no error ping-pong."""
    async with fake_dispatcher() as (dispatcher, out, _):
        await dispatcher.feed_frame(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
        await dispatcher.feed_frame(frame("after", "ping"))
        await out.answer("after")
        assert out.frames == [{"jsonrpc": "2.0", "id": "after", "result": {"echo": "ping"}}]


async def test_slow_request_does_not_block_others() -> None:
    async with fake_dispatcher() as (dispatcher, out, _):
        await dispatcher.feed_frame(frame("slow", "sleep", {"seconds": 60}))
        await dispatcher.feed_frame(frame("fast", "ping"))
        await out.answer("fast", timeout=10)  # a generous bound, far below the slow request's minute
        assert out.answers_to("slow") == []
        assert dispatcher.in_flight == 1


async def test_three_requests_run_at_the_same_time() -> None:
    """Each request waits until all three are running: none is answered unless they run concurrently."""
    async with fake_dispatcher() as (dispatcher, out, _):
        for i in range(3):
            await dispatcher.feed_frame(frame(i, "meet", {"at": "here", "parties": 3}))
        for i in range(3):
            assert (await out.answer(i, timeout=10))["result"] == {"met": 3}


async def test_every_request_is_answered_exactly_once() -> None:
    async with fake_dispatcher() as (dispatcher, out, _):
        for i in range(50):
            await dispatcher.feed_frame(frame(i, "sleep" if i % 2 else "ping", {"seconds": 0.01}))
        with anyio.fail_after(5):
            await dispatcher.wait_idle()  # every request's task has ended: nothing more can be answered
        ids = sorted(m["id"] for m in out.messages())
        assert ids == list(range(50))


async def test_duplicate_in_flight_id_is_rejected_and_the_first_still_answered_once() -> None:
    async with fake_dispatcher() as (dispatcher, out, _):
        await dispatcher.feed_frame(frame(7, "sleep", {"seconds": 0.3}))
        await dispatcher.feed_frame(frame(7, "ping"))
        rejection = await out.wait_for(lambda f: "error" in f)
        assert rejection["id"] == 7 and rejection["error"]["code"] == -32600
        answer = await out.wait_for(lambda f: "result" in f)
        assert answer == {"jsonrpc": "2.0", "id": 7, "result": {"slept": 0.3}}
        await dispatcher.feed_frame(frame(7, "ping"))  # the id is free again once answered
        await out.wait_for(lambda f: f.get("result") == {"echo": "ping"})
        assert len(out.answers_to(7)) == 3


async def test_cancelled_request_is_never_answered_and_dispatcher_continues() -> None:
    async with fake_dispatcher() as (dispatcher, out, handler):
        await dispatcher.feed_frame(frame(1, "sleep", {"seconds": 10}))
        await handler.wait_until(lambda: handler.started == [1])
        await dispatcher.feed_frame(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}')
        with anyio.fail_after(5):
            await dispatcher.wait_idle()
        assert handler.cancelled == [1]
        assert dispatcher.in_flight == 0
        await dispatcher.feed_frame(frame(2, "ping"))
        await out.answer(2)
        assert out.answers_to(1) == []


async def test_cancelling_an_unknown_request_is_harmless() -> None:
    async with fake_dispatcher() as (dispatcher, out, _):
        await dispatcher.feed_frame(
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}'
        )
        await dispatcher.feed_frame(b'{"jsonrpc":"2.0","method":"notifications/cancelled"}')
        await dispatcher.feed_frame(frame(3, "ping"))
        await out.answer(3)
        assert len(out.frames) == 1


async def test_batch_answered_as_array_when_accepted() -> None:
    async with fake_dispatcher(batches=True) as (dispatcher, out, handler):
        batch = b'[' + frame(1, "a") + b',{"jsonrpc":"2.0","method":"n"},' + frame(2, "fail") + b', 17]'
        await dispatcher.feed_frame(batch)
        reply = await out.wait_for(lambda f: isinstance(f, list))
        assert {m.get("id") for m in reply} == {1, 2, None}
        by_id = {m.get("id"): m for m in reply}
        assert by_id[1]["result"] == {"echo": "a"}
        assert by_id[2]["error"]["code"] == -32602
        assert by_id[None]["error"]["code"] == -32600
        assert handler.notifications == [Notification("n", None)]


async def test_batch_of_notifications_only_gets_no_answer() -> None:
    async with fake_dispatcher(batches=True) as (dispatcher, out, handler):
        await dispatcher.feed_frame(b'[{"jsonrpc":"2.0","method":"n1"},{"jsonrpc":"2.0","method":"n2"}]')
        await dispatcher.feed_frame(frame("z", "ping"))
        await out.answer("z")
        await handler.wait_until(lambda: len(handler.notifications) == 2)
        assert [n.method for n in handler.notifications] == ["n1", "n2"]
        assert len(out.frames) == 1


async def test_batch_rejected_when_not_accepted() -> None:
    async with fake_dispatcher(batches=False) as (dispatcher, out, handler):
        await dispatcher.feed_frame(b"[" + frame(1, "a") + b"]")
        reply = await out.wait_for(lambda f: True)
        assert reply["id"] is None and reply["error"]["code"] == -32600
        assert handler.started == []


async def test_outbound_request_correlates_the_answer() -> None:
    async with fake_dispatcher() as (dispatcher, out, _):
        result: list[Any] = []

        async def ask() -> None:
            result.append(await dispatcher.request("roots/list", {}, timeout=5))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            sent = await out.wait_for(lambda f: f.get("method") == "roots/list")
            await dispatcher.feed_frame(json.dumps({"jsonrpc": "2.0", "id": "unrelated", "result": {}}))
            await dispatcher.feed_frame(json.dumps({"jsonrpc": "2.0", "id": sent["id"], "result": {"roots": []}}))
        assert result == [{"roots": []}]


async def test_outbound_request_error_and_timeout() -> None:
    async with fake_dispatcher() as (dispatcher, out, _):
        async def refuse() -> None:
            sent = await out.wait_for(lambda f: f.get("method") == "x/refused")
            await dispatcher.feed_frame(
                json.dumps({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -1, "message": "no"}})
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(refuse)
            with pytest.raises(JSONRPCError) as refused:
                await dispatcher.request("x/refused", {}, timeout=5)
        assert refused.value.code == -1 and refused.value.message == "no"

        with pytest.raises(TimeoutError):
            await dispatcher.request("x/silent", {}, timeout=0.1)
        sent = next(m for m in out.messages() if m.get("method") == "x/silent")
        cancel = await out.wait_for(lambda f: f.get("method") == "notifications/cancelled")
        assert cancel["params"]["requestId"] == sent["id"]


async def test_outbound_request_fails_when_the_connection_closes() -> None:
    async with fake_dispatcher() as (dispatcher, out, _):
        async def close_soon() -> None:
            await out.wait_for(lambda f: f.get("method") == "x/wait")
            dispatcher.close()

        async with anyio.create_task_group() as tg:
            tg.start_soon(close_soon)
            with pytest.raises(JSONRPCError):
                await dispatcher.request("x/wait", {}, timeout=5)
        with pytest.raises(JSONRPCError):
            await dispatcher.request("x/after", {}, timeout=5)


# ---------------------------------------------------------------------------- a real session, raw frames


class Probe:
    """What the demo tools tell the test: that `nap` was cancelled, and where `nap_sync`'s worker thread is."""

    def __init__(self) -> None:
        self.nap_cancelled = anyio.Event()
        self.meeting = Meeting(3)  # `meet`: three concurrent calls on the event loop
        self.thread_meeting = threading.Barrier(3)  # `meet_sync`: three worker threads at once
        self.sync_started = threading.Event()
        self.sync_release = threading.Event()  # set: nap_sync stops waiting at once
        self.sync_finished = threading.Event()


def demo_app(probe: Probe | None = None) -> MCPServer:
    app = MCPServer("raw")
    probe = probe or Probe()

    @app.tool
    async def nap(seconds: float, ctx: Context) -> str:
        """Sleep, reporting progress twice."""
        await ctx.report_progress(0, 2, "start")
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            probe.nap_cancelled.set()
            raise
        await ctx.report_progress(2, 2)
        return f"napped {seconds}"

    @app.tool
    def nap_sync(seconds: float) -> str:
        """Block a worker thread (for `seconds`, or until the test releases it)."""
        probe.sync_started.set()
        probe.sync_release.wait(seconds)
        probe.sync_finished.set()
        return f"napped {seconds}"

    @app.tool
    async def meet() -> str:
        """Return once three calls of this tool are running at the same time."""
        return f"met {await probe.meeting.attend()}"

    @app.tool
    def meet_sync() -> str:
        """Block a worker thread until three calls of this tool are running in threads at the same time."""
        probe.thread_meeting.wait(timeout=10)  # BrokenBarrierError (a tool error) if they never all run
        return "met 3"

    @app.tool
    async def token(ctx: Context) -> str:
        """Return the progress token the context saw."""
        return repr(ctx.progress_token)

    return app


@contextlib.asynccontextmanager
async def raw_session(app: MCPServer, version: str | None) -> AsyncIterator[tuple[Dispatcher, Recorder]]:
    out = Recorder()
    async with app.running(), Dispatcher(out) as dispatcher:
        dispatcher.attach(Session(app, dispatcher))
        if version is not None:
            await dispatcher.feed_frame(frame("init", "initialize", {
                "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}))
            init = await out.answer("init")
            assert init["result"]["protocolVersion"] == version
            await dispatcher.feed_frame(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        yield dispatcher, out


async def test_batch_answered_as_array_on_2025_03_26() -> None:
    async with raw_session(demo_app(), "2025-03-26") as (dispatcher, out):
        await dispatcher.feed_frame(
            b"[" + frame(1, "ping") + b"," + frame(2, "tools/list") + b"," + frame(3, "no/such") + b"]"
        )
        reply = await out.wait_for(lambda f: isinstance(f, list))
        by_id = {m["id"]: m for m in reply}
        assert set(by_id) == {1, 2, 3}
        assert by_id[1]["result"] == {}
        assert {t["name"] for t in by_id[2]["result"]["tools"]} == {"nap", "nap_sync", "meet", "meet_sync", "token"}
        assert by_id[3]["error"]["code"] == -32601


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2024-11-05"])
async def test_batch_rejected_on_other_versions(version: str) -> None:
    async with raw_session(demo_app(), version) as (dispatcher, out):
        await dispatcher.feed_frame(b"[" + frame(1, "ping") + b"," + frame(2, "tools/list") + b"]")
        await dispatcher.feed_frame(frame(3, "ping"))
        await out.answer(3)
        errors = [f for f in out.frames if isinstance(f, dict) and "error" in f]
        assert errors and errors[0]["id"] is None and errors[0]["error"]["code"] == -32600
        assert out.answers_to(1) == [] and out.answers_to(2) == []
        assert not any(isinstance(f, list) for f in out.frames)


async def test_unknown_method_is_32601_and_session_continues() -> None:
    async with raw_session(demo_app(), "2025-11-25") as (dispatcher, out):
        await dispatcher.feed_frame(frame(1, "tools/explode"))
        await dispatcher.feed_frame(b"}{")
        await dispatcher.feed_frame(frame(2, "ping"))
        assert (await out.answer(1))["error"]["code"] == -32601
        assert (await out.answer(2))["result"] == {}


async def test_progress_token_reaches_context_and_produces_notifications() -> None:
    async with raw_session(demo_app(), "2025-11-25") as (dispatcher, out):
        await dispatcher.feed_frame(frame(1, "tools/call", {
            "name": "nap", "arguments": {"seconds": 0}, "_meta": {"progressToken": "tok-1"}}))
        await dispatcher.feed_frame(frame(2, "tools/call", {
            "name": "token", "arguments": {}, "_meta": {"progressToken": 42}}))
        answer = await out.answer(1)
        assert answer["result"]["content"][0]["text"] == "napped 0.0"
        assert (await out.answer(2))["result"]["content"][0]["text"] == "42"
        progress = [m["params"] for m in out.messages() if m.get("method") == "notifications/progress"]
        assert progress == [
            {"progressToken": "tok-1", "progress": 0, "total": 2, "message": "start"},
            {"progressToken": "tok-1", "progress": 2, "total": 2},
        ]
        order = [m.get("method") or m.get("id") for m in out.messages()]
        assert order.index(1) > max(i for i, m in enumerate(order) if m == "notifications/progress")


async def test_no_progress_without_a_token() -> None:
    async with raw_session(demo_app(), "2025-11-25") as (dispatcher, out):
        await dispatcher.feed_frame(frame(1, "tools/call", {"name": "nap", "arguments": {"seconds": 0}}))
        await dispatcher.feed_frame(frame(2, "tools/call", {"name": "token", "arguments": {}}))
        await out.answer(1)
        assert (await out.answer(2))["result"]["content"][0]["text"] == "None"
        assert not [m for m in out.messages() if m.get("method") == "notifications/progress"]


def is_progress(token: str) -> Callable[[Any], bool]:
    return lambda f: (
        isinstance(f, dict) and f.get("method") == "notifications/progress" and f["params"]["progressToken"] == token
    )


async def test_cancelled_tool_call_is_never_answered_and_the_session_continues() -> None:
    probe = Probe()
    async with raw_session(demo_app(probe), "2025-11-25") as (dispatcher, out):
        await dispatcher.feed_frame(frame("long", "tools/call", {"name": "nap", "arguments": {"seconds": 10},
                                                                         "_meta": {"progressToken": "long"}}))
        await out.wait_for(is_progress("long"))  # the tool is running
        assert dispatcher.in_flight == 1
        await dispatcher.feed_frame(json.dumps({
            "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "long", "reason": "user"}}))
        with anyio.fail_after(5):
            await probe.nap_cancelled.wait()  # the tool itself saw the cancellation
        await dispatcher.feed_frame(frame("next", "tools/call", {"name": "nap", "arguments": {"seconds": 0}}))
        assert (await out.answer("next"))["result"]["isError"] is False
        assert dispatcher.in_flight == 0  # "long" is gone; an answer to it would have been sent by now
        assert out.answers_to("long") == []


async def test_slow_tool_does_not_block_ping_or_another_call() -> None:
    async with raw_session(demo_app(), "2025-11-25") as (dispatcher, out):
        await dispatcher.feed_frame(frame("slow", "tools/call", {"name": "nap", "arguments": {"seconds": 60}}))
        await dispatcher.feed_frame(frame("ping", "ping"))
        await dispatcher.feed_frame(frame("other", "tools/call", {"name": "nap", "arguments": {"seconds": 0}}))
        await out.answer("ping", timeout=10)  # generous bounds, far below the slow call's minute
        await out.answer("other", timeout=10)
        assert out.answers_to("slow") == []


@pytest.mark.parametrize("tool", ["meet", "meet_sync"])
async def test_three_tool_calls_run_at_the_same_time(tool: str) -> None:
    """Async tools on the loop, sync tools in worker threads: each call waits until all three are running."""
    async with raw_session(demo_app(), "2025-11-25") as (dispatcher, out):
        for i in range(3):
            await dispatcher.feed_frame(frame(i, "tools/call", {"name": tool, "arguments": {}}))
        for i in range(3):
            answer = await out.answer(i, timeout=15)
            assert answer["result"]["isError"] is False, answer
            assert answer["result"]["content"][0]["text"] == "met 3"
        assert all(len(out.answers_to(i)) == 1 for i in range(3))


async def test_cancelled_sync_tool_is_never_answered() -> None:
    probe = Probe()
    async with raw_session(demo_app(probe), "2025-11-25") as (dispatcher, out):
        await dispatcher.feed_frame(frame("s", "tools/call", {"name": "nap_sync", "arguments": {"seconds": 30}}))
        assert await anyio.to_thread.run_sync(probe.sync_started.wait, 5)  # the worker thread is blocked in the tool
        await dispatcher.feed_frame(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s"}}')
        await dispatcher.feed_frame(frame("p", "ping"))
        await out.answer("p", timeout=10)
        assert dispatcher.in_flight == 0  # the request is abandoned while its thread still runs
        assert not probe.sync_finished.is_set()
        probe.sync_release.set()
        assert await anyio.to_thread.run_sync(probe.sync_finished.wait, 5)  # the tool returned a result...
        await dispatcher.feed_frame(frame("p2", "ping"))
        await out.answer("p2", timeout=10)
        assert out.answers_to("s") == []  # ... and nobody sent it
