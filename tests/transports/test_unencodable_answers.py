"""A result that cannot be encoded is still answered, on every transport.

A lone surrogate (what `os.listdir` returns for a file name that is not UTF-8) cannot be written as JSON.
Before, the encode error killed the request's task ("Task exception was never retrieved") and the client
waited forever. Now `tools/call` answers `isError: true` naming the cause, any other method -32603 naming it,
and the session lives on.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import pytest

from mcp_kit.testing import connect
from tests.helpers.fault_server import build
from tests.helpers.live_http import ACCEPT, MODERN_META, modern_headers, serve, sse_messages
from tests.helpers.stdio_peer import StdioPeer

CALL = {"name": "unencodable", "arguments": {}}
READ = {"uri": "fault://unencodable"}


def assert_tool_error_names_the_cause(result: dict[str, Any]) -> None:
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "lone surrogate" in text and "\\udcff" in text and "unencodable" in text


def assert_internal_error_names_the_cause(error: dict[str, Any]) -> None:
    assert error["code"] == -32603
    assert "resources/read" in error["message"] and "lone surrogate" in error["message"]


@pytest.fixture
def peer() -> Iterator[StdioPeer]:
    server = StdioPeer()
    try:
        yield server
    finally:
        server.close()


def test_unencodable_results_are_answered_over_stdio(peer: StdioPeer) -> None:
    peer.initialize()
    peer.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": CALL})
    peer.send({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": READ})
    peer.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {**CALL, "_meta": MODERN_META}})  # the 2026-07-28 era on the same connection
    assert_tool_error_names_the_cause(peer.answer(1)["result"])
    assert_internal_error_names_the_cause(peer.answer(2)["error"])
    modern = peer.answer(3)["result"]
    assert_tool_error_names_the_cause(modern)
    assert modern["resultType"] == "complete"
    assert peer.alive()
    assert "Task exception was never retrieved" not in peer.stderr_text()


def test_unencodable_answer_inside_a_batch_is_replaced_alone() -> None:
    peer = StdioPeer()
    try:
        peer.send(peer_init("2025-03-26"))
        assert peer.answer("init")["result"]["protocolVersion"] == "2025-03-26"
        peer.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": CALL},
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": 1, "b": 1}},
                },
            ]
        )
        assert_tool_error_names_the_cause(peer.answer(1)["result"])
        assert peer.answer(2)["result"]["content"][0]["text"] == "2"
        assert peer.alive()
    finally:
        peer.close()


def peer_init(version: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


@pytest.mark.anyio
async def test_unencodable_results_are_answered_in_memory() -> None:
    async with connect(build()) as client:
        assert_tool_error_names_the_cause(await client.call_tool("unencodable", {}))
        with pytest.raises(Exception) as caught:
            await client.read_resource("fault://unencodable")
        assert getattr(caught.value, "code", None) == -32603 and "lone surrogate" in str(caught.value)
        assert await client.request("ping", {}) == {}


async def _session(client: httpx.AsyncClient, url: str) -> dict[str, str]:
    init = await client.post(url, headers=ACCEPT, json={**peer_init("2025-11-25"), "id": 1})
    headers = {**ACCEPT, "Mcp-Session-Id": init.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
    await client.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return headers


@pytest.fixture
async def live() -> AsyncIterator[Any]:
    async with serve(build()) as server:
        yield server


@pytest.mark.anyio
@pytest.mark.parametrize("accept", ["application/json", "application/json, text/event-stream"])
async def test_unencodable_results_are_answered_over_streamable_http(live: Any, accept: str) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        headers = {**await _session(client, live.url), "Accept": accept}

        async def post(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            reply = await client.post(live.url, headers=headers,
                                      json={"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            messages = [reply.json()] if reply.headers["content-type"].startswith("application/json") \
                else sse_messages(reply.text)
            answers = [m for m in messages if m.get("id") == request_id]
            assert len(answers) == 1, messages
            return answers[0]

        assert_tool_error_names_the_cause((await post(2, "tools/call", CALL))["result"])
        assert_internal_error_names_the_cause((await post(3, "resources/read", READ))["error"])
        assert (await post(4, "ping", {}))["result"] == {}
    assert all(not entry.dispatcher.in_flight for entry in live.session_table.streamable.values())


@pytest.mark.anyio
async def test_unencodable_results_are_answered_over_2026_http(live: Any) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        call = await client.post(live.url, headers=modern_headers("tools/call", "unencodable"), json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**CALL, "_meta": MODERN_META}})
        assert_tool_error_names_the_cause(call.json()["result"])
        read = await client.post(live.url, headers=modern_headers("resources/read", READ["uri"]), json={
            "jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {**READ, "_meta": MODERN_META}})
        assert_internal_error_names_the_cause(read.json()["error"])
    assert not live.session_table.stateless


@pytest.mark.anyio
async def test_unencodable_results_are_answered_over_legacy_sse(live: Any) -> None:
    async with httpx.AsyncClient(timeout=10) as client, client.stream("GET", f"{live.base}/sse") as stream:
        lines = stream.aiter_lines()
        endpoint = None
        async for line in lines:
            if line.startswith("data:"):
                endpoint = line[5:].strip()
                break
        assert endpoint is not None
        post_url = f"{live.base}{endpoint}"

        async def answer_to(request_id: int) -> dict[str, Any]:
            with anyio.fail_after(10):
                async for line in lines:
                    if line.startswith("data:"):
                        message = json.loads(line[5:])
                        if message.get("id") == request_id:
                            return message
            raise AssertionError("the SSE stream ended")

        for request_id, method, params in [(1, "initialize", peer_init("2024-11-05")["params"]),
                                           (2, "tools/call", CALL), (3, "resources/read", READ), (4, "ping", {})]:
            posted = await client.post(
                post_url, json={"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            )
            assert posted.status_code == 202
            answer = await answer_to(request_id)
            if request_id == 2:
                assert_tool_error_names_the_cause(answer["result"])
            elif request_id == 3:
                assert_internal_error_names_the_cause(answer["error"])
            else:
                assert "result" in answer
