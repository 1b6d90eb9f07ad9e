"""Pure helpers of the stock server: matching, ranges, P/E rows, error texts, the TTL cache."""

from __future__ import annotations

from datetime import date

import pytest

from servers._shared.cache import TTLCache
from servers.stock.errors import NoData, RateLimited, SourceRejected, SourceTimeout, SourceUnavailable
from servers.stock.explain import failure_text
from servers.stock.matching import (
    complete_tickers,
    describe_suggestions,
    normalize_ticker,
    search_companies,
    suggest_companies,
)
from servers.stock.models import Company, EarningsFigure, Quote
from servers.stock.ranges import MAX_BARS, RangeError, limit_bars, resolve_range
from servers.stock.valuation import valuation_row

COMPANIES = [
    Company(ticker="AAPL", name="Apple Inc."),
    Company(ticker="MSFT", name="Microsoft Corporation"),
    Company(ticker="MS", name="Morgan Stanley"),
    Company(ticker="MSCI", name="MSCI Inc."),
    Company(ticker="AMAT", name="Applied Materials, Inc."),
    Company(ticker="BRK-B", name="Berkshire Hathaway Inc."),
]
TODAY = date(2025, 7, 7)


def test_normalize_ticker() -> None:
    assert normalize_ticker(" brk.b ") == "BRK-B"


def test_completion_prefers_exact_then_ticker_prefix_then_name() -> None:
    assert complete_tickers("MS", COMPANIES) == ["MS", "MSFT", "MSCI"]
    assert complete_tickers("ms", COMPANIES)[:3] == ["MS", "MSFT", "MSCI"]
    assert complete_tickers("micro", COMPANIES) == ["MSFT"]
    assert complete_tickers("appl", COMPANIES) == ["AAPL", "AMAT"]
    assert complete_tickers("", COMPANIES)[:2] == ["AAPL", "MSFT"]


def test_search_by_name_and_by_partial_ticker() -> None:
    assert [m.ticker for m in search_companies("apple", COMPANIES)] == ["AAPL"]
    assert search_companies("apple", COMPANIES)[0].matched_on == "name"
    assert [m.ticker for m in search_companies("BRK", COMPANIES)] == ["BRK-B"]
    assert search_companies("Microsfot", COMPANIES)[0].matched_on == "fuzzy"
    assert search_companies("qqqqzzz", COMPANIES) == []


def test_suggestions_for_a_misspelt_ticker() -> None:
    suggestions = suggest_companies("AAPLE", COMPANIES)
    assert suggestions[0].ticker == "AAPL"
    assert describe_suggestions(suggestions[:1]) == "AAPL (Apple Inc.)"
    assert describe_suggestions(COMPANIES[:2]) == "AAPL (Apple Inc.) or MSFT (Microsoft Corporation)"


def test_default_range_is_one_month() -> None:
    assert resolve_range(TODAY, None, None, None, "1d") == (date(2025, 6, 7), TODAY)


def test_period_ranges() -> None:
    assert resolve_range(TODAY, None, None, "ytd", "1d") == (date(2025, 1, 1), TODAY)
    assert resolve_range(TODAY, None, None, "5d", "1d") == (date(2025, 7, 1), TODAY)


def test_inverted_range_is_explained() -> None:
    with pytest.raises(RangeError, match="'start' .2025-03-10. is after 'end' .2025-03-01."):
        resolve_range(TODAY, date(2025, 3, 10), date(2025, 3, 1), None, "1d")


def test_future_start_and_period_with_dates_are_rejected() -> None:
    with pytest.raises(RangeError, match="in the future"):
        resolve_range(TODAY, date(2025, 8, 1), None, None, "1d")
    with pytest.raises(RangeError, match="either 'period' or 'start'/'end'"):
        resolve_range(TODAY, date(2025, 6, 1), None, "1mo", "1d")
    with pytest.raises(RangeError, match="'end' needs a 'start'"):
        resolve_range(TODAY, None, date(2025, 6, 1), None, "1d")


def test_end_after_today_is_clipped() -> None:
    assert resolve_range(TODAY, date(2025, 7, 1), date(2025, 12, 31), None, "1d") == (date(2025, 7, 1), TODAY)


def test_intraday_limits() -> None:
    with pytest.raises(RangeError, match="at most 7 days"):
        resolve_range(TODAY, date(2025, 6, 20), date(2025, 7, 1), None, "1m")
    with pytest.raises(RangeError, match="only reaches back 59 days"):
        resolve_range(TODAY, date(2025, 1, 2), date(2025, 1, 3), None, "5m")
    assert resolve_range(TODAY, None, None, "5d", "1m") == (date(2025, 7, 1), TODAY)


