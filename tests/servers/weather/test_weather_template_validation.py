"""Weather: the `{city}` and `{date}` template variables are validated like the tools' arguments,
before any call to the geocoder or the forecast source.

Before, `weather://current/{city}` sent a 20 000-character city upstream while the tools capped it at 120.
One annotated type per parameter (`servers.weather.params.City`, `ForecastDate`) now constrains both.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import anyio
import httpx
import pytest

from mcp_kit import MCPError
from mcp_kit.testing import connect
from servers.weather.live_provider import LiveProvider
from servers.weather.server import build_server

pytestmark = pytest.mark.anyio

REFUSED_CITIES = {
    "20000 characters": "x" * 20_000,
    "121 characters": "y" * 121,
    "percent-encoded traversal": "%2E%2E%2F%2E%2E%2Fv1%2Fforecast",
    "encoded slash": "Paris%2FFR",
    "backslash": "Par%5Cis",
    "dot dot": "..",
    "control character": "Par%0Ais",
    "double-encoded percent": "Paris%2525",
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


def live_app(upstream: Upstream):
    return build_server(LiveProvider(transport=httpx.MockTransport(upstream), retries=0, backoff=0), poll_interval=60)


@pytest.mark.parametrize("city", REFUSED_CITIES.values(), ids=REFUSED_CITIES.keys())
async def test_city_template_variable_is_refused_before_any_upstream_call(city: str) -> None:
    upstream = Upstream()
    async with connect(live_app(upstream)) as client:
        errors = []
        for uri in (f"weather://current/{city}", f"weather://forecast/{city}/today"):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            errors.append(caught.value)
        tool = await client.call_tool("get_weather", {"city": unquote(city)})
        assert upstream.urls == []
        with pytest.raises(MCPError):  # a valid city does go upstream (here the source fails): the check can see calls
            await client.read_resource("weather://current/Paris")
    assert all(e.code == -32602 and "'city'" in e.message and "City name in English or Chinese" in e.message
               for e in errors)
    assert tool["isError"] is True and "'city'" in tool["content"][0]["text"]
    assert upstream.urls


@pytest.mark.parametrize("date", ["someday", "..%2F..", "2026-07-1", "tomorrow%2Fx", "9" * 5000])
async def test_date_template_variable_is_refused_before_any_upstream_call(date: str) -> None:
    upstream = Upstream()
    async with connect(live_app(upstream)) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource(f"weather://forecast/Paris/{date}")
    assert caught.value.code == -32602 and "'date'" in caught.value.message and "YYYY-MM-DD" in caught.value.message
    assert upstream.urls == []


async def test_subscribing_to_a_refused_city_polls_nothing() -> None:
    upstream = Upstream()
    async with connect(live_app(upstream)) as client:
        for city in REFUSED_CITIES.values():
            await subscribe_or_refused(client, f"weather://current/{city}")
        await client.request("resources/subscribe", {"uri": "weather://current/Lisbon"})
        with anyio.fail_after(5):
            await upstream.seen.wait()  # the valid subscription's watcher polls
    assert upstream.urls and all("Lisbon" in url for url in upstream.urls)


async def test_real_city_names_are_still_accepted() -> None:
    from pydantic import TypeAdapter

    from servers.weather.params import City

    names = ["Paris", "Paris, FR", "北京", "St. Louis", "Washington D.C.", "San Francisco, CA", "Saint-Étienne"]
    assert [TypeAdapter(City).validate_python(name) for name in names] == names


async def subscribe_or_refused(client: Any, uri: str) -> None:
    """Subscribe; a refusal must be -32602 (invalid variable), and an accepted subscription must poll nothing."""
    try:
        await client.request("resources/subscribe", {"uri": uri})
    except MCPError as exc:
        assert exc.code == -32602, exc
