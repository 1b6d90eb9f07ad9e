"""The data-source contract of the stock server and its implementations.

`StockProvider` is what server.py talks to. `SampleProvider` (bundled, offline, deterministic)
and `LiveProvider` (Yahoo Finance + SEC EDGAR) implement it; both raise the exceptions of
servers.stock.errors, never httpx ones.
"""

from __future__ import annotations

import os
from datetime import date
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from servers.stock.models import (
    Company,
    EarningsFigure,
    FinancialStatement,
    Interval,
    PriceHistory,
    Quote,
    StatementPeriod,
    StatementType,
)
from servers.stock.sample_provider import SampleProvider

if TYPE_CHECKING:
    from servers.stock.live_provider import LiveProvider

__all__ = ["StockProvider", "SampleProvider", "LiveProvider", "make_provider"]


@runtime_checkable
class StockProvider(Protocol):
    """A source of quotes, price history and fundamentals."""

    name: str          # "sample" or "live"
    source: str        # human-readable data source(s)
    is_sample: bool    # True when results are not real market data

    def today(self) -> date:
        """The provider's current date (UTC); injectable clocks make tests deterministic."""
        ...

    async def list_companies(self) -> list[Company]:
        """Every ticker the provider covers, most prominent first."""
        ...

    async def get_quote(self, ticker: str) -> Quote: ...

    async def get_history(self, ticker: str, first: date, last: date, interval: Interval) -> PriceHistory:
        """Bars from `first` to `last` inclusive; raises NoData rather than returning no bars."""
        ...

    async def get_statement(
        self, ticker: str, statement_type: StatementType, period: StatementPeriod, limit: int
    ) -> FinancialStatement: ...

    async def get_trailing_eps(self, ticker: str) -> EarningsFigure: ...

    async def aclose(self) -> None: ...


def make_provider(kind: str) -> StockProvider:
    """'sample' or 'live' -> a new provider."""
    if kind == "sample":  # STOCK_SAMPLE_LATENCY: seconds per lookup, to demonstrate long-running tools
        return SampleProvider(latency=float(os.environ.get("STOCK_SAMPLE_LATENCY") or 0))
    if kind == "live":
        from servers.stock.live_provider import LiveProvider

        return LiveProvider()
    raise ValueError(f"unknown provider {kind!r}; expected 'live' or 'sample'")


def __getattr__(name: str) -> Any:
    if name == "LiveProvider":  # imported when first asked for: it brings httpx, which the sample provider never needs
        from servers.stock.live_provider import LiveProvider

        return LiveProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
