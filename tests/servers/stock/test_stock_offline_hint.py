"""An unreachable stock data source points at the offline sample provider."""

from __future__ import annotations

import httpx
import pytest

from mcp_kit.testing import connect
from servers.stock.live_provider import LiveProvider
from servers.stock.server import build_server

HINT = ("If this machine is offline, the server can run on its bundled sample data instead: start it with "
        "--provider sample (or STOCK_PROVIDER=sample).")


async def no_wait(seconds: float) -> None:
    return None


@pytest.mark.anyio
@pytest.mark.parametrize("failure", [httpx.ConnectError, httpx.ConnectTimeout])
async def test_an_unreachable_source_points_at_the_offline_provider(failure: type[httpx.TransportError]) -> None:
    def offline(request: httpx.Request) -> httpx.Response:
        raise failure("no route to host", request=request)

    provider = LiveProvider(httpx.AsyncClient(transport=httpx.MockTransport(offline)), sec_user_agent="t t@example.com",
                            sleep=no_wait)
    async with connect(build_server(provider)) as client:
        result = await client.call_tool("get_stock_price", {"ticker": "AAPL"})
    text = result["content"][0]["text"]
    assert result["isError"] is True and ("could not be reached" in text or "did not answer in time" in text)
    assert text.endswith(HINT)
