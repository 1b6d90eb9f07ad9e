"""End to end: `python -m servers.stock --provider sample` as a real subprocess, driven by the
official MCP SDK client over stdio. The SDK's stdio_client stops the process on exit (closes stdin,
then SIGTERM, then SIGKILL to its process group, each bounded by a timeout)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client, types

PROJECT_ROOT = Path(__file__).resolve().parents[3]


def server_parameters(*extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "servers.stock", "--provider", "sample", "--poll-interval", "0.2", *extra],
        cwd=str(PROJECT_ROOT),
        env={"PYTHONPATH": str(PROJECT_ROOT), "MCP_LOG_LEVEL": "warning"},
    )


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def data_of(result: types.CallToolResult) -> Any:
    assert result.is_error is False, text_of(result)
    return json.loads(text_of(result))


@pytest.mark.anyio
async def test_stock_server_over_stdio_with_the_official_sdk() -> None:
    updates: list[str] = []
    updated = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            updated.set()

    with anyio.fail_after(60):
        async with stdio_client(server_parameters()) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                init = await session.initialize()
                assert init.server_info.name == "stock"
                assert (init.instructions or "").startswith("SAMPLE DATA")

                tools = {tool.name for tool in (await session.list_tools()).tools}
                assert tools == {"get_stock_price", "get_price_history", "get_financial_statement",
                                 "compare_valuation", "valuation_report", "search_ticker"}

                quote = data_of(await session.call_tool("get_stock_price", {"ticker": "AAPL"}))
                assert quote["ticker"] == "AAPL" and quote["source"] == "sample"

                history = data_of(await session.call_tool(
                    "get_price_history", {"ticker": "MSFT", "start": "2025-06-02", "end": "2025-06-13",
                                          "interval": "1wk"}))
                assert [bar["time"] for bar in history["bars"]] == ["2025-06-02", "2025-06-09"]

                statement = data_of(await session.call_tool(
                    "get_financial_statement", {"ticker": "AAPL", "statement_type": "income_statement",
                                                "period": "annual", "limit": 2}))
                assert [p["fiscal_label"] for p in statement["periods"]] == ["FY2024", "FY2023"]

                valuation = data_of(await session.call_tool("compare_valuation", {"tickers": ["AAPL", "MSFT"]}))
                assert all(row["pe_ratio"] > 0 for row in valuation["results"])
                assert sorted(valuation["ranking_by_pe"]) == ["AAPL", "MSFT"]

                found = data_of(await session.call_tool("search_ticker", {"query": "apple"}))
                assert found["matches"][0]["ticker"] == "AAPL"

                unknown = await session.call_tool("get_stock_price", {"ticker": "AAPLE"})
                assert unknown.is_error is True
                assert text_of(unknown) == "No ticker 'AAPLE'. Did you mean AAPL (Apple Inc.)?"

                inverted = await session.call_tool(
                    "get_price_history", {"ticker": "AAPL", "start": "2025-06-06", "end": "2025-06-02"})
                assert inverted.is_error is True and "is after 'end'" in text_of(inverted)

                contents = (await session.read_resource("stock://quote/NVDA")).contents
                assert isinstance(contents[0], types.TextResourceContents)
                assert json.loads(contents[0].text)["ticker"] == "NVDA"

                await session.subscribe_resource("stock://quote/NVDA")
                with anyio.fail_after(10):
                    await updated.wait()
                assert updates[0] == "stock://quote/NVDA"
                await session.unsubscribe_resource("stock://quote/NVDA")

                prompt = await session.get_prompt("compare-valuation", {"tickers": "AAPL, MSFT"})
                first = prompt.messages[0].content
                assert isinstance(first, types.TextContent) and "compare_valuation" in first.text

                completion = await session.complete(
                    types.ResourceTemplateReference(type="ref/resource", uri="stock://quote/{ticker}"),
                    {"name": "ticker", "value": "MS"})
                assert completion.completion.values[:3] == ["MS", "MSFT", "MSCI"]
