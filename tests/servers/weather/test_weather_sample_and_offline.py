"""What a newcomer meets with the weather server: it says when it runs on sample data, an unreachable
source points at the offline provider, and a subscription to a place that does not exist stops polling."""

from __future__ import annotations

import logging

import httpx
import pytest

from mcp_kit.testing import connect
from servers.weather.live_provider import LiveProvider
from servers.weather.sample_provider import SampleProvider
from servers.weather.server import build_server
from tests.helpers.live_http import until


class CountingResolves(SampleProvider):
    """Counts place lookups, to see when the watcher polls."""

    def __init__(self) -> None:
        super().__init__()
        self.resolves = 0

    async def resolve(self, query: str):  # type: ignore[no-untyped-def]
        self.resolves += 1
        return await super().resolve(query)


@pytest.mark.anyio
async def test_title_and_instructions_say_sample_data_only_with_the_sample_provider() -> None:
    async with connect(build_server(SampleProvider())) as client:
        sample = client.initialize_result
    async with connect(build_server(LiveProvider())) as client:
        live = client.initialize_result
    assert sample["serverInfo"]["title"] == "Weather (sample data)"
    assert sample["instructions"].startswith("SAMPLE DATA:")
    assert live["serverInfo"]["title"] == "Weather (Open-Meteo, NWS alerts)"
    assert "SAMPLE" not in live["instructions"]


@pytest.mark.anyio
async def test_an_unreachable_source_points_at_the_offline_provider() -> None:
    def offline(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno -3] Temporary failure in name resolution", request=request)

    app = build_server(LiveProvider(transport=httpx.MockTransport(offline), retries=1, backoff=0))
    async with connect(app) as client:
        result = await client.call_tool("get_weather", {"city": "Paris"})
    text = result["content"][0]["text"]
    assert result["isError"] is True and "could not be reached" in text
    assert text.endswith("If this machine is offline, the server can run on generated sample data instead: "
                         "start it with --provider sample (or WEATHER_PROVIDER=sample).")


@pytest.mark.anyio
async def test_watcher_stops_for_an_unknown_city(caplog: pytest.LogCaptureFixture) -> None:
    provider = CountingResolves()
    app = build_server(provider, poll_interval=0.02)
    uri = "weather://current/Atlantis"
    with caplog.at_level(logging.WARNING, logger="servers.weather.resources"):
        async with connect(app) as client:
            await client.subscribe(uri)
            await until(lambda: provider.resolves > 0 and not app.hub.watching(uri), "the watcher to give up")
            assert provider.resolves == 1  # its task has ended: it looked once and will not look again
    stopped = [r.getMessage() for r in caplog.records if "Atlantis" in r.getMessage()]
    assert len(stopped) == 1 and stopped[0].startswith("stopped watching weather://current/Atlantis: No place")
