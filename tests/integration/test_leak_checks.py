"""Fault suite, leaks: after cancellations, disconnects, abandoned streams, duplicate ids and 2026-07-28 abandons,
task counts, session counts and open file descriptors return to their baseline.

One real uvicorn in this process (port 0) so its tasks, sessions and descriptors can be counted. A warm-up
round creates what is created once (worker threads, caches); then the same rounds again must leave
nothing behind. Every wait is on an event or a bounded poll of a count.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from tests.helpers.fault_server import build
from tests.helpers.live_http import ACCEPT, MODERN_META, LiveServer, modern_headers, open_fds, serve, task_count, until

pytestmark = pytest.mark.anyio

SSE = "application/json, text/event-stream"
ROUNDS = 4


def call(request_id: Any, name: str, meta: dict[str, Any] | None = None, **arguments: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def first_data(lines: AsyncIterator[str]) -> dict[str, Any]:
    async for line in lines:
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    raise AssertionError("the stream ended without data")


async def post(client: httpx.AsyncClient, url: str, body: dict[str, Any], headers: dict[str, str]) -> None:
    await client.post(url, json=body, headers=headers)


async def one_round(live: LiveServer, n: int) -> None:
    app = live.app
    async with httpx.AsyncClient(timeout=20) as client:
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
        session = {**ACCEPT, "Mcp-Session-Id": init.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        session_id = init.headers["mcp-session-id"]

        def cancel(request_id: Any) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}

        # 1. cancellation of a call whose reply is an SSE stream (after its first event) and of a JSON reply
        key = f"sse-{n}"
        async with client.stream("POST", live.url, headers=session,
                                 json=call(1, "forever", {"progressToken": "p"}, report=True, key=key)) as reply:
            lines = reply.aiter_lines()
            assert (await first_data(lines))["method"] == "notifications/progress"
            await client.post(live.url, headers=session, json=cancel(1))
            rest = [json.loads(line[5:]) async for line in lines if line.startswith("data:")]
        assert rest[-1]["error"]["code"] == -32800
        await app.gate(key).cancelled.wait()
        key = f"json-{n}"
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                post, client, live.url, call(2, "forever", key=key), {**session, "Accept": "application/json"}
            )
            await app.gate(key).entered.wait()
            await client.post(live.url, headers=session, json=cancel(2))
        await app.gate(key).cancelled.wait()

        # 2. an abandoned POST stream: the client drops it; the call finishes later and nothing stays
        key = f"abandoned-{n}"
        async with client.stream("POST", live.url, headers=session, json=call(3, "gated", key=key)):
            await app.gate(key).entered.wait()
        app.gate(key).release.set()

        # 3. an abandoned GET stream
        writer = live.session_table.streamable[session_id].writer
        async with client.stream("GET", live.url, headers={**session, "Accept": "text/event-stream"}):
            await until(lambda: writer.standalone().consumers == 1, "the GET stream to attach")
        await until(lambda: writer.standalone().consumers == 0, "the dropped GET stream to detach")

        # 4. a duplicate id while the first call is in flight
        key = f"dup-{n}"
        async with anyio.create_task_group() as tg:
            tg.start_soon(post, client, live.url, call(4, "gated", key=key), session)
            await app.gate(key).entered.wait()
            duplicate = await client.post(
                live.url, headers={**session, "Accept": "application/json"}, json=call(4, "add", a=1, b=1)
            )
            assert duplicate.json()["error"]["code"] == -32600
            app.gate(key).release.set()

        # 5. 2026-07-28: abandoned before the first event, and abandoned mid-stream
        key = f"modern-quiet-{n}"
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                post,
                client,
                live.url,
                call(5, "forever", MODERN_META, key=key),
                modern_headers("tools/call", "forever"),
            )
            await app.gate(key).entered.wait()
            tg.cancel_scope.cancel()
        await app.gate(key).cancelled.wait()
        key = f"modern-stream-{n}"
        async with client.stream(
            "POST",
            live.url,
            headers=modern_headers("tools/call", "forever"),
            json=call(6, "forever", {**MODERN_META, "progressToken": "p"}, report=True, key=key),
        ) as reply:
            assert (await first_data(reply.aiter_lines()))["method"] == "notifications/progress"
        await app.gate(key).cancelled.wait()

        # 6. a legacy SSE session whose stream is dropped
        async with client.stream("GET", f"{live.base}/sse") as events:
            async for line in events.aiter_lines():
                if line.startswith("data:"):  # the endpoint event: the session is open
                    break
            assert len(live.session_table.legacy) == 1
        await until(lambda: not live.session_table.legacy, "the legacy session to end")

        assert (await client.delete(live.url, headers=session)).status_code == 200


async def test_nothing_leaks_after_cancellations_disconnects_abandoned_streams_duplicates_and_abandons() -> None:
    app = build()
    async with serve(app) as live:
        with anyio.fail_after(60):
            await one_round(live, 0)  # warm-up
            await until(lambda: quiet(live), "the warm-up to settle")
            tasks, fds = task_count(), open_fds()
            for n in range(1, ROUNDS + 1):
                await one_round(live, n)
            await until(lambda: quiet(live) and task_count() <= tasks and open_fds() <= fds,
                        f"tasks {task_count()}/{tasks} and fds {open_fds()}/{fds} to return to the baseline")
        assert not app.sessions and not live.session_table.streamable and not live.session_table.stateless


def quiet(live: LiveServer) -> bool:
    return not live.app.sessions and not live.session_table.streamable and not live.session_table.stateless \
        and not live.session_table.legacy
