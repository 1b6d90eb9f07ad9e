"""Command line: python -m servers.weather [--provider live|sample] [--poll-interval SECONDS] [transport options]."""

from __future__ import annotations

import argparse
import os

from mcp_kit import add_run_arguments
from servers._options import positive_seconds

from .providers import make_provider
from .server import DEFAULT_POLL_INTERVAL, build_server


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The server's options (shared transport options plus provider and poll interval)."""
    parser = argparse.ArgumentParser(
        prog="python -m servers.weather",
        description="MCP server: worldwide current weather and forecasts (Open-Meteo), US alerts (NWS).",
    )
    add_run_arguments(parser)
    parser.add_argument(
        "--provider",
        choices=["live", "sample"],
        default=os.environ.get("WEATHER_PROVIDER", "live"),
        help="live: Open-Meteo + api.weather.gov (default); sample: offline generated data [env WEATHER_PROVIDER]",
    )
    parser.add_argument(
        "--poll-interval",
        type=positive_seconds,
        default=positive_seconds(os.environ.get("WEATHER_POLL_INTERVAL", str(DEFAULT_POLL_INTERVAL))),
        help="seconds between polls for subscribed weather://current/... resources [env WEATHER_POLL_INTERVAL]",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Parse options, build the server and serve until the client leaves."""
    args = parse_args(argv)
    app = build_server(make_provider(args.provider), poll_interval=args.poll_interval)
    app.run_from_args(args)


if __name__ == "__main__":
    main()
