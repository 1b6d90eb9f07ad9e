"""The backends' key-value store, as the OAuth facade uses it: a TTL per value, write-if-absent, and a
take that only one of many concurrent callers wins, in memory and on a real redis-server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from mcp_kit._backends import Backend, MemoryBackend
from mcp_kit._backends.redis_backend import RedisBackend
from tests.helpers.redis_support import redis_server

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "redis"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    if request.param == "memory":
        yield MemoryBackend()
        return
    with redis_server() as redis:
        shared = RedisBackend(redis.url + "?prefix=kvtest")
        try:
            yield shared
        finally:
            await shared.aclose()


NS = "oauth:test"


async def test_set_get_delete(backend: Backend) -> None:
    assert await backend.kv_get(NS, "a") is None
    assert await backend.kv_set(NS, "a", b"1", 30) is True
    assert await backend.kv_get(NS, "a") == b"1"
    assert await backend.kv_set(NS, "a", b"2", 3600) is True  # overwrites
    assert await backend.kv_get(NS, "a") == b"2"
    assert await backend.kv_get("oauth:other", "a") is None  # namespaces are apart
    await backend.kv_delete(NS, "a")
    assert await backend.kv_get(NS, "a") is None


async def test_only_new_writes_once(backend: Backend) -> None:
    assert await backend.kv_set(NS, "claim", b"first", 30, only_new=True) is True
    assert await backend.kv_set(NS, "claim", b"second", 30, only_new=True) is False
    assert await backend.kv_get(NS, "claim") == b"first"


async def test_a_record_lapses_after_its_ttl(backend: Backend) -> None:
    await backend.kv_set(NS, "brief", b"x", 0.05)
    with anyio.fail_after(5):
        while await backend.kv_get(NS, "brief") is not None:
            await anyio.sleep(0.02)
    assert await backend.kv_take(NS, "brief") is None
    assert await backend.kv_set(NS, "brief", b"y", 30, only_new=True) is True  # a lapsed key is absent


async def test_of_many_concurrent_takes_exactly_one_gets_the_value(backend: Backend) -> None:
    await backend.kv_set(NS, "code", b"secret", 30)
    got: list[bytes | None] = []

    async def take() -> None:
        got.append(await backend.kv_take(NS, "code"))

    async with anyio.create_task_group() as tg:
        for _ in range(20):
            tg.start_soon(take)
    assert got.count(b"secret") == 1 and got.count(None) == 19
    assert await backend.kv_get(NS, "code") is None
