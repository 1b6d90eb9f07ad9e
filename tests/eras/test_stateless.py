"""Protocol 2026-07-28 beside the handshake era: the SDK client in auto and legacy modes, raw envelopes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from mcp_kit import Context, MCPServer
from mcp_kit.testing import connect
from tests.helpers.support import ROOT, http_server, stop

pytestmark = pytest.mark.anyio

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def stdio_target(stdio_mode: str = "auto") -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "examples" / "demo_server.py")],
        cwd=str(ROOT),
        env={"MCP_KIT_STDIO_MODE": stdio_mode},
    )


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    with http_server(["examples/demo_server.py"]) as base:
        yield base


async def walk_modern(client: Client) -> None:
    assert client.protocol_version == VERSION
    names = [t.name for t in (await client.list_tools()).tools]
    assert names == ["add", "echo", "slow", "fail", "touch_note"]
    result = await client.call_tool("add", {"a": 4, "b": 5})
    assert result.structured_content == {"total": 9.0, "terms": 2}
    read = await client.read_resource("note://welcome")
    assert read.contents[0].text
    prompt = await client.get_prompt("summarise", {"name": "todo"})
    assert "todo" in prompt.messages[0].content.text
    completion = await client.complete(
        types.ResourceTemplateReference(uri="note://{name}"), {"name": "name", "value": "w"}
    )
    assert completion.completion.values == ["welcome"]
    async with client.listen(resource_subscriptions=["note://todo"]) as subscription:
        await client.call_tool("touch_note", {"name": "todo", "text": "modern"})
        with anyio.fail_after(5):
            event = await subscription.__anext__()
        assert getattr(event, "uri", None) == "note://todo"


@pytest.mark.parametrize("stdio_mode", ["loop", "threads"])
async def test_auto_mode_negotiates_2026_over_stdio(stdio_mode: str) -> None:
    async with Client(stdio_target(stdio_mode), mode="auto") as client:
        await walk_modern(client)


async def test_auto_mode_negotiates_2026_over_http_and_legacy_mode_still_works(demo_url: str) -> None:
    async with Client(f"{demo_url}/mcp", mode="auto") as client:
        await walk_modern(client)
    async with Client(f"{demo_url}/mcp", mode="legacy") as legacy:
        assert legacy.protocol_version == "2025-11-25"
        assert (await legacy.call_tool("echo", {"text": "old"})).content[0].text == "old"


def test_discover_then_initialize_on_one_stdio_connection() -> None:
    process = subprocess.Popen([sys.executable, "examples/demo_server.py"], cwd=ROOT, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert process.stdin is not None and process.stdout is not None

        def call(message: dict[str, Any]) -> dict[str, Any]:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            return json.loads(process.stdout.readline())

        discovered = call({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}})
        assert discovered["result"]["supportedVersions"] == [VERSION]
        assert discovered["result"]["resultType"] == "complete"
        initialized = call({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        assert initialized["result"]["protocolVersion"] == "2025-11-25"
        modern = call({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": META}})
        assert modern["result"]["resultType"] == "complete" and "ttlMs" in modern["result"]
        old = call({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}})
        assert "resultType" not in old["result"] and "ttlMs" not in old["result"]
        bad = call({"jsonrpc": "2.0", "id": 5, "method": "tools/list",
                    "params": {"_meta": {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}}})
        assert bad["error"]["code"] == -32022
        assert bad["error"]["data"] == {"supported": [VERSION], "requested": "2099-01-01"}
    finally:
        stop(process)


def post(url: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": VERSION, "Mcp-Method": body["method"]}
    return httpx.post(url, json=body, headers={**base, **headers}, timeout=10)


def test_http_envelope_errors(demo_url: str) -> None:
    url = f"{demo_url}/mcp"
    ok = post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}})
    assert ok.status_code == 200 and ok.json()["result"]["tools"]
    mismatch = post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META}},
                    **{"Mcp-Method": "prompts/list"})
    assert mismatch.status_code == 400 and mismatch.json()["error"]["code"] == -32020
    wrong_name = post(
        url,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"_meta": META, "name": "echo", "arguments": {"text": "x"}},
        },
        **{"Mcp-Name": "add"},
    )
    assert wrong_name.status_code == 400 and wrong_name.json()["error"]["code"] == -32020
    right_name = post(
        url,
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"_meta": META, "name": "echo", "arguments": {"text": "x"}},
        },
        **{"Mcp-Name": "echo"},
    )
    assert right_name.json()["result"]["content"][0]["text"] == "x"
    unknown = post(url, {"jsonrpc": "2.0", "id": 5, "method": "nope/nope", "params": {"_meta": META}})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == -32601
    removed = post(url, {"jsonrpc": "2.0", "id": 6, "method": "ping", "params": {"_meta": META}})
    assert removed.status_code == 404
    assert httpx.get(url, headers={"MCP-Protocol-Version": VERSION}).status_code == 405
    no_caps = {k: v for k, v in META.items() if not k.endswith("clientCapabilities")}
    invalid = post(url, {"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": no_caps}})
    assert invalid.status_code == 400 and invalid.json()["error"]["code"] == -32602 and invalid.json()["id"] == 7


async def ask_twice_app() -> MCPServer:
    app = MCPServer("mrtr")

    @app.tool
    async def greet(ctx: Context) -> str:
        """Ask the user's name, then greet."""
        answer = await ctx.elicit("Your name?", schema={"type": "object", "properties": {"name": {"type": "string"}}},
                                  key="user_name")
        color = await ctx.elicit(
            "Favourite colour?", schema={"type": "object", "properties": {"c": {"type": "string"}}}, key="color"
        )
        return f"{answer.content['name']} likes {color.content['c']}"

    @app.tool
    async def needs_sampling(ctx: Context) -> str:
        """Needs the sampling capability."""
        return (await ctx.sample("hi")).model
    return app


