"""The client's roots in the 2026-07-28 era: asked for where an input round can carry the question, [] elsewhere.

Only tools/call, prompts/get and resources/read may answer `input_required`; the envelope carries no
roots. A request that cannot ask (`subscriptions/listen`, whose URIs are checked as reads) sees `ctx.list_roots()`
as [] even when the client declares `roots`, so a validator that narrows by roots falls back to the
server's own bounds, as it does for a client offering none, instead of failing the request.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_kit import Context, MCPServer
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

WITH_ROOTS = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
}
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


def root_checked_notes(seen: list[tuple[str, list[str], bool]]) -> MCPServer:
    """Notes whose reader and validator look at the client's roots, recording what they saw."""
    app = MCPServer("roots-seen")

    async def roots_of(ctx: Context) -> list[str]:
        return [str(root.uri) for root in await ctx.list_roots()]

    @app.resource("note://{name}")
    async def note(name: str, ctx: Context) -> str:
        seen.append(("read", await roots_of(ctx), ctx.client_supports("roots")))
        return f"note {name}"

    @app.resource_validator("note://{name}")
    async def check_note(name: str, ctx: Context) -> None:
        seen.append(("check", await roots_of(ctx), ctx.client_supports("roots")))

    return app


async def test_listen_with_roots_declared_is_acknowledged_and_its_validator_sees_no_roots() -> None:
    seen: list[tuple[str, list[str], bool]] = []
    app = root_checked_notes(seen)
    answers: list[Any] = []
    async with connect(app, initialize=False) as client:
        async with anyio.create_task_group() as tg:
            async def listen() -> None:
                answers.append(await client.request("subscriptions/listen", {
                    "_meta": WITH_ROOTS, "notifications": {"resourceSubscriptions": ["note://a"]}}, timeout=30))

            tg.start_soon(listen)
            with anyio.fail_after(10):
                ack = await client.wait_notification("notifications/subscriptions/acknowledged")
            assert ack["params"]["notifications"] == {"resourceSubscriptions": ["note://a"]}
            app.notify_resource_updated("note://a")
            with anyio.fail_after(10):
                updated = await client.wait_notification("notifications/resources/updated")
            assert updated["params"]["uri"] == "note://a"
            await client.cancel(ack["params"]["_meta"][SUBSCRIPTION])
            tg.cancel_scope.cancel()
    assert answers == []  # never an error: the stream was open until the client ended it
    assert seen == [("check", [], True)]  # the client declares roots; this request cannot ask for them


async def test_a_read_still_asks_for_the_roots_in_an_input_round() -> None:
    seen: list[tuple[str, list[str], bool]] = []
    roots = {"roots": [{"uri": "file:///work", "name": "work"}]}
    async with connect(root_checked_notes(seen), initialize=False) as client:
        params: dict[str, Any] = {"_meta": WITH_ROOTS, "uri": "note://a"}
        answer = await client.request("resources/read", params)
        for _ in range(3):  # the validator and the reader each ask (one question a round)
            if answer["resultType"] != "input_required":
                break
            assert {question["method"] for question in answer["inputRequests"].values()} == {"roots/list"}
            answer = await client.request("resources/read", {
                **params, "requestState": answer["requestState"],
                "inputResponses": {key: roots for key in answer["inputRequests"]}})
    assert answer["resultType"] == "complete" and answer["contents"][0]["text"] == "note a"
    assert ("check", ["file:///work"], True) in seen and ("read", ["file:///work"], True) in seen
