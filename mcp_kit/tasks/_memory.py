"""`InMemoryTaskStore`: the default task store, for one process.

Records live in a dict; an owner's tasks in a list sorted by (creation time, id) for listing; a
heap by expiry time lets expired tasks go in O(log n) whenever the store is used (and through
`purge_expired`); each caller's live tasks in an `InMemoryCallerCounter` (`callers.py`). Each
operation runs without awaiting in between, so on one event loop it is atomic. The clock is
injectable (`clock=` returns seconds since the epoch) so tests can move time. Call it from the
event loop only (sync tools reach it through their context, which hops to the loop).

Must not import: session, server, dispatcher, transports, context.
"""

from __future__ import annotations

import bisect
import heapq
import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import anyio

from .._primitives.cursors import decode_cursor, encode_cursor, invalid_cursor
from .._protocol.callers import InMemoryCallerCounter
from ._model import TaskRecord
from ._store import (
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MAX_TASKS,
    DEFAULT_MAX_TASKS_PER_CALLER,
    DEFAULT_MAX_TASKS_PER_OWNER,
    MAX_INPUT_KEYS,
    MAX_OUTSTANDING_INPUTS,
    MAX_STATUS_MESSAGE,
    TaskLimitReached,
    TaskStore,
    caller_limit_reached,
)

_dumps: Callable[[Any], bytes]
try:  # orjson measures a large result several times faster
    import orjson

    _dumps = orjson.dumps
except ImportError:  # pragma: no cover - orjson is a dependency; kept for vendored copies
    def _dumps(value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":")).encode("utf-8")

LISTING = "tasks/list"
NO_EXPIRY_MS = 2**53  # when the caller count of a task without a TTL lapses: never


