"""The OAuth scopes of a proxy mounted in a plain server: the parent's `required_scopes` asks the proxy for a
name or URI it does not serve itself (through its transforms: a renamed tool needs its upstream name's), so
the HTTP transport's 403 challenge and a cached read's check cover proxied primitives; a completion of a
proxied prompt needs that prompt's scopes. In front of the kit upstream over stdio."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_kit import AccessToken, Arg, Call, CallNext, MCPError, MCPServer, Middleware, proxy
from mcp_kit.middleware import ResponseCache
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

KIT = [sys.executable, "-m", "tests.helpers.kit_upstream"]
SCOPES = {"add": ["math:write"], "greet": ["kit:prompts"], "kit://motd": ["kit:read"]}


class AsCaller(Middleware):
    """Stands in for the OAuth guard of the HTTP transport: every request carries `token` (changed at will)."""

    def __init__(self, *scopes: str) -> None:
        self.as_(*scopes)

    def as_(self, *scopes: str) -> None:
        self.token = AccessToken(subject="ada", client_id="app", scopes=frozenset(scopes), expires_at=None,
                                 issuer="https://as.example", audience=("mcp",), source="jwt")

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        call.ctx.principal = self.token
        return await call_next(call)


def hub(*middleware: Middleware) -> MCPServer:
    app = MCPServer("hub", middleware=list(middleware))

    @app.tool
    def own() -> str:
        return "own"

    app.mount(proxy(KIT, scope_map=SCOPES), "up")
    return app


def test_the_parent_asks_a_mounted_proxy_for_the_scopes_of_its_primitives() -> None:
    app = hub()
    app.transform_tool("up_add", new_name="sum", arguments={"b": Arg(value=10)})
    assert app.required_scopes("tools/call", {"name": "sum"}) == ("math:write",)  # the upstream's name: add
    assert app.required_scopes("tools/call", {"name": "up_add"}) == ()  # renamed: not served
    assert app.required_scopes("tools/call", {"name": "own"}) == ()
    assert app.required_scopes("prompts/get", {"name": "up_greet"}) == ("kit:prompts",)
    assert app.required_scopes("resources/read", {"uri": "kit://motd"}) == ("kit:read",)
    assert app.required_scopes("resources/subscribe", {"uri": "kit://motd"}) == ("kit:read",)
    assert app.required_scopes("completion/complete", {"ref": {"type": "ref/prompt", "name": "up_greet"},
                                                       "argument": {"name": "who", "value": ""}}) == ("kit:prompts",)
    nested = MCPServer("outer")
    nested.mount(app, "hub")
    assert nested.required_scopes("tools/call", {"name": "hub_sum"}) == ("math:write",)
    alone = proxy(KIT, scope_map=SCOPES)
    assert alone.required_scopes("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
                                                         "argument": {"name": "who", "value": ""}}) == ("kit:prompts",)


async def test_a_public_cache_does_not_serve_a_proxied_scoped_resource_to_a_caller_without_the_scope() -> None:
    caller = AsCaller("kit:read")
    app = hub(caller, ResponseCache(scope="public"))
    async with connect(app) as client:
        assert "motd" in str(await client.read_resource("kit://motd")).lower()  # allowed, and cached
        caller.as_()
        with pytest.raises(MCPError) as refused:
            await client.read_resource("kit://motd")  # the cached answer is not served either
        assert refused.value.code == -31002 and "kit:read" in str(refused.value)


async def test_completing_a_proxied_prompt_needs_its_scopes() -> None:
    caller = AsCaller()
    app = hub(caller)
    async with connect(app) as client:
        with pytest.raises(MCPError) as refused:
            await client.request("completion/complete", {"ref": {"type": "ref/prompt", "name": "up_greet"},
                                                         "argument": {"name": "who", "value": ""}})
        assert refused.value.code == -31002 and "kit:prompts" in str(refused.value)


async def test_a_proxys_own_completion_checks_its_scope_map_whatever_path_the_request_took() -> None:
    """In memory no transport checks scopes first (as in a JSON-RPC batch or over legacy SSE): the proxy does."""
    caller = AsCaller()
    app = proxy(KIT, scope_map=SCOPES, middleware=[caller])
    completing = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": ""}}
    async with connect(app) as client:
        with pytest.raises(MCPError) as refused:
            await client.request("completion/complete", completing)
        assert refused.value.code == -31002 and "kit:prompts" in str(refused.value)
        caller.as_("kit:prompts")
        assert "completion" in await client.request("completion/complete", completing)


def test_a_name_several_mounted_proxies_could_serve_needs_the_scopes_of_each() -> None:
    app = MCPServer("hub")
    app.mount(proxy(KIT), None)  # lists greet too, with no scope map: which one serves it is known only upstream
    app.mount(proxy(KIT, scope_map=SCOPES), None)
    assert app.required_scopes("prompts/get", {"name": "greet"}) == ("kit:prompts",)
    assert app.required_scopes("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"},
                                                       "argument": {"name": "who", "value": ""}}) == ("kit:prompts",)


def test_the_parents_own_skills_need_no_scope_of_a_mounted_proxy(tmp_path: Path) -> None:
    (tmp_path / "alpha").mkdir()
    (tmp_path / "alpha" / "SKILL.md").write_text("---\nname: alpha\ndescription: The alpha skill.\n---\n# alpha\n")
    app = MCPServer("hub")
    app.add_skills(tmp_path)
    app.mount(proxy(KIT, scope_map={"*": ["upstream:read"]}), "up")
    assert app.required_scopes("resources/read", {"uri": "skill://alpha/SKILL.md"}) == ()  # the skills extension's
    assert app.required_scopes("resources/read", {"uri": "kit://motd"}) == ("upstream:read",)


@pytest.mark.parametrize("mounted", [False, True], ids=["proxy", "mounted"])
async def test_a_response_cache_in_front_hears_the_upstreams_changes_before_the_client(mounted: bool) -> None:
    """The client re-lists on hearing list_changed, and re-reads on hearing an update: the cache gives it the new."""
    cache = ResponseCache(scope="public")
    app = hub(cache) if mounted else proxy(KIT, middleware=[cache])
    grow, grown, touch = ("up_grow", "up_grown", "up_touch") if mounted else ("grow", "grown", "touch")
    async with connect(app) as client:
        assert grown not in {tool["name"] for tool in await client.list_tools()}  # listed, and cached
        await client.call_tool(grow)
        await client.wait_notification("notifications/tools/list_changed", timeout=10)
        assert grown in {tool["name"] for tool in await client.list_tools()}
        assert (await client.read_resource("kit://motd"))[0]["text"] == "mcp_kit says hi"  # read, and cached
        await client.subscribe("kit://motd")
        await client.call_tool(touch, {"motd": "changed"})
        await client.wait_notification("notifications/resources/updated", timeout=10)
        assert (await client.read_resource("kit://motd"))[0]["text"] == "changed"
