"""The official SDK client against a hub that mounts the stock and weather servers (examples/hub_server.py), over
stdio in both eras: prefixed tools and prompts, URIs kept, a transformed tool, skills once, completions, and a
subscription to a mounted resource delivering its update."""

from __future__ import annotations

import json
import sys

import mcp_types as types
import pytest
from mcp import StdioServerParameters

from tests.helpers.support import ROOT
from tests.interop.test_sdk_matrix import MODES, Case, data_of, nothing, text_of, tool_names

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_client_uses_every_primitive_of_a_hub_of_mounted_servers(mode: str) -> None:
    case = Case(mode, [ROOT])
    target = StdioServerParameters(command=sys.executable, args=[str(ROOT / "examples" / "hub_server.py")],
                                   cwd="/", env={"MCP_LOG_LEVEL": "warning", "STOCK_POLL_INTERVAL": "0.2"})
    async with case.client(target) as client:
        listing = await client.list_tools()
        names = tool_names(listing)
        assert {"stock_get_stock_price", "stock_valuation_report", "weather_get_forecast", "weather_get_alerts"} \
            <= names
        assert all(name.startswith(("stock_", "weather_")) for name in names)
        forecast_tool = next(tool for tool in listing.tools if tool.name == "weather_get_forecast")
        assert set(forecast_tool.input_schema["properties"]) == {"city", "days"}  # unit and hours hidden
        assert forecast_tool.description == "Daily forecast for a city, in degrees Celsius."

        assert data_of(await client.call_tool("stock_get_stock_price", {"ticker": "AAPL"}))["ticker"] == "AAPL"
        forecast = data_of(await client.call_tool("weather_get_forecast", {"city": "Paris"}))
        assert len(forecast["daily"]) == 3 and forecast["hourly"] == [] and forecast["units"]["temperature"] == "°C"
        refused = await client.call_tool("weather_get_forecast", {"city": "Paris", "unit": "fahrenheit"})
        assert refused.is_error is True

        uris = {str(resource.uri) for resource in (await client.list_resources()).resources}
        assert {"stock://tickers", "skill://valuation-analysis/SKILL.md"} <= uris
        assert len([uri for uri in uris if uri.startswith("skill://")]) == 2
        quote = (await client.read_resource("stock://quote/NVDA")).contents[0]
        assert isinstance(quote, types.TextResourceContents) and json.loads(quote.text)["ticker"] == "NVDA"

        prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
        assert {"stock_analyze-stock", "stock_compare-valuation"} <= prompts
        analyze = await client.get_prompt("stock_analyze-stock", {"ticker": "AAPL"})
        assert isinstance(analyze.messages[0].content, types.TextContent) and "AAPL" in analyze.messages[0].content.text
        by_prompt = await client.complete(types.PromptReference(name="stock_analyze-stock"),
                                          {"name": "ticker", "value": "MS"})
        assert "MSFT" in by_prompt.completion.values
        report = await client.call_tool("stock_valuation_report", {"tickers": ["AAPL", "KO"]})
        assert "KO" in text_of(report)

        await case.watch(client, "stock://quote/AAPL", nothing)
