"""Deterministic, plausible weather generated from a city's climate normals and a seed per city and date.

All values are metric (°C, km/h, mm); the same (city, date, hour) always gives the same numbers.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from datetime import date, datetime

from .places import City, Climate


@dataclass(frozen=True)
class SampleDay:
    """One generated day."""

    temperature_min: float
    temperature_max: float
    precipitation_sum: float
    precipitation_probability: float
    weather_code: int
    wind_speed_max: float
    humidity: float


@dataclass(frozen=True)
class SampleHour:
    """One generated hour (or instant)."""

    temperature: float
    feels_like: float
    weather_code: int
    precipitation: float
    precipitation_probability: float
    wind_speed: float
    wind_direction: float
    humidity: float


def seeded(*parts: object) -> random.Random:
    """A random generator seeded from the parts (stable across processes, unlike hash())."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _summer_phase(day: date, latitude: float) -> float:
    """+1 at local midsummer, -1 at midwinter."""
    northern = math.cos(2 * math.pi * (day.timetuple().tm_yday - 196) / 365.25)
    return northern if latitude >= 0 else -northern


def _seasonal_mean(climate: Climate, day: date) -> float:
    """Mean temperature from the January/July normals on a cosine through the year."""
    january_phase = math.cos(2 * math.pi * (day.timetuple().tm_yday - 15) / 365.25)
    return (climate.jan + climate.jul) / 2 + (climate.jan - climate.jul) / 2 * january_phase


def _monthly_rain(city: City, day: date) -> float:
    """Rain expected this month (mm), shifted towards the city's wet season."""
    phase = _summer_phase(day, city.place.latitude)
    shift = {"summer": phase, "winter": -phase}.get(city.climate.wet, 0.0)
    return city.climate.rain_mm / 12 * (1 + 0.7 * shift)


def _wet_code(amount: float, mean: float, rng: random.Random) -> int:
    if mean < 0.5:
        return 71 if amount < 3 else 73 if amount < 10 else 75
    if amount < 1:
        return rng.choice([51, 53])
    if amount < 5:
        return rng.choice([61, 80])
    if amount < 15:
        return rng.choice([63, 81])
    return 95 if mean > 20 and rng.random() < 0.5 else rng.choice([65, 82])


def sample_day(city: City, day: date) -> SampleDay:
    """The generated weather for one local date."""
    rng = seeded(city.id, day.isoformat())
    mean = _seasonal_mean(city.climate, day) + rng.gauss(0, 2.5)
    month_rain = _monthly_rain(city, day)
    chance = min(max(month_rain / 120, 0.02), 0.8)
    wet = rng.random() < chance
    amount = round(0.3 + month_rain / (30 * chance) * rng.expovariate(1.0), 1) if wet else 0.0
    if wet and amount > 0:
        code = _wet_code(amount, mean, rng)
    else:
        amount = 0.0
        code = rng.choices([0, 1, 2, 3, 45], weights=[3 - 2 * chance, 2, 2, 1 + 3 * chance, 0.3])[0]
    diurnal = 10 - 5 * chance - (3 if amount else 0) + rng.uniform(-1.5, 1.5)
    probability = rng.uniform(55, 95) if amount else rng.uniform(0, 60 * chance)
    return SampleDay(
        temperature_min=round(mean - diurnal / 2, 1),
        temperature_max=round(mean + diurnal / 2, 1),
        precipitation_sum=amount,
        precipitation_probability=float(round(probability / 5) * 5),
        weather_code=code,
        wind_speed_max=round(8 + rng.gammavariate(2.0, 6.0), 1),
        humidity=round(min(98.0, 35 + 55 * chance + (15 if amount else 0) + rng.uniform(-5, 5))),
    )


def sample_hour(city: City, moment: datetime, jitter_key: object | None = None) -> SampleHour:
    """Generated conditions at a local moment; jitter_key adds small sensor noise for live-like readings."""
    day = sample_day(city, moment.date())
    rng = seeded(city.id, moment.strftime("%Y-%m-%dT%H"))
    hour = moment.hour + moment.minute / 60
    mean = (day.temperature_min + day.temperature_max) / 2
    swing = (day.temperature_max - day.temperature_min) / 2
    temperature = mean + swing * math.cos(2 * math.pi * (hour - 15) / 24)
    wind = day.wind_speed_max * (0.35 + 0.4 * rng.random())
    if jitter_key is not None:
        noise = seeded(city.id, jitter_key)
        temperature += noise.gauss(0, 0.3)
        wind = max(0.0, wind + noise.gauss(0, 1.0))
    raining = day.precipitation_sum > 0 and rng.random() < 0.5
    code = day.weather_code if raining else (3 if day.precipitation_sum > 0 else min(day.weather_code, 3))
    precipitation = round(day.precipitation_sum / 12 * rng.uniform(0.5, 1.5), 1) if raining else 0.0
    feels = (
        temperature - (0.1 * wind if temperature < 12 else 0) + (0.08 * (day.humidity - 50) if temperature > 24 else 0)
    )
    return SampleHour(
        temperature=round(temperature, 1),
        feels_like=round(feels, 1),
        weather_code=code,
        precipitation=precipitation,
        precipitation_probability=day.precipitation_probability
        if raining or day.precipitation_sum
        else round(day.precipitation_probability / 2),
        wind_speed=round(wind, 1),
        wind_direction=float(rng.randrange(0, 360, 10)),
        humidity=day.humidity,
    )
