"""WMO weather interpretation codes (as used by Open-Meteo) in words, and compass points."""

from __future__ import annotations

WMO_CODES: dict[int, str] = {
    0: "clear sky",
    1: "mainly clear",
    2: "partly cloudy",
    3: "overcast",
    45: "fog",
    48: "depositing rime fog",
    51: "light drizzle",
    53: "moderate drizzle",
    55: "dense drizzle",
    56: "light freezing drizzle",
    57: "dense freezing drizzle",
    61: "slight rain",
    63: "moderate rain",
    65: "heavy rain",
    66: "light freezing rain",
    67: "heavy freezing rain",
    71: "slight snowfall",
    73: "moderate snowfall",
    75: "heavy snowfall",
    77: "snow grains",
    80: "slight rain showers",
    81: "moderate rain showers",
    82: "violent rain showers",
    85: "slight snow showers",
    86: "heavy snow showers",
    95: "thunderstorm",
    96: "thunderstorm with slight hail",
    99: "thunderstorm with heavy hail",
}

_COMPASS = ["N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW"]


def describe(code: int | None) -> str:
    """Return the WMO code in words ("unknown" when missing or unrecognised)."""
    if code is None:
        return "unknown"
    return WMO_CODES.get(int(code), f"unknown (WMO code {code})")


def compass(degrees: float | None) -> str | None:
    """Return the 16-point compass direction the wind blows from, e.g. 259 -> "W"."""
    if degrees is None:
        return None
    return _COMPASS[int((float(degrees) % 360) / 22.5 + 0.5) % 16]


def is_wet(code: int | None) -> bool:
    """True when the code means precipitation of any kind (drizzle, rain, snow, showers, storms)."""
    return code is not None and int(code) >= 51
