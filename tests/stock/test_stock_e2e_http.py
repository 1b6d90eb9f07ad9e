"""End to end over Streamable HTTP: `python -m servers.stock --provider sample --transport http`
as a real subprocess (stopped by PID: terminate, wait, kill), driven by the official MCP SDK client."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "servers.stock", "--provider", "sample", "--poll-interval", "0.2",
         "--transport", "http", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        cwd=PROJECT_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):  # up to ~20 s for the server to start listening
            if process.poll() is not None:
                raise AssertionError(f"server exited early: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        else:
            raise AssertionError("server did not start listening")
        yield f"{base}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        if process.stderr:
            process.stderr.close()


def data_of(result: types.CallToolResult) -> Any:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert result.is_error is False, block.text
    return json.loads(block.text)


@pytest.mark.anyio
async def test_stock_server_over_streamable_http(http_server: str) -> None:
    updated = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.set()

    with anyio.fail_after(60):
        async with streamable_http_client(http_server) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                init = await session.initialize()
                assert init.server_info.name == "stock"
                quote = data_of(await session.call_tool("get_stock_price", {"ticker": "MSFT"}))
                assert quote["ticker"] == "MSFT" and quote["source"] == "sample"
                unknown = await session.call_tool("get_stock_price", {"ticker": "MSFTT"})
                assert unknown.is_error is True
                assert isinstance(unknown.content[0], types.TextContent)
                assert unknown.content[0].text.startswith("No ticker 'MSFTT'. Did you mean MSFT (Microsoft")
                valuation = data_of(await session.call_tool("compare_valuation", {"tickers": ["MSFT", "KO"]}))
                assert [row["ticker"] for row in valuation["results"]] == ["MSFT", "KO"]
                contents = (await session.read_resource("stock://quote/KO")).contents
                assert isinstance(contents[0], types.TextResourceContents)
                assert json.loads(contents[0].text)["ticker"] == "KO"
                await session.subscribe_resource("stock://quote/KO")
                with anyio.fail_after(10):
                    await updated.wait()
