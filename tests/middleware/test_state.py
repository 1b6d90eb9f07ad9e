"""`ctx.state` (per session; in 2026-07-28 per signed handle the client carries) and `ctx.user_state`
(per OAuth subject): JSON values with a TTL in the backend, bounded with `StateTooLarge`."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_kit import Context, MCPKitError, MCPServer, StateTooLarge
from mcp_kit._app.state import STATE_HANDLE_KEY, StateLimits
from mcp_kit._backends import MemoryBackend
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}


def state_app() -> MCPServer:
    app = MCPServer("state")
    app.state_limits = StateLimits(ttl=10, max_value_bytes=64, max_keys=2)

    @app.tool
    async def remember(ctx: Context, key: str = "note", value: Any = None) -> str:
        before = await ctx.state.get(key)
        if value is None:
            await ctx.state.delete(key)
        else:
            await ctx.state.set(key, value)
        return f"{before}"

    @app.tool
    async def mine(ctx: Context) -> str:
        return str(await ctx.user_state.get("x"))

    return app


async def test_state_is_per_session_deletable_and_expires() -> None:
    app = state_app()
    clock = [0.0]
    app.backend = MemoryBackend()
    app.backend.clock = lambda: clock[0]  # type: ignore[attr-defined]
    async with connect(app) as one, connect(app) as two:
        assert (await one.call_tool("remember", {"value": {"a": [1, 2]}}))["content"][0]["text"] == "None"
        assert (await one.call_tool("remember", {"value": "b"}))["content"][0]["text"] == "{'a': [1, 2]}"
        assert (await two.call_tool("remember", {"value": "c"}))["content"][0]["text"] == "None"  # its own
        assert (await one.call_tool("remember"))["content"][0]["text"] == "b"  # read, then deleted
        assert (await one.call_tool("remember", {"value": "d"}))["content"][0]["text"] == "None"
        clock[0] += 10
        assert (await one.call_tool("remember", {"value": "e"}))["content"][0]["text"] == "None"  # expired


async def test_state_over_its_bounds_is_state_too_large() -> None:
    assert issubclass(StateTooLarge, MCPKitError)
    app = state_app()
    async with connect(app) as client:
        big = await client.call_tool("remember", {"value": "x" * 100})
        assert big["isError"] and "StateTooLarge" in big["content"][0]["text"]
        assert "a value of 102 bytes is over the 64-byte limit" in big["content"][0]["text"]
        await client.call_tool("remember", {"key": "a", "value": 1})
        await client.call_tool("remember", {"key": "b", "value": 2})
        full = await client.call_tool("remember", {"key": "c", "value": 3})
        assert full["isError"] and "this state already holds 2 keys, its limit" in full["content"][0]["text"]


async def test_user_state_needs_an_oauth_caller() -> None:
    async with connect(state_app()) as client:
        refused = await client.call_tool("mine")
    assert refused["isError"] and "ctx.user_state needs an OAuth caller" in refused["content"][0]["text"]


async def test_2026_state_follows_the_signed_handle_the_client_carries() -> None:
    app = state_app()
    async with connect(app) as client:
        async def remember(value: str, meta: dict[str, Any]) -> dict[str, Any]:
            return await client.request("tools/call", {"name": "remember", "arguments": {"value": value},
                                                       "_meta": meta})

        first = await remember("a", MODERN)
        handle = first["_meta"][STATE_HANDLE_KEY]
        again = await remember("b", {**MODERN, STATE_HANDLE_KEY: handle})
        assert again["content"][0]["text"] == "a" and STATE_HANDLE_KEY not in again.get("_meta", {})
        assert (await remember("c", MODERN))["content"][0]["text"] == "None"  # no handle: a new state
        forged = handle[:-3] + ("AAA" if not handle.endswith("AAA") else "BBB")
        other = await remember("d", {**MODERN, STATE_HANDLE_KEY: forged})
        assert other["content"][0]["text"] == "None" and other["_meta"][STATE_HANDLE_KEY] != handle
