"""Result models returned by stock providers and tools (they become the tools' output schemas)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

StatementType = Literal["income_statement", "balance_sheet", "cash_flow"]
StatementPeriod = Literal["annual", "quarterly"]
Interval = Literal["1m", "5m", "15m", "30m", "60m", "1d", "1wk", "1mo"]
Period = Literal["1d", "5d", "1mo", "3mo", "6mo", "1y", "2y", "5y", "10y", "ytd", "max"]


class Company(BaseModel):
    """One company (or fund) the provider knows."""

    ticker: str
    name: str
    exchange: str | None = None


class Quote(BaseModel):
    """The latest quote for one ticker."""

    ticker: str
    name: str | None = None
    price: float
    currency: str | None = None
    change: float | None = Field(default=None, description="price - previous_close")
    change_percent: float | None = Field(
        default=None, description="change / previous_close * 100, rounded to 2 decimals")
    previous_close: float | None = None
    day_high: float | None = None
    day_low: float | None = None
    volume: int | None = None
    market_time: str = Field(description="ISO 8601 time of the last trade, in the exchange's time zone")
    market_state: str = Field(description="REGULAR, PRE, POST, CLOSED, or SIMULATED for sample data")
    exchange: str | None = None
    source: str = Field(description="Where the data came from, e.g. 'sample' or 'Yahoo Finance'")
    as_of: str = Field(description="ISO 8601 UTC time the figures describe")


class PriceBar(BaseModel):
    """One OHLCV bar. `time` is a date (YYYY-MM-DD) for daily and longer bars, else a local datetime."""

    time: str
    open: float | None
    high: float | None
    low: float | None
    close: float | None
    volume: int | None


class PriceHistory(BaseModel):
    """OHLCV bars for one ticker over a range."""

    ticker: str
    currency: str | None = None
    interval: Interval
    start: str = Field(description="First day of the requested range (YYYY-MM-DD)")
    end: str = Field(description="Last day of the requested range, inclusive (YYYY-MM-DD)")
    bar_count: int
    bars: list[PriceBar]
    note: str | None = None
    source: str
    as_of: str


class LineItem(BaseModel):
    """One reported figure."""

    name: str = Field(description="Stable key, e.g. 'revenue', 'net_income'")
    label: str = Field(description="Human label, e.g. the XBRL concept label")
    value: float
    unit: str = Field(description="Unit of value, e.g. 'USD', 'USD/share', 'shares'")
    concept: str | None = Field(default=None, description="Source concept (XBRL tag) or 'computed'")


class FiscalPeriod(BaseModel):
    """The figures of one fiscal period (or one balance-sheet date)."""

    fiscal_label: str = Field(description="e.g. 'FY2024' or 'Q1 FY2025'")
    start: str | None = Field(default=None, description="Period start (YYYY-MM-DD); null for balance-sheet dates")
    end: str = Field(description="Period end or balance-sheet date (YYYY-MM-DD)")
    form: str | None = Field(default=None, description="Filing the figures come from, e.g. 10-K")
    filed: str | None = None
    items: list[LineItem]


class FinancialStatement(BaseModel):
    """A financial statement over several periods, newest first."""

    ticker: str
    name: str | None = None
    statement_type: StatementType
    period: StatementPeriod
    periods: list[FiscalPeriod]
    note: str | None = None
    source: str
    as_of: str


class EarningsFigure(BaseModel):
    """Trailing diluted EPS and how it was obtained."""

    value: float
    unit: str = "USD/share"
    basis: str = Field(description="How the figure was obtained, e.g. 'FY2025 + Q1 FY2026 - Q1 FY2025'")
    period_end: str
    source: str


class Valuation(BaseModel):
    """Price, trailing diluted EPS and P/E for one ticker, or why something could not be computed."""

    ticker: str
    name: str | None = None
    price: float | None = None
    currency: str | None = None
    eps_diluted_ttm: float | None = None
    eps_basis: str | None = None
    pe_ratio: float | None = Field(default=None, description="price / eps_diluted_ttm, rounded to 2 decimals")
    not_computed: list[str] = Field(default_factory=list, description="What could not be computed, and why")
    sources: list[str] = Field(default_factory=list)


class ValuationComparison(BaseModel):
    """compare_valuation result: one row per requested ticker, in request order."""

    results: list[Valuation]
    ranking_by_pe: list[str] = Field(description="Tickers with a P/E, cheapest (lowest P/E) first")
    note: str
    as_of: str


class ValuationReport(BaseModel):
    """valuation_report result: the comparison rows and a Markdown report built from them."""

    results: list[Valuation]
    ranking_by_pe: list[str] = Field(description="Tickers with a P/E, cheapest (lowest P/E) first")
    not_valued: list[str] = Field(description="Tickers without a P/E, each with the reason")
    report_markdown: str = Field(description="The comparison table, the tickers not valued and the caveats")
    note: str
    as_of: str


class TickerMatch(BaseModel):
    """One search hit."""

    ticker: str
    name: str
    exchange: str | None = None
    matched_on: Literal["ticker", "name", "fuzzy"]


class TickerSearch(BaseModel):
    """search_ticker result."""

    query: str
    matches: list[TickerMatch]
    source: str
    as_of: str = Field(description="Date of the ticker list searched (YYYY-MM-DD)")
