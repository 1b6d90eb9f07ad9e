"""The stock server through mcp_kit.testing.connect: tools, errors, resources, subscriptions,
prompts and completion, on the sample provider and on stub/mocked providers."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcp_kit import MCPError
from mcp_kit.testing import connect
from servers.stock.errors import RateLimited, SourceTimeout
from servers.stock.live_provider import LiveProvider
from servers.stock.sample_provider import SampleProvider
from servers.stock.server import build_server
from tests.helpers.live_http import until

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "stock"
START = datetime(2025, 7, 7, 15, 0, tzinfo=UTC).timestamp()


class SteppingClock:
    """Advances one second every time it is read, so every quote is a new tick."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        self.now += 1
        return self.now


def sample_server(poll_interval: float = 0.05) -> Any:
    return build_server(SampleProvider(clock=SteppingClock()), poll_interval=poll_interval)


def payload(result: dict[str, Any]) -> Any:
    assert result["isError"] is False, result
    return json.loads(result["content"][0]["text"])


def error_of(result: dict[str, Any]) -> str:
    assert result["isError"] is True, result
    return result["content"][0]["text"]


@pytest.mark.anyio
async def test_instructions_say_sample_data_and_tools_are_described() -> None:
    async with connect(sample_server()) as client:
        assert client.initialize_result["instructions"].startswith("SAMPLE DATA")
        tools = {t["name"]: t for t in await client.list_tools()}
    assert set(tools) == {"get_stock_price", "get_price_history", "get_financial_statement",
                          "compare_valuation", "valuation_report", "search_ticker"}
    assert "not for past prices" in tools["get_stock_price"]["description"]
    history_props = tools["get_price_history"]["inputSchema"]["properties"]
    assert "1wk" in json.dumps(history_props["interval"])
    statement_props = tools["get_financial_statement"]["inputSchema"]["properties"]
    assert "cash_flow" in json.dumps(statement_props["statement_type"])
    assert statement_props["limit"]["maximum"] == 12
    tickers_schema = tools["compare_valuation"]["inputSchema"]["properties"]["tickers"]
    assert (tickers_schema["minItems"], tickers_schema["maxItems"]) == (1, 10)
    assert tools["get_stock_price"]["annotations"]["readOnlyHint"] is True
    assert "outputSchema" in tools["get_stock_price"]


@pytest.mark.anyio
async def test_get_stock_price_returns_structured_quote() -> None:
    async with connect(sample_server()) as client:
        result = await client.call_tool("get_stock_price", {"ticker": "msft"})
    quote = payload(result)
    assert quote["ticker"] == "MSFT" and quote["source"] == "sample" and quote["as_of"]
    assert result["structuredContent"]["ticker"] == "MSFT"


@pytest.mark.anyio
async def test_unknown_ticker_suggests_the_right_one() -> None:
    async with connect(sample_server()) as client:
        result = await client.call_tool("get_stock_price", {"ticker": "AAPLE"})
    assert error_of(result) == "No ticker 'AAPLE'. Did you mean AAPL (Apple Inc.)?"


@pytest.mark.anyio
async def test_bad_arguments_name_the_field() -> None:
    async with connect(sample_server()) as client:
        bad_ticker = error_of(await client.call_tool("get_stock_price", {"ticker": "Apple Inc"}))
        bad_type = error_of(await client.call_tool("get_financial_statement",
                                                   {"ticker": "AAPL", "statement_type": "profit"}))
        too_many = error_of(await client.call_tool("compare_valuation", {"tickers": ["A"] * 11}))
    assert "'ticker'" in bad_ticker and "search_ticker" in bad_ticker
    assert "'statement_type'" in bad_type and "income_statement" in bad_type
    assert "'tickers'" in too_many


@pytest.mark.anyio
async def test_price_history_and_its_range_errors() -> None:
    async with connect(sample_server()) as client:
        history = payload(await client.call_tool("get_price_history",
                                                 {"ticker": "AAPL", "start": "2025-06-02", "end": "2025-06-06"}))
        inverted = error_of(await client.call_tool("get_price_history",
                                                   {"ticker": "AAPL", "start": "2025-06-06", "end": "2025-06-02"}))
        weekend = error_of(await client.call_tool("get_price_history",
                                                  {"ticker": "AAPL", "start": "2025-06-07", "end": "2025-06-08"}))
        both = error_of(await client.call_tool("get_price_history",
                                               {"ticker": "AAPL", "period": "1mo", "start": "2025-06-01"}))
    assert history["bar_count"] == 5 and history["bars"][0]["time"] == "2025-06-02"
    assert inverted.startswith("Invalid range: 'start' (2025-06-06) is after 'end' (2025-06-02)")
    assert weekend.startswith("No price data for AAPL between 2025-06-07 and 2025-06-08")
    assert "either 'period' or 'start'/'end'" in both


