"""LiveProvider against recorded Yahoo Finance and SEC EDGAR bodies, served by httpx.MockTransport."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from pathlib import Path

import httpx
import pytest

from servers.stock.errors import NoData, RateLimited, SourceRejected, SourceTimeout, SourceUnavailable, UnknownTicker
from servers.stock.live_provider import LiveProvider

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "stock"
Handler = Callable[[httpx.Request], httpx.Response]


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def json_response(name: str, status: int = 200) -> httpx.Response:
    return httpx.Response(status, content=fixture_bytes(name), headers={"content-type": "application/json"})


class Recorder:
    """A MockTransport handler that records requests and answers from a routing function."""

    def __init__(self, route: Handler) -> None:
        self.route = route
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.route(request)


def make_provider(route: Handler, **options: object) -> tuple[LiveProvider, Recorder, list[float]]:
    recorder = Recorder(route)
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    options.setdefault("clock", lambda: 1742824400.0)  # 2025-03-24 13:53 UTC, inside AAPL's regular session
    provider = LiveProvider(client, sleep=fake_sleep, sec_user_agent="Test Suite test@example.com", **options)
    return provider, recorder, sleeps


def sec_and_yahoo(request: httpx.Request) -> httpx.Response:
    path = request.url.path
    if path == "/files/company_tickers.json":
        return json_response("sec_company_tickers_2026-02_first20.json")
    if path == "/api/xbrl/companyfacts/CIK0000320193.json":
        return json_response("sec_companyfacts_CIK0000320193_trimmed.json")
    if path == "/v8/finance/chart/AAPL":
        return json_response("yahoo_chart_AAPL_1d_single_day.json")
    if path.startswith("/v8/finance/chart/"):
        return json_response("yahoo_chart_error_404_unknown_symbol_SIX.json", 404)
    return httpx.Response(404, text="not found")


@pytest.mark.anyio
async def test_quote_is_parsed_from_chart_meta() -> None:
    provider, recorder, _ = make_provider(sec_and_yahoo)
    quote = await provider.get_quote("aapl")
    assert quote.ticker == "AAPL" and quote.name == "Apple Inc."
    assert quote.price == 220.003 and quote.currency == "USD"
    assert quote.previous_close == 167.3  # this body has no previousClose, so chartPreviousClose is used
    assert quote.change == pytest.approx(220.003 - 167.3, abs=1e-3)
    assert quote.change_percent == round((220.003 - 167.3) / 167.3 * 100, 2)
    assert (quote.day_high, quote.day_low, quote.volume) == (221.021, 218.58, 5800260)
    assert quote.exchange == "NasdaqGS"
    assert quote.market_state == "REGULAR"
    assert quote.market_time == "2025-03-24T09:51:33-04:00"
    assert quote.as_of == "2025-03-24T13:51:33Z"
    assert quote.source == "Yahoo Finance chart API"
    sent = recorder.requests[0]
    assert sent.url.host == "query2.finance.yahoo.com"
    assert sent.url.params["range"] == "1d" and sent.url.params["interval"] == "1d"


@pytest.mark.anyio
async def test_market_state_closed_outside_trading_periods() -> None:
    provider, _, _ = make_provider(sec_and_yahoo, clock=lambda: 1742900000.0)  # next day, before pre-market
    assert (await provider.get_quote("AAPL")).market_state == "CLOSED"


@pytest.mark.anyio
async def test_quote_is_cached_for_its_ttl() -> None:
    now = [1742824400.0]
    provider, recorder, _ = make_provider(sec_and_yahoo, clock=lambda: now[0], quote_ttl=5.0)
    await provider.get_quote("AAPL")
    await provider.get_quote("AAPL")
    assert len(recorder.requests) == 1
    now[0] += 6
    await provider.get_quote("AAPL")
    assert len(recorder.requests) == 2


@pytest.mark.anyio
async def test_unknown_symbol_404_body_becomes_unknown_ticker() -> None:
    provider, _, sleeps = make_provider(sec_and_yahoo)
    with pytest.raises(UnknownTicker) as caught:
        await provider.get_quote("SIX")
    assert caught.value.ticker == "SIX"
    assert "No data found, symbol may be delisted" in caught.value.detail
    assert sleeps == []  # a 404 is an answer, not a failure to retry


@pytest.mark.anyio
async def test_history_bars_and_period_parameters() -> None:
    def route(request: httpx.Request) -> httpx.Response:
        return json_response("yahoo_chart_AAPL_1d_2020-08-31_to_2020-11-07_trimmed.json")

    provider, recorder, _ = make_provider(route)
    history = await provider.get_history("AAPL", date(2020, 8, 31), date(2020, 11, 6), "1d")
    assert history.bar_count == 5 and len(history.bars) == 5
    first = history.bars[0]
    assert first.time == "2020-08-31"
    assert (first.open, first.close, first.high) == (127.58000183105469, 129.0399932861328, 131)
    assert first.volume == 225702700 and isinstance(first.volume, int)
    assert [b.time for b in history.bars] == ["2020-08-31", "2020-09-01", "2020-09-02", "2020-09-03", "2020-09-04"]
    assert history.currency == "USD" and history.source == "Yahoo Finance chart API"
    params = recorder.requests[0].url.params
    assert params["period1"] == "1598832000"  # 2020-08-31 00:00 UTC
    assert params["period2"] == "1604707200"  # 2020-11-07 00:00 UTC: the end day is inclusive
    assert params["interval"] == "1d"


@pytest.mark.anyio
async def test_history_without_bars_is_an_explicit_no_data() -> None:
    provider, _, _ = make_provider(lambda request: json_response("yahoo_chart_AAPL_1m_weekend_no_bars.json"))
    with pytest.raises(NoData, match="No price data for AAPL between 2025-02-01 and 2025-02-01"):
        await provider.get_history("AAPL", date(2025, 2, 1), date(2025, 2, 1), "1m")


@pytest.mark.anyio
async def test_intraday_bar_times_are_exchange_local() -> None:
    provider, _, _ = make_provider(lambda request: json_response("yahoo_chart_AAPL_1d_single_day.json"))
    history = await provider.get_history("AAPL", date(2022, 2, 22), date(2022, 2, 22), "60m")
    assert history.bars[0].time == "2022-02-22T09:30:00-05:00"


@pytest.mark.anyio
async def test_yahoo_error_body_other_than_not_found_is_rejected_without_retry() -> None:
    body = {"chart": {"result": None, "error": {"code": "Bad Request",
                                                "description": "Invalid input - interval=1m is not supported"}}}
    provider, recorder, _ = make_provider(lambda request: httpx.Response(400, json=body))
    with pytest.raises(SourceRejected, match="Invalid input - interval=1m is not supported"):
        await provider.get_quote("AAPL")
    assert len(recorder.requests) == 1


@pytest.mark.anyio
async def test_timeouts_are_retried_then_reported() -> None:
    def route(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    provider, recorder, sleeps = make_provider(route, max_attempts=3, backoff_base=0.5)
    with pytest.raises(SourceTimeout, match="Yahoo Finance chart API did not answer in time .tried 3 times."):
        await provider.get_quote("AAPL")
    assert len(recorder.requests) == 3
    assert sleeps == [0.5, 1.0]


@pytest.mark.anyio
async def test_429_then_success_backs_off_and_honours_retry_after() -> None:
    answers = [httpx.Response(429, headers={"retry-after": "2"}, text="Too Many Requests"),
               json_response("yahoo_chart_AAPL_1d_single_day.json")]
    provider, recorder, sleeps = make_provider(lambda request: answers.pop(0))
    quote = await provider.get_quote("AAPL")
    assert quote.price == 220.003
    assert len(recorder.requests) == 2
    assert sleeps == [2.0]


@pytest.mark.anyio
async def test_persistent_429_is_rate_limited_with_the_wait() -> None:
    provider, recorder, _ = make_provider(
        lambda request: httpx.Response(429, headers={"retry-after": "120"}, text="Too Many Requests"))
    with pytest.raises(RateLimited) as caught:
        await provider.get_quote("AAPL")
    assert caught.value.retry_after == 120.0
    assert "asked to wait 120 s" in caught.value.message
    assert len(recorder.requests) == 1  # waiting 120 s is longer than the backoff cap: give up at once


@pytest.mark.anyio
async def test_server_errors_become_source_unavailable_after_retries() -> None:
    provider, recorder, sleeps = make_provider(lambda request: httpx.Response(503, text="<html>down</html>"))
    with pytest.raises(SourceUnavailable, match="HTTP 503"):
        await provider.get_quote("AAPL")
    assert len(recorder.requests) == 3 and len(sleeps) == 2


@pytest.mark.anyio
async def test_connection_errors_become_source_unavailable() -> None:
    def route(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    provider, _, _ = make_provider(route, max_attempts=1)
    with pytest.raises(SourceUnavailable, match="could not be reached"):
        await provider.get_quote("AAPL")


@pytest.mark.anyio
async def test_non_json_success_body_is_source_unavailable() -> None:
    provider, _, _ = make_provider(lambda request: httpx.Response(200, text="<html>consent page</html>"))
    with pytest.raises(SourceUnavailable, match="not JSON"):
        await provider.get_quote("AAPL")


@pytest.mark.anyio
async def test_companies_come_from_sec_ticker_list_in_order() -> None:
    provider, recorder, _ = make_provider(sec_and_yahoo)
    companies = await provider.list_companies()
    assert len(companies) == 20
    assert [c.ticker for c in companies[:3]] == ["NVDA", "GOOGL", "AAPL"]
    assert companies[8].ticker == "BRK-B" and companies[8].name == "BERKSHIRE HATHAWAY INC"
    assert recorder.requests[0].headers["user-agent"] == "Test Suite test@example.com"


@pytest.mark.anyio
async def test_sec_user_agent_comes_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STOCK_SEC_USER_AGENT", "Env Person env@example.com")
    provider = LiveProvider(httpx.AsyncClient(transport=httpx.MockTransport(sec_and_yahoo)))
    assert provider.sec_user_agent == "Env Person env@example.com"
    await provider.client.aclose()


@pytest.mark.anyio
async def test_income_statement_from_company_facts() -> None:
    provider, _, _ = make_provider(sec_and_yahoo)
    statement = await provider.get_statement("AAPL", "income_statement", "annual", 2)
    assert statement.name == "Apple Inc." and statement.source == "SEC EDGAR XBRL company facts"
    latest, previous = statement.periods
    assert (latest.fiscal_label, latest.start, latest.end) == ("FY2025", "2024-09-29", "2025-09-27")
    assert (previous.fiscal_label, previous.end) == ("FY2024", "2024-09-28")
    items = {item.name: item for item in latest.items}
    assert items["revenue"].value == 416161000000
    assert items["revenue"].concept == "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax"
    assert items["net_income"].value == 112010000000 and items["net_income"].unit == "USD"
    assert items["eps_diluted"].value == 7.46 and items["eps_diluted"].unit == "USD/share"
    assert items["diluted_shares"].value == 15004697000 and items["diluted_shares"].unit == "shares"
    assert latest.form == "10-K" and latest.filed == "2025-10-31"


@pytest.mark.anyio
async def test_old_revenue_concept_is_used_for_old_years() -> None:
    provider, _, _ = make_provider(sec_and_yahoo)
    statement = await provider.get_statement("AAPL", "income_statement", "annual", 12)
    fy2018 = next(p for p in statement.periods if p.end == "2018-09-29")
    revenue = next(i for i in fy2018.items if i.name == "revenue")
    assert revenue.value == 265595000000 and revenue.concept == "us-gaap:Revenues"


@pytest.mark.anyio
async def test_quarterly_statement_labels_and_discrete_quarters() -> None:
    provider, _, _ = make_provider(sec_and_yahoo)
    statement = await provider.get_statement("AAPL", "income_statement", "quarterly", 3)
    assert [(p.fiscal_label, p.end) for p in statement.periods] == [
        ("Q1 FY2026", "2025-12-27"), ("Q3 FY2025", "2025-06-28"), ("Q2 FY2025", "2025-03-29")]
    q1 = {i.name: i.value for i in statement.periods[0].items}
    assert q1["eps_diluted"] == 2.84 and q1["net_income"] == 42097000000
    assert "Fourth quarters are not filed separately" in (statement.note or "")


@pytest.mark.anyio
async def test_statement_without_facts_is_no_data() -> None:
    provider, _, _ = make_provider(sec_and_yahoo)
    with pytest.raises(NoData, match="balance sheet"):
        await provider.get_statement("AAPL", "balance_sheet", "annual", 4)  # the trimmed body has no balance items


@pytest.mark.anyio
async def test_trailing_eps_adds_year_to_date_since_fiscal_year() -> None:
    provider, _, _ = make_provider(sec_and_yahoo)
    eps = await provider.get_trailing_eps("AAPL")
    assert eps.value == pytest.approx(7.46 + 2.84 - 2.40)
    assert eps.period_end == "2025-12-27"
    assert eps.basis.startswith("FY2025 (ended 2025-09-27)")


@pytest.mark.anyio
async def test_fundamentals_for_ticker_missing_from_sec_list() -> None:
    provider, _, _ = make_provider(sec_and_yahoo)
    with pytest.raises(UnknownTicker):
        await provider.get_trailing_eps("ZZZZ")


@pytest.mark.anyio
async def test_company_without_xbrl_facts_is_no_data() -> None:
    provider, _, _ = make_provider(sec_and_yahoo)
    with pytest.raises(NoData, match="no XBRL financial data for MSFT"):
        await provider.get_statement("MSFT", "income_statement", "annual", 2)


@pytest.mark.anyio
async def test_sec_403_explains_the_user_agent_setting() -> None:
    provider, _, _ = make_provider(lambda request: httpx.Response(403, text="Request Rate Threshold Exceeded"))
    with pytest.raises(SourceRejected, match="STOCK_SEC_USER_AGENT"):
        await provider.list_companies()


@pytest.mark.anyio
async def test_company_facts_are_fetched_once_for_concurrent_callers() -> None:
    import anyio

    provider, recorder, _ = make_provider(sec_and_yahoo)
    async with anyio.create_task_group() as group:
        for _ in range(5):
            group.start_soon(provider.get_trailing_eps, "AAPL")
    paths = [r.url.path for r in recorder.requests]
    assert paths.count("/files/company_tickers.json") == 1
    assert paths.count("/api/xbrl/companyfacts/CIK0000320193.json") == 1



def test_older_ticker_list_parses_in_its_own_order() -> None:
    from servers.stock import sec

    body = json.loads(fixture_bytes("sec_company_tickers_2024-05_first20.json"))
    companies = sec.parse_company_tickers(body)
    assert [c.ticker for c in companies[:2]] == ["MSFT", "AAPL"]
    assert sec.cik_by_ticker(body)["AAPL"] == 320193
