"""build_server(provider): the weather MCP server wired to a WeatherProvider."""

from __future__ import annotations

import contextlib
from pathlib import Path

from mcp_kit import MCPServer

from .apps import register_views
from .prompts import register_prompts
from .providers import WeatherProvider
from .resources import register_resources
from .tools import register_tools

INSTRUCTIONS = """\
Weather for any city in the world: current conditions (get_weather), daily and hourly forecasts up to
16 days (get_forecast), active US weather alerts (get_alerts) and place lookup (search_location).
City names may be given in English or Chinese and may carry a country or US state: "Paris",
"Paris, FR", "北京", "San Francisco, CA". Every result states its units, the place it resolved to and
its data source. When a name is ambiguous the result's "note" says which place was chosen.
For several cities, call the tools in parallel.
Resources: weather://current/{city} (subscribable: updates when the observation changes) and
weather://forecast/{city}/{date} (date YYYY-MM-DD, "today" or "tomorrow")."""

SAMPLE_NOTE = ("SAMPLE DATA: this server runs with the offline sample provider: the weather is generated, not "
               "observed. Always tell the user that the figures are sample data, not a real forecast.\n")

DEFAULT_POLL_INTERVAL = 300.0


def build_server(provider: WeatherProvider, *, poll_interval: float = DEFAULT_POLL_INTERVAL) -> MCPServer:
    """A weather server answering from `provider`; subscriptions poll it every `poll_interval` seconds."""
    sample = provider.source == "sample"
    app = MCPServer(
        "weather",
        version="1.0.0",
        title="Weather (sample data)" if sample else "Weather (Open-Meteo, NWS alerts)",
        instructions=SAMPLE_NOTE + INSTRUCTIONS if sample else INSTRUCTIONS,
        lifespan=lambda app: contextlib.aclosing(provider),  # ctx.lifespan_state is the provider, closed at the end
    )
    register_tools(app, provider)
    register_views(app, provider)  # MCP Apps: the week view, for hosts that render views
    register_resources(app, provider, poll_interval=poll_interval)
    register_prompts(app, provider)
    app.add_skills(Path(__file__).resolve().parent / "skills")  # trip-planning, paired with the plan-vacation prompt
    return app
