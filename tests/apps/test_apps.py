"""MCP Apps on the extension API: `ui://` views with `_meta.ui`, tools linked with `_meta.ui.resourceUri`
and visibility, the host-capability check (a host without Apps gets the same results and no app-only
tools), in both eras."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_kit import MCPServer
from mcp_kit._protocol.errors import MCPError
from mcp_kit.apps import EXTENSION_ID, MIME_TYPE, Apps
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

HOST = {EXTENSION_ID: {"mimeTypes": [MIME_TYPE]}}
PAGE = "<!DOCTYPE html><html><body><p>week</p></body></html>"


def plain_server() -> MCPServer:
    app = MCPServer("weather")

    @app.tool(read_only=True)
    def forecast(city: str) -> dict[str, Any]:
        """A forecast."""
        return {"city": city, "days": [{"max": 20}, {"max": 22}]}

    return app


def apps_server() -> tuple[MCPServer, Apps]:
    app = plain_server()
    apps = app.add_extension(Apps())

    @apps.view("ui://weather/week", name="week", title="Week", connect_domains=["https://api.example.com"],
               permissions=["geolocation"], prefers_border=True)
    def week() -> str:
        """The week at a glance."""
        return PAGE

    apps.link("forecast", "ui://weather/week")

    @apps.tool(view="ui://weather/week", visibility=["app"], read_only=True)
    def week_data(city: str) -> dict[str, Any]:
        """Only the view calls this."""
        return {"city": city}

    @apps.tool(visibility=["model"])
    def summary(city: str) -> str:
        """Only the model calls this."""
        return f"{city}: fine"

    return app, apps


def envelope(extensions: dict[str, Any] | None) -> dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "host", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {} if extensions is None else {"extensions": extensions}}


async def test_views_are_ui_resources_with_their_meta() -> None:
    app, _ = apps_server()
    async with connect(app, extensions=HOST) as host:
        assert host.initialize_result["capabilities"]["extensions"][EXTENSION_ID] == {"mimeTypes": [MIME_TYPE]}
        [listed] = (await host.request("resources/list", {}))["resources"]
        ui = {"csp": {"connectDomains": ["https://api.example.com"]}, "permissions": {"geolocation": {}},
              "prefersBorder": True}
        assert listed == {"uri": "ui://weather/week", "name": "week", "title": "Week", "mimeType": MIME_TYPE,
                          "description": "The week at a glance.", "_meta": {"ui": ui}}
        [content] = (await host.request("resources/read", {"uri": "ui://weather/week"}))["contents"]
        assert content == {"uri": "ui://weather/week", "mimeType": MIME_TYPE, "text": PAGE, "_meta": {"ui": ui}}
        with pytest.raises(MCPError) as missing:
            await host.request("resources/read", {"uri": "ui://weather/none"})
        assert missing.value.code == -32002


async def test_a_host_with_apps_sees_links_and_app_only_tools() -> None:
    app, _ = apps_server()
    async with connect(app, extensions=HOST) as host:
        tools = {tool["name"]: tool for tool in (await host.request("tools/list", {}))["tools"]}
        assert set(tools) == {"forecast", "week_data", "summary"}
        assert tools["forecast"]["_meta"]["ui"] == {"resourceUri": "ui://weather/week", "visibility": ["model", "app"]}
        assert tools["week_data"]["_meta"]["ui"] == {"resourceUri": "ui://weather/week", "visibility": ["app"]}
        assert tools["summary"]["_meta"]["ui"] == {"visibility": ["model"]}
        assert (await host.call_tool("week_data", {"city": "Oslo"}))["structuredContent"] == {"city": "Oslo"}


async def test_a_host_without_apps_gets_todays_results_and_no_app_only_tools() -> None:
    app, _ = apps_server()
    async with connect(plain_server()) as before, connect(app) as host:
        names = [tool["name"] for tool in (await host.request("tools/list", {}))["tools"]]
        assert names == ["forecast", "summary"]
        assert (await host.request("resources/list", {}))["resources"] == []  # no views to a host without Apps
        today = await before.call_tool("forecast", {"city": "Oslo"})
        assert await host.call_tool("forecast", {"city": "Oslo"}) == today
        with pytest.raises(MCPError):  # app-only: unknown to a host that renders no views
            await host.request("tools/call", {"name": "week_data", "arguments": {"city": "Oslo"}})
    async with connect(app, extensions={EXTENSION_ID: {"mimeTypes": ["text/uri-list"]}}) as other:
        assert "week_data" not in [tool["name"] for tool in (await other.request("tools/list", {}))["tools"]]


async def test_the_2026_era_checks_each_request_s_own_capabilities() -> None:
    app, _ = apps_server()
    async with connect(app) as client:
        declared = await client.request("tools/list", {"_meta": envelope(HOST)})
        assert "week_data" in [tool["name"] for tool in declared["tools"]]
        undeclared = await client.request("tools/list", {"_meta": envelope(None)})
        assert "week_data" not in [tool["name"] for tool in undeclared["tools"]]
        discovered = await client.request("server/discover", {"_meta": envelope(None)})
        assert EXTENSION_ID in discovered["capabilities"]["extensions"]


def test_registration_is_checked() -> None:
    app, apps = apps_server()
    with pytest.raises(ValueError, match="ui://"):
        apps.view("https://example.com/x")
    with pytest.raises(ValueError, match="visibility"):
        apps.link("forecast", "ui://weather/week", visibility=["user"])
    with pytest.raises(ValueError, match="permission"):
        apps.view("ui://x/y", permissions=["telepathy"])
    with pytest.raises(ValueError, match="origin"):
        apps.view("ui://x/y", connect_domains=["example.com"])
    with pytest.raises(ValueError, match="no tool"):
        apps.link("nothing", "ui://weather/week")
