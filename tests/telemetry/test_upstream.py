"""The reference servers' upstream fetches (`servers/_shared/fetch.py`) continue the trace of the MCP request
they serve; outside a request, or with telemetry off, they send no trace headers."""

from __future__ import annotations

import httpx
import pytest

from mcp_kit import MCPServer, current_trace_headers
from mcp_kit.testing import connect
from servers._shared.fetch import JsonFetcher
from tests.telemetry.support import CLIENT_TRACE, TRACEPARENT, ids, recorded

pytestmark = pytest.mark.anyio


def fetching_app(seen: list[str | None]) -> MCPServer:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("traceparent"))
        return httpx.Response(200, json={"ok": True})

    app = MCPServer("fetching")

    @app.tool
    async def quote() -> str:
        """Fetches upstream."""
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            response = await JsonFetcher(client).get("http://upstream.test/q", source="test")
        return str(response.data)

    return app


async def test_an_upstream_fetch_carries_the_request_span_as_its_parent() -> None:
    seen: list[str | None] = []
    app = fetching_app(seen)
    with recorded(app) as spans:
        async with connect(app) as client:
            await client.request("tools/call", {"name": "quote", "arguments": {},
                                                "_meta": {"traceparent": TRACEPARENT}})
        span = spans.span("tools/call quote")
    assert seen == [f"00-{CLIENT_TRACE}-{ids(span)[1]}-01"]
    assert current_trace_headers() == {}


async def test_without_telemetry_no_trace_header_is_invented() -> None:
    seen: list[str | None] = []
    app = fetching_app(seen)
    async with connect(app) as client:
        await client.call_tool("quote", {})
    assert seen == [None]
