"""Subscriptions are bounded and validated: per-session and per-server caps, and the read's own checks.

Both styles are covered: `resources/subscribe` (handshake era) and `subscriptions/listen`
(2026-07-28, through the same in-memory session).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_kit import Context, MCPError, MCPServer, ResourceNotFound
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def build_app(**limits: int) -> MCPServer:
    app = MCPServer("limits", **limits)
    app.checked: list[str] = []  # type: ignore[attr-defined]

    @app.resource("note://{name}")
    def note(name: str) -> str:
        return f"note {name}"

    @app.resource_validator("note://{name}")
    def only_known(name: str, ctx: Context) -> None:
        app.checked.append(f"{name} {bool(ctx.session_id)}")  # type: ignore[attr-defined]
        if name.startswith("secret"):
            raise ResourceNotFound(f"note://{name}", f"note://{name}: access denied")

    @app.resource("page://{number}")
    def page(number: int) -> str:
        return f"page {number}"

    return app


async def error_of(call: Any) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await call
    return caught.value


async def test_per_session_cap_on_resources_subscribe() -> None:
    app = build_app(max_subscriptions_per_session=3)
    async with connect(app) as client:
        for name in ("a", "b", "c"):
            await client.subscribe(f"note://{name}")
        await client.subscribe("note://a")  # already held: not counted again
        refused = await error_of(client.subscribe("note://d"))
        assert refused.code == -32602 and "Too many resource subscriptions" in refused.message
        assert refused.data == {"limit": 3, "scope": "session", "held": 3}
        assert app.hub.subscribers("note://d") == 0 and app.hub.held_by(client.session) == 3
        await client.unsubscribe("note://a")
        await client.subscribe("note://d")
        assert app.hub.held_by(client.session) == 3
    assert app.hub.count == 0  # the session's end released everything


async def test_per_server_cap_across_sessions() -> None:
    app = build_app(max_subscriptions_per_session=3, max_subscriptions=4)
    async with connect(app) as alice, connect(app) as bob:
        for name in ("a", "b", "c"):
            await alice.subscribe(f"note://{name}")
        await bob.subscribe("note://a")
        refused = await error_of(bob.subscribe("note://b"))
        assert refused.code == -32602 and refused.data["scope"] == "server" and refused.data["limit"] == 4
        assert app.hub.count == 4
        assert await bob.request("ping") == {}  # the session lives on


async def test_a_flood_of_subscriptions_stays_bounded() -> None:
    app = build_app(max_subscriptions_per_session=50)
    async with connect(app) as client:
        refused = 0
        for n in range(300):
            try:
                await client.subscribe(f"note://n{n}")
            except MCPError:
                refused += 1
        assert refused == 250 and app.hub.count == 50


async def test_subscribe_is_refused_like_a_read() -> None:
    app = build_app()
    async with connect(app) as client:
        for uri in ("nothing://here", "note://secret-plans", "page://not-a-number"):
            read = await error_of(client.read_resource(uri))
            subscribed = await error_of(client.subscribe(uri))
            assert (subscribed.code, subscribed.message, subscribed.data) == (read.code, read.message, read.data), uri
            assert app.hub.subscribers(uri) == 0
        assert (await error_of(client.subscribe("nothing://here"))).code == -32002
        await client.subscribe("note://public")
    assert app.checked == ["secret-plans True", "secret-plans True", "public True"]  # type: ignore[attr-defined]


async def test_validator_must_name_a_registered_resource() -> None:
    app = MCPServer("x")
    with pytest.raises(ValueError, match="register it before its validator"):
        app.resource_validator("note://{name}")(lambda name: None)


async def listen(client: Any, notifications: dict[str, Any]) -> Any:
    return await client.request("subscriptions/listen", {"_meta": META, "notifications": notifications})


async def test_listen_is_bounded_and_validated() -> None:
    app = build_app(max_subscriptions_per_session=3)
    async with connect(app) as client:
        too_many = await error_of(listen(client, {"resourceSubscriptions": [f"note://{n}" for n in range(4)]}))
        assert too_many.code == -32602 and too_many.data["scope"] == "session"
        outside = await error_of(listen(client, {"resourceSubscriptions": ["note://ok", "note://secret"]}))
        read = await error_of(client.request("resources/read", {"_meta": META, "uri": "note://secret"}))
        assert (outside.code, outside.message, outside.data) == (read.code, read.message, read.data)
        assert outside.code == -32602 and outside.data == {"uri": "note://secret"}
        for bad in (5, "note://a", [1], [""]):
            malformed = await error_of(listen(client, {"resourceSubscriptions": bad}))
            assert malformed.code == -32602 and "resourceSubscriptions" in malformed.message
        assert app.hub.count == 0 and client.notifications_named("notifications/subscriptions/acknowledged") == []

        async with anyio.create_task_group() as tg:
            tg.start_soon(listen, client, {"resourceSubscriptions": ["note://a", "note://b"]})
            await client.wait_notification("notifications/subscriptions/acknowledged")
            assert app.hub.held_by(client.session) == 2
            await client.subscribe("note://c")  # the handshake-era subscription counts against the same session
            refused = await error_of(client.subscribe("note://d"))
            assert refused.data["scope"] == "session"
            tg.cancel_scope.cancel()
