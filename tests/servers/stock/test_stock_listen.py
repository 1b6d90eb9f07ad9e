"""The stock server in the 2026-07-28 era: the SDK client in auto mode, quotes through subscriptions/listen."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

PROJECT_ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.anyio
async def test_quote_updates_arrive_through_subscriptions_listen() -> None:
    target = StdioServerParameters(
        command=sys.executable,
        args=["-m", "servers.stock", "--provider", "sample", "--poll-interval", "0.2"],
        cwd=str(PROJECT_ROOT),
        env={"PYTHONPATH": str(PROJECT_ROOT), "MCP_LOG_LEVEL": "warning"},
    )
    with anyio.fail_after(60):
        async with Client(target, mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            quote = await client.call_tool("get_stock_price", {"ticker": "MSFT"})
            assert json.loads(quote.content[0].text)["ticker"] == "MSFT"
            async with client.listen(resource_subscriptions=["stock://quote/AAPL"]) as subscription:
                event = await subscription.__anext__()
                assert getattr(event, "uri", None) == "stock://quote/AAPL"
            read = await client.read_resource("stock://quote/AAPL")
            assert json.loads(read.contents[0].text)["ticker"] == "AAPL"
