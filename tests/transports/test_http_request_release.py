"""Every HTTP exchange ends, and what it held is released.

- Item 6: after `notifications/cancelled` the cancelled call's POST ends (SSE: the stream closes after a
  -32800 "Request cancelled" error, as the official SDK does on this wire; JSON: that error is the body),
  its task is released, and the idle session can expire. Before, the POST stayed open forever and kept the
  session "busy".
- Item 7: a second POST reusing an in-flight id gets -32600 on its own reply, and the first POST still gets
  its own result. Before, the first result went to the GET stream and the first POST never ended.
- Item 8: a 2026-07-28 client that disconnects before the first event cancels the work; stateless requests
  in flight count against `max_sessions` (503 beyond); nothing is left behind.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from tests.helpers.fault_server import build
from tests.helpers.live_http import ACCEPT, MODERN_META, modern_headers, serve, sse_messages, task_count, until

pytestmark = pytest.mark.anyio

SSE = "application/json, text/event-stream"


async def open_session(client: httpx.AsyncClient, url: str, version: str = "2025-11-25") -> dict[str, str]:
    init = await client.post(url, headers=ACCEPT, json={
        "jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    assert init.status_code == 200, init.text
    headers = {**ACCEPT, "Mcp-Session-Id": init.headers["mcp-session-id"], "MCP-Protocol-Version": version}
    await client.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers


def call(request_id: Any, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def messages_of(reply: httpx.Response) -> list[dict[str, Any]]:
    if reply.headers.get("content-type", "").startswith("application/json"):
        body = reply.json()
        return body if isinstance(body, list) else [body]
    return sse_messages(reply.text)


@pytest.mark.parametrize("accept", [SSE, "application/json"])
async def test_cancelled_call_ends_its_post_and_the_session_can_expire(accept: str) -> None:
    app = build()
    async with serve(app, session_ttl=0.5) as live, httpx.AsyncClient(timeout=20) as client:
        baseline = task_count()
        headers = {**await open_session(client, live.url), "Accept": accept}
        replies: list[httpx.Response] = []
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:

                async def forever() -> None:
                    replies.append(await client.post(live.url, headers=headers, json=call(5, "forever")))

                tg.start_soon(forever)
                await app.started.wait()
                cancelled = await client.post(live.url, headers=headers, json={
                    "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}})
                assert cancelled.status_code == 202
            # the POST has ended: its stream closed with the cancellation error, nothing else for id 5
            answers = [m for m in messages_of(replies[0]) if m.get("id") == 5]
            assert answers == [{"jsonrpc": "2.0", "id": 5, "error": {"code": -32800, "message": "Request cancelled"}}]
            await app.cancelled.wait()
        session_id = headers["Mcp-Session-Id"]
        served = live.session_table.streamable[session_id]
        assert served.dispatcher.in_flight == 0
        assert not any(stream.consumers for stream in served.writer.streams.streams.values())
        await until(lambda: session_id not in live.session_table.streamable, "the idle session to expire")
        await until(lambda: not app.sessions and task_count() <= baseline, "its tasks to end")


async def test_duplicate_in_flight_id_is_refused_and_the_first_post_keeps_its_answer() -> None:
    app = build()
    async with serve(app) as live, httpx.AsyncClient(timeout=20) as client:
        headers = await open_session(client, live.url)
        entered, release = app.gate("first")
        first: list[httpx.Response] = []
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:

                async def first_post() -> None:
                    first.append(await client.post(live.url, headers=headers, json=call(42, "gated", key="first")))

                tg.start_soon(first_post)
                await entered.wait()
                for accept in (SSE, "application/json"):
                    second = await client.post(live.url, headers={**headers, "Accept": accept},
                                               json=call(42, "add", a=1, b=2))
                    assert [m for m in messages_of(second) if m.get("id") == 42] == [
                        {
                            "jsonrpc": "2.0",
                            "id": 42,
                            "error": {"code": -32600, "message": "Invalid Request: id 42 is already in use"},
                        }
                    ]
                release.set()
        answers = [m for m in messages_of(first[0]) if m.get("id") == 42]
        assert answers == [{"jsonrpc": "2.0", "id": 42, "result": {
            "content": [{"type": "text", "text": "released first"}], "isError": False}}]
        # the id is free again once answered
        again = await client.post(live.url, headers=headers, json=call(42, "add", a=2, b=2))
        assert [m["result"]["content"][0]["text"] for m in messages_of(again) if m.get("id") == 42] == ["4"]


async def test_duplicate_ids_inside_a_batch_are_each_answered_once() -> None:
    app = build()
    async with serve(app) as live, httpx.AsyncClient(timeout=20) as client:
        headers = {**await open_session(client, live.url, "2025-03-26"), "Accept": "application/json"}
        reply = await client.post(live.url, headers=headers, json=[call(9, "add", a=1, b=1), call(9, "add", a=2, b=2),
                                                                    call(10, "add", a=3, b=3)])
        answers = messages_of(reply)
        assert sorted(json.dumps(a, sort_keys=True) for a in answers) == sorted(
            json.dumps(a, sort_keys=True)
            for a in [
                {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", "text": "2"}], "isError": False}},
                {
                    "jsonrpc": "2.0",
                    "id": 9,
                    "error": {"code": -32600, "message": "Invalid Request: id 9 is already in use"},
                },
                {"jsonrpc": "2.0", "id": 10, "result": {"content": [{"type": "text", "text": "6"}], "isError": False}},
            ]
        )


async def test_2026_client_that_disconnects_before_the_first_event_cancels_the_work() -> None:
    app = build()
    async with serve(app) as live, httpx.AsyncClient(timeout=20) as client:
        baseline = task_count()
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "forever", "arguments": {}, "_meta": MODERN_META}}
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                async def post() -> None:
                    await client.post(live.url, json=body, headers=modern_headers("tools/call", "forever"))

                tg.start_soon(post)
                await app.started.wait()
                assert len(live.session_table.stateless) == 1 and len(app.sessions) == 1
                tg.cancel_scope.cancel()  # the client gives up before any event: its connection closes
            await app.cancelled.wait()
        await until(lambda: not live.session_table.stateless and not app.sessions and task_count() <= baseline,
                    "the abandoned request to leave nothing behind")


async def test_2026_requests_in_flight_count_against_max_sessions() -> None:
    app = build()
    async with serve(app, max_sessions=2) as live, httpx.AsyncClient(timeout=20) as client:
        headers = modern_headers("tools/call", "gated")

        def gated(request_id: int, key: str) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                    "params": {"name": "gated", "arguments": {"key": key}, "_meta": MODERN_META}}

        replies: list[httpx.Response] = []
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                async def post(key: str) -> None:
                    replies.append(await client.post(live.url, headers=headers, json=gated(1, key)))

                for key in ("a", "b"):
                    tg.start_soon(post, key)
                    await app.gate(key).entered.wait()
                full = await client.post(live.url, headers=headers, json=gated(2, "c"))
                assert full.status_code == 503 and full.headers["retry-after"] == "5"
                assert "too many sessions" in full.json()["error"]["message"]
                refused_init = await client.post(
                    live.url,
                    headers=ACCEPT,
                    json={
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "initialize",
                        "params": {
                            "protocolVersion": "2025-11-25",
                            "capabilities": {},
                            "clientInfo": {"name": "t", "version": "1"},
                        },
                    },
                )
                assert refused_init.status_code == 503
                for key in ("a", "b"):
                    app.gate(key).release.set()
        assert [r.json()["result"]["content"][0]["text"] for r in replies] == ["released a", "released b"]
        assert not live.session_table.stateless and not app.sessions
        again = await client.post(live.url, headers=modern_headers("tools/call", "add"), json={
            "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1},
                                                                           "_meta": MODERN_META}})
        assert again.status_code == 200 and again.json()["result"]["content"][0]["text"] == "2"