@pytest.mark.anyio
async def test_financial_statement_tool() -> None:
    async with connect(sample_server()) as client:
        statement = payload(await client.call_tool("get_financial_statement", {
            "ticker": "GOOGL", "statement_type": "balance_sheet", "period": "quarterly", "limit": 2}))
        fund = error_of(await client.call_tool("get_financial_statement", {"ticker": "SPY"}))
    assert statement["statement_type"] == "balance_sheet" and len(statement["periods"]) == 2
    assert statement["periods"][0]["fiscal_label"] == "Q4 FY2024"
    assert "fund" in fund


@pytest.mark.anyio
async def test_compare_valuation_computes_pe_and_explains_gaps() -> None:
    async with connect(sample_server()) as client:
        result = payload(await client.call_tool("compare_valuation",
                                                {"tickers": ["AAPL", "INTC", "SPY", "AAPLE", "aapl"]}))
    rows = {row["ticker"]: row for row in result["results"]}
    assert list(rows) == ["AAPL", "INTC", "SPY", "AAPLE"]
    apple = rows["AAPL"]
    assert apple["pe_ratio"] == round(apple["price"] / apple["eps_diluted_ttm"], 2)
    assert "lost money" in rows["INTC"]["not_computed"][0]
    assert rows["SPY"]["pe_ratio"] is None and "fund" in rows["SPY"]["not_computed"][0]
    assert rows["AAPLE"]["not_computed"][0] == "ticker: No ticker 'AAPLE'. Did you mean AAPL (Apple Inc.)?"
    assert result["ranking_by_pe"] == ["AAPL"]
    assert "SAMPLE DATA" in result["note"]


@pytest.mark.anyio
async def test_search_ticker() -> None:
    async with connect(sample_server()) as client:
        found = payload(await client.call_tool("search_ticker", {"query": "apple"}))
        nothing = error_of(await client.call_tool("search_ticker", {"query": "zzzqqqxx"}))
    assert found["matches"][0]["ticker"] == "AAPL"
    assert nothing.startswith("No company or ticker matches 'zzzqqqxx'")


@pytest.mark.anyio
async def test_resources_quote_and_ticker_list() -> None:
    async with connect(sample_server()) as client:
        templates = await client.list_resource_templates()
        listed = await client.list_resources()
        quote = json.loads((await client.read_resource("stock://quote/AAPL"))[0]["text"])
        tickers = json.loads((await client.read_resource("stock://tickers"))[0]["text"])
        with pytest.raises(MCPError) as missing:
            await client.read_resource("stock://quote/AAPLE")
    assert [t["uriTemplate"] for t in templates] == ["stock://quote/{ticker}"]
    assert [r["uri"] for r in listed] == ["stock://tickers", "skill://valuation-analysis/SKILL.md"]
    assert quote["ticker"] == "AAPL" and quote["source"] == "sample"
    assert tickers["provider"] == "sample" and tickers["count"] >= 30
    assert missing.value.code == -32002 and "Did you mean AAPL" in missing.value.message


class CountingProvider(SampleProvider):
    """Counts quote fetches, to see when the watcher polls."""

    def __init__(self) -> None:
        super().__init__(clock=SteppingClock())
        self.quote_calls = 0

    async def get_quote(self, ticker: str):  # type: ignore[no-untyped-def]
        self.quote_calls += 1
        return await super().get_quote(ticker)


@pytest.mark.anyio
async def test_subscription_delivers_updates_and_polling_stops_after_unsubscribe() -> None:
    provider = CountingProvider()
    app = build_server(provider, poll_interval=0.02)
    uri = "stock://quote/MSFT"
    async with connect(app) as client:
        assert not app.hub.watching(uri) and provider.quote_calls == 0  # nobody subscribed: no polling
        await client.subscribe(uri)
        note = await client.wait_notification("notifications/resources/updated", timeout=5)
        assert note["params"]["uri"] == uri
        await client.unsubscribe(uri)
        await until(lambda: not app.hub.watching(uri), "the watcher to end")  # its task has ended: no more polls
        calls = provider.quote_calls
        await client.request("ping")
        assert provider.quote_calls == calls


