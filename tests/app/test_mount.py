"""`app.mount(other, namespace=...)`: a mounted tree served as one server, live, to any depth."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from mcp_kit import Arg, Context, MCPError, MCPServer, Middleware, MountCollision, proxy
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

KIT = [sys.executable, "-m", "tests.helpers.kit_upstream"]  # an mcp_kit server over stdio, for a proxy to front


def leaf_app(log: list[str] | None = None) -> MCPServer:
    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[str]:
        if log is not None:
            log.append("leaf up")
        yield "leaf state"
        if log is not None:
            log.append("leaf down")

    leaf = MCPServer("leaf", lifespan=lifespan)

    @leaf.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @leaf.tool
    async def whose_state(ctx: Context) -> str:
        """The lifespan state this tool sees."""
        await ctx.report_progress(1, 2, "halfway")
        await ctx.info("whose_state ran")
        return str(ctx.lifespan_state)

    @leaf.resource("leaf://readme")
    def readme(ctx: Context) -> str:
        """A fixed resource."""
        return f"readme ({ctx.lifespan_state})"

    @leaf.resource("leaf://notes/{name}")
    def note(name: str) -> str:
        """A template."""
        return f"note {name}"

    @leaf.prompt
    def greet(who: str) -> str:
        """A prompt."""
        return f"Hello {who}"

    @leaf.completion("greet", "who")
    def complete_who(value: str, context: dict[str, str]) -> list[str]:
        return [name for name in ("ada", "alan", "grace") if name.startswith(value)]

    @leaf.completion("leaf://notes/{name}", "name")
    def complete_note(value: str, context: dict[str, str]) -> list[str]:
        return ["todo", "ideas"]

    return leaf


def three_levels(log: list[str] | None = None) -> tuple[MCPServer, MCPServer, MCPServer]:
    leaf = leaf_app(log)
    middle = MCPServer("middle")

    @middle.tool
    def middle_tool() -> str:
        """The middle app's own tool."""
        return "middle"

    middle.mount(leaf, namespace="leaf")
    root = MCPServer("root")
    root.mount(middle, namespace="mid")
    return root, middle, leaf


async def test_a_tree_three_levels_deep_routes_every_primitive() -> None:
    log: list[str] = []
    root, _, _ = three_levels(log)
    async with connect(root) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert set(tools) == {"mid_middle_tool", "mid_leaf_add", "mid_leaf_whose_state"}
        assert tools["mid_leaf_add"]["description"] == "Add two numbers."
        added = await client.call_tool("mid_leaf_add", {"a": 2, "b": 3})
        assert added["content"][0]["text"] == "5"
        assert (await client.call_tool("mid_middle_tool"))["content"][0]["text"] == "middle"
        state = await client.call_tool("mid_leaf_whose_state", progress_token="p")
        assert state["content"][0]["text"] == "leaf state"  # the mounted app's own lifespan state
        assert [n["params"]["progress"] for n in client.notifications_named("notifications/progress")] == [1]

        assert [r["uri"] for r in await client.list_resources()] == ["leaf://readme"]  # URIs kept
        assert [t["uriTemplate"] for t in await client.list_resource_templates()] == ["leaf://notes/{name}"]
        assert (await client.read_resource("leaf://readme"))[0]["text"] == "readme (leaf state)"
        assert (await client.read_resource("leaf://notes/todo"))[0]["text"] == "note todo"

        assert [p["name"] for p in await client.list_prompts()] == ["mid_leaf_greet"]
        prompt = await client.get_prompt("mid_leaf_greet", {"who": "Ada"})
        assert prompt["messages"][0]["content"]["text"] == "Hello Ada"

        names = await client.complete({"type": "ref/prompt", "name": "mid_leaf_greet"}, {"name": "who", "value": "a"})
        assert names["values"] == ["ada", "alan"]
        template = {"type": "ref/resource", "uri": "leaf://notes/{name}"}
        notes = await client.complete(template, {"name": "name", "value": ""})
        assert notes["values"] == ["todo", "ideas"]
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("add", {"a": 1, "b": 2})  # only under its mounted name
        assert "mid_leaf_add" in unknown.value.message
    assert log == ["leaf up", "leaf down"]  # the leaf's lifespan ran with the root's


