"""Offline sample weather: bundled cities, deterministic generated weather, injectable clock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from . import units
from .conditions import compass, describe
from .errors import PlaceNotFound
from .models import Alert, CurrentWeather, DailyForecast, Forecast, HourlyForecast, Place, Resolution, Unit, Units
from .places import City, Gazetteer, bundled_gazetteer
from .sample_weather import SampleDay, sample_day, sample_hour
from .us_states import US_STATES


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


class SampleProvider:
    """Generated weather for the bundled cities; every result says source 'sample'.

    `clock` returns an aware datetime (inject a fixed one in tests). Current observations are
    re-sampled every `observation_step` seconds, so subscriptions see changes.
    """

    source = "sample"
    alerts_source = "sample"

    def __init__(
        self,
        clock: Callable[[], datetime] = utc_now,
        observation_step: float = 1.0,
        gazetteer: Gazetteer | None = None,
    ) -> None:
        self.clock = clock
        self.observation_step = observation_step
        self.gazetteer = gazetteer or bundled_gazetteer()

    async def aclose(self) -> None:
        """Nothing to release."""

    def now(self) -> datetime:
        """The provider's current time (the injected clock)."""
        return self.clock()

    def _city(self, place: Place) -> City:
        for city in self.gazetteer.cities:
            if city.place == place or (city.place.latitude, city.place.longitude) == (place.latitude, place.longitude):
                return city
        raise PlaceNotFound(place.name, [c.place for c in self.gazetteer.close_matches(place.name)])

    def _local_now(self, city: City) -> datetime:
        return self.clock().astimezone(ZoneInfo(city.place.timezone or "UTC"))

    async def search(self, query: str, limit: int = 5) -> list[Place]:
        """Bundled cities matching the query (exact, prefix, substring, then close matches)."""
        return [c.place for c in self.gazetteer.search(query, limit)]

    async def resolve(self, query: str) -> Resolution:
        """The most populous bundled city with that name; PlaceNotFound with close matches otherwise."""
        found = self.gazetteer.lookup(query)
        if not found:
            raise PlaceNotFound(query, [c.place for c in self.gazetteer.close_matches(query)])
        return Resolution(query=query, place=found[0].place, alternatives=[c.place for c in found[1:]])

    async def current(self, place: Place, unit: Unit) -> CurrentWeather:
        """Generated conditions at the current (stepped) time."""
        city = self._city(place)
        now = self.clock()
        step = max(self.observation_step, 0.001)
        stepped = datetime.fromtimestamp((now.timestamp() // step) * step, tz=UTC)
        local = stepped.astimezone(ZoneInfo(city.place.timezone or "UTC"))
        hour = sample_hour(city, local, jitter_key=stepped.isoformat())
        return CurrentWeather(
            location=city.place,
            observed_at=local.isoformat(timespec="seconds"),
            temperature=units.temperature(hour.temperature, unit),
            feels_like=units.temperature(hour.feels_like, unit),
            condition=describe(hour.weather_code),
            weather_code=hour.weather_code,
            humidity_percent=hour.humidity,
            wind_speed=units.speed(hour.wind_speed, unit),
            wind_direction_degrees=hour.wind_direction,
            wind_direction=compass(hour.wind_direction),
            precipitation=units.precipitation(hour.precipitation, unit),
            units=Units.for_unit(unit),
            source="sample",
        )

    async def forecast(self, place: Place, days: int, unit: Unit, hours: int = 0) -> Forecast:
        """`days` generated days from the local today, and `hours` hours from the current local hour."""
        city = self._city(place)
        local = self._local_now(city)
        daily = [self._daily(city, local.date() + timedelta(days=i), unit) for i in range(days)]
        start = local.replace(minute=0, second=0, microsecond=0)
        hourly = [self._hourly(city, start + timedelta(hours=i), unit) for i in range(hours)]
        return Forecast(
            location=city.place, timezone=city.place.timezone, units=Units.for_unit(unit),
            daily=daily, hourly=hourly, source="sample",
        )

    def _daily(self, city: City, day, unit: Unit) -> DailyForecast:
        generated = sample_day(city, day)
        return DailyForecast(
            date=day.isoformat(),
            condition=describe(generated.weather_code),
            weather_code=generated.weather_code,
            temperature_min=units.temperature(generated.temperature_min, unit),
            temperature_max=units.temperature(generated.temperature_max, unit),
            precipitation_sum=units.precipitation(generated.precipitation_sum, unit),
            precipitation_probability_percent=generated.precipitation_probability,
        )

    def _hourly(self, city: City, moment: datetime, unit: Unit) -> HourlyForecast:
        generated = sample_hour(city, moment)
        return HourlyForecast(
            time=moment.strftime("%Y-%m-%dT%H:%M"),
            temperature=units.temperature(generated.temperature, unit),
            condition=describe(generated.weather_code),
            weather_code=generated.weather_code,
            precipitation=units.precipitation(generated.precipitation, unit),
            precipitation_probability_percent=generated.precipitation_probability,
            wind_speed=units.speed(generated.wind_speed, unit),
        )

    async def alerts(self, *, place: Place | None = None, state_code: str | None = None) -> list[Alert]:
        """Sample alerts derived from the generated weather of US bundled cities (next three days)."""
        if state_code:
            cities = [
                c
                for c in self.gazetteer.cities
                if c.place.country_code == "US" and c.place.region == US_STATES.get(state_code)
            ]
        else:
            cities = [self._city(place)] if place else []
        alerts: list[Alert] = []
        for city in cities:
            today = self._local_now(city).date()
            for offset in range(3):
                alerts.extend(
                    _alerts_for_day(
                        city, today + timedelta(days=offset), sample_day(city, today + timedelta(days=offset))
                    )
                )
        return alerts


# (event, severity, test on the generated day, instruction)
_RULES: list[tuple[str, str, Callable[[SampleDay], bool], str]] = [
    ("Heat Advisory", "Moderate", lambda d: d.temperature_max >= 35, "Drink plenty of fluids and stay out of the sun."),
    (
        "Extreme Cold Warning",
        "Severe",
        lambda d: d.temperature_min <= -18,
        "Cover exposed skin and limit time outdoors.",
    ),
    ("Flood Watch", "Moderate", lambda d: d.precipitation_sum >= 25, "Be ready to move to higher ground."),
    ("Wind Advisory", "Minor", lambda d: d.wind_speed_max >= 45, "Secure loose outdoor objects."),
    (
        "Winter Storm Watch",
        "Moderate",
        lambda d: d.precipitation_sum >= 8 and d.temperature_max <= 1,
        "Plan for hazardous travel.",
    ),
]


def _alerts_for_day(city: City, day, generated: SampleDay) -> list[Alert]:
    label = f"{city.place.name}, {city.place.region}"
    return [
        Alert(
            event=event, severity=severity, urgency="Expected", certainty="Likely",
            headline=f"{event} for {label} on {day.isoformat()} (sample data)",
            description=f"Sample alert generated from the sample forecast for {day.isoformat()}.",
            instruction=instruction, area=label,
            effective=f"{day.isoformat()}T00:00:00", expires=f"{day.isoformat()}T23:59:00",
            sender="sample data (not the National Weather Service)",
        )
        for event, severity, applies, instruction in _RULES
        if applies(generated)
    ]
