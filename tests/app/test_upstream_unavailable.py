"""`UpstreamUnavailable`: a data source behind the server failed. A read or prompt fails with -31001 and data
saying which source and whether retrying may help (in both eras); a tool gets an `isError` result instead.
`poll_for_changes`: a watcher body that polls, notifies on change, rides out failures and stops on request."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_kit import MCPError, MCPServer, UpstreamUnavailable, poll_for_changes
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def flaky_app() -> MCPServer:
    app = MCPServer("upstream")

    @app.resource("quote://{ticker}")
    def quote(ticker: str) -> str:
        raise UpstreamUnavailable("The exchange feed is down; try again in a minute.", source="exchange",
                                  retry_after=60)

    @app.tool
    def price(ticker: str) -> str:
        """The last price."""
        raise UpstreamUnavailable("The exchange feed is down; try again in a minute.", source="exchange")

    return app


async def test_a_read_fails_with_the_upstream_code_and_what_to_do() -> None:
    async with connect(flaky_app()) as client:
        with pytest.raises(MCPError) as failed:
            await client.read_resource("quote://ACME")
    assert failed.value.code == -31001 and "try again in a minute" in failed.value.message
    assert failed.value.data == {"retryable": True, "source": "exchange", "retryAfter": 60}


async def test_the_stateless_era_gets_the_same_error() -> None:
    async with connect(flaky_app(), initialize=False) as client:
        with pytest.raises(MCPError) as failed:
            await client.request("resources/read", {"_meta": META, "uri": "quote://ACME"})
    assert failed.value.code == -31001 and failed.value.data["source"] == "exchange"


async def test_a_tool_gets_an_error_result_the_model_can_read() -> None:
    async with connect(flaky_app()) as client:
        result = await client.call_tool("price", {"ticker": "ACME"})
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "The exchange feed is down; try again in a minute."}]


class Gone(Exception):
    pass


async def test_poll_for_changes_notifies_on_change_rides_out_failures_and_stops_on_request() -> None:
    answers: list[Any] = [1, 1, RuntimeError("flaky"), 2, 2, Gone("no such thing")]
    changes: list[int] = []
    fetched = anyio.Event()

    async def fetch() -> int:
        answer = answers.pop(0)
        if not answers:
            fetched.set()
        if isinstance(answer, Exception):
            raise answer
        return answer

    with anyio.fail_after(5):
        await poll_for_changes(fetch, lambda: changes.append(1), every=0, stop_on=(Gone,), what="thing")
    assert fetched.is_set() and not answers  # it ended by itself, on Gone, after every answer
    assert changes == [1]  # 1 -> 1 (baseline, same), failure, 1 -> 2 (change), 2 -> 2
