"""End to end over Streamable HTTP: the server subprocess with --transport http and the official SDK client."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.helpers.support import http_server as run_http_server


@pytest.fixture
def http_server() -> Iterator[str]:
    """The weather server (sample data) as a subprocess on 127.0.0.1, stopped by PID afterwards."""
    with run_http_server(["-m", "servers.weather", "--provider", "sample"]) as base:
        yield f"{base}/mcp"


@pytest.mark.anyio
async def test_weather_over_streamable_http(http_server: str) -> None:
    with anyio.fail_after(60):
        async with streamable_http_client(http_server) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                beijing = await session.call_tool("get_weather", {"city": "北京"})
                unknown = await session.call_tool("get_weather", {"city": "Pariss"})
    assert tools == {"get_weather", "get_forecast", "get_alerts", "search_location"}
    assert beijing.structured_content["location"]["name"] == "Beijing"
    assert beijing.structured_content["units"]["temperature"] == "°C"
    assert unknown.is_error and "Did you mean Paris (France)" in unknown.content[0].text
