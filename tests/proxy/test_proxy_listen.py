"""2026-07-28 `subscriptions/listen` on the proxy: a downstream client's listen stream for an upstream resource
gets `notifications/resources/updated` when the upstream resource changes, and list changes, whatever era the
upstream speaks (the kit upstream answers 2026-07-28; npm server-everything only the handshake era), and when
the change is another client's, on an upstream the proxy shares with it."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from mcp_kit import proxy
from mcp_kit.client import connect as connect_client
from mcp_kit.testing import Client, connect
from tests.helpers.support import http_server
from tests.proxy.npm_servers import MODULES, everything

pytestmark = pytest.mark.anyio

KIT = [sys.executable, "-m", "tests.helpers.kit_upstream"]
SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
ACK = "notifications/subscriptions/acknowledged"
UPDATED = "notifications/resources/updated"


class Stream:
    """One listen stream held open on a downstream client: its subscription id and what it agreed to."""

    def __init__(self, client: Client, ack: dict[str, Any]) -> None:
        self.client = client
        self.id = ack["params"]["_meta"][SUBSCRIPTION]
        self.agreed = ack["params"]["notifications"]

    def mine(self, params: dict[str, Any]) -> bool:
        return (params.get("_meta") or {}).get(SUBSCRIPTION) == self.id

    async def wait(self, method: str, **match: Any) -> dict[str, Any]:
        note = await self.client.wait_notification(
            method, timeout=20, where=lambda p: self.mine(p) and all(p.get(k) == v for k, v in match.items()))
        return note["params"]


async def listen(client: Client, tg: Any, notifications: dict[str, Any]) -> Stream:
    seen = len(client.notifications)
    tg.start_soon(lambda: client.request("subscriptions/listen", {"notifications": notifications},
                                         timeout=float("inf")))
    ack = await client.wait_notification(ACK, timeout=30, after=seen)
    return Stream(client, ack)


@pytest.fixture
async def downstream() -> AsyncIterator[Client]:
    async with connect(proxy(KIT), stateless=True) as client:
        yield client


async def test_a_listen_stream_hears_an_upstream_resource_change(downstream: Client) -> None:
    async with anyio.create_task_group() as tg:
        stream = await listen(downstream, tg, {"resourceSubscriptions": ["kit://motd"]})
        assert stream.agreed == {"resourceSubscriptions": ["kit://motd"]}
        assert (await downstream.call_tool("touch"))["content"][0]["text"] == "touched"
        updated = await stream.wait(UPDATED, uri="kit://motd")
        assert updated == {"uri": "kit://motd", "_meta": {SUBSCRIPTION: stream.id}}
        tg.cancel_scope.cancel()


async def test_a_listen_stream_hears_upstream_list_changes(downstream: Client) -> None:
    async with anyio.create_task_group() as tg:
        stream = await listen(downstream, tg, {"toolsListChanged": True})
        assert stream.agreed == {"toolsListChanged": True}
        await downstream.call_tool("grow")
        await stream.wait("notifications/tools/list_changed")
        assert "grown" in {tool["name"] for tool in await downstream.list_tools()}
        tg.cancel_scope.cancel()


async def test_a_listen_for_an_unknown_upstream_resource_is_refused(downstream: Client) -> None:
    from mcp_kit import MCPError

    with pytest.raises(MCPError) as caught:
        await downstream.request("subscriptions/listen", {"notifications": {"resourceSubscriptions": ["kit://nope"]}},
                                 timeout=30)
    assert caught.value.code == -32602


@pytest.mark.skipif(not (MODULES / "server-everything").exists(), reason="npm servers not installed (bin/test)")
async def test_a_listen_stream_through_a_handshake_era_upstream() -> None:
    async with connect(proxy(everything()), stateless=True) as client, anyio.create_task_group() as tg:
        uri = (await client.list_resources())[0]["uri"]
        stream = await listen(client, tg, {"resourceSubscriptions": [uri]})
        assert stream.agreed == {"resourceSubscriptions": [uri]}
        await client.call_tool("toggle-subscriber-updates", {})  # it tells subscribers at once, then every 5 s
        await stream.wait(UPDATED, uri=uri)
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("wanted", [{"toolsListChanged": True},
                                    {"toolsListChanged": True, "resourceSubscriptions": ["kit://motd"]}],
                         ids=["list-changes-only", "with-a-resource"])
async def test_a_listen_stream_hears_changes_another_client_makes_on_a_shared_http_upstream(
        wanted: dict[str, Any]) -> None:
    with http_server(["-m", "tests.helpers.kit_upstream"]) as base:
        async with connect(proxy(f"{base}/mcp"), stateless=True) as client, anyio.create_task_group() as tg:
            stream = await listen(client, tg, wanted)  # the listener's first request: it sends nothing more
            assert stream.agreed == wanted
            async with connect_client(f"{base}/mcp") as other:
                if "resourceSubscriptions" in wanted:
                    await other.call_tool("touch")
                    await stream.wait(UPDATED, uri="kit://motd")
                await other.call_tool("grow")
                await stream.wait("notifications/tools/list_changed")
            tg.cancel_scope.cancel()


async def test_closing_a_listen_stream_ends_its_upstream_subscription() -> None:
    with http_server(["-m", "tests.helpers.kit_upstream"]) as base:
        async with connect(proxy(f"{base}/mcp"), stateless=True) as client, anyio.create_task_group() as tg, \
                connect_client(f"{base}/mcp") as other:
            async def upstream_subscribers() -> int:
                return int((await other.call_tool("subscribers", {"uri": "kit://motd"}))["content"][0]["text"])

            stream = await listen(client, tg, {"resourceSubscriptions": ["kit://motd"]})
            assert await upstream_subscribers() == 1  # the proxy's own listen, upstream
            await client.cancel(stream.id)  # the client ends its stream
            with anyio.fail_after(20):
                while await upstream_subscribers():  # each look is a round trip to the upstream
                    pass
            tg.cancel_scope.cancel()


async def test_a_listen_stream_outlives_a_restart_of_the_upstream(downstream: Client) -> None:
    async def upstream_subscribers() -> int:
        return int((await downstream.call_tool("subscribers", {"uri": "kit://motd"}))["content"][0]["text"])

    async with anyio.create_task_group() as tg:
        stream = await listen(downstream, tg, {"resourceSubscriptions": ["kit://motd"]})
        before = (await downstream.call_tool("pid"))["content"][0]["text"]
        with anyio.fail_after(20):
            assert (await downstream.call_tool("die"))["isError"] is True  # the upstream exits mid-call
            while await upstream_subscribers() != 1:  # the restarted upstream: the proxy listens there again
                pass
        assert (await downstream.call_tool("pid"))["content"][0]["text"] != before
        await downstream.call_tool("touch")
        await stream.wait(UPDATED, uri="kit://motd")
        tg.cancel_scope.cancel()


async def test_a_listen_stream_on_a_plain_server_hears_a_mounted_proxys_resource_change() -> None:
    from mcp_kit import MCPError, MCPServer

    hub = MCPServer("hub")

    @hub.resource("hub://own")
    def own() -> str:
        return "own"

    hub.mount(proxy(KIT), "up")
    async with connect(hub, stateless=True) as client, anyio.create_task_group() as tg:
        stream = await listen(client, tg, {"resourceSubscriptions": ["hub://own", "kit://motd"]})
        assert stream.agreed == {"resourceSubscriptions": ["hub://own", "kit://motd"]}
        assert (await client.call_tool("up_touch"))["content"][0]["text"] == "touched"
        assert await stream.wait(UPDATED, uri="kit://motd")
        hub.notify_resource_updated("hub://own")
        assert await stream.wait(UPDATED, uri="hub://own")
        with pytest.raises(MCPError) as caught:
            await client.request("subscriptions/listen", {"notifications": {"resourceSubscriptions": ["kit://nope"]}},
                                 timeout=30)
        assert caught.value.code == -32602
        tg.cancel_scope.cancel()
