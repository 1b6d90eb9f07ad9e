"""Live weather: Open-Meteo geocoding and forecasts (worldwide, no key) and NWS alerts (US)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import anyio
import httpx

from servers._shared.cache import TTLCache

from . import nws, openmeteo
from .errors import PlaceNotFound
from .http_fetch import WeatherSources
from .models import Alert, CurrentWeather, Forecast, Place, Resolution, Unit, Units
from .places import Gazetteer, bundled_gazetteer, matches_qualifier, normalize, split_query

# Seconds each kind of answer stays fresh.
TTL = {"geocoding": 24 * 3600.0, "current": 60.0, "forecast": 600.0, "alerts": 120.0}


class LiveProvider:
    """Weather from the public Open-Meteo and api.weather.gov services through one shared client."""

    source = "open-meteo"
    alerts_source = "nws"

    def __init__(
        self,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 10.0,
        retries: int = 2,
        backoff: float = 0.5,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        user_agent: str | None = None,
        cache: TTLCache | None = None,
        gazetteer: Gazetteer | None = None,
    ) -> None:
        self.user_agent = user_agent or os.environ.get("WEATHER_USER_AGENT") or nws.DEFAULT_USER_AGENT
        self.client = httpx.AsyncClient(
            transport=transport, timeout=httpx.Timeout(timeout), headers={"User-Agent": self.user_agent}
        )
        self.fetcher = WeatherSources(self.client, retries=retries, backoff=backoff, sleep=sleep, cache=cache)
        self.gazetteer = gazetteer or bundled_gazetteer()

    async def aclose(self) -> None:
        """Close the shared HTTP client."""
        await self.client.aclose()

    def now(self) -> datetime:
        """Wall-clock time, UTC."""
        return datetime.now(UTC)

    async def _geocode(self, name: str, count: int) -> list[Place]:
        params = {"name": name, "count": count, "language": "en", "format": "json"}
        body = await self.fetcher.get_json(
            "Open-Meteo geocoding", openmeteo.GEOCODING_URL, params, ttl=TTL["geocoding"]
        )
        return openmeteo.parse_places(body)

    def _english_name(self, name: str) -> str:
        """Translate a bundled Chinese name or alias (北京, NYC) to the English name the geocoder knows."""
        known = self.gazetteer.lookup(name)
        return known[0].place.name if known else name

    async def search(self, query: str, limit: int = 5) -> list[Place]:
        """Candidate places for a query, most likely first."""
        name, qualifier = split_query(query)
        places = await self._geocode(self._english_name(name), max(limit, 10) if qualifier else limit)
        return [p for p in places if matches_qualifier(p, qualifier)][:limit]

    async def resolve(self, query: str) -> Resolution:
        """The most likely place for a name; same-named alternatives are listed; PlaceNotFound otherwise."""
        name, qualifier = split_query(query)
        found = await self._geocode(self._english_name(name), 10)
        matching = [p for p in found if matches_qualifier(p, qualifier)]
        if not matching:
            suggestions = found[:3] if found else [c.place for c in self.gazetteer.close_matches(query)]
            raise PlaceNotFound(query, suggestions)
        chosen = matching[0]
        same_name = [p for p in matching[1:] if normalize(p.name) == normalize(chosen.name)]
        return Resolution(query=query, place=chosen, alternatives=same_name)

    async def current(self, place: Place, unit: Unit) -> CurrentWeather:
        """Current conditions from the Open-Meteo forecast API."""
        params = {
            **openmeteo.location_params(place),
            **openmeteo.unit_params(unit),
            "current": openmeteo.CURRENT_VARIABLES,
        }
        body = await self.fetcher.get_json("Open-Meteo forecast", openmeteo.FORECAST_URL, params, ttl=TTL["current"])
        return openmeteo.parse_current(body, place, unit)

    async def forecast(self, place: Place, days: int, unit: Unit, hours: int = 0) -> Forecast:
        """Daily forecast for `days` days from today, plus `hours` hourly steps from now when hours > 0."""
        params = {
            **openmeteo.location_params(place), **openmeteo.unit_params(unit),
            "daily": openmeteo.DAILY_VARIABLES, "forecast_days": days,
        }
        if hours:
            params |= {"hourly": openmeteo.HOURLY_VARIABLES, "forecast_hours": hours}
        body = await self.fetcher.get_json("Open-Meteo forecast", openmeteo.FORECAST_URL, params, ttl=TTL["forecast"])
        return Forecast(
            location=place,
            timezone=body.get("timezone") or place.timezone,
            units=Units.for_unit(unit),
            daily=openmeteo.parse_daily(body)[:days],
            hourly=openmeteo.parse_hourly(body, hours) if hours else [],
            source="open-meteo",
        )

    async def alerts(self, *, place: Place | None = None, state_code: str | None = None) -> list[Alert]:
        """Active NWS alerts at a US point or in a US state/territory."""
        params = nws.area_params(state_code) if state_code else nws.point_params(place)  # type: ignore[arg-type]
        headers = {"Accept": "application/geo+json", "User-Agent": self.user_agent}
        body = await self.fetcher.get_json(
            "api.weather.gov", nws.ALERTS_URL, params, ttl=TTL["alerts"], headers=headers
        )
        return nws.parse_alerts(body)