async def test_tools_added_and_removed_later_appear_and_go_with_list_changed() -> None:
    root, _, leaf = three_levels()
    async with connect(root) as client:
        await client.list_tools()

        @leaf.tool
        def later(x: int) -> int:
            """Registered after the mount."""
            return x * 10

        await client.wait_notification("notifications/tools/list_changed", timeout=5)
        assert "mid_leaf_later" in {tool["name"] for tool in await client.list_tools()}
        assert (await client.call_tool("mid_leaf_later", {"x": 4}))["content"][0]["text"] == "40"

        @leaf.prompt
        def farewell() -> str:
            """Another prompt."""
            return "Bye"

        await client.wait_notification("notifications/prompts/list_changed", timeout=5)
        assert {p["name"] for p in await client.list_prompts()} == {"mid_leaf_greet", "mid_leaf_farewell"}

        leaf.remove_tool("add")
        await anyio.sleep(0)
        assert "mid_leaf_add" not in {tool["name"] for tool in await client.list_tools()}


async def test_subscriptions_and_watchers_of_a_mounted_app_reach_the_parents_clients() -> None:
    leaf = MCPServer("leaf")
    watching: list[str] = []

    @leaf.resource("leaf://counter/{name}")
    def counter(name: str) -> str:
        """A counter."""
        return "0"

    @leaf.watcher("leaf://counter/{name}")
    async def watch(uri: str, name: str) -> None:
        watching.append(uri)
        leaf.notify_resource_updated(uri)
        await anyio.sleep_forever()

    root = MCPServer("root")
    root.mount(leaf, namespace="leaf")
    async with connect(root) as client:
        await client.subscribe("leaf://counter/a")
        note = await client.wait_notification("notifications/resources/updated", timeout=5)
        assert note["params"]["uri"] == "leaf://counter/a"
        assert watching == ["leaf://counter/a"]


async def test_a_name_taken_in_the_parent_is_refused_naming_both_sources() -> None:
    parent = MCPServer("hub")

    @parent.tool
    def weather_forecast() -> str:
        """The hub's own."""
        return "hub"

    weather = MCPServer("weather")

    @weather.tool
    def forecast() -> str:
        """The weather server's."""
        return "weather"

    with pytest.raises(MountCollision) as refused:
        parent.mount(weather, namespace="weather")
    message = str(refused.value)
    assert "'weather_forecast'" in message and "'hub' itself" in message and "mounted 'weather'" in message
    assert [tool.name for tool in parent.tools] == ["weather_forecast"] and not parent.mounts  # nothing changed


async def test_a_later_registration_that_would_collide_is_refused_at_once() -> None:
    parent = MCPServer("hub")
    first, second = MCPServer("first"), MCPServer("second")
    parent.mount(first)
    parent.mount(second)

    @first.tool
    def shared() -> str:
        """First."""
        return "first"

    with pytest.raises(MountCollision, match="mounted 'second'.*mounted 'first'"):
        @second.tool
        def shared() -> str:  # noqa: F811
            """Second."""
            return "second"

    async with connect(parent) as client:
        assert (await client.call_tool("shared"))["content"][0]["text"] == "first"

    with pytest.raises(MountCollision, match="resource 'x://same'"):
        @first.resource("x://same")
        def one() -> str:
            return "1"

        @second.resource("x://same")
        def two() -> str:
            return "2"


async def test_what_cannot_be_mounted_is_refused_with_the_fix() -> None:
    parent, child = MCPServer("parent"), MCPServer("child")
    with pytest.raises(ValueError, match="contain itself"):
        parent.mount(parent)
    parent.mount(child, namespace="c")
    with pytest.raises(ValueError, match="contain itself"):
        child.mount(parent)
    with pytest.raises(ValueError, match="namespace 'a b'"):
        MCPServer("x").mount(MCPServer("y"), namespace="a b")
    with pytest.raises(TypeError, match="takes an MCPServer"):
        MCPServer("x").mount("y")  # type: ignore[arg-type]
    proxied = MCPServer("proxied")
    proxied.source = object()  # type: ignore[assignment]  # what MCPServer.proxy sets: primitives from upstream
    with pytest.raises(ValueError, match="a proxy serves its upstream's primitives only; mount both in a plain"):
        proxied.mount(MCPServer("x"))  # a proxy as the parent: its routes serve the upstream only
    from mcp_kit.extensions import Extension

    class Other(Extension):
        id = "com.example/other"

    with_other = MCPServer("with-other")
    with_other.add_extension(Other())
    with pytest.raises(ValueError, match="serves the extension 'com.example/other'.*to the parent"):
        MCPServer("x").mount(with_other)
    guarded = MCPServer("guarded", middleware=[Middleware()])
    with pytest.raises(ValueError, match="middleware of its own.*parent.add_middleware"):
        MCPServer("x").mount(guarded)


