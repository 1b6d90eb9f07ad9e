"""Resources and templates: listing, reading, URI variables, not-found, subscriptions and watchers."""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import pytest

from mcp_kit import Context, MCPError, MCPServer, ResourceNotFound
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio

UPDATED = "notifications/resources/updated"


class WatchLog(list[str]):
    """The watcher's `start`/`stop` lines, and a way to wait for one (an event, not a sleep)."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = anyio.Event()

    def append(self, line: str) -> None:
        super().append(line)
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, line: str, timeout: float = 5) -> None:
        with anyio.fail_after(timeout):
            while line not in self:
                await self._changed.wait()


def build_app() -> MCPServer:
    app = MCPServer("res")
    app.watch_log = WatchLog()  # type: ignore[attr-defined]

    @app.resource("text://hello", title="Greeting", mime_type="text/plain", icons=[{"src": "https://x/i.png"}])
    def hello() -> str:
        """A friendly greeting."""
        return "Hello, world"

    @app.resource("bin://bytes", mime_type="application/octet-stream")
    def raw() -> bytes:
        return b"\x00\x01\xfe\xff"

    @app.resource("json://config")
    async def config() -> dict[str, Any]:
        return {"debug": True, "level": 3}

    @app.resource("user://{name}/posts/{post_id}", mime_type="text/plain")
    def post(name: str, post_id: int) -> str:
        """A post by a user."""
        return f"{name}|{post_id}|{type(post_id).__name__}"

    @app.resource("file://{+path}", mime_type="text/plain")
    def file(path: str, ctx: Context) -> str:
        if path.startswith("missing"):
            raise ResourceNotFound(f"file://{path}", f"No file at {path}")
        return f"path={path} session={bool(ctx.session_id)}"

    @app.watcher("user://{name}/posts/{post_id}")
    async def watch_post(uri: str, name: str, post_id: str) -> None:
        app.watch_log.append(f"start {uri} {name} {post_id}")  # type: ignore[attr-defined]
        try:
            while True:
                await anyio.sleep(0.02)  # the behaviour under test: a watcher that polls its source
                app.notify_resource_updated(uri)
        finally:
            app.watch_log.append(f"stop {uri}")  # type: ignore[attr-defined]

    return app


async def test_list_resources_and_templates() -> None:
    async with connect(build_app()) as client:
        resources = {r["uri"]: r for r in await client.list_resources()}
        assert list(resources) == ["text://hello", "bin://bytes", "json://config"]
        assert resources["text://hello"] == {
            "uri": "text://hello", "name": "hello", "title": "Greeting", "description": "A friendly greeting.",
            "mimeType": "text/plain", "icons": [{"src": "https://x/i.png"}]}
        templates = await client.list_resource_templates()
        assert [t["uriTemplate"] for t in templates] == ["user://{name}/posts/{post_id}", "file://{+path}"]
        assert templates[0]["name"] == "post" and templates[0]["description"] == "A post by a user."


@pytest.mark.parametrize(("version", "keys"), [("2024-11-05", {"uri", "name", "description", "mimeType"}),
                                               ("2025-06-18", {"uri", "name", "title", "description", "mimeType"})])
async def test_resource_fields_by_version(version: str, keys: set[str]) -> None:
    async with connect(build_app(), protocol_version=version) as client:
        resources = {r["uri"]: r for r in await client.list_resources()}
        assert set(resources["text://hello"]) == keys


async def test_read_text_blob_and_json() -> None:
    async with connect(build_app()) as client:
        assert await client.read_resource("text://hello") == [
            {"uri": "text://hello", "mimeType": "text/plain", "text": "Hello, world"}]
        (blob,) = await client.read_resource("bin://bytes")
        assert blob["uri"] == "bin://bytes" and blob["mimeType"] == "application/octet-stream"
        assert base64.b64decode(blob["blob"]) == b"\x00\x01\xfe\xff" and "text" not in blob
        (config,) = await client.read_resource("json://config")
        assert config["mimeType"] == "application/json" and json.loads(config["text"]) == {"debug": True, "level": 3}


async def test_template_variables_are_bound_converted_and_percent_decoded() -> None:
    async with connect(build_app()) as client:
        (content,) = await client.read_resource("user://ada%20lovelace/posts/17")
        assert content["text"] == "ada lovelace|17|int"
        assert content["uri"] == "user://ada%20lovelace/posts/17"


async def test_reserved_expansion_matches_slashes() -> None:
    async with connect(build_app()) as client:
        (content,) = await client.read_resource("file://docs/a%20b/c.txt")
        assert content["text"] == "path=docs/a b/c.txt session=True"


async def test_plain_variable_does_not_match_a_slash() -> None:
    async with connect(build_app()) as client:
        with pytest.raises(MCPError) as error:
            await client.read_resource("user://a/b/posts/1")
        assert error.value.code == -32002


async def test_bad_typed_variable_is_invalid_params() -> None:
    async with connect(build_app()) as client:
        with pytest.raises(MCPError) as error:
            await client.read_resource("user://ada/posts/seventeen")
        assert error.value.code == -32602 and "post_id" in error.value.message


@pytest.mark.parametrize("uri", ["nope://x", "text://hello/extra", "file://missing/thing"])
async def test_not_found_is_32002_with_the_uri(uri: str) -> None:
    async with connect(build_app()) as client:
        with pytest.raises(MCPError) as error:
            await client.read_resource(uri)
        assert error.value.code == -32002
        assert error.value.data == {"uri": uri}


async def test_read_without_uri_is_invalid_params() -> None:
    async with connect(build_app()) as client:
        with pytest.raises(MCPError) as error:
            await client.request("resources/read", {})
        assert error.value.code == -32602


async def test_resource_lister_adds_dynamic_entries() -> None:
    app = build_app()
    count = {"n": 0}

    @app.resource_lister
    def dynamic() -> list[dict[str, Any]]:
        count["n"] += 1
        return [{"uri": f"dyn://{count['n']}", "name": "dyn"}]

    async with connect(app) as client:
        assert (await client.list_resources())[-1]["uri"] == "dyn://1"
        assert (await client.list_resources())[-1]["uri"] == "dyn://2"


# ---------------------------------------------------------------------------- subscriptions


async def test_updates_reach_only_the_subscribed_session_and_stop_after_unsubscribe() -> None:
    app = build_app()
    async with connect(app) as alice, connect(app) as bob:
        await alice.subscribe("text://hello")
        app.notify_resource_updated("text://hello")
        note = await alice.wait_notification(UPDATED)
        assert note["params"] == {"uri": "text://hello"}
        app.notify_resource_updated("json://config")  # nobody subscribed
        await alice.request("ping")
        await bob.request("ping")
        assert bob.notifications_named(UPDATED) == []
        assert len(alice.notifications_named(UPDATED)) == 1

        await bob.subscribe("text://hello")
        mark = len(alice.notifications)
        app.notify_resource_updated("text://hello")
        await bob.wait_notification(UPDATED)
        await alice.wait_notification(UPDATED, after=mark)
        assert len(alice.notifications_named(UPDATED)) == 2

        await alice.unsubscribe("text://hello")
        app.notify_resource_updated("text://hello")
        await bob.request("ping")
        await alice.request("ping")
        assert len(alice.notifications_named(UPDATED)) == 2
        assert len(bob.notifications_named(UPDATED)) == 2


async def test_closed_session_is_dropped_from_subscriptions() -> None:
    app = build_app()
    async with connect(app) as client:
        await client.subscribe("text://hello")
        assert app.hub.subscribers("text://hello") == 1
    assert app.hub.subscribers("text://hello") == 0


async def test_watcher_runs_from_first_subscribe_until_last_unsubscribe() -> None:
    app = build_app()
    uri = "user://ada/posts/3"
    async with connect(app) as alice, connect(app) as bob:
        assert app.watch_log == []  # type: ignore[attr-defined]
        await alice.subscribe(uri)
        await bob.subscribe(uri)
        await alice.wait_notification(UPDATED, where=lambda p: p["uri"] == uri)
        await bob.wait_notification(UPDATED, where=lambda p: p["uri"] == uri)
        assert app.watch_log == [f"start {uri} ada 3"]  # type: ignore[attr-defined]  # one watcher for both

        await alice.unsubscribe(uri)
        await bob.wait_notification(UPDATED, after=len(bob.notifications))  # bob still listens: still polling
        assert app.hub.watching(uri) and app.watch_log == [f"start {uri} ada 3"]  # type: ignore[attr-defined]
        await bob.unsubscribe(uri)
        await app.watch_log.wait_for(f"stop {uri}")  # type: ignore[attr-defined]  # the last one left: it stopped
        assert not app.hub.watching(uri)
        assert app.watch_log == [f"start {uri} ada 3", f"stop {uri}"]  # type: ignore[attr-defined]
        await bob.request("ping")  # whatever was sent before the stop has arrived
        seen = len(bob.notifications_named(UPDATED))
        app.notify_resource_updated(uri)  # nobody listens any more
        await bob.request("ping")
        assert len(bob.notifications_named(UPDATED)) == seen

        await alice.subscribe(uri)  # a new first subscriber starts it again
        await alice.wait_notification(UPDATED, after=len(alice.notifications))
        assert app.watch_log[-1] == f"start {uri} ada 3"  # type: ignore[attr-defined]


async def test_watcher_is_cancelled_when_the_subscriber_disconnects() -> None:
    app = build_app()
    uri = "user://bo/posts/1"
    async with connect(app) as witness:  # keeps the server running: the disconnect, not a shutdown, stops the watcher
        async with connect(app) as client:
            await client.subscribe(uri)
            await client.wait_notification(UPDATED)
            assert app.hub.watching(uri)
        await app.watch_log.wait_for(f"stop {uri}")  # type: ignore[attr-defined]
        assert not app.hub.watching(uri)
        await witness.request("ping")
    assert app.watch_log == [f"start {uri} bo 1", f"stop {uri}"]  # type: ignore[attr-defined]
