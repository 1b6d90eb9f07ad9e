"""The backend primitives the stateful middleware stands on: token buckets, the key-value store with TTLs
and bounds, and invalidation, on the in-memory backend (with a clock the test moves) and on a real Redis
(two backends on one Redis are two processes of one deployment)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from mcp_kit._backends import MemoryBackend
from mcp_kit._backends import memory as memory_module
from mcp_kit._backends.base import StoreLimitExceeded
from mcp_kit._backends.redis_backend import RedisBackend, _digest
from tests.helpers.redis_support import RedisProcess

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def memory() -> tuple[MemoryBackend, Clock]:
    backend, clock = MemoryBackend(), Clock()
    backend.clock = clock
    return backend, clock


async def test_a_memory_bucket_allows_its_burst_then_refills_at_its_rate(memory: tuple[MemoryBackend, Clock]) -> None:
    backend, clock = memory
    taken = [await backend.take("b", rate=2, burst=3) for _ in range(4)]
    assert [t.allowed for t in taken] == [True, True, True, False]
    assert taken[3].retry_after == pytest.approx(0.5) and taken[2].remaining == pytest.approx(0)
    clock.now += 0.5
    assert (await backend.take("b", rate=2, burst=3)).allowed
    assert not (await backend.take("b", rate=2, burst=3)).allowed
    clock.now += 100  # refilled to its burst, never above
    assert [(await backend.take("b", rate=2, burst=3)).allowed for _ in range(4)] == [True, True, True, False]
    assert (await backend.take("other", rate=2, burst=3)).allowed  # buckets are independent


async def test_memory_buckets_are_bounded(memory: tuple[MemoryBackend, Clock], monkeypatch: pytest.MonkeyPatch) -> None:
    backend, _ = memory
    monkeypatch.setattr(memory_module, "MAX_BUCKETS", 3)
    for name in "abcde":
        await backend.take(name, rate=1, burst=1)
    assert list(backend._buckets) == ["c", "d", "e"]  # the least recently used forgotten: full again


async def test_memory_values_expire_and_are_bounded_per_value_and_namespace(
        memory: tuple[MemoryBackend, Clock]) -> None:
    backend, clock = memory
    await backend.kv_set("ns", "a", b"1", ttl=10)
    assert await backend.kv_get("ns", "a") == b"1"
    with pytest.raises(StoreLimitExceeded, match="a value of 5 bytes is over the 4-byte limit") as over:
        await backend.kv_set("ns", "b", b"12345", ttl=10, max_value=4)
    assert (over.value.limit, over.value.bound) == ("value", 4)
    await backend.kv_set("ns", "b", b"2", ttl=20, max_keys=2)
    with pytest.raises(StoreLimitExceeded, match="already holds 2 keys") as full:
        await backend.kv_set("ns", "c", b"3", ttl=10, max_keys=2)
    assert full.value.limit == "namespace"
    await backend.kv_set("ns", "b", b"22", ttl=20, max_keys=2)  # replacing a key is no new key
    clock.now += 10
    assert await backend.kv_get("ns", "a") is None  # expired
    await backend.kv_set("ns", "c", b"3", ttl=10, max_keys=2)  # room again: the expired key made way
    await backend.kv_delete("ns", "c")
    assert await backend.kv_get("ns", "c") is None and await backend.kv_get("ns", "b") == b"22"
    await backend.invalidate("ns")
    assert await backend.kv_get("ns", "b") is None


async def test_memory_values_are_bounded_in_all(memory: tuple[MemoryBackend, Clock], monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    backend, _ = memory
    monkeypatch.setattr(memory_module, "MAX_ENTRIES", 3)
    for key in "abcd":
        await backend.kv_set(f"ns-{key}", key, b"x", ttl=10)
    assert await backend.kv_get("ns-a", "a") is None and await backend.kv_get("ns-d", "d") == b"x"
    monkeypatch.setattr(memory_module, "MAX_BYTES", 4)
    await backend.kv_set("big", "k", b"1234", ttl=10)
    assert await backend.kv_get("ns-d", "d") is None and backend._bytes == 4



async def test_memory_values_written_not_evictable_are_never_forgotten_to_make_room(
        memory: tuple[MemoryBackend, Clock], monkeypatch: pytest.MonkeyPatch) -> None:
    backend, clock = memory
    monkeypatch.setattr(memory_module, "MAX_ENTRIES", 3)
    await backend.kv_set("oauth:signing-key", "current", b"key", ttl=3600, evictable=False)
    await backend.kv_set("oauth:refresh-family", "f", b"grant", ttl=10, evictable=False)
    for key in "abcdefgh":  # a cache filling the store many times over
        await backend.kv_set("cache", key, b"x", ttl=3600)
    assert await backend.kv_get("oauth:signing-key", "current") == b"key"
    assert await backend.kv_get("oauth:refresh-family", "f") == b"grant"
    assert await backend.kv_get("cache", "a") is None and await backend.kv_get("cache", "h") == b"x"  # these go
    assert await backend.kv_take("oauth:refresh-family", "f") == b"grant"  # take, delete, clear reach them too
    assert await backend.kv_get("oauth:refresh-family", "f") is None
    await backend.kv_set("oauth:refresh-family", "g", b"grant", ttl=10, evictable=False)
    await backend.kv_clear("oauth:refresh-family")
    assert await backend.kv_get("oauth:refresh-family", "g") is None and backend._kept_bytes == 3


async def test_memory_values_that_are_kept_are_bounded_and_refused_clearly_when_full(
        memory: tuple[MemoryBackend, Clock], monkeypatch: pytest.MonkeyPatch) -> None:
    backend, clock = memory
    monkeypatch.setattr(memory_module, "MAX_KEPT_ENTRIES", 2)
    await backend.kv_set("oauth:grant", "a", b"1", ttl=10, evictable=False)
    await backend.kv_set("oauth:grant", "b", b"2", ttl=100, evictable=False)
    with pytest.raises(StoreLimitExceeded, match="never evicted") as refused:
        await backend.kv_set("oauth:grant", "c", b"3", ttl=100, evictable=False)
    assert refused.value.limit == "store" and refused.value.bound == 2
    assert await backend.kv_get("oauth:grant", "a") == b"1"  # nothing was dropped to make room
    await backend.kv_set("oauth:grant", "b", b"22", ttl=100, evictable=False)  # an overwrite needs no room
    await backend.kv_set("cache", "x", b"x", ttl=100)  # the evictable store is not affected
    clock.now += 20  # "a" expired: it makes room (expired values are swept at most once a second)
    await backend.kv_set("oauth:grant", "c", b"3", ttl=100, evictable=False)
    assert await backend.kv_get("oauth:grant", "c") == b"3" and await backend.kv_get("oauth:grant", "b") == b"22"
    monkeypatch.setattr(memory_module, "MAX_KEPT_BYTES", 6)
    await backend.kv_delete("oauth:grant", "c")
    with pytest.raises(StoreLimitExceeded):  # room for one more value, but not for this many bytes
        await backend.kv_set("oauth:grant", "big", b"12345", ttl=100, evictable=False)


@pytest.fixture
async def two(redis: RedisProcess) -> AsyncIterator[tuple[RedisBackend, RedisBackend]]:
    first, second = RedisBackend(redis.url), RedisBackend(redis.url)
    await first.start()
    await second.start()
    try:
        yield first, second
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_redis_bucket_is_one_bucket_for_every_process(two: tuple[RedisBackend, RedisBackend]) -> None:
    first, second = two
    name = "shared-bucket"
    taken = [await (first if i % 2 else second).take(name, rate=10 / 60, burst=10) for i in range(14)]
    assert sum(t.allowed for t in taken) == 10
    refused = [t for t in taken if not t.allowed]
    assert all(0 < t.retry_after <= 6 for t in refused)
    ttl = await first.client.pttl(f"{first.prefix}:{{rl:{_digest(name)}}}")
    assert 0 < ttl <= 61_000  # forgotten once it would be full again


async def test_a_redis_bucket_refills(two: tuple[RedisBackend, RedisBackend]) -> None:
    first, second = two
    assert (await first.take("fast", rate=20, burst=1)).allowed
    refused = await second.take("fast", rate=20, burst=1)
    assert not refused.allowed and 0 < refused.retry_after <= 0.05
    with anyio.fail_after(5):
        while not (await second.take("fast", rate=20, burst=1)).allowed:
            await anyio.sleep(0.02)


async def test_redis_values_are_shared_expire_and_are_bounded(two: tuple[RedisBackend, RedisBackend]) -> None:
    first, second = two
    await first.kv_set("ns", "a", b"\x00one", ttl=30)
    assert await second.kv_get("ns", "a") == b"\x00one"
    with pytest.raises(StoreLimitExceeded, match="over the 4-byte limit"):
        await second.kv_set("ns", "b", b"12345", ttl=10, max_value=4)
    await second.kv_set("ns", "b", b"2", ttl=0.05, max_keys=2)
    with pytest.raises(StoreLimitExceeded, match="already holds 2 keys"):
        await first.kv_set("ns", "c", b"3", ttl=10, max_keys=2)
    with anyio.fail_after(5):
        while await first.kv_get("ns", "b") is not None:
            await anyio.sleep(0.02)
    await first.kv_set("ns", "c", b"3", ttl=10, max_keys=2)  # the expired key made way
    await second.kv_delete("ns", "c")
    assert await first.kv_get("ns", "c") is None
    values, expiries = first._kv_keys("ns")
    assert 0 < await first.client.pttl(values) <= 31_000 and 0 < await first.client.pttl(expiries) <= 31_000


async def test_an_invalidation_clears_the_namespace_and_reaches_the_other_processes(
        two: tuple[RedisBackend, RedisBackend]) -> None:
    first, second = two
    heard: list[str] = []
    got = anyio.Event()

    def on_invalidate(namespace: str) -> None:
        heard.append(namespace)
        got.set()

    second.on_invalidate(on_invalidate)
    await first.kv_set("cache:x", "k", b"v", ttl=30)
    await first.invalidate("cache:x")
    assert await second.kv_get("cache:x", "k") is None
    with anyio.fail_after(5):
        await got.wait()
    assert heard == ["cache:x"]
