"""Provider exceptions -> error texts a model can act on (what happened, and whether retrying helps)."""

from __future__ import annotations

import logging

from servers.stock.errors import (
    NoData,
    ProviderError,
    RateLimited,
    SourceRejected,
    SourceTimeout,
    SourceUnavailable,
    UnknownTicker,
)
from servers.stock.matching import describe_suggestions, suggest_companies
from servers.stock.providers import StockProvider

log = logging.getLogger(__name__)


async def unknown_ticker_text(provider: StockProvider, error: UnknownTicker) -> str:
    """"No ticker 'AAPLE'. Did you mean AAPL (Apple Inc.)?" or, without candidates, how to find one."""
    try:
        suggestions = suggest_companies(error.ticker, await provider.list_companies())
    except ProviderError as exc:  # the ticker list itself may be unreachable
        log.info("no suggestions for %s: %s", error.ticker, exc)
        suggestions = []
    if suggestions:
        return f"No ticker '{error.ticker}'. Did you mean {describe_suggestions(suggestions)}?"
    detail = f" ({error.detail})" if error.detail else ""
    return (f"No ticker '{error.ticker}'{detail}. Call search_ticker with the company name to find its symbol"
            + (", or read stock://tickers for the covered list." if provider.is_sample else "."))


def _clause(message: str) -> str:
    return message.rstrip(". ")


OFFLINE_HINT = (" If this machine is offline, the server can run on its bundled sample data instead: start it "
                "with --provider sample (or STOCK_PROVIDER=sample).")


def failure_text(error: ProviderError) -> str:
    """Text for every provider failure except UnknownTicker."""
    if isinstance(error, SourceTimeout):
        return (f"Timeout: {_clause(error.message)}. The data source is slow or unreachable right now; "
                f"retrying in a few seconds may help." + OFFLINE_HINT)
    if isinstance(error, RateLimited):
        wait = f"{error.retry_after:g} seconds" if error.retry_after is not None else "about a minute"
        return (f"Rate limited: {_clause(error.message)}. Retrying immediately will not help; "
                f"wait {wait} before trying again, and request fewer tickers at once.")
    if isinstance(error, SourceUnavailable):
        return (f"Data source unavailable: {_clause(error.message)}. This is usually temporary; "
                f"retrying in a minute may help." + OFFLINE_HINT)
    if isinstance(error, SourceRejected):
        return f"Request rejected: {_clause(error.message)}. Retrying the same request will not help."
    if isinstance(error, NoData):
        return error.message
    return f"{_clause(error.message)}."


async def error_text(provider: StockProvider, error: ProviderError) -> str:
    if isinstance(error, UnknownTicker):
        return await unknown_ticker_text(provider, error)
    return failure_text(error)
