"""The TaskStore rules (tests/tasks/test_store.py) on `RedisTaskStore` against a real redis-server,
plus what only a shared store shows: a task created through one process is read, answered and
finished through another (two store instances, two Redis connections)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mcp_kit._backends.redis_backend import RedisBackend
from mcp_kit.tasks import TaskLimitReached
from mcp_kit.tasks._redis_store import RedisTaskStore
from tests.helpers.redis_support import RedisProcess
from tests.tasks.test_store import *  # noqa: F403  (the same tests, run with the Redis store below)
from tests.tasks.test_store import RESULT, Clock, new

pytestmark = pytest.mark.anyio


@pytest.fixture
async def backend(redis: RedisProcess) -> AsyncIterator[RedisBackend]:
    backend = RedisBackend(redis.url)
    await backend.client.flushdb()
    yield backend
    await backend.aclose()


@pytest.fixture
def store(backend: RedisBackend, clock: Clock) -> RedisTaskStore:  # type: ignore[override]
    return RedisTaskStore(backend, clock=clock)


async def test_a_task_created_on_one_process_is_answered_and_finished_on_another(
        backend: RedisBackend, redis: RedisProcess, clock: Clock) -> None:
    other = RedisBackend(redis.url)
    try:
        here, there = RedisTaskStore(backend, clock=clock), RedisTaskStore(other, clock=clock)
        task = new(clock)
        await here.create(task)
        asked = await there.request_input(task.task_id, {"confirm": {"method": "elicitation/create", "params": {}}})
        assert asked is not None and asked[0].status == "input_required"
        answered = await here.answer_input(task.task_id, {"confirm": {"action": "accept"}})
        assert answered is not None and answered.status == "working"
        done = await there.finish(task.task_id, "completed", result=RESULT)
        assert done is not None and done.status == "completed"
        seen = await here.wait_for_change(task.task_id, task.version, 1.0)
        assert seen is not None and seen.result == RESULT
    finally:
        await other.aclose()


# The tests above that build their own InMemoryTaskStore run in test_task_store.py; here, their Redis versions.
test_tasks_are_bounded_per_owner_and_per_server = None  # type: ignore[assignment]
test_expired_tasks_free_their_room = None  # type: ignore[assignment]
test_a_result_too_large_to_keep_fails_the_task = None  # type: ignore[assignment]
test_delete_wakes_waiters_and_frees_the_owner = None  # type: ignore[assignment]
test_no_sequence_of_operations_breaks_the_state_machine = None  # type: ignore[assignment]


async def test_a_task_lives_exactly_its_ttl(store: RedisTaskStore, backend: RedisBackend,  # type: ignore[no-redef]
                                            clock: Clock) -> None:
    task = new(clock, ttl_ms=10_000)
    await store.create(task)
    assert 0 < await backend.client.pttl(f"mcp:task:{{{task.task_id}}}") <= 70_000  # Redis expires it too
    clock.advance(9_999)
    assert await store.get(task.task_id) is not None
    clock.advance(1)
    assert await store.get(task.task_id) is None
    assert await backend.client.zcard("mcp:{tasks}:all") == 0


async def test_redis_tasks_are_bounded_per_owner_and_per_server_and_expiry_frees_room(
        backend: RedisBackend, clock: Clock) -> None:
    store = RedisTaskStore(backend, max_tasks=3, max_tasks_per_owner=2, max_result_bytes=64, clock=clock)
    await store.create(new(clock, owner="a", ttl_ms=1_000))
    await store.create(new(clock, owner="a"))
    with pytest.raises(TaskLimitReached) as per_owner:
        await store.create(new(clock, owner="a"))
    assert (per_owner.value.bound, per_owner.value.limit) == ("owner", 2)
    big = new(clock, owner=None)
    await store.create(big)
    with pytest.raises(TaskLimitReached) as per_server:
        await store.create(new(clock, owner="b"))
    assert (per_server.value.bound, per_server.value.limit) == ("server", 3)
    clock.advance(1_000)  # the first task expired: its room is free again
    await store.create(new(clock, owner="a"))
    failed = await store.finish(big.task_id, "completed", result={"text": "x" * 100})
    assert failed is not None and failed.status == "failed" and "more than the 64" in failed.error["message"]
    assert await store.delete(big.task_id) and not await store.delete(big.task_id)
    with pytest.raises(ValueError, match="finish makes a task"):
        await store.finish(big.task_id, "cancelled")  # type: ignore[arg-type]
