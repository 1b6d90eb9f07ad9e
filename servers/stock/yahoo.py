"""Yahoo Finance chart API (v8): request parameters and parsing of quotes and OHLCV bars."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from servers.stock.errors import NoData, SourceRejected, SourceUnavailable, UnknownTicker
from servers.stock.models import PriceBar, Quote

SOURCE = "Yahoo Finance chart API"
DEFAULT_BASE = "https://query2.finance.yahoo.com"
DAILY_OR_LONGER = {"1d", "5d", "1wk", "1mo", "3mo"}


def chart_url(base: str, symbol: str) -> str:
    return f"{base}/v8/finance/chart/{symbol}"


def quote_params() -> dict[str, str]:
    return {"range": "1d", "interval": "1d", "includePrePost": "false"}


def history_params(first: date, last: date, interval: str) -> dict[str, str]:
    """period1/period2 in epoch seconds, covering the UTC days first..last inclusive."""
    start = datetime(first.year, first.month, first.day, tzinfo=UTC)
    stop = datetime(last.year, last.month, last.day, tzinfo=UTC) + timedelta(days=1)
    return {
        "period1": str(int(start.timestamp())),
        "period2": str(int(stop.timestamp())),
        "interval": interval,
        "includePrePost": "false",
        "events": "div|split",
    }


def chart_result(status: int, body: Any, symbol: str) -> dict[str, Any]:
    """The single chart result, or the provider exception that the body/status describes."""
    chart = body.get("chart") if isinstance(body, dict) else None
    error = chart.get("error") if isinstance(chart, dict) else None
    if error:
        code, description = error.get("code", ""), error.get("description", "")
        if code == "Not Found" or status == 404:
            raise UnknownTicker(symbol, source=SOURCE, detail=f"{SOURCE}: {description or code}")
        raise SourceRejected(f"{SOURCE} rejected the request: {description or code}", source=SOURCE)
    if status == 404:
        raise UnknownTicker(symbol, source=SOURCE, detail=f"{SOURCE}: HTTP 404")
    if status >= 400:
        raise SourceRejected(f"{SOURCE} rejected the request (HTTP {status})", source=SOURCE)
    results = chart.get("result") if isinstance(chart, dict) else None
    if not results:
        raise SourceUnavailable(f"{SOURCE} answered without a chart result", source=SOURCE)
    return results[0]


def exchange_zone(meta: dict[str, Any]) -> tzinfo:
    try:
        return ZoneInfo(meta["exchangeTimezoneName"])
    except (KeyError, ZoneInfoNotFoundError, ValueError):
        return timezone(timedelta(seconds=meta.get("gmtoffset") or 0))


def _iso_utc(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).isoformat().replace("+00:00", "Z")


def market_state(meta: dict[str, Any], now_epoch: float) -> str:
    """REGULAR / PRE / POST when now falls in that trading period, else CLOSED."""
    periods = meta.get("currentTradingPeriod") or {}
    for name, state in (("regular", "REGULAR"), ("pre", "PRE"), ("post", "POST")):
        period = periods.get(name) or {}
        if period.get("start", 0) <= now_epoch < period.get("end", 0):
            return state
    return "CLOSED"


def quote_from_chart(result: dict[str, Any], now_epoch: float) -> Quote:
    meta = result.get("meta") or {}
    price = meta.get("regularMarketPrice")
    if price is None:
        raise NoData(f"{SOURCE} has no current price for {meta.get('symbol')}", source=SOURCE)
    previous_close = meta.get("previousClose", meta.get("chartPreviousClose"))
    change = price - previous_close if previous_close else None
    market_epoch = meta.get("regularMarketTime") or int(now_epoch)
    return Quote(
        ticker=meta.get("symbol", ""),
        name=meta.get("longName") or meta.get("shortName"),
        price=price,
        currency=meta.get("currency"),
        change=round(change, 4) if change is not None else None,
        change_percent=round(change / previous_close * 100, 2) if change is not None else None,
        previous_close=previous_close,
        day_high=meta.get("regularMarketDayHigh"),
        day_low=meta.get("regularMarketDayLow"),
        volume=meta.get("regularMarketVolume"),
        market_time=datetime.fromtimestamp(market_epoch, tz=exchange_zone(meta)).isoformat(),
        market_state=market_state(meta, now_epoch),
        exchange=meta.get("fullExchangeName") or meta.get("exchangeName"),
        source=SOURCE,
        as_of=_iso_utc(market_epoch),
    )


def _cell(values: list[Any] | None, index: int) -> Any:
    return values[index] if values is not None and index < len(values) else None


def bars_from_chart(result: dict[str, Any], interval: str) -> list[PriceBar]:
    """OHLCV bars; rows where Yahoo sent no prices at all are skipped. Times are exchange-local."""
    timestamps = result.get("timestamp") or []
    quotes = (result.get("indicators") or {}).get("quote") or [{}]
    columns = quotes[0] or {}
    zone = exchange_zone(result.get("meta") or {})
    bars: list[PriceBar] = []
    for index, epoch in enumerate(timestamps):
        row = {key: _cell(columns.get(key), index) for key in ("open", "high", "low", "close", "volume")}
        if all(row[key] is None for key in ("open", "high", "low", "close")):
            continue
        moment = datetime.fromtimestamp(epoch, tz=zone)
        stamp = moment.date().isoformat() if interval in DAILY_OR_LONGER else moment.isoformat()
        volume = row["volume"]
        bars.append(PriceBar(time=stamp, open=row["open"], high=row["high"], low=row["low"], close=row["close"],
                             volume=int(volume) if volume is not None else None))
    return bars


def currency_of(result: dict[str, Any]) -> str | None:
    return (result.get("meta") or {}).get("currency")
