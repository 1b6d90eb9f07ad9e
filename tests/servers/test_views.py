"""The stock and weather servers' MCP Apps views: self-contained HTML within the size budget, with text
alternatives, linked to their tools; app-only tools only for hosts that render views, and the same
results as before for every other host."""

from __future__ import annotations

import re
from typing import Any

import pytest

from mcp_kit.apps import EXTENSION_ID, MIME_TYPE
from mcp_kit.testing import connect
from servers._shared.views import SIZE_BUDGET
from tests.fixtures.apps_servers import stock, weather

pytestmark = pytest.mark.anyio

HOST = {EXTENSION_ID: {"mimeTypes": [MIME_TYPE]}}
VIEWS = [(stock, "ui://stock/price-chart", "get_price_history", "price_chart"),
         (weather, "ui://weather/week", "get_forecast", "week_view")]
SVG_NAMESPACE = "http://www.w3.org/2000/svg"


async def read_view(app: Any, uri: str) -> dict[str, Any]:
    async with connect(app, extensions=HOST) as host:
        [content] = (await host.request("resources/read", {"uri": uri}))["contents"]
    return content  # type: ignore[no-any-return]


@pytest.mark.parametrize(("app", "uri", "tool", "app_only"), VIEWS)
async def test_each_view_is_self_contained_within_its_budget(app: Any, uri: str, tool: str, app_only: str) -> None:
    content = await read_view(app, uri)
    html = content["text"]
    assert content["mimeType"] == MIME_TYPE and content["_meta"] == {"ui": {"prefersBorder": True}}
    assert len(html.encode("utf-8")) <= SIZE_BUDGET, f"{uri}: {len(html.encode())} bytes"
    assert html.startswith("<!DOCTYPE html>") and "/*BRIDGE*/" not in html and "ui/initialize" in html
    assert not re.search(r"<link|<script[^>]+src|@import|url\(|<img|<iframe", html, re.I)
    assert set(re.findall(r"https?://[^\s\"'<>)]+", html)) <= {SVG_NAMESPACE}  # a namespace, never a request
    assert "fetch(" not in html and "XMLHttpRequest" not in html and "WebSocket" not in html
    assert f'"{app_only}"' in html  # the view changes range or city through its app-only tool


@pytest.mark.parametrize(("app", "uri", "tool", "app_only"), VIEWS)
async def test_each_view_has_text_alternatives(app: Any, uri: str, tool: str, app_only: str) -> None:
    html = (await read_view(app, uri))["text"]
    assert re.search(r'<svg[^>]+role="img"[^>]+aria-labelledby="[\w-]+-title [\w-]+-desc"', html)
    assert "<title id=" in html and "<desc id=" in html  # filled with a summary of the data when drawn
    assert 'role="status"' in html and 'aria-live="polite"' in html
    assert html.count("aria-pressed") >= 4 and 'lang="en"' in html


@pytest.mark.parametrize(("app", "uri", "tool", "app_only"), VIEWS)
async def test_hosts_without_apps_see_the_servers_as_before(app: Any, uri: str, tool: str, app_only: str) -> None:
    async with connect(app) as plain, connect(app, extensions=HOST) as host:
        plain_tools = {each["name"]: each for each in (await plain.request("tools/list", {}))["tools"]}
        host_tools = {each["name"]: each for each in (await host.request("tools/list", {}))["tools"]}
        assert app_only not in plain_tools and set(host_tools) - set(plain_tools) == {app_only}
        assert host_tools[tool]["_meta"]["ui"] == {"resourceUri": uri, "visibility": ["model", "app"]}
        assert host_tools[app_only]["_meta"]["ui"] == {"resourceUri": uri, "visibility": ["app"]}
        arguments = {"ticker": "AAPL", "period": "1mo"} if tool == "get_price_history" else {"city": "Miami"}
        assert await plain.call_tool(tool, arguments) == await host.call_tool(tool, arguments)


async def test_the_app_only_tools_answer_what_the_views_draw() -> None:
    async with connect(stock, extensions=HOST) as host:
        chart = (await host.call_tool("price_chart", {"ticker": "MSFT", "period": "3mo"}))["structuredContent"]
        history = (await host.call_tool("get_price_history", {"ticker": "MSFT", "period": "3mo"}))["structuredContent"]
        assert [point["close"] for point in chart["points"]] == [bar["close"] for bar in history["bars"]]
        assert chart["valuation"]["ticker"] == "MSFT" and chart["valuation"]["pe_ratio"] > 0
    async with connect(weather, extensions=HOST) as host:
        week = (await host.call_tool("week_view", {"city": "Chicago"}))["structuredContent"]
        assert len(week["daily"]) == 7 and week["alerts_available"] is True
        assert [alert["event"] for alert in week["alerts"]] == ["Winter Storm Watch"]
        abroad = (await host.call_tool("week_view", {"city": "Oslo"}))["structuredContent"]
        assert abroad["alerts_available"] is False and abroad["alerts"] == []