def test_limit_bars_keeps_the_newest() -> None:
    bars, note = limit_bars(list(range(MAX_BARS + 5)), "1d")
    assert bars[0] == 5 and len(bars) == MAX_BARS and "newest 1000 of 1005" in (note or "")
    assert limit_bars([1, 2], "1d") == ([1, 2], None)


def quote(price: float = 100.0, currency: str = "USD") -> Quote:
    return Quote(ticker="X", price=price, currency=currency, market_time="t", market_state="REGULAR",
                 source="test", as_of="t")


def eps(value: float) -> EarningsFigure:
    return EarningsFigure(value=value, basis="FY", period_end="2024-12-31", source="test")


def test_pe_is_price_over_eps() -> None:
    row = valuation_row("X", quote(150.0), eps(6.0), [])
    assert row.pe_ratio == 25.0 and row.not_computed == []


def test_pe_not_computed_for_negative_eps_currency_mismatch_or_missing_data() -> None:
    assert "lost money" in valuation_row("X", quote(), eps(-2.0), []).not_computed[0]
    assert "earned nothing" in valuation_row("X", quote(), eps(0.0), []).not_computed[0]
    assert "in EUR" in valuation_row("X", quote(currency="EUR"), eps(2.0), []).not_computed[0]
    row = valuation_row("X", None, eps(2.0), ["price: boom"])
    assert row.pe_ratio is None and row.not_computed[0] == "price: boom" and len(row.not_computed) == 2


def test_failure_texts_say_whether_retrying_helps() -> None:
    assert "retrying in a few seconds may help" in failure_text(SourceTimeout("Yahoo did not answer in time"))
    limited = failure_text(RateLimited("Yahoo is rate limiting", retry_after=30))
    assert limited.startswith("Rate limited:") and "wait 30 seconds" in limited
    assert "wait about a minute" in failure_text(RateLimited("SEC is rate limiting"))
    assert "retrying in a minute may help" in failure_text(SourceUnavailable("Yahoo had a server error"))
    assert "will not help" in failure_text(SourceRejected("SEC refused."))
    assert failure_text(NoData("No price data for X.")) == "No price data for X."


@pytest.mark.anyio
async def test_ttl_cache_expires_and_does_not_cache_failures() -> None:
    now = [0.0]
    cache = TTLCache(clock=lambda: now[0])
    calls = []

    async def load() -> int:
        calls.append(1)
        return len(calls)

    assert await cache.get("k", 10, load) == 1
    assert await cache.get("k", 10, load) == 1
    now[0] = 11
    assert await cache.get("k", 10, load) == 2

    async def fail() -> int:
        raise SourceTimeout("slow")

    with pytest.raises(SourceTimeout):
        await cache.get("other", 10, fail)
    assert await cache.get("other", 10, load) == 3


def test_command_line_provider_and_poll_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    from servers.stock.__main__ import parse_args

    monkeypatch.setenv("STOCK_PROVIDER", "sample")
    monkeypatch.setenv("STOCK_POLL_INTERVAL", "2.5")
    args = parse_args([])
    assert (args.provider, args.poll_interval, args.transport) == ("sample", 2.5, "stdio")
    assert parse_args(["--provider", "live", "--poll-interval", "0.2"]).poll_interval == 0.2
    with pytest.raises(SystemExit):
        parse_args(["--poll-interval", "0"])


def test_make_provider_kinds() -> None:
    from servers.stock.providers import LiveProvider, SampleProvider, StockProvider, make_provider

    sample = make_provider("sample")
    assert isinstance(sample, SampleProvider) and isinstance(sample, StockProvider) and sample.is_sample
    assert isinstance(make_provider("live"), LiveProvider)
    with pytest.raises(ValueError, match="expected 'live' or 'sample'"):
        make_provider("bloomberg")


@pytest.mark.anyio
async def test_compare_fetches_tickers_concurrently() -> None:
    import anyio

    from servers.stock.sample_provider import SampleProvider
    from servers.stock.valuation import compare
    from tests.helpers.support import Meeting

    meeting = Meeting(6)  # every fetch waits until all six are in flight: fetches in series never finish

    class MeetingProvider(SampleProvider):
        async def get_quote(self, ticker: str):  # type: ignore[no-untyped-def]
            await meeting.attend()
            return await super().get_quote(ticker)

        async def get_trailing_eps(self, ticker: str):  # type: ignore[no-untyped-def]
            await meeting.attend()
            return await super().get_trailing_eps(ticker)

    with anyio.fail_after(15):
        result = await compare(MeetingProvider(), ["AAPL", "MSFT", "KO"])
    assert meeting.arrived == 6
    assert all(row.pe_ratio for row in result.results)
