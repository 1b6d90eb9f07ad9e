"""Resource templates, the current-conditions watcher and completion of {city} and {date}."""

from __future__ import annotations

from datetime import date, timedelta
from zoneinfo import ZoneInfo

from mcp_kit import MCPError, MCPServer, ResourceNotFound, UpstreamUnavailable, poll_for_changes

from .errors import PlaceNotFound, SourceError, WeatherError
from .models import CurrentWeather, Forecast, Place
from .params import City, ForecastDate
from .places import bundled_gazetteer
from .providers import WeatherProvider

CURRENT = "weather://current/{city}"
FORECAST = "weather://forecast/{city}/{date}"
INVALID_PARAMS = -32602


def failed(error: WeatherError, provider: WeatherProvider) -> MCPError:
    """The error of a read that failed: the source's failure (UpstreamUnavailable), or what was asked of it."""
    if isinstance(error, SourceError):
        return UpstreamUnavailable(str(error), source=provider.source, retryable=error.retryable)
    return MCPError(INVALID_PARAMS, str(error))


def local_today(provider: WeatherProvider, place: Place | None) -> date:
    """Today's date where the place is (UTC when unknown)."""
    zone = ZoneInfo(place.timezone) if place and place.timezone else ZoneInfo("UTC")
    return provider.now().astimezone(zone).date()


def parse_date(text: str, today: date) -> date:
    """'YYYY-MM-DD', 'today' or 'tomorrow' -> a date; ValueError otherwise."""
    words = {"today": today, "tomorrow": today + timedelta(days=1)}
    return words.get(text.strip().lower()) or date.fromisoformat(text.strip())


def register_resources(app: MCPServer, provider: WeatherProvider, *, poll_interval: float) -> None:
    """Add the templates, the watcher and the completions to app."""
    gazetteer = bundled_gazetteer()

    async def resolve(uri: str, city: str) -> Place:
        try:
            return (await provider.resolve(city)).place
        except PlaceNotFound as error:
            raise ResourceNotFound(uri, str(error)) from error
        except WeatherError as error:
            raise failed(error, provider) from error

    @app.resource(CURRENT, name="current-weather", title="Current weather in a city", mime_type="application/json")
    async def current_weather(city: City) -> CurrentWeather:
        """Current conditions in a city (°C, km/h, mm), e.g. weather://current/Paris or weather://current/北京.
        Subscribe to get notifications/resources/updated whenever the observation changes."""
        uri = f"weather://current/{city}"
        place = await resolve(uri, city)
        try:
            return await provider.current(place, "celsius")
        except WeatherError as error:
            raise failed(error, provider) from error

    @app.resource(FORECAST, name="daily-forecast", title="A city's forecast for one day", mime_type="application/json")
    async def daily_forecast(city: City, date: ForecastDate) -> Forecast:
        """The forecast for one local date (YYYY-MM-DD, 'today' or 'tomorrow'; up to 15 days ahead)
        in °C, e.g. weather://forecast/Tokyo/2026-07-16."""
        uri = f"weather://forecast/{city}/{date}"
        place = await resolve(uri, city)
        today = local_today(provider, place)
        try:
            wanted = parse_date(date, today)
        except ValueError:
            raise ResourceNotFound(uri, f"'{date}' is not a date: use YYYY-MM-DD, 'today' or 'tomorrow'.") from None
        if not today <= wanted < today + timedelta(days=16):
            raise ResourceNotFound(
                uri, f"{wanted} is outside the forecast range {today} to {today + timedelta(days=15)}."
            )
        try:
            forecast = await provider.forecast(place, (wanted - today).days + 1, "celsius")
        except WeatherError as error:
            raise failed(error, provider) from error
        day = [d for d in forecast.daily if d.date == wanted.isoformat()]
        if not day:
            raise ResourceNotFound(uri, f"The source has no forecast for {wanted}.")
        return forecast.model_copy(update={"daily": day})

    @app.watcher(CURRENT)
    async def watch_current(uri: str, city: str) -> None:
        """While subscribed: poll the provider and notify when the observation changes."""
        place: Place | None = None  # resolved once; mcp_kit hands watchers decoded variables

        async def observe() -> CurrentWeather:
            nonlocal place
            place = place or (await provider.resolve(city)).place
            return await provider.current(place, "celsius")

        # no such place will appear later: stop, as for an unknown ticker
        await poll_for_changes(observe, lambda: app.notify_resource_updated(uri), every=poll_interval,
                               stop_on=(PlaceNotFound,), what=uri)

    def complete_city(value: str, context: dict[str, str]) -> list[str]:
        return gazetteer.complete(value)

    def complete_date(value: str, context: dict[str, str]) -> list[str]:
        found = gazetteer.lookup(context.get("city", "")) if context.get("city") else []
        today = local_today(provider, found[0].place if found else None)
        dates = ["today", "tomorrow"] + [(today + timedelta(days=i)).isoformat() for i in range(16)]
        return [d for d in dates if d.startswith(value.strip().lower())]

    app.completion(ref=CURRENT, argument="city")(complete_city)
    app.completion(ref=FORECAST, argument="city")(complete_city)
    app.completion(ref=FORECAST, argument="date")(complete_date)
