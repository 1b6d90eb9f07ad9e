"""The stock MCP server: `build_server(provider)` wires tools, resources, prompts and completion."""

from __future__ import annotations

import contextlib
from pathlib import Path

from mcp_kit import MCPServer
from servers.stock.apps import register_views
from servers.stock.prompts import register_prompts
from servers.stock.providers import StockProvider
from servers.stock.resources import register_resources
from servers.stock.tools import register_tools

VERSION = "1.0.0"
DEFAULT_POLL_INTERVAL = 15.0
SKILLS = Path(__file__).resolve().parent / "skills"

GUIDE = (
    "Tools: get_stock_price for the latest quote; get_price_history for OHLCV bars over a period or date range; "
    "get_financial_statement for reported income statement, balance sheet or cash flow figures; "
    "compare_valuation for price, trailing EPS and P/E of 1-10 tickers (computed by the server: use its numbers "
    "rather than estimating); valuation_report for a P/E report over up to 50 tickers (a long-running task when "
    "the client supports tasks); search_ticker to turn a company name into a ticker. Every result carries `source` "
    "and `as_of`: mention them when you quote figures. Resources: stock://quote/{ticker} (subscribe for "
    "updates) and stock://tickers. Nothing here is investment advice."
)


def instructions_for(provider: StockProvider) -> str:
    if provider.is_sample:
        return (
            "SAMPLE DATA: this server runs with the offline sample provider. Prices are simulated (a seeded random "
            "walk around reference prices) and fundamentals are approximate figures for a fixed set of large US "
            "companies, as of the date given in each result. Always tell the user that the figures are sample "
            "data, not real market data. " + GUIDE
        )
    return (
        "Live data: quotes and price history from the Yahoo Finance chart API (quotes may be delayed), "
        "fundamentals and EPS from SEC EDGAR XBRL filings (companies filing with the SEC under US GAAP). " + GUIDE
    )


def build_server(provider: StockProvider, *, poll_interval: float = DEFAULT_POLL_INTERVAL) -> MCPServer:
    """A stock server backed by `provider`; subscribed quotes are polled every `poll_interval` seconds."""
    app = MCPServer(
        "stock",
        version=VERSION,
        title="Stock quotes and fundamentals" + (" (sample data)" if provider.is_sample else ""),
        instructions=instructions_for(provider),
        lifespan=lambda app: contextlib.aclosing(provider),  # ctx.lifespan_state is the provider, closed at the end
    )
    register_tools(app, provider)
    register_views(app, provider)  # MCP Apps: the price chart, for hosts that render views
    register_resources(app, provider, poll_interval)
    register_prompts(app, provider)
    app.add_skills(SKILLS)  # valuation-analysis: skill://valuation-analysis/SKILL.md
    return app
