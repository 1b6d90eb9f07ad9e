"""Open-Meteo request parameters and response parsing (geocoding and forecast APIs)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from .conditions import compass, describe
from .models import CurrentWeather, DailyForecast, HourlyForecast, Place, Unit, Units

GEOCODING_URL = "https://geocoding-api.open-meteo.com/v1/search"
FORECAST_URL = "https://api.open-meteo.com/v1/forecast"

CURRENT_VARIABLES = ("temperature_2m,relative_humidity_2m,apparent_temperature,precipitation,weather_code,"
                     "wind_speed_10m,wind_direction_10m")
DAILY_VARIABLES = "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max"
HOURLY_VARIABLES = "temperature_2m,weather_code,precipitation,precipitation_probability,wind_speed_10m"


def unit_params(unit: Unit) -> dict[str, str]:
    """Open-Meteo unit parameters: metric for celsius, US customary for fahrenheit."""
    if unit == "fahrenheit":
        return {"temperature_unit": "fahrenheit", "wind_speed_unit": "mph", "precipitation_unit": "inch"}
    return {"temperature_unit": "celsius", "wind_speed_unit": "kmh", "precipitation_unit": "mm"}


def location_params(place: Place) -> dict[str, str]:
    """Coordinates plus the place's time zone (or 'auto')."""
    return {
        "latitude": f"{place.latitude:.4f}",
        "longitude": f"{place.longitude:.4f}",
        "timezone": place.timezone or "auto",
    }


def parse_places(body: dict[str, Any]) -> list[Place]:
    """Geocoding results as places; a body without 'results' (Open-Meteo's 'no match') gives []."""
    places = []
    for item in body.get("results") or []:
        places.append(
            Place(
                name=item["name"],
                region=item.get("admin1"),
                country=item.get("country") or item.get("country_code", ""),
                country_code=item.get("country_code", ""),
                latitude=item["latitude"],
                longitude=item["longitude"],
                timezone=item.get("timezone"),
                population=item.get("population"),
            )
        )
    return places


def _local_iso(stamp: str, offset_seconds: int) -> str:
    """'2026-10-03T12:30' with offset 7200 -> '2026-10-03T12:30:00+02:00'."""
    zone = timezone(timedelta(seconds=offset_seconds))
    return datetime.fromisoformat(stamp).replace(tzinfo=zone).isoformat()


def parse_current(body: dict[str, Any], place: Place, unit: Unit) -> CurrentWeather:
    """The 'current' block of a forecast response."""
    current = body["current"]
    code = current.get("weather_code")
    return CurrentWeather(
        location=place,
        observed_at=_local_iso(current["time"], int(body.get("utc_offset_seconds", 0))),
        temperature=current["temperature_2m"],
        feels_like=current.get("apparent_temperature", current["temperature_2m"]),
        condition=describe(code),
        weather_code=code if code is not None else -1,
        humidity_percent=current.get("relative_humidity_2m"),
        wind_speed=current.get("wind_speed_10m"),
        wind_direction_degrees=current.get("wind_direction_10m"),
        wind_direction=compass(current.get("wind_direction_10m")),
        precipitation=current.get("precipitation"),
        units=Units.for_unit(unit),
        source="open-meteo",
    )


def _column(block: dict[str, Any], name: str, length: int) -> list[Any]:
    values = block.get(name)
    return list(values) if isinstance(values, list) else [None] * length


def parse_daily(body: dict[str, Any]) -> list[DailyForecast]:
    """The 'daily' block as one record per day (missing variables become None)."""
    daily = body.get("daily") or {}
    dates = daily.get("time") or []
    n = len(dates)
    rows = zip(
        dates,
        _column(daily, "weather_code", n),
        _column(daily, "temperature_2m_min", n),
        _column(daily, "temperature_2m_max", n),
        _column(daily, "precipitation_sum", n),
        _column(daily, "precipitation_probability_max", n), strict=False,
    )
    return [
        DailyForecast(
            date=day, condition=describe(code), weather_code=code, temperature_min=low, temperature_max=high,
            precipitation_sum=rain, precipitation_probability_percent=chance,
        )
        for day, code, low, high, rain, chance in rows
    ]


def parse_hourly(body: dict[str, Any], hours: int) -> list[HourlyForecast]:
    """The first `hours` entries of the 'hourly' block."""
    hourly = body.get("hourly") or {}
    times = (hourly.get("time") or [])[:hours]
    n = len(times)
    rows = zip(
        times,
        _column(hourly, "temperature_2m", n),
        _column(hourly, "weather_code", n),
        _column(hourly, "precipitation", n),
        _column(hourly, "precipitation_probability", n),
        _column(hourly, "wind_speed_10m", n), strict=False,
    )
    return [
        HourlyForecast(
            time=time, temperature=temp, condition=describe(code), weather_code=code, precipitation=rain,
            precipitation_probability_percent=chance, wind_speed=wind,
        )
        for time, temp, code, rain, chance, wind in rows
    ]
