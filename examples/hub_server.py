"""One endpoint for several servers: the stock and weather reference servers mounted under a namespace each.

    .venv/bin/python examples/hub_server.py                       # stdio, for Claude Desktop or Cursor
    .venv/bin/python examples/hub_server.py --transport http      # Streamable HTTP on 127.0.0.1:8000

Tools and prompts appear as `stock_get_stock_price`, `weather_get_forecast`, ...; resources keep their
URIs (`stock://quote/AAPL`); each server's skills are served once. A subscribed quote is polled every
STOCK_POLL_INTERVAL seconds (15 unless set), as `python -m servers.stock` does. A transform gives the model a simpler
forecast tool: always in Celsius, three days unless asked otherwise, daily only. Both use offline sample data.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere in a clone

from mcp_kit import Arg, MCPServer  # noqa: E402
from servers._options import positive_seconds  # noqa: E402
from servers.stock.providers import make_provider as stock_provider  # noqa: E402
from servers.stock.server import DEFAULT_POLL_INTERVAL  # noqa: E402
from servers.stock.server import build_server as build_stock  # noqa: E402
from servers.weather.providers import make_provider as weather_provider  # noqa: E402
from servers.weather.server import build_server as build_weather  # noqa: E402

hub = MCPServer("hub", instructions="Stock quotes and valuations (stock_*) and weather (weather_*).")
poll_interval = positive_seconds(os.environ.get("STOCK_POLL_INTERVAL", str(DEFAULT_POLL_INTERVAL)))
hub.mount(build_stock(stock_provider("sample"), poll_interval=poll_interval), namespace="stock")
hub.mount(build_weather(weather_provider("sample")), namespace="weather")
hub.transform_tool("weather_get_forecast", description="Daily forecast for a city, in degrees Celsius.",
                   arguments={"unit": Arg(value="celsius"), "days": Arg(default=3), "hours": Arg(hidden=True)})

if __name__ == "__main__":
    hub.run()
