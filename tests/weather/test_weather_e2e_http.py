"""End to end over Streamable HTTP: the server subprocess with --transport http and the official SDK client."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

REPO_ROOT = Path(__file__).resolve().parents[2]

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def http_server():
    """The weather server on 127.0.0.1:<free port>; stopped by PID afterwards."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "servers.weather", "--provider", "sample", "--transport", "http",
         "--port", str(port), "--log-level", "warning"],
        cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            assert process.poll() is None, "server exited early"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "server did not become healthy in 20 s"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.mark.anyio
async def test_weather_over_streamable_http(http_server: str) -> None:
    with anyio.fail_after(60):
        async with streamable_http_client(http_server) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                beijing = await session.call_tool("get_weather", {"city": "北京"})
                unknown = await session.call_tool("get_weather", {"city": "Pariss"})
    assert tools == {"get_weather", "get_forecast", "get_alerts", "search_location"}
    assert beijing.structured_content["location"]["name"] == "Beijing"
    assert beijing.structured_content["units"]["temperature"] == "°C"
    assert unknown.is_error and "Did you mean Paris (France)" in unknown.content[0].text
