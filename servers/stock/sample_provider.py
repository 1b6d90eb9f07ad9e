"""Offline, deterministic stock provider backed by the bundled data/companies.json."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio

from servers.stock.errors import NoData, UnknownTicker
from servers.stock.matching import normalize_ticker
from servers.stock.models import (
    Company,
    EarningsFigure,
    FinancialStatement,
    Interval,
    PriceBar,
    PriceHistory,
    Quote,
    StatementPeriod,
    StatementType,
)
from servers.stock.ranges import limit_bars
from servers.stock.sample_prices import NEW_YORK, DailySeries, TickWalk, business_days, previous_business_day
from servers.stock.sample_statements import statement_periods

DATA_FILE = Path(__file__).parent / "data" / "companies.json"
SOURCE = "sample"
SAMPLE_YEARS = 10
INTRADAY_MINUTES = {"1m": 1, "5m": 5, "15m": 15, "30m": 30, "60m": 60}
SESSION_OPEN_MINUTE, SESSION_MINUTES = 9 * 60 + 30, 390


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


class SampleProvider:
    """Embedded sample data: reference prices and fiscal-year figures as of a stated date,
    plus simulated ticks. `clock` returns epoch seconds (inject a fake one in tests); `latency` seconds are
    waited per quote and per EPS lookup, to behave like a slow data source (demos of long-running tools)."""

    name = "sample"
    source = SOURCE
    is_sample = True

    def __init__(
        self, *, clock: Callable[[], float] = time.time, tick_seconds: float = 1.0, data_file: Path = DATA_FILE,
        latency: float = 0.0,
    ) -> None:
        self.latency = latency
        document = json.loads(data_file.read_text(encoding="utf-8"))
        self.clock = clock
        self.as_of = date.fromisoformat(document["as_of"])
        self.currency: str = document["currency"]
        self.description: str = document["description"]
        self._companies: dict[str, dict[str, Any]] = {c["ticker"]: c for c in document["companies"]}
        self._series = {
            ticker: DailySeries(ticker, c["price"], self.as_of, self._base_volume(c))
            for ticker, c in self._companies.items()
        }
        self._ticks = {ticker: TickWalk(series, tick_seconds) for ticker, series in self._series.items()}

    @staticmethod
    def _base_volume(company: dict[str, Any]) -> int:
        shares = company.get("diluted_shares") or 10_000
        return int(shares * 1_000_000 * 0.006)

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), tz=UTC)

    def today(self) -> date:
        return self.now().date()

    def _company(self, ticker: str) -> dict[str, Any]:
        symbol = normalize_ticker(ticker)
        if symbol not in self._companies:
            raise UnknownTicker(symbol, source=SOURCE, detail="not in the bundled sample data")
        return self._companies[symbol]

    async def list_companies(self) -> list[Company]:
        return [Company(ticker=t, name=c["name"], exchange=c["exchange"]) for t, c in self._companies.items()]

    async def get_quote(self, ticker: str) -> Quote:
        if self.latency > 0:
            await anyio.sleep(self.latency)
        company = self._company(ticker)
        symbol = company["ticker"]
        now = self.now()
        price, high, low, tick_time = self._ticks[symbol].at(now)
        previous_close = self._series[symbol].close(previous_business_day(now.date()))
        change = price - previous_close
        fraction_of_day = (now - now.replace(hour=0, minute=0, second=0, microsecond=0)).total_seconds() / 86400
        return Quote(
            ticker=symbol,
            name=company["name"],
            price=round(price, 2),
            currency=self.currency,
            change=round(change, 2),
            change_percent=round(change / previous_close * 100, 2),
            previous_close=previous_close,
            day_high=round(high, 2),
            day_low=round(low, 2),
            volume=int(self._series[symbol].base_volume * fraction_of_day),
            market_time=tick_time.astimezone(NEW_YORK).isoformat(),
            market_state="SIMULATED",
            exchange=company["exchange"],
            source=SOURCE,
            as_of=_iso(tick_time),
        )

    async def get_history(self, ticker: str, first: date, last: date, interval: Interval) -> PriceHistory:
        company = self._company(ticker)
        symbol = company["ticker"]
        earliest = self.as_of - timedelta(days=365 * SAMPLE_YEARS)
        days = business_days(max(first, earliest), min(last, self.today()))
        if interval in INTRADAY_MINUTES:
            bars = [bar for day in days for bar in self._intraday_bars(symbol, day, INTRADAY_MINUTES[interval])]
        else:
            bars = _aggregate([self._daily_bar(symbol, day) for day in days], interval)
        if not bars:
            raise NoData(
                f"No price data for {symbol} between {first.isoformat()} and {last.isoformat()} "
                f"(interval {interval}): the range holds no trading days"
                + (f" inside the sample data, which starts {earliest.isoformat()}" if last < earliest else "")
                + ". Widen the range.",
                source=SOURCE,
            )
        bars, note = limit_bars(bars, interval)
        notes = [n for n in (note, "Simulated sample prices (not market data).") if n]
        if first < earliest:
            notes.append(f"Sample history starts {earliest.isoformat()}.")
        return PriceHistory(
            ticker=symbol, currency=self.currency, interval=interval, start=first.isoformat(), end=last.isoformat(),
            bar_count=len(bars), bars=bars, note=" ".join(notes), source=SOURCE, as_of=_iso(self.now()),
        )

    def _daily_bar(self, symbol: str, day: date) -> PriceBar:
        bar = self._series[symbol].bar(day)
        return PriceBar(time=day.isoformat(), open=bar.open, high=bar.high, low=bar.low, close=bar.close,
                        volume=bar.volume)

    def _intraday_bars(self, symbol: str, day: date, minutes: int) -> list[PriceBar]:
        series = self._series[symbol]
        steps = math.ceil(SESSION_MINUTES / minutes)
        path = series.intraday_path(day, minutes, steps)
        session_open = datetime(day.year, day.month, day.day, tzinfo=NEW_YORK) + timedelta(minutes=SESSION_OPEN_MINUTE)
        now = self.now()
        bars = []
        for i in range(steps):
            bar_start = session_open + timedelta(minutes=i * minutes)
            if bar_start > now:
                break
            open_, close = path[i], path[i + 1]
            bars.append(PriceBar(
                time=bar_start.isoformat(), open=round(open_, 2), high=round(max(open_, close) * 1.0005, 2),
                low=round(min(open_, close) * 0.9995, 2), close=round(close, 2), volume=series.base_volume // steps,
            ))
        return bars

    async def get_statement(
        self, ticker: str, statement_type: StatementType, period: StatementPeriod, limit: int
    ) -> FinancialStatement:
        company = self._company(ticker)
        if company.get("fiscal_year_end") is None:
            raise NoData(f"{company['ticker']} ({company['name']}) is a fund; it has no financial statements.",
                         source=SOURCE)
        return FinancialStatement(
            ticker=company["ticker"], name=company["name"], statement_type=statement_type, period=period,
            periods=statement_periods(company, statement_type, period, limit),
            note="Sample data: the latest fiscal year is approximate and rounded; older years and quarters "
                 "are simulated from it. Not investment data.",
            source=SOURCE, as_of=self.as_of.isoformat(),
        )

    async def get_trailing_eps(self, ticker: str) -> EarningsFigure:
        if self.latency > 0:
            await anyio.sleep(self.latency)
        company = self._company(ticker)
        if company.get("eps_diluted") is None:
            raise NoData(f"{company['ticker']} ({company['name']}) is a fund; it reports no earnings per share.",
                         source=SOURCE)
        return EarningsFigure(
            value=company["eps_diluted"],
            basis=f"FY{company['fiscal_year']} diluted EPS (latest fiscal year in the sample data)",
            period_end=company["fiscal_year_end"], source=SOURCE,
        )

    async def aclose(self) -> None:
        return None


def _aggregate(daily: list[PriceBar], interval: Interval) -> list[PriceBar]:
    """Roll daily bars up into weekly (labelled by Monday) or monthly (labelled by the 1st) bars."""
    if interval == "1d":
        return daily
    groups: dict[str, list[PriceBar]] = {}
    for bar in daily:
        day = date.fromisoformat(bar.time)
        label = day - timedelta(days=day.weekday()) if interval == "1wk" else day.replace(day=1)
        groups.setdefault(label.isoformat(), []).append(bar)
    return [
        PriceBar(
            time=label, open=bars[0].open, close=bars[-1].close,
            high=max(b.high for b in bars if b.high is not None), low=min(b.low for b in bars if b.low is not None),
            volume=sum(b.volume or 0 for b in bars),
        )
        for label, bars in groups.items()
    ]
