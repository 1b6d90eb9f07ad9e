"""The plan-vacation prompt: trip planning guided by the destination's forecast."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

from mcp_kit import MCPServer

from .errors import WeatherError
from .models import Forecast
from .params import CityName
from .places import bundled_gazetteer
from .providers import WeatherProvider

_DURATION = re.compile(r"(\d+)\s*(days?|nights?|weeks?|d|w|天|晚|周|星期)?", re.IGNORECASE)


def duration_days(text: str) -> int:
    """'5 days' -> 5, '2 weeks' -> 14, '3晚' -> 3, '一周'/'a week' -> 7; default 7."""
    match = _DURATION.search(text)
    if not match:
        return 7
    number, unit = int(match.group(1)), (match.group(2) or "").lower()
    return max(1, number * 7 if unit.startswith("w") or unit in ("周", "星期") else number)


def forecast_lines(forecast: Forecast) -> list[str]:
    """One line per day: date, condition, min-max, chance of precipitation."""
    unit = forecast.units.temperature
    return [
        f"- {d.date}: {d.condition}, {d.temperature_min}–{d.temperature_max} {unit}, "
        f"precipitation {d.precipitation_sum} {forecast.units.precipitation} ({d.precipitation_probability_percent}% "
        "chance)"
        for d in forecast.daily
    ]


def register_prompts(app: MCPServer, provider: WeatherProvider) -> None:
    """Add plan-vacation and the completion of its destination."""

    @app.prompt(name="plan-vacation", title="Plan a vacation around the weather")
    async def plan_vacation(
        destination: Annotated[CityName, Field(description="City to visit, e.g. 'Lisbon' or '成都'")],
        duration: Annotated[str, Field(description="Trip length, e.g. '5 days', '2 weeks', '3晚'")],
        budget: Annotated[str | None, Field(description="Optional budget, e.g. 'USD 2000' or 'backpacker'")] = None,
        interests: Annotated[str | None, Field(description="Optional interests, e.g. 'hiking, food, museums'")] = None,
    ) -> str:
        """Plan a trip to a city day by day, fitting outdoor and indoor plans to its weather forecast."""
        days = duration_days(duration)
        try:
            resolution = await provider.resolve(destination)
            forecast = await provider.forecast(resolution.place, min(days, 16), "celsius")
            weather = (
                f"Forecast for {resolution.place.label} (source: {forecast.source}, first {len(forecast.daily)} "
                "days):\n"
                + "\n".join(forecast_lines(forecast))
            )
            if resolution.note:
                weather += f"\nNote: {resolution.note}"
        except WeatherError as error:
            weather = (
                f"The forecast could not be fetched ({error}). Call get_forecast for '{destination}' before planning."
            )
        lines = [
            f"Help me plan a vacation in {destination} for {duration}.",
            f"Budget: {budget}." if budget else "Budget: not specified; suggest options at a few price levels.",
            f"Interests: {interests}." if interests else "Interests: not specified; ask me or propose a varied mix.",
            "",
            weather,
            "",
            "Please: (1) propose a day-by-day itinerary that puts outdoor activities on the driest, most "
            "comfortable days and indoor ones on wet or extreme days; (2) give a packing list for the "
            "temperatures above; (3) flag any day where the weather could disrupt plans. If the trip is longer "
            "than the forecast, say which days rely on typical climate instead. Use get_forecast with hours=24 "
            "for hour-by-hour detail on a particular day, and get_alerts if the destination is in the US.",
        ]
        return "\n".join(lines)

    gazetteer = bundled_gazetteer()
    app.completion(ref="plan-vacation", argument="destination")(lambda value, context: gazetteer.complete(value))