class InMemoryTaskStore:
    """Task records in this process's memory, bounded in total, per owner and per caller."""

    def __init__(self, *, max_tasks: int = DEFAULT_MAX_TASKS, max_tasks_per_owner: int = DEFAULT_MAX_TASKS_PER_OWNER,
                 max_tasks_per_caller: int = DEFAULT_MAX_TASKS_PER_CALLER,
                 max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES, clock: Callable[[], float] = time.time) -> None:
        if min(max_tasks, max_tasks_per_owner, max_tasks_per_caller, max_result_bytes) < 1:
            raise ValueError("task store limits must be at least 1")
        self.max_tasks = max_tasks
        self.max_tasks_per_owner = max_tasks_per_owner
        self.max_tasks_per_caller = max_tasks_per_caller
        self.max_result_bytes = max_result_bytes
        self._clock = clock
        self._callers = InMemoryCallerCounter()
        self._records: dict[str, TaskRecord] = {}
        self._by_owner: dict[str, list[tuple[int, str]]] = {}
        self._expiry: list[tuple[int, str]] = []
        self._events: dict[str, anyio.Event] = {}

    def __len__(self) -> int:
        return len(self._records)

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    # ------------------------------------------------------------------ creating and reading

    async def create(self, record: TaskRecord) -> None:
        if record.status != "working":
            raise ValueError(f"a task starts as 'working', not {record.status!r}")
        self._purge()
        if record.task_id in self._records:
            raise ValueError(f"task {record.task_id!r} already exists")
        if len(self._records) >= self.max_tasks:
            raise TaskLimitReached("server", self.max_tasks,
                                   f"This server holds {self.max_tasks} tasks, its limit; try again when some "
                                   "have finished and expired, or cancel tasks you no longer need")
        if record.owner is not None and len(self._by_owner.get(record.owner, ())) >= self.max_tasks_per_owner:
            raise TaskLimitReached("owner", self.max_tasks_per_owner,
                                   f"You already have {self.max_tasks_per_owner} tasks, the limit per client; "
                                   "cancel tasks you no longer need or wait until finished ones expire")
        if record.caller is not None:
            now = self.now_ms()
            until = record.expires_at_ms if record.expires_at_ms is not None else NO_EXPIRY_MS
            room_at = self._callers.acquire_now(record.caller, record.task_id, until_ms=until,
                                                limit=self.max_tasks_per_caller, now_ms=now)
            if room_at is not None:
                raise caller_limit_reached(self.max_tasks_per_caller, room_at, now)
        self._records[record.task_id] = record
        if record.owner is not None:
            bisect.insort(self._by_owner.setdefault(record.owner, []), (record.created_at_ms, record.task_id))
        if record.expires_at_ms is not None:
            heapq.heappush(self._expiry, (record.expires_at_ms, record.task_id))

    async def get(self, task_id: str) -> TaskRecord | None:
        self._purge()
        return self._records.get(task_id)

    async def list_page(self, owner: str, cursor: str | None = None, limit: int = 50
                   ) -> tuple[list[TaskRecord], str | None]:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self._purge()
        order = self._by_owner.get(owner, [])
        start = 0
        if cursor is not None:
            after = decode_cursor(LISTING, cursor)
            if not (isinstance(after, list) and len(after) == 2 and isinstance(after[0], int)
                    and isinstance(after[1], str)):
                raise invalid_cursor(cursor)
            start = bisect.bisect_right(order, (after[0], after[1]))
        page = order[start:start + limit]
        next_cursor = encode_cursor(LISTING, list(page[-1])) if page and start + limit < len(order) else None
        return [self._records[task_id] for _, task_id in page], next_cursor

    # ------------------------------------------------------------------ changing

    async def set_status_message(self, task_id: str, message: str | None) -> TaskRecord | None:
        record = await self.get(task_id)
        if record is None or record.is_terminal:
            return record
        return self._store(record.changed(self.now_ms(), status_message=_clip(message)))

    async def request_input(self, task_id: str, requests: Mapping[str, dict[str, Any]]
                            ) -> tuple[TaskRecord, dict[str, str]] | None:
        record = await self.get(task_id)
        if record is None:
            return None
        if record.is_terminal or not requests:
            return record, {}
        if len(record.input_requests) + len(requests) > MAX_OUTSTANDING_INPUTS:
            raise TaskLimitReached("inputs", MAX_OUTSTANDING_INPUTS,
                                   f"A task may wait for at most {MAX_OUTSTANDING_INPUTS} answers at once")
        if len(record.issued_keys) + len(requests) > MAX_INPUT_KEYS:
            raise TaskLimitReached("inputs", MAX_INPUT_KEYS,
                                   f"A task may ask the client at most {MAX_INPUT_KEYS} questions in its lifetime")
        used = set(record.issued_keys)
        keys: dict[str, str] = {}
        outstanding = dict(record.input_requests)
        for proposed, request in requests.items():
            key, suffix = proposed, 1
            while key in used:
                suffix += 1
                key = f"{proposed}-{suffix}"
            used.add(key)
            keys[proposed] = key
            outstanding[key] = request
        updated = record.changed(self.now_ms(), status="input_required", input_requests=outstanding,
                                 issued_keys=record.issued_keys + tuple(keys.values()))
        return self._store(updated), keys

    async def answer_input(self, task_id: str, responses: Mapping[str, Any]) -> TaskRecord | None:
        record = await self.get(task_id)
        if record is None or record.is_terminal:
            return record
        accepted = {key: value for key, value in responses.items() if key in record.input_requests}
        if not accepted:
            return record
        outstanding = {k: v for k, v in record.input_requests.items() if k not in accepted}
        status = "working" if not outstanding else record.status
        return self._store(record.changed(self.now_ms(), status=status, input_requests=outstanding,
                                          answers={**record.answers, **accepted}))

    async def take_answers(self, task_id: str, keys: Iterable[str]) -> dict[str, Any]:
        record = await self.get(task_id)
        if record is None:
            return {}
        wanted = set(keys)
        taken = {key: value for key, value in record.answers.items() if key in wanted}
        if taken:  # bookkeeping only: the client sees no change, so lastUpdatedAt stays
            remaining = {k: v for k, v in record.answers.items() if k not in taken}
            self._store(record.changed(record.updated_at_ms, answers=remaining))
        return taken

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
        record = await self.get(task_id)
        if record is None or record.is_terminal:
            return record
        if result is not None and (size := len(_dumps(result))) > self.max_result_bytes:
            status, result = "failed", None
            error = {"code": -32603, "message": f"The result is {size} bytes, more than the {self.max_result_bytes} "
                                                "bytes this server keeps for a task; ask for less at a time"}
            status_message = error["message"]
        return self._store(record.changed(self.now_ms(), status=status, result=result, error=error,
                                          status_message=_clip(status_message), input_requests={}, answers={}))

    async def cancel(self, task_id: str, status_message: str | None = None) -> TaskRecord | None:
        record = await self.get(task_id)
        if record is None or record.is_terminal:
            return record
        return self._store(record.changed(self.now_ms(), status="cancelled", input_requests={}, answers={},
                                          status_message=_clip(status_message or "Cancelled at the client's request")))

    async def delete(self, task_id: str) -> bool:
        if task_id not in self._records:
            return False
        self._drop(task_id)
        return True

    async def purge_expired(self) -> int:
        return self._purge()

    # ------------------------------------------------------------------ waiting

    async def wait_for_change(self, task_id: str, after_version: int, timeout: float) -> TaskRecord | None:
        deadline = anyio.current_time() + max(0.0, timeout)
        while True:
            record = await self.get(task_id)
            remaining = deadline - anyio.current_time()
            if record is None or record.version > after_version or remaining <= 0:
                return record
            if record.expires_at_ms is not None:  # wake at expiry too, to report the task gone
                remaining = min(remaining, max(0.001, (record.expires_at_ms - self.now_ms()) / 1000))
            event = self._events.get(task_id)
            if event is None:
                event = self._events[task_id] = anyio.Event()
            with anyio.move_on_after(remaining):
                await event.wait()

    # ------------------------------------------------------------------ internals

    def _store(self, record: TaskRecord) -> TaskRecord:
        self._records[record.task_id] = record
        self._notify(record.task_id)
        return record

    def _notify(self, task_id: str) -> None:
        event = self._events.pop(task_id, None)
        if event is not None:
            event.set()

    def _drop(self, task_id: str) -> None:
        record = self._records.pop(task_id)
        if record.caller is not None:
            self._callers.release_now(record.caller, task_id)
        if record.owner is not None:
            order = self._by_owner[record.owner]
            index = bisect.bisect_left(order, (record.created_at_ms, task_id))
            if index < len(order) and order[index] == (record.created_at_ms, task_id):
                del order[index]
            if not order:
                del self._by_owner[record.owner]
        self._notify(task_id)

    def _purge(self) -> int:
        now = self.now_ms()
        purged = 0
        while self._expiry and self._expiry[0][0] <= now:
            expires_at, task_id = heapq.heappop(self._expiry)
            record = self._records.get(task_id)
            if record is not None and record.expires_at_ms == expires_at:
                self._drop(task_id)
                purged += 1
        return purged


def _clip(message: str | None) -> str | None:
    if message is None or len(message) <= MAX_STATUS_MESSAGE:
        return message
    return message[: MAX_STATUS_MESSAGE - 1] + "…"


if TYPE_CHECKING:  # mypy proves the class implements the protocol

    def _implements(store: InMemoryTaskStore) -> TaskStore:
        return store
