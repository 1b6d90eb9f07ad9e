"""P/E comparison computed in code: quotes and trailing EPS fetched concurrently per ticker."""

from __future__ import annotations

from datetime import UTC, datetime

import anyio

from servers.stock.errors import ProviderError
from servers.stock.explain import error_text
from servers.stock.matching import normalize_ticker
from servers.stock.models import EarningsFigure, Quote, Valuation, ValuationComparison
from servers.stock.providers import StockProvider

EPS_CURRENCY = "USD"


def valuation_row(
    ticker: str, quote: Quote | None, eps: EarningsFigure | None, problems: list[str]
) -> Valuation:
    """One row; `problems` are what already failed (e.g. 'price: ...'); P/E only when meaningful."""
    row = Valuation(ticker=ticker, not_computed=list(problems))
    if quote is not None:
        row.name, row.price, row.currency = quote.name, quote.price, quote.currency
        row.sources.append(f"price: {quote.source} as of {quote.as_of}")
    if eps is not None:
        row.eps_diluted_ttm, row.eps_basis = eps.value, eps.basis
        row.sources.append(f"EPS: {eps.source}, period ending {eps.period_end}")
    if quote is None or eps is None:
        row.not_computed.append("P/E: needs both a price and a trailing diluted EPS (see above)")
    elif quote.currency and quote.currency != EPS_CURRENCY:
        row.not_computed.append(
            f"P/E: the price is in {quote.currency} but EPS is in {EPS_CURRENCY}; not comparable without conversion")
    elif eps.value <= 0:
        row.not_computed.append(
            f"P/E: not meaningful because trailing diluted EPS is {eps.value:g} (the company "
            f"{'lost money' if eps.value < 0 else 'earned nothing'} over the period)")
    else:
        row.pe_ratio = round(quote.price / eps.value, 2)
    return row


async def _one(provider: StockProvider, ticker: str) -> tuple[Valuation, str | None]:
    quote: Quote | None = None
    eps: EarningsFigure | None = None
    problems: list[str] = []

    async def fetch_quote() -> None:
        nonlocal quote
        try:
            quote = await provider.get_quote(ticker)
        except ProviderError as exc:
            problems.append(f"price: {await error_text(provider, exc)}")

    async def fetch_eps() -> None:
        nonlocal eps
        try:
            eps = await provider.get_trailing_eps(ticker)
        except ProviderError as exc:
            problems.append(f"EPS: {await error_text(provider, exc)}")

    async with anyio.create_task_group() as group:
        group.start_soon(fetch_quote)
        group.start_soon(fetch_eps)
    problems.sort()  # 'EPS: ...' before 'price: ...' whatever finished first
    if len(problems) == 2 and problems[0].partition(": ")[2] == problems[1].partition(": ")[2]:
        problems = [f"ticker: {problems[0].partition(': ')[2]}"]  # e.g. both failed on an unknown ticker
    return valuation_row(ticker, quote, eps, problems), quote.as_of if quote is not None else None


async def compare(provider: StockProvider, tickers: list[str]) -> ValuationComparison:
    """Rows in request order (duplicates dropped); every ticker is fetched concurrently."""
    symbols = list(dict.fromkeys(normalize_ticker(t) for t in tickers))
    rows: dict[str, Valuation] = {}
    times: list[str] = []

    async def run(symbol: str) -> None:
        rows[symbol], as_of = await _one(provider, symbol)
        if as_of:
            times.append(as_of)

    async with anyio.create_task_group() as group:
        for symbol in symbols:
            group.start_soon(run, symbol)
    results = [rows[s] for s in symbols]
    ranked = sorted((r for r in results if r.pe_ratio is not None), key=lambda r: r.pe_ratio or 0.0)
    note = ("P/E = price / trailing diluted EPS, computed by the server. Trailing P/E looks backwards: it ignores "
            "expected growth, one-off gains or charges, and differs structurally between industries, so compare "
            "companies in similar businesses.")
    if provider.is_sample:
        note += " SAMPLE DATA: prices are simulated and EPS approximate; not real market data."
    return ValuationComparison(
        results=results, ranking_by_pe=[r.ticker for r in ranked], note=note,
        as_of=max(times) if times else datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    )
