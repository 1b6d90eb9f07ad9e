"""Conversions from metric to the units a caller asked for."""

from __future__ import annotations

from .models import Unit


def temperature(celsius: float, unit: Unit) -> float:
    """°C to the requested unit, one decimal."""
    return round(celsius * 9 / 5 + 32, 1) if unit == "fahrenheit" else round(celsius, 1)


def speed(kmh: float, unit: Unit) -> float:
    """km/h for celsius callers, mph for fahrenheit callers."""
    return round(kmh / 1.609344, 1) if unit == "fahrenheit" else round(kmh, 1)


def precipitation(mm: float, unit: Unit) -> float:
    """mm for celsius callers, inches for fahrenheit callers."""
    return round(mm / 25.4, 2) if unit == "fahrenheit" else round(mm, 1)
