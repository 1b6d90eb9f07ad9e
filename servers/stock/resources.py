"""Resources of the stock server: the covered-ticker list, live quotes by URI (with a watcher that
polls only while someone is subscribed), and ticker completion."""

from __future__ import annotations

from typing import Any

from mcp_kit import MCPServer, ResourceNotFound, UpstreamUnavailable, poll_for_changes
from servers.stock.errors import ProviderError, RateLimited, UnknownTicker
from servers.stock.explain import error_text
from servers.stock.matching import complete_tickers
from servers.stock.models import Quote
from servers.stock.params import Ticker
from servers.stock.providers import StockProvider

QUOTE_TEMPLATE = "stock://quote/{ticker}"
TICKERS_URI = "stock://tickers"


def quote_uri(ticker: str) -> str:
    return QUOTE_TEMPLATE.replace("{ticker}", ticker)


def _fingerprint(quote: Quote) -> tuple[Any, ...]:
    return (quote.price, quote.previous_close, quote.day_high, quote.day_low, quote.volume, quote.market_state)


async def _unavailable(provider: StockProvider, error: ProviderError) -> UpstreamUnavailable:
    """A read that failed because the data source did: the text a model can act on, and whether retrying helps."""
    return UpstreamUnavailable(await error_text(provider, error), source=error.source or provider.source,
                               retryable=error.retryable,
                               retry_after=error.retry_after if isinstance(error, RateLimited) else None)


def register_resources(app: MCPServer, provider: StockProvider, poll_interval: float) -> None:
    """Add stock://tickers, the stock://quote/{ticker} template, its watcher and ticker completion."""

    @app.resource(TICKERS_URI, name="tickers", title="Covered tickers", mime_type="application/json")
    async def tickers() -> dict[str, Any]:
        """Every ticker the active data provider covers, with company name (and exchange when known)."""
        try:
            companies = await provider.list_companies()
        except ProviderError as exc:
            raise await _unavailable(provider, exc) from None
        return {
            "provider": provider.name,
            "source": provider.source,
            "as_of": provider.today().isoformat(),
            "count": len(companies),
            "tickers": [c.model_dump(exclude_none=True) for c in companies],
        }

    @app.resource(QUOTE_TEMPLATE, name="quote", title="Latest quote", mime_type="application/json")
    async def quote(ticker: Ticker) -> dict[str, Any]:
        """The latest quote of one ticker as JSON (same fields as get_stock_price). Subscribe to be told when
        it changes; the server polls its data source only while someone is subscribed."""
        try:
            return (await provider.get_quote(ticker)).model_dump()
        except UnknownTicker as exc:
            raise ResourceNotFound(quote_uri(ticker), await error_text(provider, exc)) from None
        except ProviderError as exc:
            raise await _unavailable(provider, exc) from None

    @app.watcher(QUOTE_TEMPLATE)
    async def watch_quote(uri: str, ticker: str) -> None:
        """Poll the quote every `poll_interval` seconds; notify subscribers when it changed."""
        await poll_for_changes(lambda: provider.get_quote(ticker), lambda: app.notify_resource_updated(uri),
                               every=poll_interval, key=_fingerprint, stop_on=(UnknownTicker,), what=uri)

    async def complete_ticker(value: str, context: dict[str, str]) -> list[str]:
        try:
            return complete_tickers(value, await provider.list_companies())
        except ProviderError:
            return []

    async def complete_ticker_list(value: str, context: dict[str, str]) -> list[str]:
        """Complete the last entry of a comma-separated list, keeping the entries before it."""
        head, _, tail = value.rpartition(",")
        prefix = f"{head.strip()}, " if head.strip() else ""
        return [prefix + t for t in await complete_ticker(tail.strip(), context)]

    app.completion(QUOTE_TEMPLATE, "ticker")(complete_ticker)
    app.completion("analyze-stock", "ticker")(complete_ticker)
    app.completion("compare-valuation", "tickers")(complete_ticker_list)
