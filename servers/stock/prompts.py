"""Prompts of the stock server: ready-made workflows a user can pick in their client."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcp_kit import MCPServer
from servers.stock.matching import normalize_ticker
from servers.stock.providers import StockProvider


def _sample_caveat(provider: StockProvider) -> str:
    if provider.is_sample:
        return ("\n\nThis server runs on SAMPLE DATA (simulated prices, approximate figures): say so clearly "
                "in your answer and do not present the numbers as real market data.")
    return ""


def register_prompts(app: MCPServer, provider: StockProvider) -> None:
    """Add the compare-valuation and analyze-stock prompts."""

    @app.prompt(name="compare-valuation", title="Compare P/E valuation")
    def compare_valuation_prompt(
        tickers: Annotated[str, Field(description="Comma-separated tickers, e.g. 'AAPL, MSFT, GOOGL' (1-10)")],
    ) -> str:
        """Compare the price-to-earnings valuation of several companies, with the figures computed by the server."""
        symbols = [normalize_ticker(t) for t in tickers.split(",") if t.strip()]
        listing = ", ".join(symbols) or tickers
        return (
            f"Compare the valuation of {listing} by price-to-earnings ratio.\n\n"
            f"1. Call compare_valuation with tickers {symbols}. It returns, for each ticker, the latest price, the "
            f"trailing-twelve-month diluted EPS with how it was derived, and the P/E computed as price / EPS.\n"
            f"2. Do not recompute or estimate P/E yourself. Where a row has `not_computed` entries, report what "
            f"is missing and why (for example negative earnings, a fund without earnings, or an unknown ticker; "
            f"use the suggested ticker if the user clearly meant it).\n"
            f"3. If useful, call get_financial_statement (income_statement, annual, limit 3) for context on "
            f"earnings trends.\n"
            f"4. Present a table: ticker, company, price, currency, EPS (TTM), P/E, and the data's as-of times. "
            f"Rank by P/E using `ranking_by_pe`.\n"
            f"5. Add caveats: trailing P/E ignores growth expectations and one-off items, differs between "
            f"industries, and is not investment advice."
            + _sample_caveat(provider)
        )

    @app.prompt(name="analyze-stock", title="Analyze one stock")
    def analyze_stock_prompt(
        ticker: Annotated[str, Field(description="Ticker symbol, e.g. 'AAPL'")],
    ) -> str:
        """A structured look at one company: current quote, one-year price trend, fundamentals and valuation."""
        symbol = normalize_ticker(ticker)
        return (
            f"Give a concise analysis of {symbol}.\n\n"
            f"1. get_stock_price for {symbol}: current price, change today, market state.\n"
            f"2. get_price_history for {symbol} with period 1y and interval 1wk: describe the trend, the high and "
            f"low of the year and the change over the year (compute from the bars; quote the figures).\n"
            f"3. get_financial_statement for {symbol}: income_statement annual (limit 3) for revenue and earnings "
            f"growth; balance_sheet annual (limit 1) for assets, liabilities and cash; cash_flow annual (limit 2) "
            f"for operating cash flow and capital expenditure.\n"
            f"4. compare_valuation with [\"{symbol}\"] for the trailing P/E.\n"
            f"5. Summarise strengths, risks and open questions in a few bullet points. State each figure's source "
            f"and as-of date, and say what could not be retrieved. This is information, not investment advice."
            + _sample_caveat(provider)
        )
