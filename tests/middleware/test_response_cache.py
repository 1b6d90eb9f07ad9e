"""`ResponseCache`: reads and lists answered from the backend while fresh, private entries per caller, public
ones shared, dropped when the resource or the list changes, and the cache hints it honours."""

from __future__ import annotations

import anyio
import pytest

from mcp_kit import MCPServer
from mcp_kit._backends import MemoryBackend
from mcp_kit.middleware import ResponseCache
from mcp_kit.testing import connect

pytestmark = pytest.mark.anyio


def cached_app(**options: object) -> tuple[MCPServer, list[str]]:
    reads: list[str] = []
    app = MCPServer("cached", cache_scope=str(options.pop("cache_scope", "private")),
                    middleware=[ResponseCache(**options)])  # type: ignore[arg-type]

    @app.resource("demo://page")
    def page() -> str:
        reads.append("page")
        return f"read {len(reads)}"

    @app.tool
    def first() -> str:
        return "1"

    return app, reads


async def wait_for(condition: object) -> None:
    with anyio.fail_after(5):
        while not condition():  # type: ignore[operator]
            await anyio.sleep(0.01)


async def test_a_read_is_cached_until_the_resource_changes() -> None:
    app, reads = cached_app()
    async with connect(app) as client:
        assert (await client.read_resource("demo://page"))[0]["text"] == "read 1"
        assert (await client.read_resource("demo://page"))[0]["text"] == "read 1"
        assert reads == ["page"]
        app.notify_resource_updated("demo://page")
        await wait_for(lambda: not app.backend._values)  # dropped before subscribers hear of the change
        assert (await client.read_resource("demo://page"))[0]["text"] == "read 2"


async def test_private_entries_are_per_caller_and_public_ones_shared() -> None:
    app, reads = cached_app()
    async with connect(app) as one, connect(app) as two:
        await one.read_resource("demo://page")
        await two.read_resource("demo://page")
        await one.read_resource("demo://page")
    assert len(reads) == 2  # each session its own entry
    public, shared_reads = cached_app(cache_scope="public")
    async with connect(public) as one, connect(public) as two:
        await one.read_resource("demo://page")
        assert (await two.read_resource("demo://page"))[0]["text"] == "read 1"
    assert len(shared_reads) == 1


async def test_a_list_is_cached_until_it_changes() -> None:
    app, _ = cached_app()
    async with connect(app) as client:
        assert [t["name"] for t in await client.list_tools()] == ["first"]

        @app.tool
        def second() -> str:
            return "2"

        await client.wait_notification("notifications/tools/list_changed")  # sent once the cache dropped the list
        assert [t["name"] for t in await client.list_tools()] == ["first", "second"]


async def test_a_ttl_of_0_is_not_cached_and_a_ttl_expires() -> None:
    app, reads = cached_app(ttl_ms=0)
    async with connect(app) as client:
        await client.read_resource("demo://page")
        await client.read_resource("demo://page")
    assert len(reads) == 2
    backend, now = MemoryBackend(), [0.0]
    backend.clock = lambda: now[0]
    app, reads = cached_app(ttl_ms=1000, backend=backend)
    async with connect(app) as client:
        await client.read_resource("demo://page")
        now[0] += 0.5
        await client.read_resource("demo://page")
        now[0] += 0.6
        assert (await client.read_resource("demo://page"))[0]["text"] == "read 2"


def test_scopes_are_public_or_private() -> None:
    with pytest.raises(ValueError, match="cacheScope is 'public' or 'private'"):
        ResponseCache(scope="shared")  # type: ignore[arg-type]
