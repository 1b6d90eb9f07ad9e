"""2026-07-28 `subscriptions/listen` in memory: what the server agrees to, what it then delivers, and not-found.

A listener receives exactly the kinds it asked for *and* the server offers (acknowledged up front), on
its own subscription id; a kind the server did not agree to stays silent even if it changes later.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_kit import MCPError, MCPServer
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


def tools_and_notes() -> MCPServer:
    app = MCPServer("listen")  # tools and resources, no prompts

    @app.tool
    def one() -> str:
        return "1"

    @app.resource("note://{name}")
    def note(name: str) -> str:
        return f"note {name}"

    return app


async def test_listen_agrees_to_what_the_server_offers_and_delivers_only_that() -> None:
    app = tools_and_notes()
    asked = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": False,
             "resourceSubscriptions": ["note://a"]}
    answers: list[Any] = []
    async with connect(app, initialize=False) as client:
        async with anyio.create_task_group() as tg:
            async def listen() -> None:
                answers.append(await client.request("subscriptions/listen", {"_meta": META, "notifications": asked},
                                                    timeout=30))

            tg.start_soon(listen)
            ack = await client.wait_notification("notifications/subscriptions/acknowledged")
            subscription = ack["params"]["_meta"][SUBSCRIPTION]
            assert ack["params"]["notifications"] == {"toolsListChanged": True, "resourceSubscriptions": ["note://a"]}

            @app.prompt
            def later() -> str:  # prompts were asked for but not agreed: no prompts/list_changed
                """A prompt added after the listen began."""
                return "x"

            app.add_tool(lambda: "2", name="two")
            changed = await client.wait_notification("notifications/tools/list_changed")
            assert changed["params"]["_meta"] == {SUBSCRIPTION: subscription}
            app.notify_resource_updated("note://b")  # not subscribed
            app.notify_resource_updated("note://a")
            updated = await client.wait_notification("notifications/resources/updated")
            assert updated["params"] == {"uri": "note://a", "_meta": {SUBSCRIPTION: subscription}}
            await client.request("tools/list", {"_meta": META})  # everything sent before this has arrived
            assert [n["method"] for n in client.notifications] == [
                "notifications/subscriptions/acknowledged", "notifications/tools/list_changed",
                "notifications/resources/updated"]
            assert app.hub.subscribers("note://a") == 1
            await client.cancel(subscription)  # the client ends the stream: the listen is never answered
            with anyio.fail_after(5):
                while app.hub.subscribers("note://a"):
                    await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
    assert answers == []


async def test_listen_needs_a_notifications_object() -> None:
    async with connect(tools_and_notes(), initialize=False) as client:
        for params in ({"_meta": META}, {"_meta": META, "notifications": ["toolsListChanged"]}):
            with pytest.raises(MCPError) as refused:
                await client.request("subscriptions/listen", params)
            assert refused.value.code == -32602 and "'notifications'" in refused.value.message


async def test_a_missing_resource_is_invalid_params_in_2026_and_not_found_before() -> None:
    app = tools_and_notes()

    @app.resource("data://fixed")
    def fixed() -> str:
        return "fixed"

    async with connect(app, initialize=False) as client:
        with pytest.raises(MCPError) as modern:
            await client.request("resources/read", {"_meta": META, "uri": "data://missing"})
        assert (modern.value.code, modern.value.data) == (-32602, {"uri": "data://missing"})
    async with connect(app) as client:
        with pytest.raises(MCPError) as handshake:
            await client.read_resource("data://missing")
        assert (handshake.value.code, handshake.value.data) == (-32002, {"uri": "data://missing"})
