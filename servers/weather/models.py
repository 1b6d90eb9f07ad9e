"""Pydantic models returned by the weather tools and resources (also their output schemas)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Unit = Literal["celsius", "fahrenheit"]
Source = Literal["sample", "open-meteo", "nws"]


class Units(BaseModel):
    """The units every number in a result is expressed in."""

    temperature: Literal["°C", "°F"]
    wind_speed: Literal["km/h", "mph"]
    precipitation: Literal["mm", "inch"]

    @classmethod
    def for_unit(cls, unit: Unit) -> Units:
        """Metric units for celsius, US customary units for fahrenheit."""
        if unit == "fahrenheit":
            return cls(temperature="°F", wind_speed="mph", precipitation="inch")
        return cls(temperature="°C", wind_speed="km/h", precipitation="mm")


class Place(BaseModel):
    """A resolved place on Earth."""

    name: str = Field(description="Place name in English, e.g. 'Paris'")
    name_zh: str | None = Field(default=None, description="Chinese name when known, e.g. '巴黎'")
    region: str | None = Field(default=None, description="State, province or region, e.g. 'Île-de-France'")
    country: str = Field(description="Country name in English")
    country_code: str = Field(description="ISO 3166-1 alpha-2 code, e.g. 'FR'")
    latitude: float
    longitude: float
    timezone: str | None = Field(default=None, description="IANA time zone, e.g. 'Europe/Paris'")
    population: int | None = None

    @property
    def label(self) -> str:
        """'Paris, Île-de-France, France' (region left out when it repeats the name)."""
        parts = [self.name]
        if self.region and self.region != self.name:
            parts.append(self.region)
        parts.append(self.country)
        return ", ".join(parts)


class Resolution(BaseModel):
    """How a free-text place name was resolved."""

    query: str
    place: Place
    alternatives: list[Place] = Field(default_factory=list, description="Other places with the same name")

    @property
    def note(self) -> str | None:
        """A sentence saying which place was chosen when the name was ambiguous, else None."""
        if not self.alternatives:
            return None
        others = "; ".join(p.label for p in self.alternatives[:4])
        return (
            f"'{self.query}' is ambiguous; chose {self.place.label} (the most populous match). "
            f"Other matches: {others}. Add a country or region to pick another, "
            f"e.g. '{self.alternatives[0].name}, {self.alternatives[0].country_code}'."
        )


class CurrentWeather(BaseModel):
    """Current conditions at a place."""

    location: Place
    note: str | None = Field(default=None, description="Set when the place name was ambiguous: which place was chosen")
    observed_at: str = Field(description="Observation time, ISO 8601 local time with UTC offset")
    temperature: float
    feels_like: float = Field(description="Apparent temperature")
    condition: str = Field(description="Weather in words, e.g. 'light drizzle'")
    weather_code: int = Field(description="WMO weather interpretation code")
    humidity_percent: float | None
    wind_speed: float | None
    wind_direction_degrees: float | None = Field(description="Direction the wind blows from, 0 = north")
    wind_direction: str | None = Field(description="16-point compass direction the wind blows from, e.g. 'SW'")
    precipitation: float | None = Field(description="Precipitation in the last interval")
    units: Units
    source: Source


class DailyForecast(BaseModel):
    """One day of forecast."""

    date: str = Field(description="Local date, YYYY-MM-DD")
    condition: str
    weather_code: int | None
    temperature_min: float | None
    temperature_max: float | None
    precipitation_sum: float | None
    precipitation_probability_percent: float | None = Field(description="Highest chance of precipitation that day")


class HourlyForecast(BaseModel):
    """One hour of forecast."""

    time: str = Field(description="Local time, YYYY-MM-DDTHH:MM")
    temperature: float | None
    condition: str
    weather_code: int | None
    precipitation: float | None
    precipitation_probability_percent: float | None
    wind_speed: float | None


class Forecast(BaseModel):
    """Daily (and optionally hourly) forecast for a place."""

    location: Place
    note: str | None = Field(default=None, description="Set when the place name was ambiguous: which place was chosen")
    timezone: str | None
    units: Units
    daily: list[DailyForecast]
    hourly: list[HourlyForecast] = Field(default_factory=list, description="Empty unless hourly data was requested")
    source: Source


class Alert(BaseModel):
    """One active weather alert (US National Weather Service fields)."""

    event: str
    severity: str | None = Field(description="Extreme, Severe, Moderate, Minor or Unknown")
    urgency: str | None = None
    certainty: str | None = None
    headline: str | None = None
    description: str | None = None
    instruction: str | None = None
    area: str | None = Field(default=None, description="Affected areas as named by the issuer")
    effective: str | None = None
    onset: str | None = None
    expires: str | None = None
    ends: str | None = None
    sender: str | None = None


class AlertReport(BaseModel):
    """Active alerts for a location, or a plain statement that alerts are not available there."""

    location: str = Field(description="The place or US state the report covers")
    country_code: str | None
    alerts_available: bool = Field(
        description="False when no alert source covers this country (not the same as 'no alerts')"
    )
    alerts: list[Alert] = Field(default_factory=list)
    message: str = Field(description="One-sentence summary to relay to the user")
    note: str | None = None
    source: Source | None


class LocationSearch(BaseModel):
    """Candidate places for a free-text query, most likely first."""

    query: str
    candidates: list[Place]
    source: Source
