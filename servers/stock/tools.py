"""The stock server's tools. Descriptions and schemas are written for the model that calls them."""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import date
from typing import Annotated, Any, TypeVar

from pydantic import Field

from mcp_kit import Context, MCPServer, ToolError
from servers.stock.errors import ProviderError
from servers.stock.explain import error_text
from servers.stock.matching import search_companies
from servers.stock.models import (
    FinancialStatement,
    Interval,
    Period,
    PriceHistory,
    Quote,
    StatementPeriod,
    StatementType,
    TickerSearch,
    ValuationComparison,
    ValuationReport,
)
from servers.stock.params import Ticker, TickerSymbol
from servers.stock.providers import StockProvider
from servers.stock.ranges import RangeError, resolve_range
from servers.stock.valuation import compare, report

T = TypeVar("T")


def register_tools(app: MCPServer, provider: StockProvider) -> None:
    """Add get_stock_price, get_price_history, get_financial_statement, compare_valuation, valuation_report,
    search_ticker."""
    hints: dict[str, Any] = {
        "read_only": True, "destructive": False, "idempotent": True, "open_world": not provider.is_sample}

    async def guarded(call: Awaitable[T]) -> T:
        try:
            return await call
        except ProviderError as exc:
            raise ToolError(await error_text(provider, exc)) from None

    @app.tool(title="Latest stock quote", **hints)
    async def get_stock_price(ticker: Ticker) -> Quote:
        """Get the latest quote for one ticker: price, currency, change and change % versus the previous close,
        previous close, day high/low, volume, time of the last trade, market state (REGULAR, PRE, POST, CLOSED;
        SIMULATED for sample data), exchange, plus `source` and `as_of`.

        Only the current quote: it is not for past prices (use get_price_history), earnings or statements
        (use get_financial_statement) or P/E ratios (use compare_valuation). Example: {"ticker": "AAPL"}.
        An unknown ticker fails with did-you-mean suggestions.
        """
        return await guarded(provider.get_quote(ticker))

    @app.tool(title="Price history (OHLCV bars)", **hints)
    async def get_price_history(
        ticker: Ticker,
        period: Annotated[Period | None, Field(
            description="Range ending today: 1d, 5d, 1mo, 3mo, 6mo, 1y, 2y, 5y, 10y, ytd (since 1 January) or "
                        "max. Do not combine with start/end. When neither period nor start is given: 1mo.")] = None,
        start: Annotated[date | None, Field(
            description="First day, YYYY-MM-DD (inclusive). Use with end instead of period.")] = None,
        end: Annotated[date | None, Field(
            description="Last day, YYYY-MM-DD (inclusive); defaults to today. Must not be before start.")] = None,
        interval: Annotated[Interval, Field(
            description="Bar size. Intraday: 1m (last 30 days, at most 7 days per request), 5m/15m/30m "
                        "(last 60 days), 60m (last 730 days). Daily and longer: 1d, 1wk, 1mo.")] = "1d",
    ) -> PriceHistory:
        """Get OHLCV price bars (open, high, low, close, volume) for one ticker over a date range, oldest first.

        Give either `period` (e.g. "6mo") or `start`/`end` dates. Daily and longer bars are labelled with the
        date (YYYY-MM-DD), intraday bars with the exchange-local time. At most 1000 bars are returned (the newest;
        `note` says when bars were dropped, so pick a coarser interval for long ranges). A range with no trading
        at all fails with "No price data ..." instead of returning an empty list. Not for the live price: use
        get_stock_price. Example: {"ticker": "MSFT", "period": "3mo", "interval": "1wk"} or
        {"ticker": "MSFT", "start": "2024-01-01", "end": "2024-03-31"}.
        """
        try:
            first, last = resolve_range(provider.today(), start, end, period, interval)
        except RangeError as exc:
            raise ToolError(f"Invalid range: {exc}") from None
        return await guarded(provider.get_history(ticker, first, last, interval))

    @app.tool(title="Financial statement", **hints)
    async def get_financial_statement(
        ticker: Ticker,
        statement_type: Annotated[StatementType, Field(
            description="income_statement (revenue, profit, EPS, diluted shares), balance_sheet (assets, "
                        "liabilities, equity, cash) or cash_flow (operating/investing/financing cash flow, capex).")
        ] = "income_statement",
        period: Annotated[StatementPeriod, Field(
            description="annual (fiscal years) or quarterly (fiscal quarters).")] = "annual",
        limit: Annotated[int, Field(ge=1, le=12, description="How many periods, newest first (1-12).")] = 4,
    ) -> FinancialStatement:
        """Get reported figures from a company's financial statements for its most recent fiscal periods,
        newest first. Each period has a fiscal label (e.g. "FY2024", "Q1 FY2025"), start/end dates and the filing
        (form, filed date); each figure has a name, label, value and unit ("USD", "USD/share", "shares").
        Values are in units, not millions.

        Covers companies filing with the SEC (US GAAP); funds and ETFs have no statements. It does not compute
        ratios: use compare_valuation for P/E. Example: {"ticker": "AAPL", "statement_type": "income_statement",
        "period": "annual", "limit": 3}.
        """
        return await guarded(provider.get_statement(ticker, statement_type, period, limit))

    @app.tool(title="Compare P/E valuation", **hints)
    async def compare_valuation(
        tickers: Annotated[list[TickerSymbol], Field(
            min_length=1, max_length=10,
            description="1 to 10 ticker symbols, e.g. [\"AAPL\", \"MSFT\"]. Duplicates are ignored.")],
    ) -> ValuationComparison:
        """Compare valuation across 1-10 tickers: for each, the latest price, trailing-twelve-month diluted EPS
        (and how it was derived) and the P/E ratio = price / EPS, computed by the server, not estimated.

        When something cannot be computed (unknown ticker, fund without earnings, negative EPS, currency mismatch,
        data source failure) the row's `not_computed` says what and why; the other rows are still returned.
        `ranking_by_pe` lists tickers from lowest to highest P/E. Not for price history or full statements.
        Example: {"tickers": ["AAPL", "MSFT", "GOOGL"]}.
        """
        return await compare(provider, tickers)

    @app.tool(title="Valuation report over many tickers (long-running)", task="optional", **hints)
    async def valuation_report(
        tickers: Annotated[list[TickerSymbol], Field(
            min_length=1, max_length=50,
            description="1 to 50 ticker symbols, e.g. [\"AAPL\", \"MSFT\", \"KO\"]. Duplicates are ignored.")],
        ctx: Context,
    ) -> ValuationReport:
        """Build a P/E valuation report over 1-50 tickers: the compare_valuation row of each (price, trailing
        diluted EPS, P/E, or why it could not be computed), the ranking by P/E, and a Markdown report with the
        comparison table, the tickers not valued and the caveats. Figures are computed by the server.

        Runs as a task when the client supports tasks: the call answers at once with a task id, the client polls
        it (its status message says how many tickers are done, e.g. "valued 12/40: MSFT") and fetches the report
        when it completes; cancelling the task stops the remaining lookups. A client without tasks gets the
        report as an ordinary (slower) result. For up to 10 tickers compare_valuation is enough.
        Example: {"tickers": ["AAPL", "MSFT", "GOOGL", "KO", "PEP"]}.
        """

        async def progress(done: int, total: int, ticker: str) -> None:
            await ctx.report_progress(done, total, f"valued {done}/{total}: {ticker}")

        return await report(provider, tickers, progress)

    @app.tool(title="Find a ticker", **hints)
    async def search_ticker(
        query: Annotated[str, Field(min_length=1, max_length=100,
                                    description="Company name or part of it, or a (partial) ticker, e.g. "
                                                "'apple', 'micro', 'BRK'.")],
    ) -> TickerSearch:
        """Find ticker symbols by company name or partial ticker: "apple" -> AAPL (Apple Inc.). Returns up to 10
        matches, best first, each with how it matched (ticker, name or fuzzy). Use it before the other tools
        when you only know a company's name. It returns no prices.
        """
        companies = await guarded(provider.list_companies())
        matches = search_companies(query, companies)
        if not matches:
            raise ToolError(f"No company or ticker matches '{query}'. Try a shorter part of the name "
                            f"(e.g. 'micro' for Microsoft) or the ticker itself.")
        return TickerSearch(query=query, matches=matches, source=provider.source, as_of=provider.today().isoformat())

