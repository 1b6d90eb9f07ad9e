"""The weather server through mcp_kit.testing.connect: tools, resources, subscriptions, completion, prompt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcp_kit import MCPError
from mcp_kit.testing import connect
from servers.weather.errors import SourceTimeout
from servers.weather.live_provider import LiveProvider
from servers.weather.prompts import duration_days
from servers.weather.sample_provider import SampleProvider
from servers.weather.server import build_server
from tests.helpers.live_http import until
from tests.helpers.support import Meeting

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "weather"
START = datetime(2026, 7, 15, 12, 0, tzinfo=UTC)


class Clock:
    """A settable clock for the sample provider."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class Instrumented:
    """Wraps a provider: counts current() calls and can hold each at a meeting."""

    def __init__(self, inner: Any, meeting: Meeting | None = None) -> None:
        self.inner = inner
        self.meeting = meeting
        self.current_calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def current(self, place: Any, unit: Any) -> Any:
        self.current_calls += 1
        if self.meeting is not None:
            await self.meeting.attend()
        return await self.inner.current(place, unit)


def sample_app(clock: Clock | None = None, poll_interval: float = 0.05):
    return build_server(SampleProvider(clock=clock or Clock()), poll_interval=poll_interval)


@pytest.mark.anyio
async def test_tools_are_listed_with_model_readable_schemas() -> None:
    async with connect(sample_app()) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
    assert set(tools) == {"get_weather", "get_forecast", "get_alerts", "search_location"}
    weather = tools["get_weather"]
    assert weather["inputSchema"]["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert "北京" in weather["inputSchema"]["properties"]["city"]["description"]
    assert weather["inputSchema"]["required"] == ["city"]
    assert weather["annotations"]["readOnlyHint"] is True and "outputSchema" in weather
    days = tools["get_forecast"]["inputSchema"]["properties"]["days"]
    assert (days["minimum"], days["maximum"], days["default"]) == (1, 16, 7)
    assert "not available" in tools["get_alerts"]["description"]


@pytest.mark.anyio
async def test_get_weather_beijing_in_celsius() -> None:
    async with connect(sample_app()) as client:
        result = await client.call_tool("get_weather", {"city": "北京", "unit": "celsius"})
    assert result["isError"] is False
    data = result["structuredContent"]
    assert data["location"]["name"] == "Beijing" and data["location"]["country_code"] == "CN"
    assert data["location"]["latitude"] == pytest.approx(39.9, abs=0.1)
    assert data["units"] == {"temperature": "°C", "wind_speed": "km/h", "precipitation": "mm"}
    assert data["source"] == "sample" and data["observed_at"].endswith("+08:00")
    assert '"temperature"' in result["content"][0]["text"]


@pytest.mark.anyio
async def test_get_weather_says_which_paris_was_chosen() -> None:
    async with connect(sample_app()) as client:
        ambiguous = (await client.call_tool("get_weather", {"city": "Paris"}))["structuredContent"]
        explicit = (await client.call_tool("get_weather", {"city": "Paris, TX", "unit": "fahrenheit"}))[
            "structuredContent"
        ]
    assert ambiguous["location"]["country"] == "France" and "Texas" in ambiguous["note"]
    assert explicit["location"]["region"] == "Texas" and explicit["note"] is None
    assert explicit["units"]["temperature"] == "°F"


@pytest.mark.anyio
async def test_unknown_city_is_a_tool_error_with_close_matches() -> None:
    async with connect(sample_app()) as client:
        result = await client.call_tool("get_weather", {"city": "Pariss"})
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("No place 'Pariss'. Did you mean Paris (France)")


@pytest.mark.anyio
async def test_invalid_arguments_are_reported_by_field() -> None:
    async with connect(sample_app()) as client:
        unit = await client.call_tool("get_weather", {"city": "Paris", "unit": "kelvin"})
        days = await client.call_tool("get_forecast", {"city": "Paris", "days": 17})
    assert unit["isError"] and "unit" in unit["content"][0]["text"]
    assert days["isError"] and "days" in days["content"][0]["text"]


@pytest.mark.anyio
async def test_get_forecast_daily_and_hourly() -> None:
    async with connect(sample_app()) as client:
        result = await client.call_tool("get_forecast", {"city": "Tokyo", "days": 3, "hours": 6})
    data = result["structuredContent"]
    assert [d["date"] for d in data["daily"]] == ["2026-07-15", "2026-07-16", "2026-07-17"]
    assert len(data["hourly"]) == 6 and data["hourly"][0]["time"] == "2026-07-15T21:00"
    assert {
        "temperature_min",
        "temperature_max",
        "precipitation_sum",
        "precipitation_probability_percent",
        "condition",
    } <= set(data["daily"][0])


@pytest.mark.anyio
async def test_alerts_outside_the_us_say_not_available() -> None:
    async with connect(sample_app()) as client:
        result = (await client.call_tool("get_alerts", {"location": "上海"}))["structuredContent"]
    assert result["alerts_available"] is False and result["country_code"] == "CN"
    assert "not available for China" in result["message"] and "No active alerts" not in result["message"]


@pytest.mark.anyio
async def test_alerts_for_us_state_and_city() -> None:
    async with connect(sample_app()) as client:
        state = (await client.call_tool("get_alerts", {"location": "Texas"}))["structuredContent"]
        city = (await client.call_tool("get_alerts", {"location": "Miami"}))["structuredContent"]
    assert state["alerts_available"] is True and state["location"] == "Texas (TX), United States"
    assert state["message"].endswith("for Texas (TX), United States.") and state["source"] == "sample"
    assert city["alerts_available"] is True and city["location"] == "Miami, Florida, United States"


@pytest.mark.anyio
async def test_search_location_lists_candidates() -> None:
    async with connect(sample_app()) as client:
        result = (await client.call_tool("search_location", {"query": "Paris", "limit": 5}))["structuredContent"]
    assert [c["country_code"] for c in result["candidates"]] == ["FR", "US"]
    assert all(c["population"] and c["timezone"] for c in result["candidates"])


@pytest.mark.anyio
async def test_three_cities_run_concurrently() -> None:
    meeting = Meeting(3)  # each lookup waits until all three are in flight: calls in series never finish
    provider = Instrumented(SampleProvider(clock=Clock()), meeting=meeting)
    app = build_server(provider)  # type: ignore[arg-type]
    results: dict[str, Any] = {}
    async with connect(app) as client:

        async def ask(city: str) -> None:
            results[city] = await client.call_tool("get_weather", {"city": city})

        with anyio.fail_after(15):
            async with anyio.create_task_group() as tg:
                for city in ("Shanghai", "Beijing", "Guangzhou"):
                    tg.start_soon(ask, city)
    assert meeting.arrived == 3
    assert {r["structuredContent"]["location"]["name"] for r in results.values()} == {
        "Shanghai",
        "Beijing",
        "Guangzhou",
    }


@pytest.mark.anyio
async def test_resource_templates_read() -> None:
    async with connect(sample_app()) as client:
        templates = {t["uriTemplate"] for t in await client.list_resource_templates()}
        current = await client.read_resource("weather://current/%E5%8C%97%E4%BA%AC")  # 北京, percent-encoded
        day = await client.read_resource("weather://forecast/Tokyo/2026-07-16")
        today = await client.read_resource("weather://forecast/Tokyo/today")
    assert templates == {"weather://current/{city}", "weather://forecast/{city}/{date}"}
    assert '"name": "Beijing"' in current[0]["text"] and current[0]["mimeType"] == "application/json"
    assert '"date": "2026-07-16"' in day[0]["text"] and day[0]["text"].count('"date"') == 1
    assert '"date": "2026-07-15"' in today[0]["text"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "uri, words",
    [
        ("weather://current/Pariss", "Did you mean Paris (France)"),
        ("weather://forecast/Tokyo/2027-01-01", "outside the forecast range 2026-07-15 to 2026-07-30"),
        ("weather://forecast/Tokyo/2026-02-30", "not a date"),  # shaped like a date, but no such day
    ],
)
async def test_resource_errors_are_not_found_with_a_reason(uri: str, words: str) -> None:
    async with connect(sample_app()) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
    assert caught.value.code == -32002 and words in caught.value.message


@pytest.mark.anyio
async def test_subscription_notifies_only_when_the_observation_changes() -> None:
    clock = Clock()
    provider = Instrumented(SampleProvider(clock=clock))
    app = build_server(provider, poll_interval=0.02)  # type: ignore[arg-type]
    uri = "weather://current/Paris"
    async with connect(app) as client:
        assert not app.hub.watching(uri) and provider.current_calls == 0  # nobody subscribed: no polling
        await client.subscribe(uri)
        assert app.hub.watching(uri)
        await until(lambda: provider.current_calls >= 3, "three polls")
        assert client.notifications_named("notifications/resources/updated") == []  # clock frozen: unchanged
        clock.now += timedelta(seconds=1)
        note = await client.wait_notification("notifications/resources/updated", timeout=5)
        assert note["params"]["uri"] == uri
        await client.unsubscribe(uri)
        await until(lambda: not app.hub.watching(uri), "the watcher to end")  # polling stopped with the last subscriber
        calls = provider.current_calls
        await client.request("ping")
        assert provider.current_calls == calls


@pytest.mark.anyio
async def test_completion_of_city_and_date() -> None:
    async with connect(sample_app()) as client:
        current = await client.complete(
            {"type": "ref/resource", "uri": "weather://current/{city}"}, {"name": "city", "value": "Par"}
        )
        chinese = await client.complete(
            {"type": "ref/resource", "uri": "weather://forecast/{city}/{date}"}, {"name": "city", "value": "上"}
        )
        prompt = await client.complete(
            {"type": "ref/prompt", "name": "plan-vacation"}, {"name": "destination", "value": "Par"}
        )
        dates = await client.complete({"type": "ref/resource", "uri": "weather://forecast/{city}/{date}"},
                                      {"name": "date", "value": "2026-07-1"}, {"arguments": {"city": "Tokyo"}})
    assert current["values"][:2] == ["Paris", "Parma"]
    assert chinese["values"] == ["上海"]
    assert prompt["values"][:2] == ["Paris", "Parma"]
    assert dates["values"] == [f"2026-07-{d}" for d in range(15, 20)]


@pytest.mark.anyio
async def test_plan_vacation_prompt_embeds_the_forecast() -> None:
    async with connect(sample_app()) as client:
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("plan-vacation",
                                         {"destination": "成都", "duration": "3天", "interests": "food"})
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("plan-vacation", {"destination": "Lisbon"})
    arguments = {a["name"]: a["required"] for a in prompts[0]["arguments"]}
    assert arguments == {"destination": True, "duration": True, "budget": False, "interests": False}
    text = prompt["messages"][0]["content"]["text"]
    assert "Forecast for Chengdu, Sichuan, China" in text and "Interests: food." in text
    assert text.count("\n- 2026-07-") == 3
    assert caught.value.code == -32602 and "duration" in caught.value.message


def test_duration_parsing() -> None:
    assert duration_days("5 days") == 5
    assert duration_days("2 weeks") == 14
    assert duration_days("3天") == 3
    assert duration_days("1周") == 7
    assert duration_days("a long weekend") == 7


# ---------------------------------------------------------------- live provider behind the server


def fixture_router(request: httpx.Request) -> httpx.Response:
    name = {
        "geocoding-api.open-meteo.com": "openmeteo_geocoding_search_enschede.json",
        "api.open-meteo.com": "openmeteo_forecast_current_hourly_daily_enschede.json",
        "api.weather.gov": "nws_alerts_active_area_FL.json",
    }[request.url.host]
    return httpx.Response(200, content=(FIXTURES / name).read_bytes(), headers={"content-type": "application/json"})


@pytest.mark.anyio
async def test_live_provider_results_through_the_server() -> None:
    app = build_server(LiveProvider(transport=httpx.MockTransport(fixture_router), backoff=0))
    async with connect(app) as client:
        weather = (await client.call_tool("get_weather", {"city": "Enschede"}))["structuredContent"]
        alerts = (await client.call_tool("get_alerts", {"location": "FL"}))["structuredContent"]
        abroad = (await client.call_tool("get_alerts", {"location": "Enschede"}))["structuredContent"]
    assert (
        weather["source"] == "open-meteo"
        and weather["temperature"] == 17.7
        and weather["location"]["region"] == "Overijssel"
    )
    assert alerts["source"] == "nws" and [a["event"] for a in alerts["alerts"]] == [
        "Rip Current Statement",
        "Heat Advisory",
    ]
    assert alerts["message"] == "2 active alerts for Florida (FL), United States."
    assert abroad["alerts_available"] is False and "Netherlands" in abroad["message"]


@pytest.mark.anyio
async def test_source_timeout_tells_the_model_to_retry() -> None:
    def time_out(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("no answer", request=request)

    app = build_server(LiveProvider(transport=httpx.MockTransport(time_out), retries=1, backoff=0))
    async with connect(app) as client:
        result = await client.call_tool("get_forecast", {"city": "Paris"})
    text = result["content"][0]["text"]
    assert result["isError"] is True
    assert "timed out" in text and "2 attempts" in text and "Retrying in a minute may help" in text
    assert SourceTimeout.retryable is True


@pytest.mark.anyio
async def test_a_failing_source_makes_a_read_fail_as_upstream_unavailable() -> None:
    def time_out(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("no answer", request=request)

    app = build_server(LiveProvider(transport=httpx.MockTransport(time_out), retries=0, backoff=0))
    async with connect(app) as client:
        with pytest.raises(MCPError) as failed:
            await client.read_resource("weather://current/Paris")
    assert failed.value.code == -31001  # not -32603: the server has no bug, its source is unavailable
    assert "timed out" in failed.value.message and "--provider sample" in failed.value.message
    assert failed.value.data == {"retryable": True, "source": "open-meteo"}
