"""`list_by_scope`: lists show a caller only what its OAuth scopes allow, page by page, in both eras; a hidden
tool answers exactly as one that does not exist."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_kit import AccessToken, Call, CallNext, MCPError, MCPServer, Middleware
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio
STATELESS = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
             "io.modelcontextprotocol/clientCapabilities": {}}


class AsCaller(Middleware):
    """Stands in for the OAuth guard of the HTTP transport: every request carries this access token."""

    def __init__(self, scopes: set[str]) -> None:
        self.token = AccessToken(subject="ada", client_id="app", scopes=frozenset(scopes), expires_at=None,
                                 issuer="https://as.example", audience=("mcp",), source="jwt")

    async def on_request(self, call: Call, call_next: CallNext) -> Any:
        call.ctx.principal = self.token
        return await call_next(call)


def build(scopes: set[str], list_by_scope: bool = True) -> MCPServer:
    app = MCPServer("scoped", page_size=2, list_by_scope=list_by_scope, middleware=[AsCaller(scopes)])
    for name, needs in (("open_a", None), ("admin_b", "admin"), ("open_c", None), ("admin_d", "admin"),
                        ("open_e", None)):
        async def tool() -> str:
            return "ok"

        app.add_tool(tool, name=name, scopes=needs)

    @app.resource("notes://public")
    def public() -> str:
        return "p"

    @app.resource("notes://admin", scopes=["admin"])
    def admin() -> str:
        return "a"

    @app.prompt(scopes=["admin"])
    def admin_prompt() -> str:
        return "a"

    @app.prompt
    def open_prompt() -> str:
        return "o"

    return app


async def walk(client: Any, meta: dict[str, Any] | None) -> list[str]:
    names: list[str] = []
    params: dict[str, Any] = {} if meta is None else {"_meta": meta}
    for _ in range(10):
        page = await client.request("tools/list", params)
        names += [t["name"] for t in page["tools"]]
        if "nextCursor" not in page:
            return names
        params = {**params, "cursor": page["nextCursor"]}
    raise AssertionError("too many pages")


async def test_lists_and_pages_show_only_what_the_scopes_allow_in_both_eras() -> None:
    async with connect(build(set())) as client:
        assert await walk(client, None) == ["open_a", "open_c", "open_e"]
        assert await walk(client, STATELESS) == ["open_a", "open_c", "open_e"]
        assert [r["uri"] for r in await client.list_resources()] == ["notes://public"]
        assert [p["name"] for p in await client.list_prompts()] == ["open_prompt"]
    async with connect(build({"admin"})) as client:
        assert await walk(client, None) == ["open_a", "admin_b", "open_c", "admin_d", "open_e"]
    async with connect(build(set(), list_by_scope=False)) as client:  # the option off: everything listed
        assert len(await walk(client, None)) == 5


async def test_a_hidden_tool_is_indistinguishable_from_one_that_does_not_exist() -> None:
    async with connect(build(set())) as client:
        answers = []
        for name in ("admin_b", "admin_x"):
            with pytest.raises(MCPError) as raised:
                await client.call_tool(name, {})
            answers.append((raised.value.code, raised.value.message.replace(name, "NAME"), raised.value.data))
        assert answers[0] == answers[1]
        assert answers[0][2] == {"tools": ["open_a", "open_c", "open_e"]}
        with pytest.raises(MCPError) as read:
            await client.read_resource("notes://admin")
        assert read.value.code == -32002
        with pytest.raises(MCPError, match="Available prompts: open_prompt$"):
            await client.get_prompt("admin_prompt", {})
        with pytest.raises(MCPError) as stateless:
            await client.request("tools/call", {"name": "admin_b", "_meta": STATELESS})
        assert stateless.value.data == {"tools": ["open_a", "open_c", "open_e"]}
