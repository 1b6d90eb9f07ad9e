"""SampleProvider and the bundled gazetteer: offline, deterministic, plausible."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from servers.weather.errors import PlaceNotFound
from servers.weather.places import bundled_gazetteer
from servers.weather.sample_provider import SampleProvider

NOON_UTC = datetime(2026, 7, 15, 12, 0, tzinfo=UTC)


def provider_at(moment: datetime, **kwargs) -> SampleProvider:
    return SampleProvider(clock=lambda: moment, **kwargs)


def test_bundled_cities_are_complete_records() -> None:
    cities = bundled_gazetteer().cities
    assert len(cities) >= 50
    for city in cities:
        place = city.place
        assert place.name and place.name_zh and place.country and len(place.country_code) == 2
        assert -90 <= place.latitude <= 90 and -180 <= place.longitude <= 180
        assert place.population and place.population > 0
        ZoneInfo(place.timezone)  # raises for an unknown zone
    assert len({c.id for c in cities}) == len(cities)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "query, expected",
    [
        ("Paris", ("Paris", "FR")),
        ("Paris, FR", ("Paris", "FR")),
        ("paris, france", ("Paris", "FR")),
        ("Paris, TX", ("Paris", "US")),
        ("北京", ("Beijing", "CN")),
        ("上海", ("Shanghai", "CN")),
        ("San Francisco, CA", ("San Francisco", "US")),
        ("London, CA", ("London", "CA")),
        ("Sao Paulo", ("São Paulo", "BR")),
        ("  new   york ", ("New York", "US")),
        ("北京，中国", None),
    ],
)
async def test_resolve_accepts_common_name_forms(query: str, expected: tuple[str, str] | None) -> None:
    provider = provider_at(NOON_UTC)
    if expected is None:
        with pytest.raises(PlaceNotFound):
            await provider.resolve(query)  # Chinese country qualifiers are not supported
        return
    place = (await provider.resolve(query)).place
    assert (place.name, place.country_code) == expected


@pytest.mark.anyio
async def test_ambiguous_name_says_which_place_was_chosen() -> None:
    resolution = await provider_at(NOON_UTC).resolve("London")
    assert resolution.place.country_code == "GB"
    assert "chose London, England, United Kingdom" in resolution.note and "Ontario" in resolution.note
    assert (await provider_at(NOON_UTC).resolve("Beijing")).note is None


@pytest.mark.anyio
async def test_unknown_city_suggests_close_matches() -> None:
    with pytest.raises(PlaceNotFound) as caught:
        await provider_at(NOON_UTC).resolve("Pariss")
    assert str(caught.value).startswith("No place 'Pariss'. Did you mean Paris (France)")
    with pytest.raises(PlaceNotFound) as caught:
        await provider_at(NOON_UTC).resolve("Qqqxyz")
    assert "search_location" in str(caught.value)


@pytest.mark.anyio
async def test_same_clock_gives_identical_results() -> None:
    first, second = provider_at(NOON_UTC), provider_at(NOON_UTC)
    place = (await first.resolve("Tokyo")).place
    assert await first.current(place, "celsius") == await second.current(place, "celsius")
    assert await first.forecast(place, 16, "celsius", 48) == await second.forecast(place, 16, "celsius", 48)


@pytest.mark.anyio
async def test_observations_change_over_time() -> None:
    place = (await provider_at(NOON_UTC).resolve("Berlin")).place
    readings = [await provider_at(NOON_UTC + timedelta(seconds=s)).current(place, "celsius") for s in range(5)]
    assert len({r.observed_at for r in readings}) == 5
    assert len({(r.temperature, r.wind_speed) for r in readings}) > 1
    # within one observation step the reading is stable
    half = await provider_at(NOON_UTC + timedelta(milliseconds=500)).current(place, "celsius")
    assert half == readings[0]


@pytest.mark.anyio
async def test_current_states_units_location_and_source() -> None:
    provider = provider_at(NOON_UTC)
    place = (await provider.resolve("北京")).place
    celsius = await provider.current(place, "celsius")
    fahrenheit = await provider.current(place, "fahrenheit")
    assert celsius.source == "sample" and celsius.location.name_zh == "北京"
    assert celsius.observed_at == "2026-07-15T20:00:00+08:00"
    assert (celsius.units.temperature, fahrenheit.units.temperature) == ("°C", "°F")
    assert fahrenheit.temperature == pytest.approx(celsius.temperature * 9 / 5 + 32, abs=0.2)
    assert fahrenheit.units.wind_speed == "mph" and celsius.units.wind_speed == "km/h"
    assert -10 < celsius.temperature < 45 and 0 <= celsius.humidity_percent <= 100
    assert celsius.wind_direction in {
        "N",
        "NNE",
        "NE",
        "ENE",
        "E",
        "ESE",
        "SE",
        "SSE",
        "S",
        "SSW",
        "SW",
        "WSW",
        "W",
        "WNW",
        "NW",
        "NNW",
    }


@pytest.mark.anyio
async def test_forecast_days_and_hours_start_at_local_now() -> None:
    provider = provider_at(NOON_UTC)
    place = (await provider.resolve("Auckland")).place  # UTC+12 in July: already 16 July locally
    forecast = await provider.forecast(place, days=16, unit="celsius", hours=5)
    assert [d.date for d in forecast.daily] == [(date(2026, 7, 16) + timedelta(days=i)).isoformat() for i in range(16)]
    assert [h.time for h in forecast.hourly] == [f"2026-07-16T{h:02d}:00" for h in range(0, 5)]
    for day in forecast.daily:
        assert day.temperature_min <= day.temperature_max
        assert 0 <= day.precipitation_probability_percent <= 100 and day.precipitation_sum >= 0
        assert (day.precipitation_sum > 0) == (day.weather_code >= 51)
    assert forecast.source == "sample"


@pytest.mark.anyio
async def test_seasons_are_plausible_in_both_hemispheres() -> None:
    async def mean_high(city: str, month: int) -> float:
        provider = provider_at(datetime(2026, month, 1, tzinfo=UTC))
        forecast = await provider.forecast((await provider.resolve(city)).place, 16, "celsius")
        return sum(d.temperature_max for d in forecast.daily) / 16

    assert await mean_high("Beijing", 1) < 10 < 25 < await mean_high("Beijing", 7)
    assert await mean_high("Sydney", 7) < await mean_high("Sydney", 1)
    assert await mean_high("Harbin", 1) < 0
    assert abs(await mean_high("Singapore", 1) - await mean_high("Singapore", 7)) < 4


@pytest.mark.anyio
async def test_search_lists_candidates_most_populous_first() -> None:
    provider = provider_at(NOON_UTC)
    assert [p.country_code for p in await provider.search("Paris")] == ["FR", "US"]
    assert [(p.name, p.country_code) for p in await provider.search("Par", limit=3)] == [
        ("Paris", "FR"), ("Parma", "IT"), ("Paris", "US")]
    assert [p.name for p in await provider.search("Pariss")][0] == "Paris"


def test_completion_by_prefix_in_english_and_chinese() -> None:
    gazetteer = bundled_gazetteer()
    assert gazetteer.complete("Par")[:2] == ["Paris", "Parma"]
    assert gazetteer.complete("par") == gazetteer.complete("Par")
    assert gazetteer.complete("上") == ["上海"]
    assert gazetteer.complete("北") == ["北京"]
    assert "São Paulo" in gazetteer.complete("sao") and "Sao Paulo" not in gazetteer.complete("sao")
    assert gazetteer.complete("zzz") == []
    assert len(gazetteer.complete("", limit=10)) == 10


@pytest.mark.anyio
async def test_sample_alerts_follow_the_generated_weather() -> None:
    events: set[str] = set()
    for day in range(0, 60, 3):
        provider = provider_at(datetime(2026, 6, 1, tzinfo=UTC) + timedelta(days=day))
        for alert in await provider.alerts(state_code="TX"):
            events.add(alert.event)
            assert "sample" in alert.sender and alert.area.endswith("Texas")
    assert "Heat Advisory" in events
    houston = (await provider_at(NOON_UTC).resolve("Houston")).place
    assert all(a.area == "Houston, Texas" for a in await provider_at(NOON_UTC).alerts(place=houston))
    assert await provider_at(NOON_UTC).alerts(state_code="WY") == []
