"""The dispatcher's bookkeeping of cancellation and ids, observed from a handler (no MCP).

What a handler can see while it is cancelled, which notifications the dispatcher keeps for itself,
what closing does to requests in flight, and that outbound requests never share an id. Written
against the survivors of `bin/mutate dispatcher` (docs/TESTING.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_kit._protocol.dispatcher import Dispatcher
from mcp_kit._protocol.jsonrpc import JSONRPCError, Notification, Request, encode_message

pytestmark = pytest.mark.anyio


class Wire:
    """Every frame the dispatcher sends, and a way to wait for one; `broken` makes every send fail, `gone`
    those related to the listed requests (their stream is gone)."""

    def __init__(self) -> None:
        self.frames: list[Any] = []
        self.broken = False
        self.gone: set[Any] = set()
        self.attempts = 0
        self._changed = anyio.Event()

    async def send(self, message: Any, related_to: Any = None) -> None:
        self.attempts += 1
        try:
            frame = encode_message(message)  # an unencodable message fails here, as with a real writer
            if self.broken or (related_to is not None and related_to in self.gone):
                raise ConnectionResetError("the peer went away")
            self.frames.append(json.loads(frame))
        finally:
            self._changed.set()
            self._changed = anyio.Event()

    async def wait_attempts(self, count: int, timeout: float = 5) -> None:
        with anyio.fail_after(timeout):
            while self.attempts < count:
                await self._changed.wait()

    async def wait_for(self, predicate: Any, timeout: float = 5) -> Any:
        with anyio.fail_after(timeout):
            while True:
                for frame in self.frames:
                    if predicate(frame):
                        return frame
                await self._changed.wait()


UNENCODABLE = "bad\udcff.txt"  # a lone surrogate: no JSON encoder carries it


class Handler:
    """`wait` blocks until cancelled (recording what the dispatcher said meanwhile); `unencodable` returns a
    result no JSON can carry, replaced as `substitute` says; `notify` may raise."""

    def __init__(self) -> None:
        self.dispatcher: Dispatcher | None = None
        self.started: dict[Any, anyio.Event] = {}
        self.seen_while_running: dict[Any, bool] = {}
        self.seen_while_cancelled: dict[Any, bool] = {}
        self.notifications: list[str] = []
        self.fail_notifications = False
        self.closed = False
        # "raise": a handler bug; "unencodable": the replacement cannot be encoded either; "refuse": a JSON-RPC
        # error; "plain": an ordinary replacement
        self.substitute = "raise"

    async def handle_request(self, request: Request, principal: object | None = None) -> Any:
        assert self.dispatcher is not None
        if request.method == "wait":
            self.seen_while_running[request.id] = self.dispatcher.was_cancelled(request.id)
            self.started.setdefault(request.id, anyio.Event()).set()
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                self.seen_while_cancelled[request.id] = self.dispatcher.was_cancelled(request.id)
                raise
        if request.method == "unencodable":
            return {"text": UNENCODABLE}
        if request.method == "boom":
            raise RuntimeError("a bug in the handler")
        return {"echo": request.method}

    async def handle_notification(self, notification: Notification) -> None:
        if self.fail_notifications:
            raise RuntimeError(f"cannot handle {notification.method}")
        self.notifications.append(notification.method)

    def accepts_batches(self) -> bool:
        return True

    def unencodable_result(self, request: Request, error: Exception) -> Any:
        if self.substitute == "unencodable":
            return {"text": "still " + UNENCODABLE}
        if self.substitute == "plain":
            return {"text": "replaced"}
        if self.substitute == "refuse":
            raise JSONRPCError(-32001, "the result is too strange to send", {"method": request.method})
        raise RuntimeError(f"no replacement for {request.method}")  # a handler bug: the dispatcher answers anyway

    def close(self) -> None:
        self.closed = True

    async def started_event(self, request_id: Any) -> None:
        with anyio.fail_after(5):
            await self.started.setdefault(request_id, anyio.Event()).wait()


@contextlib.asynccontextmanager
async def running() -> AsyncIterator[tuple[Dispatcher, Wire, Handler]]:
    wire, handler = Wire(), Handler()
    async with Dispatcher(wire, handler) as dispatcher:
        handler.dispatcher = dispatcher
        yield dispatcher, wire, handler


def request(request_id: Any, method: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method}).encode()


def cancelled(request_id: Any) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
    ).encode()


async def test_a_handler_sees_its_request_cancelled_only_once_the_peer_cancels_it() -> None:
    async with running() as (dispatcher, wire, handler):
        await dispatcher.feed_frame(request("a", "wait"))
        await dispatcher.feed_frame(request("b", "wait"))
        await handler.started_event("a")
        await handler.started_event("b")
        assert handler.seen_while_running == {"a": False, "b": False}
        assert dispatcher.was_cancelled("a") is False and dispatcher.was_cancelled("unknown") is False
        assert dispatcher.cancel("a") is True  # in flight: cancelled
        assert dispatcher.cancel("nope") is False  # never seen: nothing to do
        await dispatcher.feed_frame(cancelled("b"))  # the same through the wire
        await dispatcher.feed_frame(request("c", "ping"))
        await wire.wait_for(lambda f: f.get("id") == "c")
        assert handler.seen_while_cancelled == {"a": True, "b": True}
        assert dispatcher.in_flight == 0 and dispatcher.was_cancelled("a") is False  # gone once unwound
        assert dispatcher.cancel("a") is False
        assert [f for f in wire.frames if f.get("id") in ("a", "b")] == []


async def test_every_notification_but_cancelled_reaches_the_handler() -> None:
    methods = ["notifications/initialized", "notifications/progress", "notifications/roots/list_changed",
               "notifications/cancelledx", "zz/last", "a/first"]
    async with running() as (dispatcher, wire, handler):
        for method in [*methods, "notifications/cancelled"]:
            await dispatcher.feed_frame(json.dumps({"jsonrpc": "2.0", "method": method, "params": {}}))
        await dispatcher.feed_frame(request(1, "ping"))
        await wire.wait_for(lambda f: f.get("id") == 1)
        assert handler.notifications == methods


async def test_a_failing_notification_handler_is_logged_and_traffic_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    async with running() as (dispatcher, wire, handler):
        handler.fail_notifications = True
        with caplog.at_level(logging.ERROR, logger="mcp_kit.dispatcher"):
            await dispatcher.feed_frame(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        assert "error while handling notification notifications/initialized" in caplog.text
        await dispatcher.feed_frame(request(2, "ping"))
        assert (await wire.wait_for(lambda f: f.get("id") == 2))["result"] == {"echo": "ping"}


async def test_closing_stops_every_request_in_flight_unanswered() -> None:
    async with running() as (dispatcher, wire, handler):
        for request_id in (1, 2, 3):
            await dispatcher.feed_frame(request(request_id, "wait"))
        for request_id in (1, 2, 3):
            await handler.started_event(request_id)
        assert dispatcher.in_flight == 3
        dispatcher.close()  # the peer is gone
        with anyio.fail_after(5):
            await dispatcher.wait_idle()
        assert handler.closed
        assert set(handler.seen_while_cancelled) == {1, 2, 3}
        assert set(handler.seen_while_cancelled.values()) == {False}  # gone, not cancelled by the peer
        assert wire.frames == []


async def test_a_duplicate_id_inside_a_batch_does_not_stop_the_rest_of_the_batch() -> None:
    async with running() as (dispatcher, wire, handler):
        await dispatcher.feed_frame(request(1, "wait"))
        await handler.started_event(1)
        await dispatcher.feed_frame(
            b"[" + request(1, "ping") + b"," + request(2, "ping") + b"," + request(3, "ping") + b"]"
        )
        batch = await wire.wait_for(lambda f: isinstance(f, list))
        assert [answer["id"] for answer in batch] == [2, 3]
        duplicate = await wire.wait_for(lambda f: isinstance(f, dict) and "error" in f)
        assert duplicate["id"] == 1 and duplicate["error"]["code"] == -32600


async def test_concurrent_outbound_requests_get_distinct_ids_and_their_own_answers() -> None:
    async with running() as (dispatcher, wire, _):
        results: dict[str, Any] = {}

        async def ask(method: str) -> None:
            results[method] = await dispatcher.request(method=method, params={}, timeout=5)

        async with anyio.create_task_group() as tg:
            for method in ("x/one", "x/two", "x/three"):
                tg.start_soon(ask, method)
            sent = [await wire.wait_for(lambda f, m=m: isinstance(f, dict) and f.get("method") == m)
                    for m in ("x/one", "x/two", "x/three")]
            assert len({frame["id"] for frame in sent}) == 3
            for frame in reversed(sent):  # answered in the opposite order
                await dispatcher.feed_frame(
                    json.dumps({"jsonrpc": "2.0", "id": frame["id"], "result": frame["method"]})
                )
        assert results == {"x/one": "x/one", "x/two": "x/two", "x/three": "x/three"}


def answers(wire: Wire, request_id: Any) -> list[dict[str, Any]]:
    """Every answer to `request_id`, batch answers included."""
    flat = [m for f in wire.frames for m in (f if isinstance(f, list) else [f])]
    return [m for m in flat if "method" not in m and m.get("id") == request_id]


async def test_an_unencodable_result_whose_replacement_fails_is_still_answered_with_an_internal_error() -> None:
    async with running() as (dispatcher, wire, _):
        await dispatcher.feed_frame(request(1, "unencodable"))
        answer = await wire.wait_for(lambda f: isinstance(f, dict) and f.get("id") == 1)
        assert answer["error"]["code"] == -32603
        assert "cannot be encoded as JSON" in answer["error"]["message"]
        with anyio.fail_after(5):
            await dispatcher.wait_idle()
        assert len(answers(wire, 1)) == 1


async def test_a_replacement_that_cannot_be_encoded_either_falls_back_to_a_bare_error() -> None:
    async with running() as (dispatcher, wire, handler):
        handler.substitute = "unencodable"
        await dispatcher.feed_frame(request(1, "unencodable"))
        answer = await wire.wait_for(lambda f: isinstance(f, dict) and f.get("id") == 1)
        assert answer["error"] == {"code": -32603, "message": "Internal error: the answer cannot be encoded as JSON"}
        with anyio.fail_after(5):
            await dispatcher.wait_idle()
        assert len(answers(wire, 1)) == 1


async def test_a_batch_with_an_unencodable_answer_is_answered_one_by_one_each_exactly_once() -> None:
    async with running() as (dispatcher, wire, _):
        await dispatcher.feed_frame(b"[" + request(1, "ping") + b"," + request(2, "unencodable") + b","
                                    + request(3, "pong") + b"]")
        with anyio.fail_after(5):
            await wire.wait_for(lambda f: isinstance(f, dict) and f.get("id") == 2)
            await dispatcher.wait_idle()
        assert answers(wire, 1) == [{"jsonrpc": "2.0", "id": 1, "result": {"echo": "ping"}}]
        assert answers(wire, 3) == [{"jsonrpc": "2.0", "id": 3, "result": {"echo": "pong"}}]
        [replaced] = answers(wire, 2)
        assert replaced["error"]["code"] == -32603 and "cannot be encoded as JSON" in replaced["error"]["message"]


async def test_a_batch_frees_its_ids_once_answered() -> None:
    async with running() as (dispatcher, wire, _):
        await dispatcher.feed_frame(b"[" + request(1, "ping") + b"," + request(2, "ping") + b"]")
        await wire.wait_for(lambda f: isinstance(f, list))
        with anyio.fail_after(5):
            await dispatcher.wait_idle()
        assert dispatcher.in_flight == 0
        await dispatcher.feed_frame(request(1, "again"))  # the id is free: answered, not -32600
        again = await wire.wait_for(lambda f: isinstance(f, dict) and f.get("id") == 1)
        assert again == {"jsonrpc": "2.0", "id": 1, "result": {"echo": "again"}}


async def test_a_replacement_refused_with_a_json_rpc_error_is_answered_with_that_error() -> None:
    async with running() as (dispatcher, wire, handler):
        handler.substitute = "refuse"
        await dispatcher.feed_frame(request(1, "unencodable"))
        answer = await wire.wait_for(lambda f: isinstance(f, dict) and f.get("id") == 1)
        assert answer["error"] == {"code": -32001, "message": "the result is too strange to send",
                                   "data": {"method": "unencodable"}}


async def test_a_cancelled_request_inside_a_batch_leaves_the_others_answered() -> None:
    async with running() as (dispatcher, wire, handler):
        await dispatcher.feed_frame(b"[" + request(1, "wait") + b"," + request(2, "ping") + b"]")
        await handler.started_event(1)
        await dispatcher.feed_frame(cancelled(1))
        batch = await wire.wait_for(lambda f: isinstance(f, list))
        assert batch == [{"jsonrpc": "2.0", "id": 2, "result": {"echo": "ping"}}]
        assert answers(wire, 1) == []


@pytest.mark.parametrize("others", [b"", b"," + request(2, "ping")], ids=["alone", "with another"])
async def test_wait_idle_returns_once_a_batch_in_flight_ends(others: bytes) -> None:
    async with running() as (dispatcher, wire, handler):
        await dispatcher.feed_frame(b"[" + request(1, "wait") + others + b"]")
        await handler.started_event(1)
        in_flight = dispatcher.in_flight
        idle = anyio.Event()

        async def wait_idle() -> None:
            await dispatcher.wait_idle()
            idle.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_idle)
            await anyio.wait_all_tasks_blocked()  # wait_idle is waiting
            assert not idle.is_set() and in_flight == (2 if others else 1)
            await dispatcher.feed_frame(cancelled(1))  # the batch can end now
            with anyio.fail_after(5):
                await idle.wait()
        assert dispatcher.in_flight == 0


@contextlib.contextmanager
def unretrieved_task_errors() -> Iterator[list[dict[str, Any]]]:
    """What reaches the running loop's exception handler meanwhile: tasks that died of an exception nobody saw."""
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    seen: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    try:
        yield seen
    finally:
        gc.collect()
        loop.set_exception_handler(previous)


