"""The official SDK 2.3 server as an HTTP upstream of `mcp-kit proxy`, stateful and stateless, driven through the
proxy (over stdio and Streamable HTTP) by the official SDK client in both modes; and an upstream that goes away
and comes back is reconnected."""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
import uvicorn
from mcp import Client, StdioServerParameters

from mcp_kit import proxy
from mcp_kit.testing import connect
from tests.helpers.sdk_upstream import sdk, serve_http, wait_until_serving
from tests.helpers.support import ROOT, http_server

pytestmark = pytest.mark.anyio
MODERN = "2026-07-28"


@pytest.fixture(scope="module", params=["stateful", "stateless"])
def sdk_url(request: pytest.FixtureRequest) -> Iterator[str]:
    with serve_http(stateless_http=request.param == "stateless") as url:  # SSE replies: progress can travel
        yield url


@pytest.fixture(scope="module")
def proxy_over_http(sdk_url: str) -> Iterator[str]:
    with http_server(["-m", "mcp_kit", "proxy", sdk_url]) as base:
        yield f"{base}/mcp"


async def elicit(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Grace"})


@contextlib.asynccontextmanager
async def sdk_client(target: Any, mode: str) -> AsyncIterator[Client]:
    with anyio.fail_after(60):
        async with Client(target, mode=mode, elicitation_callback=elicit) as client:
            assert (client.protocol_version == MODERN) is (mode == "auto")
            yield client


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.mark.parametrize("downstream", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_server_behind_the_proxy(sdk_url: str, downstream: str, mode: str,
                                               request: pytest.FixtureRequest) -> None:
    target: Any = (StdioServerParameters(command=sys.executable, args=["-m", "mcp_kit", "proxy", sdk_url],
                                         cwd=str(ROOT), env={"PYTHONPATH": str(ROOT)})
                   if downstream == "stdio" else request.getfixturevalue("proxy_over_http"))
    async with sdk_client(target, mode) as client:
        assert {"add", "count", "ask_name"} <= {tool.name for tool in (await client.list_tools()).tools}
        assert text(await client.call_tool("add", {"a": 20, "b": 22})) == "42"
        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        assert text(await client.call_tool("count", {"n": 3}, progress_callback=on_progress)) == "counted 3"
        assert progress == [1, 2, 3]
        stateless_upstream = "stateless" in request.node.callspec.id
        if stateless_upstream and mode == "legacy":  # a stateless SDK server cannot ask in the handshake era
            with pytest.raises(Exception, match="back-channel"):
                await client.call_tool("ask_name", {})
        else:
            assert text(await client.call_tool("ask_name", {})) == "hello Grace"
        prompt = await client.get_prompt("greet", {"who": "Lin"})
        assert "Lin" in prompt.messages[0].content.text  # type: ignore[union-attr]
        read = await client.read_resource("sdk://motd")
        assert read.contents[0].text == "the sdk says hi"  # type: ignore[union-attr]


async def test_an_http_upstream_that_goes_away_is_reconnected() -> None:
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"

    @contextlib.asynccontextmanager
    async def upstream_on(listener: socket.socket) -> AsyncIterator[None]:
        """The SDK server on `listener`; started and stopped off the event loop (the proxy runs on it)."""
        config = uvicorn.Config(sdk.streamable_http_app(), lifespan="on", log_level="warning",
                                timeout_graceful_shutdown=1)
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
        thread.start()
        await anyio.to_thread.run_sync(wait_until_serving, url)
        try:
            yield
        finally:
            server.should_exit = True
            await anyio.to_thread.run_sync(thread.join, 20)
            listener.close()

    app = proxy(url, connect_timeout=10)
    async with connect(app) as client:
        async with upstream_on(sock):
            assert (await client.call_tool("add", {"a": 1, "b": 1}))["content"][0]["text"] == "2"
        down = await client.call_tool("add", {"a": 1, "b": 2})  # the upstream is gone: answered, not hanging
        assert down["isError"] is True and "server behind this proxy" in down["content"][0]["text"]
        again = socket.create_server(("127.0.0.1", port))
        async with upstream_on(again):
            with anyio.fail_after(30):
                back = await client.call_tool("add", {"a": 2, "b": 2})  # reconnected (a new upstream session)
            assert back["content"][0]["text"] == "4"
