"""`transform_tool` and `hide_tools` on a proxy: the upstream's tools shown renamed, described anew, with
arguments hidden, fixed, filled from the request or given defaults, exactly as on a plain server; hidden
tools and a renamed tool's old name answer as unknown tools. Through a real client, in both eras, in front
of the kit upstream over stdio."""

from __future__ import annotations

import logging
import sys
from typing import Any

import pytest

from mcp_kit import Arg, MCPError, MCPServer, proxy
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

KIT = [sys.executable, "-m", "tests.helpers.kit_upstream"]
ERAS = ["2025-11-25", "2026-07-28"]
SUM = {"new_name": "sum", "description": "Add a number to ten.",
       "arguments": {"b": Arg(value=10), "a": Arg(default=1, description="The number added to ten.")}}


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def plain_add_server() -> MCPServer:
    """A plain server with the kit upstream's `add`, transformed as the proxy's is."""
    plain = MCPServer("plain")

    @plain.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    plain.transform_tool("add", **SUM)
    return plain


@pytest.mark.parametrize("era", ERAS)
async def test_a_proxied_tool_is_renamed_redescribed_with_a_fixed_and_a_default_argument(era: str) -> None:
    app = proxy(KIT)
    app.transform_tool("add", **SUM)
    app.transform_tool("shout", new_name="yell",
                       arguments={"words": Arg(from_context=lambda ctx: ctx.meta.get("example.com/who", "nobody"))})
    stateless = era == "2026-07-28"
    async with connect(app, stateless=stateless) as client, connect(plain_add_server(), stateless=stateless) as plain:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert "sum" in tools and "yell" in tools and "add" not in tools and "shout" not in tools
        assert tools["sum"]["description"] == "Add a number to ten."
        assert tools["sum"]["inputSchema"]["properties"] == {
            "a": {"type": "integer", "default": 1, "description": "The number added to ten."}}
        assert "required" not in tools["sum"]["inputSchema"]
        assert tools["yell"]["inputSchema"].get("properties") == {}  # its one argument comes from the request
        [shown] = [tool for tool in await plain.list_tools() if tool["name"] == "sum"]
        assert tools["sum"]["inputSchema"] == shown["inputSchema"]  # as a plain server shows the same transform
        assert tools["sum"]["description"] == shown["description"]

        assert text(await client.call_tool("sum", {})) == "11"  # the default, and the fixed b
        assert text(await client.call_tool("sum", {"a": 5})) == "15"
        refused = await client.call_tool("sum", {"a": 1, "b": 2})
        assert refused["isError"] is True and "it has no argument 'b'" in text(refused)
        yelled = await client.request("tools/call", {"name": "yell", "arguments": {},
                                                     "_meta": {"example.com/who": "Ada"}})
        assert text(yelled) == "Ada"  # filled from the downstream request
        with pytest.raises(MCPError, match="Unknown tool 'add'"):
            await client.call_tool("add", {"a": 1, "b": 2})  # the old name is not served


@pytest.mark.parametrize("era", ERAS)
async def test_tools_hidden_by_name_are_neither_listed_nor_callable(era: str) -> None:
    app = proxy(KIT)
    app.hide_tools("die", "pid")
    async with connect(app, stateless=era == "2026-07-28") as client:
        names = {tool["name"] for tool in await client.list_tools()}
        assert {"add", "shout"} <= names and not names & {"die", "pid"}
        for hidden in ("die", "pid"):
            with pytest.raises(MCPError, match=f"Unknown tool '{hidden}'"):
                await client.call_tool(hidden, {})
        assert text(await client.call_tool("add", {"a": 2, "b": 2})) == "4"
    with pytest.raises(ValueError, match="carry no tags.*hide them by name"):
        app.hide_tools(tags={"internal"})


async def test_a_transform_of_a_tool_the_upstream_lacks_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    app = proxy(KIT)
    app.transform_tool("no_such_tool", new_name="renamed")  # kept: the upstream lists its tools only at run time
    with caplog.at_level(logging.WARNING, logger="mcp_kit.server"):
        async with connect(app) as client:
            await client.list_tools()
            names = {tool["name"] for tool in await client.list_tools()}
    assert "renamed" not in names and "add" in names
    warnings = [r.getMessage() for r in caplog.records if "transform_tool('no_such_tool')" in r.getMessage()]
    assert len(warnings) == 1 and "add" in warnings[0]  # once, with what the upstream does list


async def test_a_transform_that_does_not_fit_the_upstream_schema_leaves_the_tool_out(
        caplog: pytest.LogCaptureFixture) -> None:
    app = proxy(KIT)
    app.transform_tool("add", arguments={"c": Arg(value=1)})  # add has no argument c
    app.transform_tool("shout", arguments={"words": Arg(hidden=True)})  # required: hiding it needs a value
    with caplog.at_level(logging.ERROR, logger="mcp_kit.server"):
        async with connect(app) as client:
            names = {tool["name"] for tool in await client.list_tools()}
            assert not names & {"add", "shout"} and "pid" in names
            with pytest.raises(MCPError, match="Unknown tool 'add'"):
                await client.call_tool("add", {"a": 1, "b": 2})  # served as transformed or not at all
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "it has no argument 'c'" in messages and "'words' is required" in messages
    with pytest.raises(TypeError, match="must be an mcp_kit.Arg"):
        app.transform_tool("add", arguments={"a": 1})  # type: ignore[dict-item]  # checked at once


def test_the_scopes_a_transformed_or_hidden_proxied_tool_needs_follow_the_upstream_name() -> None:
    app = MCPServer.proxy(KIT, scope_map={"add": ["math:write"], "pid": ["ops:read"]})
    app.transform_tool("add", new_name="sum", arguments={"b": Arg(value=10)})
    app.hide_tools("pid")
    assert app.required_scopes("tools/call", {"name": "sum"}) == ("math:write",)  # the scope map names it "add"
    assert app.required_scopes("tools/call", {"name": "add"}) == ()  # not served: no challenge names it
    assert app.required_scopes("tools/call", {"name": "pid"}) == ()
