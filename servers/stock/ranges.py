"""Turn a price-history request (start/end or period, interval) into a checked date range.

The limits mirror what the Yahoo Finance chart API accepts, and apply to every provider so a
model sees the same rules whichever data source is active.
"""

from __future__ import annotations

from datetime import date, timedelta

from servers.stock.models import Interval, Period

PERIOD_DAYS: dict[str, int] = {
    "1d": 0, "5d": 6, "1mo": 30, "3mo": 91, "6mo": 182, "1y": 365, "2y": 730, "5y": 1826, "10y": 3652,
}
EARLIEST = date(1970, 1, 2)

# interval -> (how many days back the data reaches, longest span one request may cover)
INTRADAY_LIMITS: dict[str, tuple[int, int]] = {
    "1m": (29, 7),
    "5m": (59, 60),
    "15m": (59, 60),
    "30m": (59, 60),
    "60m": (729, 730),
}
MAX_BARS = 1000


class RangeError(ValueError):
    """The requested range is invalid; the message says what to change."""


def resolve_range(
    today: date, start: date | None, end: date | None, period: Period | None, interval: Interval
) -> tuple[date, date]:
    """(first_day, last_day) inclusive, or RangeError explaining what is wrong."""
    if period is not None and (start is not None or end is not None):
        raise RangeError("Give either 'period' or 'start'/'end', not both.")
    if start is None and end is not None:
        raise RangeError("'end' needs a 'start' date too (or use 'period' for a range ending today).")
    if period is None and start is None:
        period = "1mo"
    if period is not None:
        last = today
        if period == "ytd":
            first = date(today.year, 1, 1)
        elif period == "max":
            first = EARLIEST
        else:
            first = today - timedelta(days=PERIOD_DAYS[period])
    else:
        assert start is not None
        first, last = start, end or today
        if first > today:
            raise RangeError(f"'start' ({first.isoformat()}) is in the future; today is {today.isoformat()}.")
        if first > last:
            raise RangeError(
                f"'start' ({first.isoformat()}) is after 'end' ({last.isoformat()}); swap them or fix one."
            )
        last = min(last, today)
    _check_interval(today, first, last, interval)
    return first, last


def _check_interval(today: date, first: date, last: date, interval: Interval) -> None:
    if interval not in INTRADAY_LIMITS:
        return
    reach, span = INTRADAY_LIMITS[interval]
    oldest = today - timedelta(days=reach)
    if first < oldest:
        raise RangeError(
            f"Interval '{interval}' only reaches back {reach} days (to {oldest.isoformat()}); "
            f"use a later 'start', a shorter 'period', or a coarser interval such as '1d'."
        )
    if (last - first).days + 1 > span:
        raise RangeError(
            f"Interval '{interval}' allows at most {span} days per request; "
            f"narrow the range or use a coarser interval."
        )


def limit_bars(bars: list, interval: str) -> tuple[list, str | None]:
    """Keep the newest MAX_BARS bars; the note says so when bars were dropped."""
    if len(bars) <= MAX_BARS:
        return bars, None
    note = (
        f"Showing the newest {MAX_BARS} of {len(bars)} '{interval}' bars; "
        f"use a coarser interval (e.g. '1wk' or '1mo') or a shorter range to see the whole range."
    )
    return bars[-MAX_BARS:], note