async def test_the_reference_servers_mounted_in_one_hub_serve_their_tools_resources_and_skills() -> None:
    from servers.stock.providers import make_provider as stock_provider
    from servers.stock.server import build_server as build_stock
    from servers.weather.providers import make_provider as weather_provider
    from servers.weather.server import build_server as build_weather

    hub = MCPServer("hub")
    hub.mount(build_stock(stock_provider("sample")), namespace="stock")
    hub.mount(build_weather(weather_provider("sample")), namespace="weather")
    async with connect(hub) as client:
        names = {tool["name"] for tool in await client.list_tools()}
        assert {"stock_get_stock_price", "weather_get_forecast"} <= names
        assert all(name.startswith(("stock_", "weather_")) for name in names)
        price = await client.call_tool("stock_get_stock_price", {"ticker": "AAPL"})
        assert price["isError"] is False and "AAPL" in price["content"][0]["text"]
        skills = [r["uri"] for r in await client.list_resources() if r["uri"].startswith("skill://")]
        assert len(skills) == len(set(skills)) >= 2  # each server's skills, once
        assert (await client.read_resource(skills[0]))[0]["text"].startswith("---")
    async with connect(hub, extensions={"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}) \
            as host:  # a host that renders views sees both servers' views, linked from the mounted tools
        tools = {tool["name"]: tool for tool in await host.list_tools()}
        view = tools["stock_get_price_history"]["_meta"]["ui"]["resourceUri"]
        assert view.startswith("ui://") and "weather_get_forecast" in tools
        assert {"stock_price_chart", "weather_week_view"} <= set(tools)  # the views' app-only tools
        [content] = await host.read_resource(view)
        assert content["mimeType"] == "text/html;profile=mcp-app" and "<svg" in content["text"].lower()


def hub_with_a_proxy() -> tuple[MCPServer, MCPServer]:
    hub = MCPServer("hub")

    @hub.tool
    def own(x: int) -> int:
        """The hub's own tool."""
        return x + 1

    upstream = proxy(KIT)
    hub.mount(upstream, namespace="up")
    return hub, upstream


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_a_mounted_proxy_serves_its_upstream_beside_the_parents_own_tools(era: str) -> None:
    hub, upstream = hub_with_a_proxy()
    async with connect(hub, stateless=era == "2026-07-28") as client:
        assert upstream.source is not None and upstream.source.upstream_capabilities  # probed: connected on start
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert {"own", "up_add", "up_shout", "up_grow"} <= set(tools) and "add" not in tools
        assert tools["up_add"]["description"] == "Add two integers."
        assert (await client.call_tool("own", {"x": 1}))["content"][0]["text"] == "2"
        assert (await client.call_tool("up_add", {"a": 2, "b": 3}))["content"][0]["text"] == "5"
        assert [p["name"] for p in await client.list_prompts()] == ["up_greet"]
        prompt = await client.get_prompt("up_greet", {"who": "Ada"})
        assert prompt["messages"][0]["content"]["text"] == "Say hello to Ada."
        assert [r["uri"] for r in await client.list_resources()] == ["kit://motd"]  # URIs kept
        assert (await client.read_resource("kit://motd"))[0]["text"] == "mcp_kit says hi"
        with pytest.raises(MCPError, match="Unknown tool 'add'"):
            await client.call_tool("add", {"a": 1, "b": 2})  # only under its mounted name
        assert upstream.source.links  # the upstream session this client's requests went through
    assert not upstream.source.links  # closed with the hub


async def test_an_upstream_list_change_and_resource_update_reach_the_parents_client() -> None:
    hub, _ = hub_with_a_proxy()
    async with connect(hub) as client:
        assert "up_grown" not in {tool["name"] for tool in await client.list_tools()}
        await client.call_tool("up_grow")  # the upstream registers a tool: its list changed
        await client.wait_notification("notifications/tools/list_changed", timeout=10)
        assert "up_grown" in {tool["name"] for tool in await client.list_tools()}
        assert (await client.call_tool("up_grown"))["content"][0]["text"] == "new"
        await client.subscribe("kit://motd")  # kept upstream, which tells of updates
        await client.call_tool("up_touch")
        updated = await client.wait_notification("notifications/resources/updated", timeout=10)
        assert updated["params"]["uri"] == "kit://motd"


async def test_a_transform_and_hiding_on_the_parent_apply_to_a_mounted_proxys_tools() -> None:
    hub, _ = hub_with_a_proxy()
    hub.transform_tool("up_add", new_name="plus_hundred", description="Add a hundred.",
                       arguments={"b": Arg(value=100), "a": Arg(default=1)})
    hub.hide_tools("up_die")
    with pytest.raises(ValueError, match="no tool 'elsewhere_add'"):  # a name no mount could serve: refused now
        hub.transform_tool("elsewhere_add", new_name="x")
    async with connect(hub) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert "plus_hundred" in tools and "up_add" not in tools and "up_die" not in tools
        assert tools["plus_hundred"]["description"] == "Add a hundred."
        assert tools["plus_hundred"]["inputSchema"]["properties"] == {"a": {"type": "integer", "default": 1}}
        assert (await client.call_tool("plus_hundred", {"a": 2}))["content"][0]["text"] == "102"
        assert (await client.call_tool("plus_hundred"))["content"][0]["text"] == "101"
        for refused in ("up_add", "up_die"):
            with pytest.raises(MCPError, match=f"Unknown tool '{refused}'"):
                await client.call_tool(refused, {"a": 1, "b": 1})


async def test_the_parents_own_name_wins_over_a_mounted_proxys_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    hub, _ = hub_with_a_proxy()

    @hub.tool
    def up_pid() -> str:
        """The hub's own, named as the proxied one would be."""
        return "the hub's"

    with caplog.at_level(logging.WARNING, logger="mcp_kit.server"):
        async with connect(hub) as client:
            await client.list_tools()
            names = [tool["name"] for tool in await client.list_tools()]
            assert names.count("up_pid") == 1
            assert (await client.call_tool("up_pid"))["content"][0]["text"] == "the hub's"
    shadowed = [r for r in caplog.records if "'up_pid' of a mounted proxy is not served" in r.getMessage()]
    assert len(shadowed) == 1


async def test_a_proxy_mounted_two_levels_down_keeps_each_levels_transform() -> None:
    up = proxy(KIT)
    up.transform_tool("add", new_name="sum", arguments={"b": Arg(value=1)})  # the proxy's own
    middle = MCPServer("middle")
    middle.mount(up, namespace="up")
    middle.transform_tool("up_sum", arguments={"a": Arg(default=5)})  # the app it is mounted in
    root = MCPServer("root")
    root.mount(middle, namespace="mid")
    root.transform_tool("mid_up_sum", new_name="plus", description="Add one.")  # and the root
    async with connect(root) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        assert "plus" in tools and not {"mid_up_sum", "mid_up_add"} & set(tools) and "mid_up_pid" in tools
        assert tools["plus"]["description"] == "Add one."
        assert tools["plus"]["inputSchema"]["properties"] == {"a": {"type": "integer", "default": 5}}
        assert (await client.call_tool("plus"))["content"][0]["text"] == "6"
        assert (await client.call_tool("plus", {"a": 7}))["content"][0]["text"] == "8"


async def test_an_unreachable_mounted_proxy_leaves_the_parents_own_tools_served() -> None:
    hub = MCPServer("hub")

    @hub.tool
    def own() -> str:
        """The hub's own tool."""
        return "own"

    hub.mount(MCPServer.proxy(["/nonexistent/mcp-server"], connect_timeout=0.5), namespace="up")
    async with connect(hub) as client:
        assert [tool["name"] for tool in await client.list_tools()] == ["own"]
        assert (await client.call_tool("own"))["content"][0]["text"] == "own"
        result = await client.call_tool("up_anything", {})
        assert result["isError"] is True and "cannot be reached" in result["content"][0]["text"]


def test_whether_a_proxy_is_mounted_below_is_kept_at_mount_time_without_walking_the_tree() -> None:
    from mcp_kit._app.sourced import has_sources

    outer, middle, inner = MCPServer("outer"), MCPServer("middle"), MCPServer("inner")
    outer.mount(middle, "m")
    middle.mount(inner, "i")
    assert not has_sources(outer) and not has_sources(inner)
    inner.mount(proxy(["true"]), "p")  # after the plain mounts: every server above learns of it
    assert has_sources(inner) and has_sources(middle) and has_sources(outer)
    middle.mounts = []  # no walk: the flag answers
    assert has_sources(outer)


async def test_an_unreachable_mounted_proxy_does_not_hide_the_next_ones_resources() -> None:
    hub = MCPServer("hub")
    hub.mount(proxy([sys.executable, "-c", "raise SystemExit(1)"], connect_timeout=0.5), "down")
    hub.mount(proxy([sys.executable, "-m", "tests.helpers.kit_upstream"]), "up")
    async with connect(hub) as client:
        assert (await client.read_resource("kit://motd"))[0]["text"] == "mcp_kit says hi"  # the second has it
        await client.subscribe("kit://motd")  # taken by the second, which an unsubscription goes to
        await client.request("resources/unsubscribe", {"uri": "kit://motd"})
        with pytest.raises(MCPError) as raised:
            await client.read_resource("kit://nothing")  # neither has it, and one could not say
        assert raised.value.code == -31001
