"""Deterministic simulated prices for the sample provider.

Daily closes follow a seeded random walk anchored at each company's reference price on the
as-of date (so any day, before or after it, always has the same close). Intraday ticks for the
current UTC day follow a seeded mean-reverting walk around the day's path, advanced one tick
at a time, so a subscriber sees the quote change every tick.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

DAILY_SIGMA = 0.015
TICK_SIGMA = 0.0004
TICK_REVERSION = 0.01

try:
    NEW_YORK = ZoneInfo("America/New_York")
except ZoneInfoNotFoundError:  # pragma: no cover - platforms without tz data
    NEW_YORK = timezone(timedelta(hours=-5), "EST")  # type: ignore[assignment]


def is_business_day(day: date) -> bool:
    return day.weekday() < 5


def business_days(start: date, end: date) -> list[date]:
    """Weekdays from start to end, both inclusive."""
    days: list[date] = []
    day = start
    while day <= end:
        if is_business_day(day):
            days.append(day)
        day += timedelta(days=1)
    return days


def previous_business_day(day: date) -> date:
    day -= timedelta(days=1)
    while not is_business_day(day):
        day -= timedelta(days=1)
    return day


@dataclass
class DailyBar:
    day: date
    open: float
    high: float
    low: float
    close: float
    volume: int


class DailySeries:
    """Closes of one ticker: close(as_of) == reference price, a seeded walk either side."""

    def __init__(self, ticker: str, reference_price: float, as_of: date, base_volume: int) -> None:
        self.ticker = ticker
        self.reference_price = reference_price
        self.as_of = as_of
        self.base_volume = base_volume
        self._log_offsets: dict[date, float] = {as_of: 0.0}

    def _return(self, day: date) -> float:
        return random.Random(f"{self.ticker}|ret|{day.toordinal()}").gauss(0.0003, DAILY_SIGMA)

    def _log_offset(self, day: date) -> float:
        if day in self._log_offsets:
            return self._log_offsets[day]
        if day > self.as_of:
            total, cursor = 0.0, self.as_of
            while cursor < day:
                cursor += timedelta(days=1)
                if is_business_day(cursor):
                    total += self._return(cursor)
                self._log_offsets.setdefault(cursor, total)
        else:
            total, cursor = 0.0, self.as_of
            while cursor > day:
                if is_business_day(cursor):
                    total -= self._return(cursor)
                cursor -= timedelta(days=1)
                self._log_offsets.setdefault(cursor, total)
        return self._log_offsets[day]

    def close(self, day: date) -> float:
        return round(self.reference_price * math.exp(self._log_offset(day)), 2)

    def bar(self, day: date) -> DailyBar:
        prev_close = self.close(previous_business_day(day))
        close = self.close(day)
        rng = random.Random(f"{self.ticker}|bar|{day.toordinal()}")
        open_ = round(prev_close * math.exp(rng.gauss(0, DAILY_SIGMA / 3)), 2)
        high = round(max(open_, close) * (1 + abs(rng.gauss(0, DAILY_SIGMA / 2))), 2)
        low = round(min(open_, close) * (1 - abs(rng.gauss(0, DAILY_SIGMA / 2))), 2)
        volume = int(self.base_volume * rng.uniform(0.7, 1.3))
        return DailyBar(day, open_, high, low, close, volume)

    def intraday_path(self, day: date, minutes: int, steps: int) -> list[float]:
        """Prices at `steps`+1 evenly spaced points of the session, from previous close to close
        (a seeded Brownian bridge)."""
        start = self.close(previous_business_day(day))
        end = self.close(day)
        rng = random.Random(f"{self.ticker}|bridge|{day.toordinal()}|{minutes}")
        walk = [0.0]
        for _ in range(steps):
            walk.append(walk[-1] + rng.gauss(0, DAILY_SIGMA / math.sqrt(steps)))
        drift = math.log(end / start)
        return [start * math.exp(walk[i] - (walk[-1] - drift) * i / steps) for i in range(steps + 1)]


@dataclass
class TickState:
    day: date
    tick: int
    deviation: float
    high: float
    low: float
    rng: random.Random = field(repr=False)


class TickWalk:
    """Intraday ticks for one ticker over the current UTC day, advanced lazily and deterministically."""

    def __init__(self, series: DailySeries, tick_seconds: float) -> None:
        self.series = series
        self.tick_seconds = tick_seconds
        self._state: TickState | None = None

    def ticks_per_day(self) -> int:
        return max(1, int(86400 // self.tick_seconds))

    def _day_path(self, day: date) -> tuple[float, float]:
        """(previous close, log return of the day) that the ticks drift along."""
        prev_close = self.series.close(previous_business_day(day))
        day_return = math.log(self.series.close(day) / prev_close) if is_business_day(day) else 0.0
        return prev_close, day_return

    def at(self, now: datetime) -> tuple[float, float, float, datetime]:
        """(price, day_high, day_low, tick_time) at UTC time `now`."""
        day = now.date()
        midnight = datetime.combine(day, time(), tzinfo=UTC)
        tick = int((now - midnight).total_seconds() // self.tick_seconds)
        prev_close, day_return = self._day_path(day)
        per_tick = day_return / self.ticks_per_day()
        state = self._state
        if state is None or state.day != day or state.tick > tick:
            rng = random.Random(f"{self.series.ticker}|ticks|{day.toordinal()}|{self.tick_seconds}")
            state = TickState(day, 0, 0.0, prev_close, prev_close, rng)
        gauss, deviation, high, low = state.rng.gauss, state.deviation, state.high, state.low
        for step in range(state.tick + 1, tick + 1):
            deviation = deviation * (1 - TICK_REVERSION) + gauss(0, TICK_SIGMA)
            price = prev_close * math.exp(per_tick * step + deviation)
            if price > high:
                high = price
            elif price < low:
                low = price
        state.tick, state.deviation, state.high, state.low = tick, deviation, high, low
        self._state = state
        tick_time = midnight + timedelta(seconds=tick * self.tick_seconds)
        price = prev_close * math.exp(per_tick * min(tick, self.ticks_per_day()) + deviation)
        return price, high, low, tick_time
