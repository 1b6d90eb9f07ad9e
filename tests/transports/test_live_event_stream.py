"""`LiveEventStream` (long-lived SSE responses) writes the bytes sse-starlette wrote for the same events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from sse_starlette import EventSourceResponse, ServerSentEvent

from mcp_kit._transports.event_streams import EventStream, SessionStreams
from mcp_kit._transports.http_responses import KEEP_ALIVE_SECONDS, LiveEventStream

pytestmark = pytest.mark.anyio

SCOPE = {"type": "http", "method": "GET", "path": "/mcp", "headers": []}


def sse_starlette_response(stream: EventStream, start: int, retry_ms: int | None,
                           headers: dict[str, str] | None) -> Any:
    """What the long-lived streams were served with before: sse-starlette, one `ServerSentEvent` per event."""

    async def events() -> AsyncIterator[ServerSentEvent]:
        async for event in stream.follow(start):
            if event.data:
                yield ServerSentEvent(data=event.data.decode(), id=event.id, event="message")
            else:
                yield ServerSentEvent(id=event.id, data="", retry=retry_ms)

    return EventSourceResponse(events(), headers={**(headers or {}), "Cache-Control": "no-cache, no-transform"},
                               ping=KEEP_ALIVE_SECONDS, sep="\n")


async def served(response: Any, then: Any = None) -> tuple[list[tuple[bytes, bytes]], bytes, bool]:
    """Run `response` to its end: its headers, its body, and whether it ended the body itself."""
    messages: list[dict[str, Any]] = []
    gone = anyio.Event()

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    async with anyio.create_task_group() as tg:
        tg.start_soon(response, SCOPE, receive, send)
        if then is not None:
            await then(gone)
    body = b"".join(m.get("body", b"") for m in messages[1:])
    ended = bool(messages) and messages[-1]["type"] == "http.response.body" and not messages[-1].get("more_body")
    return messages[0]["headers"], body, ended


def filled(data: list[bytes]) -> EventStream:
    stream = SessionStreams().open()
    for item in data:
        stream.append(item)
    stream.finish()
    return stream


EVENTS = [b"", b'{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"x://1"}}',
          b'{"jsonrpc":"2.0","id":1,"result":{}}', b'{"a":\n1}', b'{"text":"caf\xc3\xa9"}']


@pytest.mark.parametrize(("start", "retry_ms", "headers"), [(0, 1000, None), (0, None, {"Mcp-Session-Id": "abc"}),
                                                            (2, None, None)])
async def test_the_same_headers_and_bytes_as_sse_starlette(start: int, retry_ms: int | None,
                                                           headers: dict[str, str] | None) -> None:
    with anyio.fail_after(10):
        mine = await served(LiveEventStream(filled(EVENTS), start=start, retry_ms=retry_ms, headers=headers))
        theirs = await served(sse_starlette_response(filled(EVENTS), start, retry_ms, headers))
    assert mine == theirs
    assert mine[2] and mine[1].count(b"event: message") == len(EVENTS) - 1 - max(0, start - 1)


async def test_events_arriving_later_follow_in_order_until_the_client_leaves() -> None:
    stream = SessionStreams().open()

    async def then(gone: anyio.Event) -> None:
        for number in range(50):
            stream.append(b'{"n":%d}' % number)
            if number % 7 == 0:
                await anyio.lowlevel.checkpoint()
        for _ in range(100):  # the follower writes what came
            await anyio.lowlevel.checkpoint()
        gone.set()

    with anyio.fail_after(10):
        _, body, ended = await served(LiveEventStream(stream), then)
    numbers = [int(line.split(b":")[-1].rstrip(b"}")) for line in body.split(b"\r\n") if line.startswith(b"data:")]
    assert numbers == list(range(50))
    assert not ended  # the client left: nothing more is sent
    assert stream.consumers == 0


async def test_the_server_closing_the_connection_ends_the_response_after_what_is_queued() -> None:
    stream = SessionStreams().open()

    async def then(gone: anyio.Event) -> None:
        stream.append(b'{"n":1}')
        stream.close_connection()

    with anyio.fail_after(10):
        _, body, ended = await served(LiveEventStream(stream), then)
    assert body.endswith(b'data: {"n":1}\r\n\r\n') and ended