async def test_a_writer_that_fails_ends_every_request_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The peer is gone: a failing send ends the request (single, replaced or batched), frees its id and
    leaves no task dead of an exception nobody retrieves."""
    # a captured log record holding the exception would keep a dead task alive, and so unreported
    monkeypatch.setattr(logging.getLogger("mcp_kit.dispatcher"), "disabled", True)
    with unretrieved_task_errors() as seen:

        async def dies() -> None:
            raise RuntimeError("unseen")

        orphan = asyncio.get_running_loop().create_task(dies())
        await asyncio.wait([orphan])
        del orphan
        gc.collect()
        assert len(seen) == 1  # the detector works: an unretrieved task exception is reported
        seen.clear()

        async with running() as (dispatcher, wire, handler):
            handler.substitute = "plain"
            wire.broken = True
            await dispatcher.feed_frame(b"[" + request(1, "ping") + b"," + request(2, "ping") + b"]")
            await wire.wait_attempts(1)  # the batch's answer failed and the batch task ended with it
            assert dispatcher.in_flight == 0
            await dispatcher.feed_frame(request(3, "ping"))
            await dispatcher.feed_frame(request(4, "unencodable"))  # EncodeError, then its replacement fails
            await wire.wait_attempts(4)
            with anyio.fail_after(5):
                await dispatcher.wait_idle()
            assert wire.frames == []
        await anyio.lowlevel.checkpoint()  # the loop runs the done callbacks that let go of finished tasks
        gc.collect()
    assert seen == []


async def test_cancel_says_whether_it_cancelled_anything() -> None:
    async with running() as (dispatcher, wire, handler):
        await dispatcher.feed_frame(request(1, "wait"))
        await handler.started_event(1)
        assert dispatcher.cancel([1]) is False  # not an id
        assert dispatcher.cancel(2) is False  # not in flight
        assert dispatcher.in_flight == 1
        assert dispatcher.cancel(1) is True
        with anyio.fail_after(5):
            await dispatcher.wait_idle()
        assert handler.seen_while_cancelled == {1: True} and wire.frames == []


async def test_an_answer_that_cannot_be_delivered_does_not_stop_the_rest_of_its_batch() -> None:
    """A batch whose array cannot be encoded is answered one by one; one answer failing to go out (its
    request's stream is gone) leaves the others answered."""
    async with running() as (dispatcher, wire, handler):
        handler.substitute = "plain"
        wire.gone = {5}
        await dispatcher.feed_frame(b"[" + request(5, "ping") + b"," + request(6, "unencodable") + b","
                                    + request(7, "pong") + b"]")
        with anyio.fail_after(5):
            await wire.wait_for(lambda f: isinstance(f, dict) and f.get("id") == 7)
            await dispatcher.wait_idle()
        assert answers(wire, 5) == []
        assert answers(wire, 6) == [{"jsonrpc": "2.0", "id": 6, "result": {"text": "replaced"}}]
        assert answers(wire, 7) == [{"jsonrpc": "2.0", "id": 7, "result": {"echo": "pong"}}]


async def test_a_handler_bug_inside_a_batch_is_answered_with_an_internal_error_and_the_rest_goes_on() -> None:
    async with running() as (dispatcher, wire, _):
        await dispatcher.feed_frame(b"[" + request(1, "boom") + b"," + request(2, "ping") + b"]")
        batch = await wire.wait_for(lambda f: isinstance(f, list))
        by_id = {answer["id"]: answer for answer in batch}
        assert by_id[1]["error"] == {"code": -32603, "message": "Internal error: RuntimeError: a bug in the handler"}
        assert by_id[2]["result"] == {"echo": "ping"}
