"""`RedisTaskStore`: task records in Redis, shared by every process of a deployment.

Keys (the backend's prefix, `mcp`), safe for Redis Cluster (each record under its own hash tag):

    mcp:task:{<task id>}          the record (`TaskRecord.to_dict()` as JSON); Redis expires it a
                                  minute after the task's own expiry (a safety net: the store
                                  itself treats a record past `created + ttl` as gone)
    mcp:{tasks}:all               sorted set of every task id, scored by expiry (the server-wide
                                  limit, and `purge_expired`)
    mcp:{tasks-of:<owner>}        sorted set of an owner's task ids, scored by creation (the
                                  per-owner limit, and listing in creation order)
    mcp:callers:tasks:<hash>      sorted set of a caller's task ids, scored by expiry (the
                                  per-caller limit: `backends/redis_counter.py`, counted by one
                                  script, so it holds however many processes create tasks)

Every change is a compare-and-set on one record (WATCH, read, compute, MULTI/EXEC, retried
when another process changed it in between); the change itself is computed by the in-memory
store's rules applied to that one record, so both stores keep the same rules. Creation checks
the limits and writes the record before it returns (durable creation). `wait_for_change` polls
the record's version (10 ms doubling to 200 ms), so it sees changes made on any process.

There is no worker lease (docs/extensions-design.md): a task whose process died stays `working`
until it expires).

Must not import: session, server, dispatcher, transports, context.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import anyio
import orjson

from .._backends.redis_backend import RedisBackend
from .._backends.redis_counter import RedisCallerCounter
from .._primitives.cursors import decode_cursor, encode_cursor, invalid_cursor
from ._memory import LISTING, NO_EXPIRY_MS, InMemoryTaskStore
from ._model import TaskRecord
from ._store import (
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MAX_TASKS,
    DEFAULT_MAX_TASKS_PER_CALLER,
    DEFAULT_MAX_TASKS_PER_OWNER,
    TaskLimitReached,
    caller_limit_reached,
)

if TYPE_CHECKING:
    from ._store import TaskStore

NO_EXPIRY = NO_EXPIRY_MS  # the sorted-set score of a task without a TTL
SAFETY_MS = 60_000  # Redis keeps a record this long past the task's expiry
CAS_ATTEMPTS = 50


class RedisTaskStore:
    """Task records in Redis (see the module docstring)."""

    def __init__(self, backend: RedisBackend, *, max_tasks: int = DEFAULT_MAX_TASKS,
                 max_tasks_per_owner: int = DEFAULT_MAX_TASKS_PER_OWNER,
                 max_tasks_per_caller: int = DEFAULT_MAX_TASKS_PER_CALLER,
                 max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES, clock: Callable[[], float] = time.time) -> None:
        if min(max_tasks, max_tasks_per_owner, max_tasks_per_caller, max_result_bytes) < 1:
            raise ValueError("task store limits must be at least 1")
        self.backend = backend
        self.client = backend.client
        self.max_tasks = max_tasks
        self.max_tasks_per_owner = max_tasks_per_owner
        self.max_tasks_per_caller = max_tasks_per_caller
        self.callers = RedisCallerCounter(backend, "tasks")
        self.max_result_bytes = max_result_bytes
        self._clock = clock
        prefix = backend.prefix
        self._all = f"{prefix}:{{tasks}}:all"
        self._prefix = prefix

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _key(self, task_id: str) -> str:
        return f"{self._prefix}:task:{{{task_id}}}"

    def _owner_key(self, owner: str) -> str:
        return f"{self._prefix}:{{tasks-of:{owner}}}"

    def _px(self, record: TaskRecord) -> int | None:
        expires = record.expires_at_ms
        return None if expires is None else max(1, expires - self.now_ms() + SAFETY_MS)

    async def _op(self, what: str, call: Awaitable[Any]) -> Any:
        return await self.backend._op(what, call)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ creating and reading

    async def create(self, record: TaskRecord) -> None:
        if record.status != "working":
            raise ValueError(f"a task starts as 'working', not {record.status!r}")
        await self.purge_expired()
        key = self._key(record.task_id)
        if await self._op("find task", self.client.exists(key)):
            raise ValueError(f"task {record.task_id!r} already exists")
        if await self._op("count tasks", self.client.zcard(self._all)) >= self.max_tasks:
            raise TaskLimitReached("server", self.max_tasks,
                                   f"This server holds {self.max_tasks} tasks, its limit; try again when some "
                                   "have finished and expired, or cancel tasks you no longer need")
        if record.owner is not None and await self._op(
                "count tasks", self.client.zcard(self._owner_key(record.owner))) >= self.max_tasks_per_owner:
            raise TaskLimitReached("owner", self.max_tasks_per_owner,
                                   f"You already have {self.max_tasks_per_owner} tasks, the limit per client; "
                                   "cancel tasks you no longer need or wait until finished ones expire")
        if record.caller is not None:
            now = self.now_ms()
            until = NO_EXPIRY if record.expires_at_ms is None else record.expires_at_ms
            room_at = await self.callers.acquire(record.caller, record.task_id, until_ms=until,
                                                 limit=self.max_tasks_per_caller, now_ms=now)
            if room_at is not None:
                raise caller_limit_reached(self.max_tasks_per_caller, room_at, now)
        if not await self._op("create task", self.client.set(key, orjson.dumps(record.to_dict()), nx=True,
                                                             px=self._px(record))):
            if record.caller is not None:
                await self.callers.release(record.caller, record.task_id)
            raise ValueError(f"task {record.task_id!r} already exists")
        expires = record.expires_at_ms
        await self._op(
            "index task", self.client.zadd(self._all, {record.task_id: NO_EXPIRY if expires is None else expires})
        )
        if record.owner is not None:
            await self._op("index task", self.client.zadd(self._owner_key(record.owner),
                                                          {record.task_id: record.created_at_ms}))

    async def get(self, task_id: str) -> TaskRecord | None:
        raw = await self._op("read task", self.client.get(self._key(task_id)))
        return await self._live(raw)

    async def _live(self, raw: bytes | None) -> TaskRecord | None:
        if raw is None:
            return None
        record = TaskRecord.from_dict(orjson.loads(raw))
        if record.expired(self.now_ms()):
            await self._drop(record)
            return None
        return record

    async def list_page(self, owner: str, cursor: str | None = None, limit: int = 50
                        ) -> tuple[list[TaskRecord], str | None]:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        await self.purge_expired()
        after: tuple[int, str] | None = None
        if cursor is not None:
            decoded = decode_cursor(LISTING, cursor)
            if not (isinstance(decoded, list) and len(decoded) == 2 and isinstance(decoded[0], int)
                    and isinstance(decoded[1], str)):
                raise invalid_cursor(cursor)
            after = (decoded[0], decoded[1])
        low = after[0] if after is not None else "-inf"
        members = await self._op("list tasks", self.client.zrangebyscore(self._owner_key(owner), low, "+inf",
                                                                          withscores=True))
        order = [(int(score), member.decode() if isinstance(member, bytes) else member) for member, score in members]
        if after is not None:
            order = [entry for entry in order if entry > after]
        page = order[:limit]
        records = [record for _, task_id in page if (record := await self.get(task_id)) is not None]
        next_cursor = encode_cursor(LISTING, list(page[-1])) if page and len(order) > limit else None
        return records, next_cursor

    # ------------------------------------------------------------------ changing (one record, compare-and-set)

    async def _change(self, task_id: str, change: Callable[[InMemoryTaskStore], Awaitable[Any]]) -> Any:
        """Apply `change` (an operation of the in-memory store) to the one record `task_id`, atomically."""
        key = self._key(task_id)
        for _ in range(CAS_ATTEMPTS):
            async with self.client.pipeline(transaction=True) as pipe:
                await self._op("watch task", pipe.watch(key))
                record = await self._live(await self._op("read task", pipe.get(key)))
                scratch = InMemoryTaskStore(max_result_bytes=self.max_result_bytes, clock=self._clock)
                if record is not None:
                    scratch._records[task_id] = record
                outcome = await change(scratch)
                updated = scratch._records.get(task_id)
                if record is None or updated is None or updated is record:
                    await pipe.unwatch()
                    return outcome
                pipe.multi()
                pipe.set(key, orjson.dumps(updated.to_dict()), px=self._px(updated))
                try:
                    await self._op("write task", pipe.execute())
                except Exception as exc:  # WatchError: changed meanwhile by another process, try again
                    if type(exc).__name__ != "WatchError":
                        raise
                    continue
                return outcome
        raise TimeoutError(f"task {task_id}: too many concurrent changes; try again")

    async def set_status_message(self, task_id: str, message: str | None) -> TaskRecord | None:
        return await self._change(task_id, lambda s: s.set_status_message(task_id, message))  # type: ignore[no-any-return]

    async def request_input(self, task_id: str, requests: Mapping[str, dict[str, Any]]
                            ) -> tuple[TaskRecord, dict[str, str]] | None:
        return await self._change(task_id, lambda s: s.request_input(task_id, requests))  # type: ignore[no-any-return]

    async def answer_input(self, task_id: str, responses: Mapping[str, Any]) -> TaskRecord | None:
        return await self._change(task_id, lambda s: s.answer_input(task_id, responses))  # type: ignore[no-any-return]

    async def take_answers(self, task_id: str, keys: Iterable[str]) -> dict[str, Any]:
        wanted = list(keys)
        return await self._change(task_id, lambda s: s.take_answers(task_id, wanted))  # type: ignore[no-any-return]

    async def finish(
        self,
        task_id: str,
        status: Literal["completed", "failed"],
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        status_message: str | None = None,
    ) -> TaskRecord | None:
        if status not in ("completed", "failed"):
            raise ValueError(f"finish makes a task 'completed' or 'failed', not {status!r}")
        return await self._change(task_id, lambda s: s.finish(  # type: ignore[no-any-return]
            task_id, status, result=result, error=error, status_message=status_message))

    async def cancel(self, task_id: str, status_message: str | None = None) -> TaskRecord | None:
        return await self._change(task_id, lambda s: s.cancel(task_id, status_message))  # type: ignore[no-any-return]

    async def delete(self, task_id: str) -> bool:
        raw = await self._op("read task", self.client.get(self._key(task_id)))
        if raw is None:
            return False
        record = TaskRecord.from_dict(orjson.loads(raw))
        if record.expired(self.now_ms()):
            await self._drop(record)
            return False
        await self._drop(record)
        return True

    async def purge_expired(self) -> int:
        due = await self._op("find expired tasks", self.client.zrangebyscore(self._all, "-inf", self.now_ms()))
        purged = 0
        for member in due:
            task_id = member.decode() if isinstance(member, bytes) else member
            raw = await self._op("read task", self.client.get(self._key(task_id)))
            if raw is not None:
                await self._drop(TaskRecord.from_dict(orjson.loads(raw)))
                purged += 1
            else:
                await self._op("unindex task", self.client.zrem(self._all, task_id))
        return purged

    async def _drop(self, record: TaskRecord) -> None:
        await self._op("delete task", self.client.delete(self._key(record.task_id)))
        await self._op("unindex task", self.client.zrem(self._all, record.task_id))
        if record.owner is not None:
            await self._op("unindex task", self.client.zrem(self._owner_key(record.owner), record.task_id))
        if record.caller is not None:
            await self.callers.release(record.caller, record.task_id)

    # ------------------------------------------------------------------ waiting

    async def wait_for_change(self, task_id: str, after_version: int, timeout: float) -> TaskRecord | None:
        deadline = anyio.current_time() + max(0.0, timeout)
        pause = 0.01
        while True:
            record = await self.get(task_id)
            remaining = deadline - anyio.current_time()
            if record is None or record.version > after_version or remaining <= 0:
                return record
            await anyio.sleep(min(pause, remaining))
            pause = min(pause * 2, 0.2)


if TYPE_CHECKING:  # mypy proves the class implements the protocol

    def _implements(store: RedisTaskStore) -> TaskStore:
        return store
