"""What one connection may have in flight is bounded, and past the bound nothing more is read.

- stdio, on the loop and in threads: with the maximum of requests in flight the reader stops taking
  lines (what the peer pipelines stays in the pipe); it resumes as requests end, and every request is
  answered.
- A batch starts its requests as room frees up: never more than the maximum run at once.
- Streamable HTTP and legacy SSE: a POST carrying a request while its session has the maximum in
  flight is answered 429 with Retry-After (and a JSON-RPC error saying so); notifications (a
  cancellation) still get through, and once a request ends the next is served.
The bound is checked structurally (how many lines were read while the requests were held), not timed.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from typing import Any, cast

import anyio
import httpx
import pytest

from mcp_kit._protocol.dispatcher import TOO_MANY_REQUESTS, Dispatcher
from mcp_kit._protocol.jsonrpc import (
    Batch,
    EncodeError,
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
)
from mcp_kit._transports.stdio import StdioWriter, serve_lines
from tests.helpers.fault_server import build
from tests.helpers.live_http import ACCEPT, serve, until

BOUND = 8
PIPELINED = 5000  # requests written at once: many more than the bound, far more than a pipe holds


class Recorder:
    """A writer that keeps what it is sent."""

    def __init__(self) -> None:
        self.sent: list[Message] = []

    async def send(self, message: Message | list[Message], related_to: RequestId | None = None) -> None:
        self.sent.extend(message if isinstance(message, list) else [message])


class HeldRequests:
    """A handler whose requests all wait until `release` is set; it counts how many run at once."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.running = 0
        self.most_running = 0
        self.started = 0

    async def handle_request(self, request: Request, principal: object | None) -> Any:
        self.started += 1
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            await self.release.wait()
        finally:
            self.running -= 1
        return {}

    async def handle_notification(self, notification: Notification) -> None:
        return None

    def accepts_batches(self) -> bool:
        return True

    def unencodable_result(self, request: Request, error: EncodeError) -> Any:
        return {}

    def close(self) -> None:
        return None


def pings(count: int) -> bytes:
    return b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i for i in range(count))


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["loop", "threads"])
async def test_stdio_stops_reading_while_the_connection_has_its_maximum_in_flight(mode: str) -> None:
    stdin_read, stdin_write = os.pipe()
    recorder = Recorder()
    handler = HeldRequests()
    frames_read = 0

    def pipeline() -> None:  # blocks once the pipe is full and the server has stopped reading
        try:
            os.write(stdin_write, pings(PIPELINED))
        except OSError:  # the test ended (and closed the pipe) before the server read everything
            pass
        finally:
            os.close(stdin_write)

    writer_thread = threading.Thread(target=pipeline, daemon=True)
    try:
        async with Dispatcher(recorder, handler, max_in_flight=BOUND) as dispatcher:

            async def on_frame(line: bytes) -> None:
                nonlocal frames_read
                frames_read += 1
                await dispatcher.feed_frame(line)

            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: serve_lines(on_frame, cast(StdioWriter, recorder), stdin_fd=stdin_read, mode=mode,
                                                  wait_idle=dispatcher.wait_idle, on_close=dispatcher.close))
                writer_thread.start()
                with anyio.fail_after(10):  # the reader pauses (new code) or reads on past the bound (old code)
                    while handler.started < BOUND and frames_read <= BOUND + 1:
                        await anyio.sleep(0)
                    for _ in range(200):  # many loop turns in which a reader that did not pause would read on
                        await anyio.sleep(0)
                assert handler.started == BOUND
                assert frames_read == BOUND + 1, f"{frames_read} lines read with {BOUND} requests held"
                assert not recorder.sent
                handler.release.set()  # every request ends: reading resumes, up to the end of input
        assert handler.most_running == BOUND
        assert frames_read == PIPELINED
        assert sorted(m.id for m in recorder.sent if isinstance(m, Response)) == list(range(PIPELINED))
    finally:
        os.close(stdin_read)  # a writer still blocked on a full pipe fails with EPIPE and ends
        writer_thread.join(timeout=10)


@pytest.mark.anyio
async def test_a_batch_runs_no_more_than_the_maximum_at_once() -> None:
    recorder = Recorder()
    handler = HeldRequests()
    async with Dispatcher(recorder, handler, max_in_flight=BOUND) as dispatcher:
        await dispatcher.feed(Batch([Request(i, "ping") for i in range(5 * BOUND)]))
        with anyio.fail_after(10):
            while handler.started < BOUND:
                await anyio.sleep(0)
        for _ in range(50):
            await anyio.sleep(0)
        assert handler.started == BOUND and dispatcher.full
        handler.release.set()
        with anyio.fail_after(10):
            while not recorder.sent:
                await anyio.sleep(0)
    assert handler.most_running == BOUND
    assert sorted(m.id for m in recorder.sent if isinstance(m, Response)) == list(range(5 * BOUND))


