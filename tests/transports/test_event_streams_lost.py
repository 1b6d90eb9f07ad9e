"""Resuming a Streamable HTTP stream from an event the bounded store no longer keeps is answered 410 Gone, naming
the gap, instead of a replay that silently starts at the oldest kept event.

- In one process: the standalone stream keeps its latest events; after 3,000 of them `Last-Event-ID` of
  event 2 gets 410 with the first kept event and the `Last-Event-ID` that resumes from it (which works).
- A follower that falls behind what the stream keeps has its response ended (it resumes and is told).
- Over the Redis event log (a capped Redis stream per SSE stream): a stream of 3,000 events resumed on
  another process from its second event gets the same 410; `resumeWith` resumes with what is kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_kit._protocol.jsonrpc import Notification
from mcp_kit._transports.event_streams import SessionStreams
from tests.helpers.fault_server import build
from tests.helpers.live_http import ACCEPT, serve
from tests.helpers.redis_support import RedisProcess
from tests.helpers.scaleout_client import Session, servers, sse_lines
from tests.helpers.support import ServerURL

pytestmark = pytest.mark.anyio

EVENTS = 3000


async def resume_gone(
    client: httpx.AsyncClient, url: str, headers: dict[str, str], last_event_id: str
) -> dict[str, Any]:
    """GET with `last_event_id`, expecting 410 (a stream that opens instead is closed at once); the error's data."""
    with anyio.fail_after(20):
        async with client.stream("GET", url, headers={**headers, "Last-Event-ID": last_event_id}) as reply:
            body = await reply.aread() if reply.status_code != 200 else b"(an SSE stream)"
    assert reply.status_code == 410, (reply.status_code, body[:300])
    error = json.loads(body)["error"]
    data: dict[str, Any] = error["data"]
    assert data["lastEventId"] == last_event_id and data["lostEvents"] > 0
    assert "no longer kept" in error["message"] and data["resumeWith"] in error["message"]
    return data


async def test_a_follower_that_falls_behind_the_kept_events_has_its_response_ended() -> None:
    store = SessionStreams(max_events=100)
    stream = store.open("standalone")
    stream.append(b"0")
    chunks = stream.follow_chunks(0)
    assert [e.data for e in await chunks.__anext__()] == [b"0"]
    for i in range(1, 300):  # as the writer does: past max_events, the older half goes
        stream.append(str(i).encode())
        if len(stream.events) > store.max_events:
            stream.forget_oldest(len(stream.events) // 2)
    with pytest.raises(StopAsyncIteration):  # not a chunk that silently starts after the forgotten ones
        await chunks.__anext__()


async def test_resuming_the_standalone_stream_from_a_forgotten_event_is_410() -> None:
    app = build()
    async with serve(app) as live, httpx.AsyncClient(timeout=20) as client:
        init = await client.post(
            live.url,
            headers=ACCEPT,
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
        )
        session_id = init.headers["mcp-session-id"]
        headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
        writer = live.session_table.streamable[session_id].writer
        for n in range(EVENTS):  # notifications that belong to no request: the standalone stream
            await writer.send(Notification("notifications/message", {"level": "info", "data": n}))
        standalone = writer.standalone()
        assert standalone.dropped > 0 and len(standalone.events) <= 1000

        data = await resume_gone(client, live.url, headers, "standalone-2")
        assert data["firstKeptEventId"] == standalone.events[0].id
        assert data["lostEvents"] == standalone.dropped - 2

        with anyio.fail_after(20):
            async with client.stream(
                "GET", live.url, headers={**headers, "Last-Event-ID": data["resumeWith"]}
            ) as resumed:
                assert resumed.status_code == 200
                first_id, first = await sse_lines(resumed).__anext__()
        assert first_id == data["firstKeptEventId"] and first["params"]["data"] == standalone.dropped

        kept = standalone.events[5].id  # an event still kept resumes as before
        async with client.stream("GET", live.url, headers={**headers, "Last-Event-ID": kept}) as resumed:
            assert resumed.status_code == 200
            next_id, _ = await sse_lines(resumed).__anext__()
        assert next_id == standalone.events[6].id


@pytest.fixture(scope="module")
def two(redis: RedisProcess) -> Iterator[list[ServerURL]]:
    with servers(redis.url, count=2) as bases:
        yield bases


async def test_resuming_on_another_process_from_an_event_the_capped_log_dropped_is_410(
        two: list[ServerURL], tmp_path: Path) -> None:
    p1, p2 = two
    with httpx.Client(timeout=20) as raw:
        session = Session(raw)
        session.open(p1)
        session.notify(p1, "notifications/initialized")
        headers = session.headers()
    gate = tmp_path / "go"
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "flood", "arguments": {"steps": EVENTS, "gate": str(gate)}, "_meta": {"progressToken": "p"}},
    }
    received: list[tuple[str | None, dict[str, Any]]] = []
    async with httpx.AsyncClient(timeout=60) as client:
        with anyio.fail_after(60):
            async with client.stream("POST", f"{p2}/mcp", headers=headers, json=body) as response:
                assert response.status_code == 200
                async for event_id, message in sse_lines(response):
                    received.append((event_id, message))
                    if len(received) == 1:  # the reply is followed (copied to Redis) by now: let the flood start
                        gate.touch()
        assert received[-1][1]["id"] == 7 and len(received) == EVENTS + 2
        early = received[1][0]
        assert early is not None
        resume = {**headers, "Accept": "text/event-stream"}

        data = await resume_gone(client, f"{p1}/mcp", resume, early)
        assert data["lostEvents"] > EVENTS // 2  # the log keeps about a thousand entries of a stream

        rest: list[dict[str, Any]] = []
        with anyio.fail_after(30):
            async with client.stream(
                "GET", f"{p1}/mcp", headers={**resume, "Last-Event-ID": data["resumeWith"]}
            ) as resumed:
                assert resumed.status_code == 200
                async for event_id, message in sse_lines(resumed):
                    rest.append(message)
                    if len(rest) == 1:
                        assert event_id == data["firstKeptEventId"]
        assert rest[-1]["id"] == 7 and rest == [message for _, message in received[-len(rest):]]
    assert rest[-1]["result"]["content"][0]["text"].startswith(f"flooded {EVENTS}")
