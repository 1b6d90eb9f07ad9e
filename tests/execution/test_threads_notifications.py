"""Changes a sync tool makes from its worker thread reach clients of a real HTTP server.

Regression: list changes and resource updates made off the event loop were delivered from a bare
loop callback. Under uvicorn (whose loop anyio did not start) anyio's `start_soon` then cannot tell
which async library runs when sniffio is installed, since sniffio reads it from the current task:
nothing was sent and the error only reached the log. The in-process test runner and `anyio.run`
(stdio) both hide this, so it runs against a real uvicorn in a subprocess.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.helpers.support import http_server

pytestmark = pytest.mark.anyio

SERVER = textwrap.dedent('''
    import argparse

    from mcp_kit import MCPServer, add_run_arguments

    app = MCPServer("from-a-thread")

    @app.resource("note://{name}")
    def note(name: str) -> str:
        return name

    @app.tool
    def change_things() -> str:
        app.add_tool(lambda: "late", name="late")
        app.notify_resource_updated("note://a")
        return "changed"

    app.run_from_args(add_run_arguments(argparse.ArgumentParser()).parse_args())
''')
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
WANTED = {"notifications/tools/list_changed", "notifications/resources/updated"}


async def sse_messages(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    async for line in response.aiter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


async def collect(messages: AsyncIterator[dict[str, Any]], seen: set[str], done: anyio.Event) -> None:
    async for message in messages:
        if message.get("method") in WANTED:
            seen.add(message["method"])
            if seen == WANTED:
                done.set()
                return


@pytest.fixture
def server_url(tmp_path: Path) -> Any:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    with http_server([str(script)]) as base:
        yield f"{base}/mcp"


async def test_changes_made_by_a_sync_tool_reach_a_handshake_session(server_url: str) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        init = await client.post(
            server_url,
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
        session = {**ACCEPT, "Mcp-Session-Id": init.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        await client.post(server_url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        subscribed = await client.post(server_url, headers={**session, "Accept": "application/json"}, json={
            "jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "note://a"}})
        assert subscribed.json()["result"] == {}
        seen: set[str] = set()
        done = anyio.Event()
        async with client.stream("GET", server_url, headers={**session, "Accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200
            async with anyio.create_task_group() as tg:
                tg.start_soon(collect, sse_messages(stream), seen, done)
                called = await client.post(server_url, headers={**session, "Accept": "application/json"}, json={
                    "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "change_things"}})
                assert called.json()["result"]["isError"] is False
                with anyio.fail_after(10):
                    await done.wait()
                tg.cancel_scope.cancel()
        assert seen == WANTED


async def test_changes_made_by_a_sync_tool_reach_a_listen_stream(server_url: str) -> None:
    modern = {**ACCEPT, "MCP-Protocol-Version": "2026-07-28"}
    async with httpx.AsyncClient(timeout=10) as client:
        seen: set[str] = set()
        done = anyio.Event()
        listen = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
            "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["note://a"]}, "_meta": MODERN}}
        async with client.stream("POST", server_url, headers={**modern, "Mcp-Method": "subscriptions/listen"},
                                 json=listen) as stream:
            messages = sse_messages(stream)
            first = await messages.__anext__()
            assert first["method"] == "notifications/subscriptions/acknowledged"
            async with anyio.create_task_group() as tg:
                tg.start_soon(collect, messages, seen, done)
                called = await client.post(
                    server_url,
                    headers={**modern, "Mcp-Method": "tools/call", "Mcp-Name": "change_things"},
                    json={
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "tools/call",
                        "params": {"name": "change_things", "_meta": MODERN},
                    },
                )
                assert called.json()["result"]["isError"] is False
                with anyio.fail_after(10):
                    await done.wait()
                tg.cancel_scope.cancel()
        assert seen == WANTED