@pytest.mark.anyio
async def test_refuse_answers_requests_past_the_bound_and_lets_the_rest_through() -> None:
    recorder = Recorder()
    handler = HeldRequests()
    async with Dispatcher(recorder, handler, max_in_flight=1) as dispatcher:
        assert not dispatcher.refuse(Request(1, "ping"))
        await dispatcher.feed(Request(1, "ping"))
        assert dispatcher.refuse(Request(2, "ping"))
        assert not dispatcher.refuse(Notification("notifications/progress"))
        with anyio.fail_after(10):
            while not recorder.sent:
                await anyio.sleep(0)
        refusal = recorder.sent[0]
        assert isinstance(refusal, ErrorResponse) and refusal.id == 2 and refusal.code == TOO_MANY_REQUESTS
        handler.release.set()


def call(request_id: Any, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def cancel(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}


def initialize(version: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def check_refusal(reply: httpx.Response) -> None:
    assert reply.status_code == 429, reply.text
    assert reply.headers["retry-after"] == "1"
    error = reply.json()["error"]
    assert error["code"] == TOO_MANY_REQUESTS and "2 requests in flight" in error["message"]


@pytest.mark.anyio
async def test_streamable_http_answers_429_while_the_session_has_its_maximum_in_flight() -> None:
    app = build()
    async with serve(app) as live, httpx.AsyncClient(timeout=20) as client:
        init = await client.post(live.url, headers=ACCEPT, json=initialize("2025-11-25"))
        session = {**ACCEPT, "Mcp-Session-Id": init.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        assert (await client.post(live.url, headers=session, json=INITIALIZED)).status_code == 202
        dispatcher = live.session_table.streamable[init.headers["mcp-session-id"]].dispatcher
        dispatcher.max_in_flight = 2
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for key in ("a", "b"):
                    tg.start_soon(
                        functools.partial(client.post, live.url, json=call(key, "gated", key=key), headers=session)
                    )
                    await app.gate(key).entered.wait()
                check_refusal(await client.post(live.url, headers=session, json=call("c", "add", a=1, b=2)))
                assert (await client.post(live.url, headers=session, json=cancel("a"))).status_code == 202  # taken
                await app.gate("a").cancelled.wait()
                await until(lambda: not dispatcher.full, "the cancelled call to leave the in-flight table")
                accepted = await client.post(live.url, headers={**session, "Accept": "application/json"},
                                             json=call("c", "add", a=1, b=2))
                assert accepted.json()["result"]["content"][0]["text"] == "3"
                app.gate("b").release.set()


@pytest.mark.anyio
async def test_a_legacy_sse_post_gets_429_while_the_session_has_its_maximum_in_flight() -> None:
    app = build()
    async with serve(app) as live, httpx.AsyncClient(timeout=20) as client, \
            client.stream("GET", f"{live.base}/sse") as events:
        lines = events.aiter_lines()

        async def next_message() -> dict[str, Any]:
            async for line in lines:
                if line.startswith("data:") and line[5:].strip():
                    return json.loads(line[5:])  # type: ignore[no-any-return]
            raise AssertionError("the stream ended")

        with anyio.fail_after(20):
            async for line in lines:
                if line.startswith("data:"):
                    endpoint = f"{live.base}{line[5:].strip()}"
                    break
            assert (await client.post(endpoint, json=initialize("2024-11-05"))).status_code == 202
            assert (await next_message())["id"] == 0
            assert (await client.post(endpoint, json=INITIALIZED)).status_code == 202
            dispatcher = live.session_table.legacy[endpoint.rsplit("=", 1)[1]].dispatcher
            dispatcher.max_in_flight = 2
            for key in ("la", "lb"):
                assert (await client.post(endpoint, json=call(key, "gated", key=key))).status_code == 202
                await app.gate(key).entered.wait()
            check_refusal(await client.post(endpoint, json=call("c", "add", a=1, b=2)))
            assert (await client.post(endpoint, json=cancel("la"))).status_code == 202  # not a request: taken
            await app.gate("la").cancelled.wait()
            await until(lambda: not dispatcher.full, "the cancelled call to leave the in-flight table")
            assert (await client.post(endpoint, json=call("c", "add", a=1, b=2))).status_code == 202
            assert (await next_message())["id"] == "c"
            app.gate("lb").release.set()
            assert (await next_message())["id"] == "lb"
