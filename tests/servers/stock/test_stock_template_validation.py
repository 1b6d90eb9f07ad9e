"""Stock: `stock://quote/{ticker}` refuses what `get_stock_price` refuses, before any upstream call.

Before, the template took any string: `%2E%2E%2F...`, 5000-character tickers and backslashes went to Yahoo.
One annotated type (`servers.stock.params.Ticker`) now constrains both.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import anyio
import httpx
import pytest

from mcp_kit import MCPError
from mcp_kit.testing import connect
from servers.stock.live_provider import LiveProvider
from servers.stock.server import build_server

pytestmark = pytest.mark.anyio

REFUSED = {
    "percent-encoded traversal": "stock://quote/%2E%2E%2F%2E%2E%2Fv7%2Ffinance",
    "dot dot": "stock://quote/..",
    "dot dot inside": "stock://quote/A..B",
    "encoded slash": "stock://quote/AAPL%2Fx",
    "backslash": "stock://quote/AA%5CPL",
    "5000 characters": "stock://quote/" + "A" * 5000,
    "percent sign": "stock://quote/AAPL%2525",
}


class Upstream:
    """Records every HTTP request the live provider makes; answers 500."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.seen = anyio.Event()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(str(request.url))
        self.seen.set()
        return httpx.Response(500, content=b"{}")


def live_app(upstream: Upstream, poll_interval: float = 60.0):
    provider = LiveProvider(
        httpx.AsyncClient(transport=httpx.MockTransport(upstream)), sec_user_agent="t t@example.com", max_attempts=1
    )
    return build_server(provider, poll_interval=poll_interval)


@pytest.mark.parametrize("uri", REFUSED.values(), ids=REFUSED.keys())
async def test_quote_template_refuses_bad_tickers_before_any_upstream_call(uri: str) -> None:
    upstream = Upstream()
    async with connect(live_app(upstream)) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
        tool = await client.call_tool("get_stock_price", {"ticker": unquote(uri.removeprefix("stock://quote/"))})
        assert upstream.urls == []
        with pytest.raises(
            MCPError
        ):  # a valid ticker does go upstream (here the source fails): the check can see calls
            await client.read_resource("stock://quote/AAPL")
    assert caught.value.code == -32602
    assert "'ticker'" in caught.value.message and "Ticker symbol as listed" in caught.value.message
    assert tool["isError"] is True and "'ticker'" in tool["content"][0]["text"]
    assert upstream.urls and all("AAPL" in url for url in upstream.urls)


async def test_subscribing_to_a_refused_quote_uri_polls_nothing() -> None:
    upstream = Upstream()
    async with connect(live_app(upstream)) as client:
        for uri in REFUSED.values():
            await subscribe_or_refused(client, uri)
        await client.request("resources/subscribe", {"uri": "stock://quote/MSFT"})
        with anyio.fail_after(5):
            await upstream.seen.wait()  # the valid subscription's watcher polls
    assert upstream.urls and all("MSFT" in url for url in upstream.urls)


async def test_listed_tickers_in_every_form_are_still_accepted() -> None:
    from pydantic import TypeAdapter

    from servers.stock.params import Ticker

    accept = TypeAdapter(Ticker).validate_python
    assert [accept(t) for t in ("AAPL", "brk.b", "BRK-B", "^GSPC", "EURUSD=X", "7203.T")] == [
        "AAPL", "brk.b", "BRK-B", "^GSPC", "EURUSD=X", "7203.T"]


async def subscribe_or_refused(client: Any, uri: str) -> None:
    """Subscribe; a refusal must be -32602 (invalid variable), and an accepted subscription must poll nothing."""
    try:
        await client.request("resources/subscribe", {"uri": uri})
    except MCPError as exc:
        assert exc.code == -32602, exc
