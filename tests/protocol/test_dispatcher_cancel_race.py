"""A request cancelled before its task has started is still cleaned up (found by HTTP fuzzing).

asyncio never runs a coroutine cancelled before its first step, so its `finally` never ran: the id stayed
"in use" for good (later requests with it got -32600) and, over HTTP, the request's POST never ended.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcp_kit._protocol.dispatcher import Dispatcher
from mcp_kit._protocol.jsonrpc import Notification, Request, RequestId, encode_message

pytestmark = pytest.mark.anyio


class Writer:
    """Records what is sent and which requests were released without an answer."""

    def __init__(self) -> None:
        self.sent: list[Any] = []
        self.released: list[RequestId] = []
        self.changed = anyio.Event()

    async def send(self, message: Any, related_to: Any = None) -> None:
        self.sent.append(json.loads(encode_message(message)))
        self._wake()

    def release(self, request_id: RequestId) -> None:
        self.released.append(request_id)
        self._wake()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def wait(self, condition: Any) -> None:
        with anyio.fail_after(5):
            while not condition():
                await self.changed.wait()


class Handler:
    def __init__(self) -> None:
        self.ran: list[Any] = []

    async def handle_request(self, request: Request, principal: object | None = None) -> Any:
        self.ran.append(request.id)
        return {"ok": request.method}

    async def handle_notification(self, notification: Notification) -> None:
        return None

    def accepts_batches(self) -> bool:
        return True

    def unencodable_result(self, request: Request, error: Exception) -> Any:
        raise AssertionError("not expected")

    def close(self) -> None:
        return None


def frame(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


async def test_request_cancelled_before_its_task_starts_is_released_and_its_id_freed() -> None:
    writer, handler = Writer(), Handler()
    async with Dispatcher(writer, handler) as dispatcher:
        await dispatcher.feed_frame(frame({"id": 1, "method": "work"}))  # starts a task, does not run it yet
        await dispatcher.feed_frame(frame({"method": "notifications/cancelled", "params": {"requestId": 1}}))
        await writer.wait(lambda: writer.released == [1])
        assert dispatcher.in_flight == 0 and handler.ran == [] and writer.sent == []
        await dispatcher.feed_frame(frame({"id": 1, "method": "again"}))  # the id is free
        await writer.wait(lambda: writer.sent)
        assert writer.sent == [{"jsonrpc": "2.0", "id": 1, "result": {"ok": "again"}}]


async def test_closing_the_connection_before_tasks_start_leaves_nothing_in_flight() -> None:
    writer, handler = Writer(), Handler()
    async with Dispatcher(writer, handler) as dispatcher:
        for request_id in range(5):
            await dispatcher.feed_frame(frame({"id": request_id, "method": "work"}))
        dispatcher.close()
        await writer.wait(lambda: len(writer.released) == 5)
        assert dispatcher.in_flight == 0 and handler.ran == [] and writer.sent == []
