"""2026-07-28 over HTTP, rule by rule: what a stateless POST must carry, and the near misses that are refused.

The `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers mirror the body and must agree with it (-32020,
HTTP 400); the `MCP-Protocol-Version` header must agree with `_meta` and be a version we speak (-32022);
only POST with a JSON body, one request per body. Served by a real uvicorn on a socket bound to port 0.
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import httpx
import pytest
import uvicorn
from pydantic import Field

from mcp_kit import Context, MCPServer

pytestmark = pytest.mark.anyio

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def build_app() -> MCPServer:
    app = MCPServer("envelope")

    @app.tool
    def forecast(region: Annotated[str | None, Field(json_schema_extra={"x-mcp-header": "Region"})] = None,
                 days: int = 1) -> str:
        """A forecast; `region` is mirrored into the Mcp-Param-Region header for routing."""
        return f"{region or 'everywhere'} for {days} day(s)"

    @app.tool
    async def chatty(ctx: Context) -> str:
        """Reports progress before answering."""
        await ctx.report_progress(1, 1, "working")
        return "said"

    @app.resource("note://{name}")
    def note(name: str) -> str:
        return f"note {name}"

    @app.prompt
    def greet(name: str) -> str:
        """Say hello."""
        return f"Hello {name}"

    return app


@contextlib.asynccontextmanager
async def serve(app: MCPServer, **options: Any) -> AsyncIterator[str]:
    """Run `app` on uvicorn in this event loop, on a socket already bound to a free port; yield /mcp's URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app.asgi(host="127.0.0.1", port=port, **options), log_level="warning",
                                           lifespan="on"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: server.serve(sockets=[sock]))
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.should_exit = True
    sock.close()


def envelope(method: str, params: dict[str, Any] | None = None, request_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"_meta": META, **(params or {})}}