@pytest.mark.anyio
async def test_prompts() -> None:
    async with connect(sample_server()) as client:
        names = [p["name"] for p in await client.list_prompts()]
        compare = await client.get_prompt("compare-valuation", {"tickers": "aapl, msft"})
        analyze = await client.get_prompt("analyze-stock", {"ticker": "nvda"})
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("analyze-stock", {})
    assert set(names) == {"compare-valuation", "analyze-stock"}
    compare_text = compare["messages"][0]["content"]["text"]
    assert "compare_valuation with tickers ['AAPL', 'MSFT']" in compare_text and "SAMPLE DATA" in compare_text
    assert "get_price_history for NVDA" in analyze["messages"][0]["content"]["text"]
    assert missing.value.code == -32602 and "ticker" in missing.value.message


@pytest.mark.anyio
async def test_completion_of_template_and_prompt_arguments() -> None:
    async with connect(sample_server()) as client:
        template = await client.complete({"type": "ref/resource", "uri": "stock://quote/{ticker}"},
                                         {"name": "ticker", "value": "MS"})
        by_name = await client.complete({"type": "ref/prompt", "name": "analyze-stock"},
                                        {"name": "ticker", "value": "micro"})
        listed = await client.complete({"type": "ref/prompt", "name": "compare-valuation"},
                                       {"name": "tickers", "value": "AAPL, MS"})
    assert template["values"][:3] == ["MS", "MSFT", "MSCI"]
    assert by_name["values"][0] == "MSFT"
    assert listed["values"][:2] == ["AAPL, MS", "AAPL, MSFT"]


class FailingProvider(SampleProvider):
    """Quotes fail with a chosen provider error."""

    def __init__(self, error: Exception) -> None:
        super().__init__(clock=SteppingClock())
        self.error = error

    async def get_quote(self, ticker: str):  # type: ignore[no-untyped-def]
        raise self.error


@pytest.mark.anyio
async def test_timeout_and_rate_limit_texts_reach_the_model() -> None:
    timeout_app = build_server(FailingProvider(SourceTimeout("Yahoo Finance chart API did not answer in time")))
    limited_app = build_server(FailingProvider(RateLimited("Yahoo Finance chart API is rate limiting requests",
                                                           retry_after=30)))
    async with connect(timeout_app) as client:
        timeout = error_of(await client.call_tool("get_stock_price", {"ticker": "AAPL"}))
    async with connect(limited_app) as client:
        limited = error_of(await client.call_tool("get_stock_price", {"ticker": "AAPL"}))
    assert timeout.startswith("Timeout: Yahoo Finance chart API did not answer in time")
    assert "retrying in a few seconds may help" in timeout
    assert limited.startswith("Rate limited:") and "wait 30 seconds" in limited


@pytest.mark.anyio
async def test_live_provider_unknown_ticker_suggests_from_sec_list() -> None:
    def route(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/files/company_tickers.json":
            return httpx.Response(200, content=(FIXTURES / "sec_company_tickers_2026-02_first20.json").read_bytes())
        return httpx.Response(404, content=(FIXTURES / "yahoo_chart_error_404_unknown_symbol_SIX.json").read_bytes())

    provider = LiveProvider(httpx.AsyncClient(transport=httpx.MockTransport(route)), sec_user_agent="t t@example.com")
    async with connect(build_server(provider)) as client:
        assert client.initialize_result["instructions"].startswith("Live data")
        text = error_of(await client.call_tool("get_stock_price", {"ticker": "AAPLE"}))
    assert text == "No ticker 'AAPLE'. Did you mean AAPL (Apple Inc.)?"


@pytest.mark.anyio
async def test_watcher_stops_for_an_unknown_ticker() -> None:
    provider = CountingProvider()
    app = build_server(provider, poll_interval=0.02)
    uri = "stock://quote/NOPE"
    async with connect(app) as client:
        await client.subscribe(uri)
        await until(lambda: provider.quote_calls > 0 and not app.hub.watching(uri), "the watcher to give up")
        assert provider.quote_calls == 1  # its task has ended: it looked once and will not look again


@pytest.mark.anyio
async def test_a_failing_source_makes_a_read_fail_as_upstream_unavailable() -> None:
    limited = RateLimited("Yahoo Finance chart API is rate limiting requests", source="Yahoo Finance chart API",
                          retry_after=30)
    async with connect(build_server(FailingProvider(limited))) as client:
        with pytest.raises(MCPError) as failed:
            await client.read_resource("stock://quote/AAPL")
    assert failed.value.code == -31001  # not -32603: the server has no bug, its source is unavailable
    assert failed.value.message.startswith("Rate limited:") and "wait 30 seconds" in failed.value.message
    assert failed.value.data == {"retryable": True, "source": "Yahoo Finance chart API", "retryAfter": 30}