async def test_multi_round_trip_with_signed_state_and_forgery_rejected() -> None:
    app = await ask_twice_app()
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    async with connect(app, initialize=False) as client:
        first = await client.request("tools/call", {"_meta": meta, "name": "greet", "arguments": {}})
        assert first["resultType"] == "input_required"
        assert list(first["inputRequests"]) == ["user_name"]
        assert first["inputRequests"]["user_name"]["method"] == "elicitation/create"
        second = await client.request(
            "tools/call",
            {
                "_meta": meta,
                "name": "greet",
                "arguments": {},
                "requestState": first["requestState"],
                "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}},
            },
        )
        assert list(second["inputRequests"]) == ["color"] and second["requestState"] != first["requestState"]
        done = await client.request(
            "tools/call",
            {
                "_meta": meta,
                "name": "greet",
                "arguments": {},
                "requestState": second["requestState"],
                "inputResponses": {"color": {"action": "accept", "content": {"c": "red"}}},
            },
        )
        assert done["resultType"] == "complete" and done["content"][0]["text"] == "Ada likes red"
        from mcp_kit import MCPError

        with pytest.raises(MCPError) as forged:
            await client.request(
                "tools/call",
                {
                    "_meta": meta,
                    "name": "greet",
                    "arguments": {},
                    "requestState": second["requestState"] + "x",
                    "inputResponses": {"color": {"action": "accept", "content": {"c": "red"}}},
                },
            )
        assert forged.value.code == -32602
        with pytest.raises(MCPError) as missing:
            await client.request("tools/call", {"_meta": META, "name": "needs_sampling", "arguments": {}})
        assert missing.value.code == -32021 and missing.value.data == {"requiredCapabilities": {"sampling": {}}}


async def test_handshake_era_elicitation_uses_a_real_request() -> None:
    app = await ask_twice_app()
    answers = iter([{"name": "Bo"}, {"c": "blue"}])
    async with connect(app, elicitation=lambda params: {"action": "accept", "content": next(answers)}) as client:
        result = await client.call_tool("greet")
        assert result["content"][0]["text"] == "Bo likes blue"
