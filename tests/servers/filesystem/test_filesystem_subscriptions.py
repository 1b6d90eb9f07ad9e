"""File subscriptions: one watch for the whole server, files whose directory appears later, both protocol eras."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from mcp_kit import MCPError
from mcp_kit.testing import connect
from servers.filesystem.server import build_server
from servers.filesystem.uris import file_uri
from tests.helpers.fs_layout import Layout

pytestmark = pytest.mark.anyio
UPDATED = "notifications/resources/updated"
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def inotify_instances() -> int:
    """inotify instances this process holds (Linux)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
        except OSError:
            pass
    return count


async def wait_until(condition, timeout: float = 10) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.01)


async def changed(client, uri: str, change, timeout: float = 20) -> None:
    """Make `change` and wait for the update notification of `uri`."""
    seen = len(client.notifications)
    change()
    await client.wait_notification(UPDATED, timeout=timeout, after=seen, where=lambda p: p["uri"] == uri)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts inotify instances through /proc")
async def test_many_subscriptions_share_one_watch(layout: Layout) -> None:
    """On main every subscription started its own watcher: 20 subscriptions, 20 inotify instances."""
    app = build_server([layout.root])
    files = []
    for d in range(5):
        (layout.root / f"d{d}").mkdir()
        for f in range(4):
            files.append(layout.root / f"d{d}" / f"f{f}.txt")
    files[0].write_text("exists")
    before = inotify_instances()
    async with connect(app) as client:
        watch = app.lifespan_state
        for path in files:
            await client.subscribe(file_uri(path))
        await wait_until(lambda: len(watch.directories) == 5)
        assert inotify_instances() == before + 1
        await changed(client, file_uri(files[7]), lambda: files[7].write_text("new"))
        await changed(client, file_uri(files[0]), files[0].unlink)
        for path in files:
            await client.unsubscribe(file_uri(path))
        await wait_until(lambda: watch.directories == ())
        await wait_until(lambda: inotify_instances() == before)  # nothing watched, nothing held


async def test_a_file_whose_directory_does_not_exist_yet(layout: Layout) -> None:
    app = build_server([layout.root])
    target = layout.root / "later" / "deeper" / "file.txt"
    uri = file_uri(target)
    async with connect(app) as client:
        await client.subscribe(uri)
        await wait_until(lambda: app.lifespan_state.directories == (str(layout.root),))

        def appear() -> None:
            target.parent.mkdir(parents=True)
            target.write_text("here")

        await changed(client, uri, appear)
        await wait_until(lambda: app.lifespan_state.directories == (str(target.parent),))
        await changed(client, uri, lambda: target.write_text("again"))
        assert client.notifications_named("notifications/message") == []


async def test_a_subscribed_directory_reports_new_entries(layout: Layout) -> None:
    app = build_server([layout.root])
    uri = file_uri(layout.root / "sub")
    async with connect(app) as client:
        await client.subscribe(uri)
        await wait_until(lambda: str(layout.root / "sub") in app.lifespan_state.directories)
        await changed(client, uri, lambda: (layout.root / "sub" / "added.txt").write_text("x"))
        assert "[FILE] added.txt" in (await client.read_resource(uri))[0]["text"]


async def test_a_change_before_the_watch_starts_is_not_lost(layout: Layout) -> None:
    app = build_server([layout.root])
    target = layout.root / "ok.txt"
    uri = file_uri(target)
    async with connect(app) as client:
        seen = len(client.notifications)
        await client.subscribe(uri)
        target.write_text("changed at once")  # before the notifier has started
        await client.wait_notification(UPDATED, timeout=20, after=seen, where=lambda p: p["uri"] == uri)


async def test_listen_stream_gets_file_updates_and_outside_uris_are_refused(layout: Layout) -> None:
    app = build_server([layout.root])
    uri = file_uri(layout.root / "ok.txt")
    async with connect(app) as client:
        with pytest.raises(MCPError) as refused:
            await client.request("subscriptions/listen", {"_meta": MODERN, "notifications": {
                "resourceSubscriptions": [uri, file_uri(layout.outside / "secret.txt")]}})
        assert refused.value.code == -32602 and "Access denied" in refused.value.message
        assert app.hub.count == 0
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.request, "subscriptions/listen",
                          {"_meta": MODERN, "notifications": {"resourceSubscriptions": [uri]}})
            await client.wait_notification("notifications/subscriptions/acknowledged")
            await changed(client, uri, lambda: (layout.root / "ok.txt").write_text("listened"))
            tg.cancel_scope.cancel()


async def test_subscription_limit_reaches_the_filesystem_server(layout: Layout) -> None:
    from servers.filesystem import server as server_module

    app = server_module.build_server([layout.root])
    app.hub.per_session = 2
    async with connect(app) as client:
        await client.subscribe(file_uri(layout.root / "a"))
        await client.subscribe(file_uri(layout.root / "b"))
        with pytest.raises(MCPError) as refused:
            await client.subscribe(file_uri(layout.root / "c"))
    assert refused.value.code == -32602 and refused.value.data["scope"] == "session"


@pytest.mark.timeout(120)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts inotify instances through /proc")
async def test_two_hundred_subscriptions_one_inotify_instance(tmp_path: Path) -> None:
    """The per-user limit is 128 instances by default: 200 watchers of their own would exhaust it."""
    for d in range(20):
        (tmp_path / f"d{d}").mkdir()
    app = build_server([tmp_path])
    before = inotify_instances()
    async with connect(app) as client:
        for n in range(200):
            await client.subscribe(file_uri(tmp_path / f"d{n % 20}" / f"f{n}.txt"))
        await wait_until(lambda: len(app.lifespan_state.directories) == 20, timeout=30)
        assert app.hub.count == 200 and inotify_instances() == before + 1
        last = tmp_path / "d19" / "f199.txt"
        await changed(client, file_uri(last), lambda: last.write_text("seen"))
