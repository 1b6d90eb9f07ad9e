"""A middleware written against `mcp_kit.Middleware` sees, refuses and rewrites calls over every transport and
in both eras: the official SDK client over stdio, Streamable HTTP (handshake and 2026-07-28) and legacy SSE,
and raw JSON-RPC batches (2025-03-26)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers.support import ROOT, http_server

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def piped_url() -> Iterator[str]:
    with http_server(["-m", "tests.middleware.piped_server"]) as base:
        yield base


def texts(result: Any) -> list[str]:
    return [block.text for block in result.content]


async def exercise(session: Any, era: str) -> None:
    names = [tool.name for tool in (await session.list_tools()).tools]
    assert names == ["add"]  # the middleware's list rewrite
    assert texts(await session.call_tool("add", {"a": 2, "b": 1})) == ["5", f"seen:{era}:tools/call"]
    refused = await session.call_tool("forbidden", {})
    assert refused.is_error is True and texts(refused) == ["refused by the middleware"]


async def test_stdio_with_the_sdk_client() -> None:
    target = StdioServerParameters(command=sys.executable, args=["-m", "tests.middleware.piped_server"], cwd=str(ROOT))
    async with stdio_client(target) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await exercise(session, "handshake")


async def test_streamable_http_with_the_sdk_client_in_both_eras(piped_url: str) -> None:
    async with streamable_http_client(f"{piped_url}/mcp") as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await exercise(session, "handshake")
    async with Client(f"{piped_url}/mcp", mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        await exercise(client, "stateless")


async def test_legacy_sse_with_the_sdk_client(piped_url: str) -> None:
    async with sse_client(f"{piped_url}/sse") as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await exercise(session, "handshake")


def test_a_batch_passes_the_chain_item_by_item(piped_url: str) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(timeout=30) as http:
        opened = http.post(
            f"{piped_url}/mcp",
            headers=headers,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-03-26",
                    "capabilities": {},
                    "clientInfo": {"name": "b", "version": "1"},
                },
            },
        )
        session = {**headers, "Accept": "application/json", "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        http.post(f"{piped_url}/mcp", headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        batch = [{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add",
                                                                               "arguments": {"a": 5, "b": 0}}},
                 {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "forbidden"}}]
        answers = {item["id"]: item["result"] for item in http.post(f"{piped_url}/mcp", headers=session,
                                                                     json=batch).json()}
    assert [b["text"] for b in answers[2]["content"]] == ["10", "seen:handshake:tools/call"]
    assert answers[3]["isError"] is True and answers[3]["content"][0]["text"] == "refused by the middleware"
