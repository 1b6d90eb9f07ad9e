"""The weather tools: get_weather, get_forecast, get_alerts, search_location."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated, Literal

from pydantic import Field

from mcp_kit import MCPServer, ToolError

from .errors import WeatherError
from .models import AlertReport, CurrentWeather, Forecast, LocationSearch
from .params import City
from .providers import WeatherProvider
from .us_states import NWS_COUNTRY_CODES, US_STATES, state_code

UnitParam = Annotated[
    Literal["celsius", "fahrenheit"],
    Field(description="celsius: °C, km/h, mm (default). fahrenheit: °F, mph, inches."),
]


@contextlib.contextmanager
def tool_errors() -> Iterator[None]:
    """Turn weather errors into tool errors the model can read."""
    try:
        yield
    except WeatherError as error:
        raise ToolError(str(error)) from error


def register_tools(app: MCPServer, provider: WeatherProvider) -> None:
    """Add the four weather tools to app."""

    @app.tool(read_only=True, open_world=True, idempotent=True, title="Current weather")
    async def get_weather(city: City, unit: UnitParam = "celsius") -> CurrentWeather:
        """Current conditions in a city: temperature, feels-like, condition in words, humidity, wind
        speed and compass direction, precipitation and observation time, with the place it resolved to
        (name, region, country, coordinates) and the units used. If the name is ambiguous, 'note' says
        which place was chosen; an unknown name fails with close matches."""
        with tool_errors():
            resolution = await provider.resolve(city)
            current = await provider.current(resolution.place, unit)
        return current.model_copy(update={"note": resolution.note})

    @app.tool(read_only=True, open_world=True, idempotent=True, title="Weather forecast")
    async def get_forecast(
        city: City,
        days: Annotated[int, Field(ge=1, le=16, description="Number of days, starting today (1-16).")] = 7,
        unit: UnitParam = "celsius",
        hours: Annotated[
            int,
            Field(ge=0, le=168, description="Also return hourly data for the next N hours (0-168; 0 = daily only)."),
        ] = 0,
    ) -> Forecast:
        """Daily forecast for a city: per day the min/max temperature, precipitation sum and highest
        chance of precipitation, and the condition in words; optionally hourly steps for the next hours.
        Dates are local to the city (YYYY-MM-DD)."""
        with tool_errors():
            resolution = await provider.resolve(city)
            forecast = await provider.forecast(resolution.place, days, unit, hours)
        return forecast.model_copy(update={"note": resolution.note})

    @app.tool(read_only=True, open_world=True, idempotent=True, title="Weather alerts")
    async def get_alerts(
        location: Annotated[
            str,
            Field(
                min_length=1,
                max_length=120,
                description="A US state or territory ('FL', 'Florida') or a city ('Miami', 'Seattle, WA', 'Tokyo').",
            ),
        ],
    ) -> AlertReport:
        """Active weather alerts (event, severity, headline, instructions, effective/expires, area) from
        the US National Weather Service. Only the US and its territories are covered: for other countries
        the result says plainly that alerts are not available there (which is not the same as 'no alerts')."""
        with tool_errors():
            code = state_code(location)
            if code:
                alerts = await provider.alerts(state_code=code)
                where, country, note = f"{US_STATES[code]} ({code}), United States", "US", None
            else:
                resolution = await provider.resolve(location)
                place, note = resolution.place, resolution.note
                if place.country_code not in NWS_COUNTRY_CODES:
                    return _not_covered(place.label, place.country, place.country_code, note)
                alerts = await provider.alerts(place=place)
                where, country = place.label, place.country_code
        count = len(alerts)
        message = (
            f"{count} active alert{'s' if count != 1 else ''} for {where}."
            if count
            else f"No active alerts for {where}."
        )
        return AlertReport(location=where, country_code=country, alerts_available=True, alerts=alerts,
                           message=message, note=note, source=provider.alerts_source)  # type: ignore[arg-type]

    @app.tool(read_only=True, open_world=True, idempotent=True, title="Find a place")
    async def search_location(
        query: Annotated[
            str, Field(min_length=1, max_length=120, description="Place name, e.g. 'Springfield' or 'Paris, US'.")
        ],
        limit: Annotated[int, Field(ge=1, le=20, description="Most candidates to return (1-20).")] = 5,
    ) -> LocationSearch:
        """Candidate places for a name, most likely first, each with country, region, coordinates,
        time zone and population, to tell same-named places apart. Pass a candidate to the other tools
        as 'Name, Region' or 'Name, CC' (country code)."""
        with tool_errors():
            candidates = await provider.search(query, limit)
        return LocationSearch(query=query, candidates=candidates, source=provider.source)  # type: ignore[arg-type]


def _not_covered(label: str, country: str, country_code: str, note: str | None) -> AlertReport:
    return AlertReport(
        location=label,
        country_code=country_code,
        alerts_available=False,
        message=(
            f"Weather alerts are not available for {country}: this server's alert source, the US National "
            f"Weather Service, covers only the United States and its territories. This does not mean there "
            f"are no alerts in {country}; check its national weather service."
        ),
        note=note,
        source=None,
    )
