"""Command line: `python -m servers.stock [--provider live|sample] [--poll-interval SECONDS] [--transport ...]`."""

from __future__ import annotations

import argparse
import os

from mcp_kit import add_run_arguments
from servers._options import positive_seconds
from servers.stock.providers import make_provider
from servers.stock.server import DEFAULT_POLL_INTERVAL, build_server


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m servers.stock",
        description="MCP server for stock quotes, price history, financial statements and P/E comparison.",
    )
    add_run_arguments(parser)
    group = parser.add_argument_group("stock")
    group.add_argument("--provider", choices=["live", "sample"], default=os.environ.get("STOCK_PROVIDER", "live"),
                       help="live: Yahoo Finance + SEC EDGAR (default); sample: bundled offline data "
                            "[env STOCK_PROVIDER]")
    group.add_argument("--poll-interval", type=positive_seconds,
                       default=os.environ.get("STOCK_POLL_INTERVAL", str(DEFAULT_POLL_INTERVAL)),
                       help=f"seconds between polls of a subscribed quote (default {DEFAULT_POLL_INTERVAL:g}) "
                            f"[env STOCK_POLL_INTERVAL]")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    app = build_server(make_provider(args.provider), poll_interval=args.poll_interval)
    app.run_from_args(args)


if __name__ == "__main__":
    main()
