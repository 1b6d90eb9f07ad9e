"""P/E comparison computed in code: quotes and trailing EPS fetched concurrently per ticker."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import anyio

from servers.stock.errors import ProviderError
from servers.stock.explain import error_text
from servers.stock.matching import normalize_ticker
from servers.stock.models import EarningsFigure, Quote, Valuation, ValuationComparison, ValuationReport
from servers.stock.providers import StockProvider

EPS_CURRENCY = "USD"
REPORT_CONCURRENCY = 5  # tickers valued at once by valuation_report (the data sources rate-limit)
Progress = Callable[[int, int, str], Awaitable[None]]  # (done, total, ticker just valued)


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


async def report(provider: StockProvider, tickers: list[str], progress: Progress | None = None) -> ValuationReport:
    """The rows of `compare` for many tickers, at most REPORT_CONCURRENCY at a time, with a Markdown report.

    `progress(done, total, ticker)` is awaited after each ticker.
    """
    symbols = list(dict.fromkeys(normalize_ticker(t) for t in tickers))
    limiter = anyio.CapacityLimiter(REPORT_CONCURRENCY)
    rows: dict[str, Valuation] = {}
    times: list[str] = []

    async def run(symbol: str) -> None:
        async with limiter:
            rows[symbol], as_of = await _one(provider, symbol)
        if as_of:
            times.append(as_of)
        if progress is not None:
            await progress(len(rows), len(symbols), symbol)

    async with anyio.create_task_group() as group:
        for symbol in symbols:
            group.start_soon(run, symbol)
    comparison = ValuationComparison(
        results=[rows[s] for s in symbols],
        ranking_by_pe=[r.ticker for r in sorted((rows[s] for s in symbols if rows[s].pe_ratio is not None),
                                                 key=lambda r: r.pe_ratio or 0.0)],
        note="", as_of=max(times) if times else datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"))
    not_valued = [f"{r.ticker}: {r.not_computed[-1]}" for r in comparison.results if r.pe_ratio is None]
    note = _NOTE + (_SAMPLE_NOTE if provider.is_sample else "")
    return ValuationReport(results=comparison.results, ranking_by_pe=comparison.ranking_by_pe, not_valued=not_valued,
                           report_markdown=_markdown(comparison, not_valued, provider.is_sample), note=note,
                           as_of=comparison.as_of)


_NOTE = ("P/E = price / trailing diluted EPS, computed by the server. Trailing P/E looks backwards: it ignores "
         "expected growth, one-off gains or charges, and differs structurally between industries, so compare "
         "companies in similar businesses.")
_SAMPLE_NOTE = " SAMPLE DATA: prices are simulated and EPS approximate; not real market data."


def _cell(value: object) -> str:
    return "-" if value is None else str(value).replace("|", "\\|").replace("\n", " ")


def _markdown(comparison: ValuationComparison, not_valued: list[str], sample: bool) -> str:
    """The report in the layout of the valuation-analysis skill's comparison-table template."""
    lines = [f"# P/E comparison: {', '.join(r.ticker for r in comparison.results)}", "",
             "| Ticker | Company | Price | EPS (TTM, diluted) | P/E | Notes |", "| --- | --- | --- | --- | --- | --- |"]
    for r in comparison.results:
        price = "-" if r.price is None else f"{r.price:g} {r.currency or ''}".strip()
        eps = "-" if r.eps_diluted_ttm is None else f"{r.eps_diluted_ttm:g} {EPS_CURRENCY} ({r.eps_basis or 'n/a'})"
        notes = "; ".join(r.not_computed) or "-"
        lines.append(f"| {_cell(r.ticker)} | {_cell(r.name)} | {_cell(price)} | {_cell(eps)} | {_cell(r.pe_ratio)} "
                     f"| {_cell(notes)} |")
    lines += ["", f"Ranked by P/E, lowest first: {', '.join(comparison.ranking_by_pe) or 'none'}."]
    if not_valued:
        lines += ["", "Not valued: " + "; ".join(not_valued) + "."]
    lines += [
        "",
        "Caveats: trailing P/E ignores growth and one-off items, and differs between industries; prices are "
        "as of the times shown and earnings as of the last "
        f"filing.{' SAMPLE DATA: simulated figures.' if sample else ''} "
        "This is information, not investment advice.",
    ]
    return "\n".join(lines)
