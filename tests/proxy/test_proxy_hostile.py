"""A proxy's tool transforms in front of an upstream whose tool definitions are hostile data: a schema of the
wrong shape, a schema changed under a transform, endless pages, non-object arguments. The tool concerned is
left out (or the call refused); every other tool, and the server's own, keep being served. In front of
`tests/helpers/hostile_upstream.py`, whose definitions each test chooses."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import pytest

from mcp_kit import Arg, MCPError, MCPServer, proxy
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]
FINE = {"name": "fine", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}


def upstream(*tools: dict[str, Any], **options: Any) -> list[str]:
    return [sys.executable, "-m", "tests.helpers.hostile_upstream", json.dumps({"tools": list(tools), **options})]


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def tool(schema: Any) -> dict[str, Any]:
    return {"name": "query", "inputSchema": schema}


HOSTILE = [
    ({"type": "object", "properties": ["user"]}, {"user": Arg(value="u")}),
    ({"type": "object", "properties": {"user": 5}}, {"user": Arg(default="u")}),
    ({"type": "object", "properties": {"user": {}}, "required": 5}, {"user": Arg(value="u")}),
    ({"type": "object", "properties": {"user": {}}, "required": [{}]}, {"user": Arg(value="u")}),
    ({"type": "object", "properties": "abc"}, {"user": Arg(value="u")}),
    ("not a schema", {"user": Arg(value="u")}),
]


@pytest.mark.parametrize(("schema", "arguments"), HOSTILE)
async def test_a_hostile_schema_under_a_transform_leaves_that_tool_out_and_lists_the_rest(
        schema: Any, arguments: dict[str, Arg], caplog: pytest.LogCaptureFixture) -> None:
    app = proxy(upstream(tool(schema), FINE))
    app.transform_tool("query", arguments=arguments)
    hub = MCPServer("hub")

    @hub.tool
    def own() -> str:
        return "own"

    hub.mount(proxy(upstream(tool(schema), FINE)), "up")
    hub.transform_tool("up_query", arguments=arguments)
    with caplog.at_level(logging.ERROR, logger="mcp_kit.server"):
        async with connect(app) as client, connect(hub) as hub_client:
            assert [t["name"] for t in await client.list_tools()] == ["fine"]
            assert [t["name"] for t in await client.list_tools()] == ["fine"]
            assert [t["name"] for t in await hub_client.list_tools()] == ["own", "up_fine"]
            with pytest.raises(MCPError, match="Unknown tool 'query'"):
                await client.call_tool("query", {})
            with pytest.raises(MCPError, match="Unknown tool 'up_query'"):
                await hub_client.call_tool("up_query", {})
    unfit = [r.getMessage() for r in caplog.records if "'query' is not served" in r.getMessage()]
    assert len(unfit) == 1 and "inputSchema" in unfit[0]  # once, naming the problem


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("mounted", [False, True])
async def test_a_fixed_argument_the_upstream_no_longer_has_refuses_a_call_made_before_any_list(
        era: str, mounted: bool) -> None:
    renamed = tool({"type": "object", "properties": {"tenant_id": {"type": "string"}, "q": {"type": "string"}}})
    fixed = {"tenant": Arg(value="acme")}
    if mounted:
        app = MCPServer("hub")
        app.mount(proxy(upstream(renamed)), "up")
        app.transform_tool("up_query", arguments=fixed)
        name = "up_query"
    else:
        app = proxy(upstream(renamed))
        app.transform_tool("query", arguments=fixed)
        name = "query"
    async with connect(app, stateless=era == "2026-07-28") as client:
        with pytest.raises(MCPError, match=f"Unknown tool '{name}'"):
            await client.call_tool(name, {"tenant_id": "evil", "q": "x"})  # no list came first


@pytest.mark.parametrize("era", ERAS)
async def test_a_fitting_fixed_argument_is_checked_against_the_listed_schema_and_cannot_be_sent(era: str) -> None:
    query = tool({"type": "object", "properties": {"tenant": {"type": "string"}, "q": {"type": "string"}},
                  "required": ["tenant"]})
    app = proxy(upstream(query))
    app.transform_tool("query", arguments={"tenant": Arg(value="acme")})
    async with connect(app, stateless=era == "2026-07-28") as client:
        assert json.loads(text(await client.call_tool("query", {"q": "x"}))) == {"q": "x", "tenant": "acme"}
        refused = await client.call_tool("query", {"q": "x", "tenant": "evil"})
        assert refused["isError"] is True and "it has no argument 'tenant'" in text(refused)


@pytest.mark.parametrize("era", ERAS)
async def test_non_object_arguments_to_a_transformed_proxied_tool_are_invalid_params(era: str) -> None:
    app = proxy(upstream(FINE))
    app.transform_tool("fine", arguments={"x": Arg(default="d")})
    async with connect(app, stateless=era == "2026-07-28") as client:
        with pytest.raises(MCPError, match="'arguments' must be an object") as raised:
            await client.request("tools/call", {"name": "fine", "arguments": ["a"]})
        assert raised.value.code == -32602


async def test_a_repeated_cursor_ends_the_list_once_logged(caplog: pytest.LogCaptureFixture) -> None:
    hub = MCPServer("hub")
    hub.mount(proxy(upstream(FINE, cursor="same")), "up")
    with caplog.at_level(logging.WARNING, logger="mcp_kit.server"):
        async with connect(hub) as client:
            assert [t["name"] for t in await client.list_tools()] == ["up_fine"]
            await client.list_tools()
    assert len([r for r in caplog.records if "a cursor it gave before" in r.getMessage()]) == 1


async def test_the_entries_read_from_a_mounted_proxy_are_bounded(caplog: pytest.LogCaptureFixture) -> None:
    from mcp_kit._app import sourced

    many = [{"name": f"t{index}", "inputSchema": {"type": "object"}} for index in range(60)]
    hub = MCPServer("hub")
    hub.mount(proxy(upstream(*many, pages=3)), "up")
    with caplog.at_level(logging.WARNING, logger="mcp_kit.server"), pytest.MonkeyPatch.context() as patch:
        patch.setattr(sourced, "MAX_ITEMS", 100)
        async with connect(hub) as client:
            request = await client.request("tools/list", {})
            assert len(request["tools"]) <= 100
    assert len([r for r in caplog.records if "more than 100 entries" in r.getMessage()]) == 1


def test_what_is_logged_once_is_bounded() -> None:
    from mcp_kit._app import sourced

    app = MCPServer("hub")
    for index in range(sourced.MAX_WARNED * 3):
        sourced._once(app, f"shadowed:{'x' * 1000}{index}", logging.DEBUG, "m")
    assert len(app.sourced_warned) <= sourced.MAX_WARNED + 1
    assert all(len(key) <= 200 for key in app.sourced_warned)


@pytest.mark.parametrize("schema", [{"type": "object", "properties": ["x"]}, {"type": "object", "properties": "abc"},
                                    {"type": "object", "properties": {"x": 5, "y": {"x-mcp-header": "Y"}}}])
async def test_the_param_headers_of_a_hostile_schema_are_those_it_can_be_read_for(schema: Any) -> None:
    app = proxy(upstream(tool(schema)))
    async with connect(app) as client:
        await client.list_tools()
        headers = app.param_headers("query")
    assert headers == ({"y": "Y"} if isinstance(schema["properties"], dict) else {})


@pytest.mark.parametrize("name", [["x"], {"a": 1}, 5, None])
async def test_a_tool_whose_name_is_not_a_string_is_left_out_of_a_transformed_or_merged_list(name: Any) -> None:
    listed = upstream({"name": name, "inputSchema": {"type": "object"}}, FINE)
    app = proxy(listed)
    app.transform_tool("fine", description="Fine.")
    hub = MCPServer("hub")

    @hub.tool
    def own() -> str:
        return "own"

    hub.mount(proxy(listed), "up")
    async with connect(app) as client, connect(hub) as hub_client:
        assert [t["name"] for t in await client.list_tools()] == ["fine"]
        assert [t["name"] for t in await hub_client.list_tools()] == ["own", "up_fine"]


async def test_a_schema_changed_upstream_after_the_proxy_saw_it_refuses_the_fixed_argument() -> None:
    flip = {"name": "flip", "inputSchema": {"type": "object"}}
    before = tool({"type": "object", "properties": {"tenant": {"type": "string"}, "q": {"type": "string"}}})
    after = tool({"type": "object", "properties": {"tenant_id": {"type": "string"}, "q": {"type": "string"}}})
    app = proxy(upstream(before, flip, after=[after, flip]))
    app.transform_tool("query", arguments={"tenant": Arg(value="acme")})
    async with connect(app) as client:
        assert json.loads(text(await client.call_tool("query", {"q": "x"}))) == {"q": "x", "tenant": "acme"}
        seen = len(client.notifications)
        assert text(await client.call_tool("flip", {})) == "flipped"  # the upstream renames tenant, and says so
        await client.wait_notification("notifications/tools/list_changed", timeout=10, after=seen)
        with pytest.raises(MCPError, match="Unknown tool 'query'"):
            await client.call_tool("query", {"tenant_id": "evil", "q": "x"})  # no list in between


async def test_boolean_property_schemas_are_schemas_a_transform_keeps() -> None:
    """`true` and `false` are valid JSON Schemas: a rename keeps such a tool, a default on a `true` one shows."""
    app = proxy(upstream(tool({"type": "object", "properties": {"anything": True, "nothing": False}}), FINE))
    app.transform_tool("query", new_name="ask", arguments={"anything": Arg(default=1)})
    async with connect(app) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        assert set(tools) == {"ask", "fine"}
        assert tools["ask"]["inputSchema"]["properties"] == {"anything": {"default": 1}, "nothing": False}


async def test_the_tool_schemas_kept_for_transformed_calls_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """An upstream may list new names on every list: the proxy keeps the latest schemas, the oldest go."""
    from mcp_kit._proxy import source as proxy_source

    monkeypatch.setattr(proxy_source, "TOOL_SCHEMAS_KEPT", 2)
    many = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(5)]
    app = proxy(upstream(*many))
    async with connect(app) as client:
        assert len(await client.list_tools()) == 5
        assert app.source is not None and list(app.source.tool_schemas) == ["t3", "t4"]  # type: ignore[attr-defined]