def headers_for(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {**ACCEPT, "MCP-Protocol-Version": VERSION, "Mcp-Method": method, **extra}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


async def post(client: httpx.AsyncClient, url: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await client.post(url, content=content, headers=headers)


def rejected(reply: httpx.Response, code: int, status: int = 400) -> str:
    """The error message of a refused request, after checking its JSON-RPC code and HTTP status."""
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert error["code"] == code, error
    return str(error["message"])


async def test_method_and_name_headers_must_mirror_the_body_exactly() -> None:
    call = envelope("tools/call", {"name": "forecast", "arguments": {}})
    async with serve(build_app()) as url, httpx.AsyncClient(timeout=10) as client:
        ok = await post(client, url, call, headers_for("tools/call", "forecast"))
        assert ok.status_code == 200 and ok.json()["result"]["content"][0]["text"] == "everywhere for 1 day(s)"
        no_method = {k: v for k, v in headers_for("tools/call", "forecast").items() if k != "Mcp-Method"}
        assert "Mcp-Method header is required" in rejected(await post(client, url, call, no_method), -32020)
        for method in ("tools/list", "tools/cal", "Tools/call", "tools/call/x", ""):
            assert "does not match the body's method" in rejected(
                await post(client, url, call, headers_for(method, "forecast")), -32020), method
        assert "Mcp-Name header is required for tools/call" in rejected(
            await post(client, url, call, headers_for("tools/call")), -32020)
        for name in ("forecas", "forecast2", "Forecast", "chatty"):
            assert "does not match the body's name" in rejected(
                await post(client, url, call, headers_for("tools/call", name)), -32020), name
        read = envelope("resources/read", {"uri": "note://a"})
        assert (await post(client, url, read, headers_for("resources/read", "note://a"))).status_code == 200
        assert "does not match the body's uri" in rejected(
            await post(client, url, read, headers_for("resources/read", "note://b")), -32020)
        prompt = envelope("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
        assert (await post(client, url, prompt, headers_for("prompts/get", "greet"))).status_code == 200
        assert "Mcp-Name header is required for prompts/get" in rejected(
            await post(client, url, prompt, headers_for("prompts/get")), -32020)
        listing = await post(client, url, envelope("tools/list"), headers_for("tools/list"))  # no name needed
        assert listing.status_code == 200 and {t["name"] for t in listing.json()["result"]["tools"]} >= {"forecast"}


async def test_param_headers_mirror_their_arguments_literally_or_in_base64() -> None:
    def call(region: str | None) -> dict[str, Any]:
        arguments = {"days": 2} if region is None else {"region": region, "days": 2}
        return envelope("tools/call", {"name": "forecast", "arguments": arguments})

    def wrapped(text: str) -> str:
        return f"=?base64?{base64.b64encode(text.encode()).decode()}?="

    async with serve(build_app()) as url, httpx.AsyncClient(timeout=10) as client:
        for region, header in (("Oslo", "Oslo"), ("Zürich", wrapped("Zürich")), ("Oslo", wrapped("Oslo"))):
            reply = await post(
                client, url, call(region), headers_for("tools/call", "forecast", **{"Mcp-Param-Region": header})
            )
            assert reply.status_code == 200 and reply.json()["result"]["content"][0]["text"] == f"{region} for 2 day(s)"
        absent = await post(client, url, call(None), headers_for("tools/call", "forecast"))  # no argument, no header
        assert absent.status_code == 200, absent.text
        missing = rejected(await post(client, url, call("Oslo"), headers_for("tools/call", "forecast")), -32020)
        assert "Mcp-Param-Region header is required" in missing and "'region'" in missing
        for header in ("Osl", "oslo", "Oslo2", wrapped("Bergen"), "=?base64?T3Nsbw?=x"):
            assert "does not match argument 'region'" in rejected(await post(
                client, url, call("Oslo"), headers_for("tools/call", "forecast", **{"Mcp-Param-Region": header})),
                -32020), header
        for header in ("=?base64?not base64!?=", "=?base64?" + base64.b64encode(b"\xff\xfe").decode() + "?="):
            assert "malformed base64" in rejected(await post(
                client, url, call("Oslo"), headers_for("tools/call", "forecast", **{"Mcp-Param-Region": header})),
                -32020), header


async def test_the_version_header_must_agree_with_meta_and_be_spoken() -> None:
    async with serve(build_app()) as url, httpx.AsyncClient(timeout=10) as client:
        body = envelope("tools/list")
        other = {**META, "io.modelcontextprotocol/protocolVersion": "2026-07-29"}
        assert "does not match _meta protocolVersion" in rejected(
            await post(client, url, body, headers_for("tools/list", **{"MCP-Protocol-Version": "2026-07-29"})), -32020)
        future = {**body, "params": {"_meta": other}}
        reply = await post(client, url, future, headers_for("tools/list", **{"MCP-Protocol-Version": "2026-07-29"}))
        assert "Unsupported protocol version '2026-07-29'" in rejected(reply, -32022)
        assert reply.json()["error"]["data"] == {"supported": [VERSION], "requested": "2026-07-29"}
        unknown = await post(client, url, envelope("no/such"), headers_for("no/such"))
        assert rejected(unknown, -32601, status=404)


async def test_only_one_json_request_per_post() -> None:
    async with serve(build_app(), max_body=4096) as url, httpx.AsyncClient(timeout=10) as client:
        modern = {"MCP-Protocol-Version": VERSION}
        get = await client.get(url, headers={**ACCEPT, **modern})
        assert get.status_code == 405 and get.headers["allow"] == "POST"
        text = await client.post(url, content=b"{}", headers={**modern, "Content-Type": "text/plain"})
        assert "Content-Type must be application/json" in rejected(text, -32600, status=415)
        assert rejected(await post(client, url, b"{not json", headers_for("ping")), -32700)
        batch = [envelope("ping", request_id=1), envelope("ping", request_id=2)]
        assert "no batches" in rejected(await post(client, url, batch, headers_for("ping")), -32600)
        notification = {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"_meta": META}}
        accepted = await post(client, url, notification, headers_for("notifications/initialized"))
        assert accepted.status_code == 202 and accepted.content == b""

        async def too_long() -> AsyncIterator[bytes]:  # chunked, no Content-Length: stopped while arriving
            yield b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": {"x": "'
            for _ in range(10):
                yield b"y" * 1000

        try:
            big = await client.post(url, content=too_long(), headers=headers_for("ping"))
        except (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError):
            pass  # the server answered 413 and closed before reading the rest: the reset can beat the reply
        else:
            assert "the limit is 4096 bytes" in rejected(big, -32600, status=413)
        assert (await post(client, url, envelope("tools/list"), headers_for("tools/list"))).status_code == 200


async def test_the_answer_is_json_when_it_comes_first_and_a_stream_when_notifications_do() -> None:
    async with serve(build_app()) as url, httpx.AsyncClient(timeout=10) as client:
        plain = await post(client, url, envelope("tools/call", {"name": "forecast", "arguments": {}}),
                           headers_for("tools/call", "forecast"))
        assert plain.headers["content-type"] == "application/json"
        body = envelope("tools/call", {"name": "chatty", "arguments": {}, "_meta": {**META, "progressToken": "t"}})
        streamed = await post(client, url, body, headers_for("tools/call", "chatty"))
        assert streamed.headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line[5:]) for line in streamed.text.splitlines() if line.startswith("data:")]
        assert [e.get("method") for e in events] == ["notifications/progress", None]
        assert events[-1]["id"] == 1 and events[-1]["result"]["content"][0]["text"] == "said"
