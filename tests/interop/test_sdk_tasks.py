"""Tasks end to end with the official SDK client (`mcp` 2.3.0) against the stock reference server.

Over stdio (a real subprocess) and Streamable HTTP (a real uvicorn), the SDK negotiates
2026-07-28 and, through `tests/helpers/sdk_tasks.py`, declares the tasks extension: a task-augmented
`valuation_report` call answers at once with a task handle; `tasks/get` shows it working with a
status message ("valued n/N: TICKER"); another task is cancelled and reads back `cancelled`; the
first is polled to `completed` and its inlined result is the report. Over HTTP a client that
disconnected comes back on a new connection and polls and fetches its task by id.

The SDK cannot send a 2025-11-25 task-augmented call: it validates every `tools/call` result of
a 2025-11-25 session as a `CallToolResult`, which `{"task": ...}` is not. The 2025-11-25 surface
is tested in-process in tests/tasks/test_methods.py.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.helpers import sdk_tasks as st
from tests.helpers.support import ROOT, http_server

pytestmark = pytest.mark.anyio

ENV = {"STOCK_SAMPLE_LATENCY": "0.05"}  # a slow data source: 50 tickers take about a second
SOME = ["AAPL", "MSFT", "GOOGL", "KO", "PEP", "JPM"]
MANY = ["AAPL", "MSFT", "GOOGL", "AMZN", "META", "NVDA", "KO", "PEP", "JPM", "XOM"] * 5


def stdio_target() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "servers.stock", "--provider", "sample"],
                                 cwd=str(ROOT), env={**os.environ, **ENV})


@pytest.fixture(scope="module")
def stock_url() -> Iterator[str]:
    with http_server(["-m", "servers.stock", "--provider", "sample"], env=ENV) as base:
        yield f"{base}/mcp"


def report_of(task: st.DetailedTask) -> dict[str, Any]:
    assert task.status == "completed", task
    assert task.result is not None and "_meta" not in task.result  # no related-task metadata inlined (SEP-2663)
    return task.result["structuredContent"]  # type: ignore[no-any-return]


async def wait_for_status_message(client: Client, task_id: str) -> st.DetailedTask:
    with anyio.fail_after(20):
        while True:
            task = await st.get(client.session, task_id)
            if task.status_message or task.status in st.TERMINAL:
                return task
            await anyio.sleep(0.02)


async def walk(client: Client) -> None:
    assert client.protocol_version == "2026-07-28"
    session = client.session
    long = await session.call_tool("valuation_report", {"tickers": MANY}, allow_claimed=True)
    short = await session.call_tool("valuation_report", {"tickers": SOME}, allow_claimed=True)
    for handle in (long, short):  # created: answered at once with the handle, durable (tasks/get finds it)
        assert isinstance(handle, st.TaskHandle) and handle.status == "working" and handle.ttl_ms
    seen = await wait_for_status_message(client, long.task_id)
    assert seen.status == "working" and seen.status_message and seen.status_message.startswith("valued ")

    ack = await st.cancel(session, long.task_id)
    assert ack.model_dump(by_alias=True, exclude_none=True) == {"resultType": "complete"}
    cancelled = await st.poll(session, long.task_id)
    assert cancelled.status == "cancelled" and cancelled.result is None

    report = report_of(await st.poll(session, short.task_id))
    assert [row["ticker"] for row in report["results"]] == SOME
    assert "| AAPL | Apple Inc." in report["report_markdown"]

    plain = await client.call_tool("valuation_report", {"tickers": ["KO"]})  # the extension's claim resolves it
    assert json.loads(plain.content[0].text)["results"][0]["ticker"] == "KO"  # type: ignore[union-attr]


async def test_sdk_client_runs_tasks_over_stdio() -> None:
    async with Client(stdio_target(), mode="auto", extensions=[st.TasksExtension()]) as client:
        await walk(client)


async def test_sdk_client_runs_tasks_over_streamable_http(stock_url: str) -> None:
    async with Client(stock_url, mode="auto", extensions=[st.TasksExtension()]) as client:
        await walk(client)


async def test_a_client_that_disconnected_polls_and_fetches_its_task_later(stock_url: str) -> None:
    async with Client(stock_url, mode="auto", extensions=[st.TasksExtension()]) as client:
        handle = await client.session.call_tool("valuation_report", {"tickers": MANY[:20]}, allow_claimed=True)
        assert (await st.get(client.session, handle.task_id)).status == "working"
    # the first connection is gone; the task kept running on the server
    async with Client(stock_url, mode="auto", extensions=[st.TasksExtension()]) as again:
        report = report_of(await st.poll(again.session, handle.task_id))
        assert len(report["results"]) == 10  # 20 tickers, duplicates ignored


async def test_a_client_without_the_extension_gets_a_plain_result(stock_url: str) -> None:
    async with Client(stock_url, mode="auto") as client:
        result = await client.call_tool("valuation_report", {"tickers": ["AAPL", "KO"]})
        assert result.structured_content is not None
        assert [row["ticker"] for row in result.structured_content["results"]] == ["AAPL", "KO"]
