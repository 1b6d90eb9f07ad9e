"""SampleProvider: bundled data, determinism under an injected clock, ticks, history and statements."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from servers.stock.errors import NoData, UnknownTicker
from servers.stock.sample_provider import DATA_FILE, SampleProvider

MONDAY_NOON = datetime(2025, 7, 7, 12, 0, tzinfo=UTC).timestamp()


class FakeClock:
    def __init__(self, start: float = MONDAY_NOON) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def test_bundled_data_has_at_least_30_complete_companies() -> None:
    document = json.loads(DATA_FILE.read_text())
    assert document["as_of"] == "2025-06-30"
    companies = [c for c in document["companies"] if c["eps_diluted"] is not None]
    assert len(companies) >= 30
    for company in companies:
        assert company["price"] > 0 and company["exchange"] and company["fiscal_year_end"]
        assert company["revenue"] > 0 and company["diluted_shares"] > 0


@pytest.mark.anyio
async def test_quotes_are_deterministic_for_a_given_time() -> None:
    first = await SampleProvider(clock=FakeClock()).get_quote("AAPL")
    second = await SampleProvider(clock=FakeClock()).get_quote("aapl")
    assert first == second
    assert first.source == "sample" and first.market_state == "SIMULATED"
    assert first.as_of == "2025-07-07T12:00:00Z"
    assert first.change == pytest.approx(first.price - first.previous_close, abs=0.011)
    assert first.day_low <= first.price <= first.day_high


@pytest.mark.anyio
async def test_ticks_change_the_price_every_tick_and_replay_identically() -> None:
    clock = FakeClock()
    provider = SampleProvider(clock=clock, tick_seconds=1.0)
    prices = []
    for _ in range(5):
        prices.append((await provider.get_quote("MSFT")).price)
        clock.now += 1
    assert len(set(prices)) > 1
    clock.now = MONDAY_NOON  # going back in time replays the same walk
    assert (await provider.get_quote("MSFT")).price == prices[0]
    same_tick = FakeClock(MONDAY_NOON + 0.5)
    assert (await SampleProvider(clock=same_tick).get_quote("MSFT")).price == prices[0]


@pytest.mark.anyio
async def test_reference_price_is_the_close_on_the_as_of_date() -> None:
    provider = SampleProvider(clock=FakeClock())
    history = await provider.get_history("AAPL", date(2025, 6, 30), date(2025, 6, 30), "1d")
    assert [bar.close for bar in history.bars] == [205.17]


@pytest.mark.anyio
async def test_daily_history_skips_weekends_and_is_deterministic() -> None:
    provider = SampleProvider(clock=FakeClock())
    history = await provider.get_history("NVDA", date(2025, 6, 2), date(2025, 6, 15), "1d")
    assert [b.time for b in history.bars][:6] == ["2025-06-02", "2025-06-03", "2025-06-04", "2025-06-05",
                                                  "2025-06-06", "2025-06-09"]
    assert history.bar_count == 10
    for bar in history.bars:
        assert bar.low <= min(bar.open, bar.close) and bar.high >= max(bar.open, bar.close)
    again = await SampleProvider(clock=FakeClock()).get_history("NVDA", date(2025, 6, 2), date(2025, 6, 15), "1d")
    assert again.bars == history.bars


@pytest.mark.anyio
async def test_weekly_and_monthly_bars_aggregate_daily_ones() -> None:
    provider = SampleProvider(clock=FakeClock())
    daily = await provider.get_history("KO", date(2025, 6, 2), date(2025, 6, 13), "1d")
    weekly = await provider.get_history("KO", date(2025, 6, 2), date(2025, 6, 13), "1wk")
    assert [b.time for b in weekly.bars] == ["2025-06-02", "2025-06-09"]
    assert weekly.bars[0].open == daily.bars[0].open and weekly.bars[0].close == daily.bars[4].close
    assert weekly.bars[0].volume == sum(b.volume for b in daily.bars[:5])
    monthly = await provider.get_history("KO", date(2025, 1, 1), date(2025, 6, 30), "1mo")
    assert [b.time for b in monthly.bars] == [f"2025-0{m}-01" for m in range(1, 7)]


@pytest.mark.anyio
async def test_intraday_bars_cover_the_session_and_stop_at_now() -> None:
    provider = SampleProvider(clock=FakeClock())  # 12:00 UTC = 08:00 in New York: today's session not open
    history = await provider.get_history("AAPL", date(2025, 7, 3), date(2025, 7, 7), "60m")
    days = {b.time[:10] for b in history.bars}
    assert days == {"2025-07-03", "2025-07-04"}  # 4 July is a weekday in the simulation; 7 July not yet open
    assert history.bars[0].time == "2025-07-03T09:30:00-04:00"
    assert len([b for b in history.bars if b.time.startswith("2025-07-03")]) == 7


@pytest.mark.anyio
async def test_range_without_trading_days_is_no_data() -> None:
    provider = SampleProvider(clock=FakeClock())
    with pytest.raises(NoData, match="no trading days"):
        await provider.get_history("AAPL", date(2025, 7, 5), date(2025, 7, 6), "1d")


@pytest.mark.anyio
async def test_unknown_ticker() -> None:
    with pytest.raises(UnknownTicker) as caught:
        await SampleProvider(clock=FakeClock()).get_quote("AAPLE")
    assert caught.value.ticker == "AAPLE"


@pytest.mark.anyio
async def test_latest_annual_statement_uses_the_bundled_figures() -> None:
    provider = SampleProvider(clock=FakeClock())
    statement = await provider.get_statement("AAPL", "income_statement", "annual", 3)
    assert [p.fiscal_label for p in statement.periods] == ["FY2024", "FY2023", "FY2022"]
    latest = {i.name: i.value for i in statement.periods[0].items}
    assert latest["revenue"] == 391_035_000_000 and latest["eps_diluted"] == 6.08
    assert statement.periods[0].end == "2024-09-28" and statement.source == "sample"
    older = {i.name: i.value for i in statement.periods[1].items}
    assert older["revenue"] != latest["revenue"]


@pytest.mark.anyio
async def test_quarterly_flows_add_up_to_the_year() -> None:
    provider = SampleProvider(clock=FakeClock())
    quarters = await provider.get_statement("MSFT", "cash_flow", "quarterly", 4)
    annual = await provider.get_statement("MSFT", "cash_flow", "annual", 1)
    assert [p.fiscal_label for p in quarters.periods] == ["Q4 FY2024", "Q3 FY2024", "Q2 FY2024", "Q1 FY2024"]
    total = sum(next(i.value for i in p.items if i.name == "operating_cash_flow") for p in quarters.periods)
    year = next(i.value for i in annual.periods[0].items if i.name == "operating_cash_flow")
    assert total == pytest.approx(year, rel=1e-6)


@pytest.mark.anyio
async def test_balance_sheet_equity_is_computed() -> None:
    statement = await SampleProvider(clock=FakeClock()).get_statement("MCD", "balance_sheet", "annual", 1)
    items = {i.name: i for i in statement.periods[0].items}
    assert items["stockholders_equity"].value == items["total_assets"].value - items["total_liabilities"].value
    assert items["stockholders_equity"].value < 0 and items["stockholders_equity"].concept == "computed"


@pytest.mark.anyio
async def test_fund_has_no_statements_or_eps() -> None:
    provider = SampleProvider(clock=FakeClock())
    with pytest.raises(NoData, match="fund"):
        await provider.get_statement("SPY", "income_statement", "annual", 1)
    with pytest.raises(NoData, match="fund"):
        await provider.get_trailing_eps("SPY")


@pytest.mark.anyio
async def test_companies_include_the_completion_example() -> None:
    tickers = [c.ticker for c in await SampleProvider(clock=FakeClock()).list_companies()]
    assert {"MS", "MSFT", "MSCI", "AAPL", "BRK-B"} <= set(tickers)
