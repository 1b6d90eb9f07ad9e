"""LiveProvider against recorded Open-Meteo and NWS bodies served by httpx.MockTransport (offline)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from servers._shared.cache import TTLCache
from servers.weather.errors import PlaceNotFound, SourceRejected, SourceTimeout, SourceUnavailable
from servers.weather.live_provider import LiveProvider
from servers.weather.models import Place

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "weather"

ENSCHEDE = Place(name="Enschede", region="Overijssel", country="Netherlands", country_code="NL",
                 latitude=52.21833, longitude=6.89583, timezone="Europe/Amsterdam", population=153655)
SEATTLE = Place(name="Seattle", region="Washington", country="United States", country_code="US",
                latitude=47.6062, longitude=-122.3321, timezone="America/Los_Angeles", population=737000)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def json_response(name: str, status: int = 200) -> httpx.Response:
    return httpx.Response(status, content=fixture(name), headers={"content-type": "application/json"})


class Recorder:
    """A MockTransport handler that records requests and answers from a callable."""

    def __init__(self, answer: Callable[[httpx.Request], httpx.Response]) -> None:
        self.answer = answer
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.answer(request)


class FakeSleep:
    """Records backoff delays instead of sleeping."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def make_provider(answer: Callable[[httpx.Request], httpx.Response], **kwargs) -> tuple[LiveProvider, Recorder]:
    recorder = Recorder(answer)
    kwargs.setdefault("sleep", FakeSleep())
    kwargs.setdefault("backoff", 0.0)
    return LiveProvider(transport=httpx.MockTransport(recorder), **kwargs), recorder


@pytest.mark.anyio
async def test_resolve_picks_most_likely_paris_and_names_the_alternative() -> None:
    provider, recorder = make_provider(lambda r: json_response("openmeteo_geocoding_search_paris_count2.json"))
    resolution = await provider.resolve("Paris")
    assert (resolution.place.name, resolution.place.country_code, resolution.place.region) == (
        "Paris",
        "FR",
        "Île-de-France",
    )
    assert resolution.place.population == 2138551
    assert [p.region for p in resolution.alternatives] == ["Texas"]
    assert "chose Paris, Île-de-France, France" in resolution.note and "Paris, Texas, United States" in resolution.note
    request = recorder.requests[0]
    assert request.url.host == "geocoding-api.open-meteo.com"
    assert request.url.params["name"] == "Paris" and request.url.params["language"] == "en"
    await provider.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize("query", ["Paris, US", "Paris, TX", "Paris, Texas", "paris, united states"])
async def test_resolve_applies_country_or_state_qualifier(query: str) -> None:
    provider, recorder = make_provider(lambda r: json_response("openmeteo_geocoding_search_paris_count2.json"))
    resolution = await provider.resolve(query)
    assert (resolution.place.country_code, resolution.place.region) == ("US", "Texas")
    assert resolution.note is None
    assert recorder.requests[0].url.params["name"] == "Paris"


@pytest.mark.anyio
async def test_chinese_name_is_translated_before_geocoding() -> None:
    provider, recorder = make_provider(lambda r: json_response("openmeteo_geocoding_search_no_results.json"))
    with pytest.raises(PlaceNotFound):
        await provider.resolve("北京")
    assert recorder.requests[0].url.params["name"] == "Beijing"


@pytest.mark.anyio
async def test_no_match_raises_place_not_found_with_close_bundled_matches() -> None:
    provider, _ = make_provider(lambda r: json_response("openmeteo_geocoding_search_no_results.json"))
    with pytest.raises(PlaceNotFound) as caught:
        await provider.resolve("Pariss")
    assert str(caught.value).startswith("No place 'Pariss'. Did you mean Paris (France)")
    assert await provider.search("Pariss") == []


@pytest.mark.anyio
async def test_qualifier_that_excludes_every_result_suggests_the_results() -> None:
    provider, _ = make_provider(lambda r: json_response("openmeteo_geocoding_search_paris_count2.json"))
    with pytest.raises(PlaceNotFound) as caught:
        await provider.resolve("Paris, DE")
    assert "Did you mean Paris (France) or Paris (Texas, United States)?" in str(caught.value)


