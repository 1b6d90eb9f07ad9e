"""End to end: `python -m servers.weather --provider sample` as a real subprocess, driven by the official SDK client."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client, types

REPO_ROOT = Path(__file__).resolve().parents[3]

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


class Updates:
    """Collects notifications/resources/updated URIs from the session's message handler."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self.arrived = anyio.Event()

    async def __call__(self, message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(message.params.uri)
            self.arrived.set()


@contextlib.asynccontextmanager
async def weather_session(updates: Updates | None = None) -> AsyncIterator[ClientSession]:
    """Start the server subprocess (stopped by stdio_client on exit) and initialise a session."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "servers.weather", "--provider", "sample", "--poll-interval", "0.2", "--log-level", "warning"],
        cwd=str(REPO_ROOT),
    )
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, message_handler=updates) as session:
                await session.initialize()
                yield session


async def test_every_tool_over_stdio() -> None:
    async with weather_session() as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        beijing = await session.call_tool("get_weather", {"city": "北京", "unit": "celsius"})
        forecast = await session.call_tool(
            "get_forecast", {"city": "San Francisco, CA", "days": 5, "unit": "fahrenheit", "hours": 3}
        )
        alerts_us = await session.call_tool("get_alerts", {"location": "FL"})
        alerts_elsewhere = await session.call_tool("get_alerts", {"location": "Tokyo"})
        found = await session.call_tool("search_location", {"query": "London"})
        unknown = await session.call_tool("get_weather", {"city": "Pariss"})
    assert tools == {"get_weather", "get_forecast", "get_alerts", "search_location"}

    assert beijing.is_error is False
    weather = beijing.structured_content
    assert weather["location"]["name"] == "Beijing" and weather["location"]["country"] == "China"
    assert weather["units"]["temperature"] == "°C" and weather["source"] == "sample"
    assert json.loads(beijing.content[0].text) == weather

    days = forecast.structured_content
    assert len(days["daily"]) == 5 and len(days["hourly"]) == 3 and days["units"]["temperature"] == "°F"
    assert days["location"]["region"] == "California"

    assert alerts_us.structured_content["alerts_available"] is True
    assert alerts_elsewhere.structured_content["alerts_available"] is False
    assert "not available for Japan" in alerts_elsewhere.structured_content["message"]

    assert [c["country_code"] for c in found.structured_content["candidates"]] == ["GB", "CA"]

    assert unknown.is_error is True
    assert unknown.content[0].text.startswith("No place 'Pariss'. Did you mean Paris (France)")


async def test_three_cities_in_parallel_over_stdio() -> None:
    cities = ["上海", "北京", "广州"]
    async with weather_session() as session:
        results: dict[str, types.CallToolResult] = {}

        async def ask(city: str) -> None:
            results[city] = await session.call_tool("get_weather", {"city": city})

        async with anyio.create_task_group() as tg:
            for city in cities:
                tg.start_soon(ask, city)
    names = {city: results[city].structured_content["location"]["name"] for city in cities}
    assert names == {"上海": "Shanghai", "北京": "Beijing", "广州": "Guangzhou"}
    assert all(not result.is_error for result in results.values())


async def test_templates_completion_and_prompt_over_stdio() -> None:
    async with weather_session() as session:
        templates = {t.uri_template for t in (await session.list_resource_templates()).resource_templates}
        current = await session.read_resource("weather://current/%E4%B8%8A%E6%B5%B7")
        today = await session.read_resource("weather://forecast/Lisbon/today")
        english = await session.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="weather://current/{city}"),
            {"name": "city", "value": "Par"},
        )
        chinese = await session.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="weather://forecast/{city}/{date}"),
            {"name": "city", "value": "上"},
        )
        destination = await session.complete(
            types.PromptReference(type="ref/prompt", name="plan-vacation"), {"name": "destination", "value": "Par"}
        )
        prompt = await session.get_prompt(
            "plan-vacation", {"destination": "Lisbon", "duration": "4 days", "budget": "EUR 1500"}
        )
    assert templates == {"weather://current/{city}", "weather://forecast/{city}/{date}"}
    assert json.loads(current.contents[0].text)["location"]["name"] == "Shanghai"
    day = json.loads(today.contents[0].text)
    assert len(day["daily"]) == 1 and day["location"]["name"] == "Lisbon"
    assert english.completion.values[:2] == ["Paris", "Parma"]
    assert chinese.completion.values == ["上海"]
    assert destination.completion.values[:2] == ["Paris", "Parma"]
    text = prompt.messages[0].content.text
    assert "Forecast for Lisbon, Portugal" in text and "Budget: EUR 1500." in text and text.count("\n- ") == 4


async def test_subscription_delivers_an_update_over_stdio() -> None:
    updates = Updates()
    async with weather_session(updates) as session:
        await session.subscribe_resource("weather://current/Paris")
        with anyio.fail_after(10):
            await updates.arrived.wait()
        await session.unsubscribe_resource("weather://current/Paris")
    assert updates.uris[0] == "weather://current/Paris"
