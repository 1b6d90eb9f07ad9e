"""The weather server's MCP Apps view: the week's forecast as seven days and a temperature line, alerts highlighted.

`get_forecast` is rendered by `ui://weather/week` for hosts that declare MCP Apps (its results stay
what they are for every other host); the view changes city through `week_view`, a tool only the view
calls (hidden from hosts without Apps), which adds the alerts of US places.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_kit import Apps, MCPServer
from servers._shared.views import view_html

from .params import City
from .providers import WeatherProvider
from .tools import UnitParam, tool_errors
from .us_states import NWS_COUNTRY_CODES

VIEW = "ui://weather/week"
PAGE = Path(__file__).resolve().parent / "views" / "week.html"


def register_views(app: MCPServer, provider: WeatherProvider) -> Apps:
    """Add the week view, link `get_forecast` to it, and add the app-only `week_view`."""
    apps = app.add_extension(Apps())

    @apps.view(VIEW, name="week", title="Week forecast", prefers_border=True)
    def week() -> str:
        """Seven days of forecast (condition, high and low, chance of rain) with active alerts highlighted."""
        return view_html(PAGE)

    apps.link("get_forecast", VIEW)

    @apps.tool(view=VIEW, visibility=["app"], title="Week view data", read_only=True, idempotent=True,
               open_world=True)
    async def week_view(city: City, unit: UnitParam = "celsius") -> dict[str, Any]:
        """Seven days of forecast for a city and its active alerts (US places), for the week view."""
        with tool_errors():
            resolution = await provider.resolve(city)
            forecast = await provider.forecast(resolution.place, 7, unit, 0)
            covered = resolution.place.country_code in NWS_COUNTRY_CODES
            alerts = await provider.alerts(place=resolution.place) if covered else []
        data = forecast.model_dump(mode="json", exclude={"hourly"})
        data.update(city=city, alerts_available=covered, alerts=[alert.model_dump(mode="json") for alert in alerts],
                    alerts_message=None if covered else f"Alerts are not available for {resolution.place.country}.")
        return data

    return apps