@pytest.mark.anyio
async def test_search_returns_candidates_with_population_and_coordinates() -> None:
    provider, recorder = make_provider(lambda r: json_response("openmeteo_geocoding_search_enschede.json"))
    places = await provider.search("Enschede", limit=5)
    assert [p.name for p in places][0] == "Enschede"
    assert places[0].population == 153655 and places[0].region == "Overijssel"
    assert len(places) == 2 and places[1].population is None  # the airport has no population
    assert recorder.requests[0].url.params["count"] == "5"


@pytest.mark.anyio
async def test_current_conditions_parse_the_recorded_enschede_body() -> None:
    provider, recorder = make_provider(lambda r: json_response("openmeteo_forecast_current_hourly_daily_enschede.json"))
    current = await provider.current(ENSCHEDE, "celsius")
    assert current.observed_at == "2026-10-03T12:30:00+02:00"
    assert (current.temperature, current.feels_like, current.humidity_percent) == (17.7, 17.6, 66)
    assert (current.wind_speed, current.wind_direction_degrees, current.wind_direction) == (3.6, 259, "W")
    assert (current.weather_code, current.condition) == (2, "partly cloudy")
    assert current.units.temperature == "°C" and current.units.wind_speed == "km/h"
    assert current.source == "open-meteo" and current.location == ENSCHEDE
    params = recorder.requests[0].url.params
    assert params["latitude"] == "52.2183" and params["timezone"] == "Europe/Amsterdam"
    assert "temperature_2m" in params["current"] and params["temperature_unit"] == "celsius"


@pytest.mark.anyio
async def test_forecast_in_fahrenheit_with_hourly_steps() -> None:
    provider, recorder = make_provider(lambda r: json_response("openmeteo_forecast_hourly_daily_seattle_imperial.json"))
    forecast = await provider.forecast(SEATTLE, days=7, unit="fahrenheit", hours=3)
    assert [d.date for d in forecast.daily][:2] == ["2026-05-07", "2026-05-08"] and len(forecast.daily) == 7
    first = forecast.daily[0]
    assert (first.temperature_min, first.temperature_max, first.precipitation_probability_percent) == (50.6, 61.9, 0)
    assert first.condition == "overcast"
    assert len(forecast.hourly) == 3 and forecast.hourly[0].time == "2026-05-07T00:00"
    assert forecast.hourly[0].temperature == 52.9
    assert forecast.units.temperature == "°F" and forecast.units.precipitation == "inch"
    params = recorder.requests[0].url.params
    assert (params["temperature_unit"], params["wind_speed_unit"], params["precipitation_unit"]) == (
        "fahrenheit",
        "mph",
        "inch",
    )
    assert params["forecast_days"] == "7" and params["forecast_hours"] == "3"


@pytest.mark.anyio
async def test_forecast_without_hours_does_not_ask_for_hourly_data() -> None:
    provider, recorder = make_provider(lambda r: json_response("openmeteo_forecast_hourly_daily_seattle_imperial.json"))
    forecast = await provider.forecast(SEATTLE, days=2, unit="celsius")
    assert len(forecast.daily) == 2 and forecast.hourly == []
    assert "hourly" not in recorder.requests[0].url.params


@pytest.mark.anyio
@pytest.mark.parametrize(
    "name, reason",
    [
        ("openmeteo_error_400_invalid_temperature_unit.json", "Cannot initialize TemperatureUnit"),
        ("openmeteo_error_400_invalid_hourly_variable.json", "Cannot initialize SurfaceAndPressureVariable"),
    ],
)
async def test_400_error_body_is_reported_and_not_retried(name: str, reason: str) -> None:
    provider, recorder = make_provider(lambda r: json_response(name, status=400))
    with pytest.raises(SourceRejected) as caught:
        await provider.forecast(SEATTLE, days=1, unit="celsius")
    message = str(caught.value)
    assert "HTTP 400" in message and reason in message and "will not help" in message
    assert len(recorder.requests) == 1


