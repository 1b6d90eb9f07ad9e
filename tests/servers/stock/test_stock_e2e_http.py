"""End to end over Streamable HTTP: `python -m servers.stock --provider sample --transport http`
as a real subprocess (stopped by PID: terminate, wait, kill), driven by the official MCP SDK client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from tests.helpers.support import http_server as run_http_server


@pytest.fixture
def http_server() -> Iterator[str]:
    """The stock server (sample data, quotes polled every 0.2 s) as a subprocess on 127.0.0.1, stopped by PID."""
    with run_http_server(["-m", "servers.stock", "--provider", "sample", "--poll-interval", "0.2"]) as base:
        yield f"{base}/mcp"


def data_of(result: types.CallToolResult) -> Any:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert result.is_error is False, block.text
    return json.loads(block.text)


@pytest.mark.anyio
async def test_stock_server_over_streamable_http(http_server: str) -> None:
    updated = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.set()

    with anyio.fail_after(60):
        async with streamable_http_client(http_server) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                init = await session.initialize()
                assert init.server_info.name == "stock"
                quote = data_of(await session.call_tool("get_stock_price", {"ticker": "MSFT"}))
                assert quote["ticker"] == "MSFT" and quote["source"] == "sample"
                unknown = await session.call_tool("get_stock_price", {"ticker": "MSFTT"})
                assert unknown.is_error is True
                assert isinstance(unknown.content[0], types.TextContent)
                assert unknown.content[0].text.startswith("No ticker 'MSFTT'. Did you mean MSFT (Microsoft")
                valuation = data_of(await session.call_tool("compare_valuation", {"tickers": ["MSFT", "KO"]}))
                assert [row["ticker"] for row in valuation["results"]] == ["MSFT", "KO"]
                contents = (await session.read_resource("stock://quote/KO")).contents
                assert isinstance(contents[0], types.TextResourceContents)
                assert json.loads(contents[0].text)["ticker"] == "KO"
                await session.subscribe_resource("stock://quote/KO")
                with anyio.fail_after(10):
                    await updated.wait()
