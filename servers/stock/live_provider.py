"""Live stock provider: quotes and history from the Yahoo Finance chart API, fundamentals from
SEC EDGAR (company tickers -> CIK -> XBRL company facts). Neither needs an API key."""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime
from typing import Any

import anyio
import httpx

from servers._shared.cache import TTLCache
from servers._shared.fetch import FetchFailure, JsonFetcher, JsonResponse
from servers.stock import sec, yahoo
from servers.stock.errors import NoData, SourceRejected, UnknownTicker, from_fetch_failure
from servers.stock.matching import normalize_ticker
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
from servers.stock.ranges import limit_bars

SEC_USER_AGENT_ENV = "STOCK_SEC_USER_AGENT"
DEFAULT_SEC_USER_AGENT = "mcp-kit stock server (set STOCK_SEC_USER_AGENT to 'Your Name you@example.com')"
YAHOO_USER_AGENT = "Mozilla/5.0 (compatible; mcp-kit-stock/1.0)"
HOUR = 3600.0


class LiveProvider:
    """Real market data. Pass `client` (e.g. with an httpx.MockTransport) to control the network."""

    name = "live"
    source = f"{yahoo.SOURCE} + {sec.SOURCE}"
    is_sample = False

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        sec_user_agent: str | None = None,
        timeout: float = 10.0,
        quote_ttl: float = 5.0,
        history_ttl: float = 60.0,
        fundamentals_ttl: float = 6 * HOUR,
        max_attempts: int = 3,
        backoff_base: float = 0.5,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        clock: Callable[[], float] = time.time,
        yahoo_base: str = yahoo.DEFAULT_BASE,
        sec_www_base: str = sec.DEFAULT_WWW,
        sec_data_base: str = sec.DEFAULT_DATA,
    ) -> None:
        self._owns_client = client is None
        self.client = client or httpx.AsyncClient(timeout=httpx.Timeout(timeout), follow_redirects=True)
        self.fetcher = JsonFetcher(self.client, attempts=max_attempts, backoff=backoff_base, sleep=sleep)
        self.cache = TTLCache(clock=clock)
        self.clock = clock
        self.sec_user_agent = sec_user_agent or os.environ.get(SEC_USER_AGENT_ENV) or DEFAULT_SEC_USER_AGENT
        self.quote_ttl, self.history_ttl, self.fundamentals_ttl = quote_ttl, history_ttl, fundamentals_ttl
        self.yahoo_base, self.sec_www_base, self.sec_data_base = yahoo_base, sec_www_base, sec_data_base

    def today(self) -> date:
        return datetime.fromtimestamp(self.clock(), tz=UTC).date()

    async def _get(self, url: str, *, source: str, params: dict[str, str] | None = None,
                   headers: dict[str, str] | None = None) -> JsonResponse:
        try:
            return await self.fetcher.get(url, source=source, params=params, headers=headers)
        except FetchFailure as failure:
            raise from_fetch_failure(failure) from failure.error

    # ---- Yahoo -------------------------------------------------------------------------------
    async def _chart(self, symbol: str, params: dict[str, str]) -> dict[str, Any]:
        response = await self._get(
            yahoo.chart_url(self.yahoo_base, symbol), source=yahoo.SOURCE, params=params,
            headers={"User-Agent": YAHOO_USER_AGENT},
        )
        return yahoo.chart_result(response.status, response.data, symbol)

    async def get_quote(self, ticker: str) -> Quote:
        symbol = normalize_ticker(ticker)

        async def load() -> Quote:
            return yahoo.quote_from_chart(await self._chart(symbol, yahoo.quote_params()), self.clock())

        return await self.cache.get(("quote", symbol), self.quote_ttl, load)

    async def get_history(self, ticker: str, first: date, last: date, interval: Interval) -> PriceHistory:
        symbol = normalize_ticker(ticker)

        async def load() -> PriceHistory:
            result = await self._chart(symbol, yahoo.history_params(first, last, interval))
            bars = yahoo.bars_from_chart(result, interval)
            if not bars:
                raise NoData(
                    f"No price data for {symbol} between {first} and {last} (interval {interval}): the market was "
                    f"closed for the whole range (weekend or holiday) or the range is before the listing. "
                    f"Widen the range.", source=yahoo.SOURCE)
            bars, note = limit_bars(bars, interval)
            return PriceHistory(
                ticker=symbol, currency=yahoo.currency_of(result), interval=interval, start=first.isoformat(),
                end=last.isoformat(), bar_count=len(bars), bars=bars, note=note, source=yahoo.SOURCE,
                as_of=datetime.fromtimestamp(self.clock(), tz=UTC).isoformat().replace("+00:00", "Z"),
            )

        return await self.cache.get(("history", symbol, first, last, interval), self.history_ttl, load)

    # ---- SEC ---------------------------------------------------------------------------------
    async def _sec_json(self, url: str, source: str) -> tuple[int, Any]:
        response = await self._get(url, source=source, headers={"User-Agent": self.sec_user_agent})
        if response.status == 403:
            raise SourceRejected(
                f"{source} refused the request (HTTP 403). SEC requires a User-Agent with contact details: "
                f"set the {SEC_USER_AGENT_ENV} environment variable, e.g. 'Jane Doe jane@example.com'.",
                source=source)
        if response.status >= 400 and response.status != 404:
            raise SourceRejected(f"{source} rejected the request (HTTP {response.status})", source=source)
        return response.status, response.data

    async def _ticker_table(self) -> Any:
        async def load() -> Any:
            status, body = await self._sec_json(sec.tickers_url(self.sec_www_base), sec.TICKERS_SOURCE)
            if status != 200:
                raise SourceRejected(f"{sec.TICKERS_SOURCE} is missing (HTTP {status})", source=sec.TICKERS_SOURCE)
            return body

        return await self.cache.get(("sec-tickers",), self.fundamentals_ttl, load)

    async def list_companies(self) -> list[Company]:
        async def load() -> list[Company]:
            return sec.parse_company_tickers(await self._ticker_table())

        return await self.cache.get(("companies",), self.fundamentals_ttl, load)

    async def _facts(self, ticker: str) -> tuple[str, dict[str, Any]]:
        symbol = normalize_ticker(ticker)
        cik = sec.cik_by_ticker(await self._ticker_table()).get(symbol)
        if cik is None:
            raise UnknownTicker(symbol, source=sec.TICKERS_SOURCE, detail="not in SEC EDGAR's list of company tickers")

        async def load() -> dict[str, Any]:
            status, body = await self._sec_json(sec.companyfacts_url(self.sec_data_base, cik), sec.SOURCE)
            if status == 404 or not isinstance(body, dict):
                raise NoData(f"SEC EDGAR has no XBRL financial data for {symbol} (CIK {cik}).", source=sec.SOURCE)
            return sec.slim_facts(body)

        return symbol, await self.cache.get(("facts", cik), self.fundamentals_ttl, load)

    async def get_statement(
        self, ticker: str, statement_type: StatementType, period: StatementPeriod, limit: int
    ) -> FinancialStatement:
        symbol, facts = await self._facts(ticker)
        periods = sec.statement_periods(facts, statement_type, period, limit)
        if not periods:
            raise NoData(
                f"SEC EDGAR has no US-GAAP {period} {statement_type.replace('_', ' ')} figures for {symbol} "
                f"(funds and foreign filers reporting under IFRS have none).", source=sec.SOURCE)
        note = "Figures as filed with the SEC; each period shows the most recently filed value."
        if period == "quarterly":
            note += " Fourth quarters are not filed separately; see the annual statement."
        return FinancialStatement(
            ticker=symbol, name=facts.get("entityName"), statement_type=statement_type, period=period,
            periods=periods, note=note, source=sec.SOURCE, as_of=max(p.filed or "" for p in periods),
        )

    async def get_trailing_eps(self, ticker: str) -> EarningsFigure:
        symbol, facts = await self._facts(ticker)
        figure = sec.trailing_eps(facts)
        if figure is None:
            raise NoData(f"SEC filings for {symbol} contain no annual diluted EPS (us-gaap:EarningsPerShareDiluted).",
                         source=sec.SOURCE)
        return figure

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.aclose()