@pytest.mark.anyio
async def test_timeouts_are_retried_with_backoff_then_reported() -> None:
    def time_out(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    sleep = FakeSleep()
    provider, recorder = make_provider(time_out, retries=2, backoff=0.5, sleep=sleep)
    with pytest.raises(SourceTimeout) as caught:
        await provider.current(ENSCHEDE, "celsius")
    assert len(recorder.requests) == 3
    assert sleep.delays == [0.5, 1.0]
    assert "timed out" in str(caught.value) and "Retrying in a minute may help" in str(caught.value)


@pytest.mark.anyio
async def test_server_errors_are_retried_until_success() -> None:
    statuses = iter([503, 502])

    def flaky(request: httpx.Request) -> httpx.Response:
        status = next(statuses, 200)
        if status != 200:
            return httpx.Response(status, text="upstream trouble")
        return json_response("openmeteo_forecast_current_hourly_daily_enschede.json")

    provider, recorder = make_provider(flaky, retries=2)
    current = await provider.current(ENSCHEDE, "celsius")
    assert current.temperature == 17.7 and len(recorder.requests) == 3


@pytest.mark.anyio
async def test_connection_failure_becomes_source_unavailable() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    provider, recorder = make_provider(refuse, retries=1)
    with pytest.raises(SourceUnavailable) as caught:
        await provider.resolve("Paris")
    assert len(recorder.requests) == 2 and "could not be reached" in str(caught.value)
    assert caught.value.retryable is True


@pytest.mark.anyio
async def test_non_json_body_becomes_source_unavailable() -> None:
    provider, _ = make_provider(lambda r: httpx.Response(200, text="<html>maintenance</html>"), retries=0)
    with pytest.raises(SourceUnavailable, match="not JSON"):
        await provider.current(ENSCHEDE, "celsius")


@pytest.mark.anyio
async def test_ttl_cache_serves_repeats_until_expiry() -> None:
    now = [0.0]
    provider, recorder = make_provider(
        lambda r: json_response("openmeteo_forecast_current_hourly_daily_enschede.json"),
        cache=TTLCache(clock=lambda: now[0]),
    )
    await provider.current(ENSCHEDE, "celsius")
    await provider.current(ENSCHEDE, "celsius")
    assert len(recorder.requests) == 1
    await provider.current(ENSCHEDE, "fahrenheit")  # different parameters, different entry
    assert len(recorder.requests) == 2
    now[0] = 61.0
    await provider.current(ENSCHEDE, "celsius")
    assert len(recorder.requests) == 3


@pytest.mark.anyio
async def test_alerts_by_state_parse_recorded_florida_body(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEATHER_USER_AGENT", "weather-tests (ops@example.org)")
    provider, recorder = make_provider(lambda r: json_response("nws_alerts_active_area_FL.json"))
    alerts = await provider.alerts(state_code="FL")
    assert [a.event for a in alerts] == ["Rip Current Statement", "Heat Advisory"]
    heat = alerts[1]
    assert heat.severity == "Moderate" and heat.expires == "2026-06-13T18:00:00-04:00"
    assert heat.instruction.startswith("Drink plenty of fluids") and "Holmes" in heat.area
    request = recorder.requests[0]
    assert request.url.host == "api.weather.gov" and request.url.params["area"] == "FL"
    assert request.headers["User-Agent"] == "weather-tests (ops@example.org)"
    assert request.headers["Accept"] == "application/geo+json"


@pytest.mark.anyio
async def test_alerts_at_point_keep_unknown_severity_and_missing_instruction() -> None:
    provider, recorder = make_provider(lambda r: json_response("nws_alerts_active_area_AK.json"))
    alerts = await provider.alerts(place=SEATTLE)
    outlook = next(a for a in alerts if a.event == "Hydrologic Outlook")
    assert outlook.severity == "Unknown" and outlook.instruction is None and outlook.ends is None
    assert recorder.requests[0].url.params["point"] == "47.6062,-122.3321"


@pytest.mark.anyio
async def test_alerts_parse_the_2019_schema() -> None:
    provider, _ = make_provider(lambda r: json_response("nws_alerts_active_zone_ORZ004_2019.json"))
    alerts = await provider.alerts(state_code="OR")
    assert len(alerts) == 1 and alerts[0].event == "Flood Watch" and alerts[0].severity == "Severe"
    assert alerts[0].headline.startswith("Flood Watch issued December 20")


@pytest.mark.anyio
async def test_default_user_agent_is_sent_to_every_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEATHER_USER_AGENT", raising=False)
    provider, recorder = make_provider(lambda r: json_response("openmeteo_geocoding_search_paris_count2.json"))
    await provider.resolve("Paris")
    assert recorder.requests[0].headers["User-Agent"].startswith("mcp-kit-weather/")


def test_fixture_copies_are_valid_json() -> None:
    names = sorted(p.name for p in FIXTURES.glob("*.json"))
    assert len(names) == 10
    for name in names:
        json.loads(fixture(name))
