"""2026-07-28 request state is bound to the request's arguments and to an expiry; answers count only when asked for.

A state minted when `confirm_delete(path="a.txt")` asked for confirmation must not delete anything
else when presented with other arguments, must stop working once it expires, and an answer to a
question the presented state never asked never reaches the handler. The
binding to the caller is tested over HTTP with OAuth (tests/auth/test_bindings_over_http.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_kit import Context, MCPError, MCPServer
from mcp_kit._eras import input_rounds
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
YES = {"action": "accept", "content": {"ok": True}}


def deleting_app(deleted: list[str]) -> MCPServer:
    app = MCPServer("deleter")

    @app.tool(destructive=True)
    async def confirm_delete(path: str, ctx: Context) -> str:
        """Delete `path` once the user confirms."""
        if (await ctx.elicit(f"Delete {path}?", CONFIRM, key="confirm")).action != "accept":
            return "kept"
        deleted.append(path)
        return f"deleted {path}"

    @app.tool(destructive=True)
    async def delete_twice_confirmed(path: str, ctx: Context) -> str:
        """Delete `path` after two confirmations, asked one after the other."""
        for key in ("first", "second"):
            if (await ctx.elicit(f"Really delete {path}? ({key})", CONFIRM, key=key)).action != "accept":
                return "kept"
        deleted.append(path)
        return f"deleted {path}"

    return app


async def call(client: Any, tool: str, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await client.request("tools/call", {"_meta": META, "name": tool, **params})
    return result


async def test_a_state_for_one_path_deletes_no_other() -> None:
    deleted: list[str] = []
    async with connect(deleting_app(deleted), initialize=False) as client:
        asked = await call(client, "confirm_delete", arguments={"path": "a.txt"})
        assert asked["resultType"] == "input_required"
        for arguments in ({"path": "/etc/important"}, {"path": "a.txt", "extra": 1}, {}):
            with pytest.raises(MCPError) as refused:
                await call(client, "confirm_delete", arguments=arguments, requestState=asked["requestState"],
                           inputResponses={"confirm": YES})
            assert refused.value.code == -32602 and "another request" in refused.value.message
        with pytest.raises(MCPError, match="another request"):  # another tool, same arguments
            await call(client, "delete_twice_confirmed", arguments={"path": "a.txt"},
                       requestState=asked["requestState"], inputResponses={"first": YES})
        assert deleted == []
        same = {"_meta": {**META, "io.modelcontextprotocol/clientInfo": {"name": "other", "version": "2"}}}
        done = await client.request("tools/call", {**same, "arguments": {"path": "a.txt"}, "name": "confirm_delete",
                                                   "requestState": asked["requestState"],
                                                   "inputResponses": {"confirm": YES}})
        assert done["content"][0]["text"] == "deleted a.txt" and deleted == ["a.txt"]  # _meta is not bound


async def test_a_state_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    deleted: list[str] = []
    now = [1_000_000.0]
    monkeypatch.setattr(input_rounds, "clock", lambda: now[0], raising=False)
    async with connect(deleting_app(deleted), initialize=False) as client:
        asked = await call(client, "confirm_delete", arguments={"path": "a.txt"})
        now[0] += 599  # within the default lifetime of 600 s
        kept = await call(client, "confirm_delete", arguments={"path": "a.txt"}, requestState=asked["requestState"],
                          inputResponses={"confirm": {"action": "decline"}})
        assert kept["content"][0]["text"] == "kept"
        now[0] += 2
        with pytest.raises(MCPError) as expired:
            await call(client, "confirm_delete", arguments={"path": "a.txt"}, requestState=asked["requestState"],
                       inputResponses={"confirm": YES})
        assert expired.value.code == -32602 and "expired" in expired.value.message
        assert deleted == []


async def test_the_lifetime_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_000_000.0]
    monkeypatch.setattr(input_rounds, "clock", lambda: now[0])
    monkeypatch.setattr(input_rounds, "state_ttl", input_rounds.state_ttl)  # restored after the test
    input_rounds.use_state_ttl(5)
    with pytest.raises(ValueError):
        input_rounds.use_state_ttl(float("nan"))
    async with connect(deleting_app([]), initialize=False) as client:
        asked = await call(client, "confirm_delete", arguments={"path": "a.txt"})
        now[0] += 6
        with pytest.raises(MCPError, match="expired"):
            await call(client, "confirm_delete", arguments={"path": "a.txt"}, requestState=asked["requestState"],
                       inputResponses={"confirm": YES})


async def test_answers_to_questions_the_state_never_asked_are_ignored() -> None:
    deleted: list[str] = []
    async with connect(deleting_app(deleted), initialize=False) as client:
        # A state that asked "first": an answer to "second", not asked yet, does not skip that question.
        first = await call(client, "delete_twice_confirmed", arguments={"path": "b.txt"})
        assert list(first["inputRequests"]) == ["first"]
        second = await call(client, "delete_twice_confirmed", arguments={"path": "b.txt"},
                            requestState=first["requestState"], inputResponses={"first": YES, "second": YES})
        assert second["resultType"] == "input_required" and list(second["inputRequests"]) == ["second"]
        assert deleted == []
        # Nor can a later round change an answer an earlier round already took.
        done = await call(client, "delete_twice_confirmed", arguments={"path": "b.txt"},
                          requestState=second["requestState"],
                          inputResponses={"first": {"action": "decline"}, "second": YES})
        assert done["content"][0]["text"] == "deleted b.txt" and deleted == ["b.txt"]


async def test_a_first_request_may_answer_up_front_and_its_other_answers_are_ignored() -> None:
    deleted: list[str] = []
    async with connect(deleting_app(deleted), initialize=False) as client:
        done = await call(client, "confirm_delete", arguments={"path": "c.txt"},
                          inputResponses={"confirm": YES, "unknown": {"action": "accept", "content": {}}})
        assert done["content"][0]["text"] == "deleted c.txt" and deleted == ["c.txt"]
