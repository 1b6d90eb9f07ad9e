"""A task as plain data: its record, its statuses, and the transitions between them.

A task is the durable state of one task-augmented request (today: `tools/call`). Its record is
plain, JSON-serialisable data (`to_dict` / `from_dict`), so a store may keep it anywhere: in this
process, or in a shared backend such as Redis where another process polls, answers or cancels it.
The running work itself (the tool's coroutine or thread) never leaves the process that started
it; everything a client can observe or change lives in the record.

Statuses and transitions are the same in the 2025-11-25 specification and in SEP-2663:

    working ──► input_required ──► working          (any number of rounds)
       │               │
       └───────┬───────┘
               ▼
    completed | failed | cancelled                  (terminal: never left again)

Must not import: session, server, dispatcher, transports, context.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast, get_args

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
STATUSES: tuple[TaskStatus, ...] = get_args(TaskStatus)
TERMINAL: frozenset[TaskStatus] = frozenset({"completed", "failed", "cancelled"})
TRANSITIONS: Mapping[TaskStatus, frozenset[TaskStatus]] = {
    "working": frozenset({"input_required", "completed", "failed", "cancelled"}),
    "input_required": frozenset({"working", "completed", "failed", "cancelled"}),
    "completed": frozenset(),
    "failed": frozenset(),
    "cancelled": frozenset(),
}
RECORD_FORMAT = 1
TASK_ID_BYTES = 24  # 192 random bits: a task id is a bearer handle where no authorization binds it


def can_transition(current: TaskStatus, new: TaskStatus) -> bool:
    """Whether a task may move from `current` to `new` (a terminal status is never left)."""
    return new in TRANSITIONS[current]


def new_task_id() -> str:
    """An unguessable task id (URL-safe, from the operating system's CSPRNG)."""
    return secrets.token_urlsafe(TASK_ID_BYTES)


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """Everything a client can observe about one task, and what the server needs to serve it.

    Times are integer milliseconds since the Unix epoch. `owner` is an opaque key chosen by the
    caller (an authenticated principal, or a handshake-era session) that scopes listing and the
    per-owner limit; None means the task id alone grants access. `era` is the protocol version
    the task was created in, which fixes the shape of its stored `result`. `input_requests` are the
    questions still waiting for the client, `answers` the ones the client answered that the running
    work has not taken yet; `issued_keys` keeps every key ever asked, since a key is never reused.
    `version` grows by one with every change, for compare-and-set and change notification.
    `caller` is who created it (`callers.caller_identity`), whose per-caller limit it counts against.
    `trace_context` is the W3C trace context (`traceparent`, `tracestate`) of the span that created it, while
    tracing is on: the task's run and its `tasks/*` requests link to it, on any process.
    """

    task_id: str
    status: TaskStatus
    created_at_ms: int
    updated_at_ms: int
    ttl_ms: int | None
    owner: str | None = None
    method: str = "tools/call"
    target: str = ""
    era: str = ""
    status_message: str | None = None
    poll_interval_ms: int | None = None
    input_requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    issued_keys: tuple[str, ...] = ()
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    version: int = 1
    caller: str | None = None
    trace_context: dict[str, str] | None = None

    @property
    def expires_at_ms(self) -> int | None:
        """When the task may be discarded (creation + TTL); None for no limit."""
        return None if self.ttl_ms is None else self.created_at_ms + self.ttl_ms

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, now_ms: int) -> bool:
        expires = self.expires_at_ms
        return expires is not None and now_ms >= expires

    def changed(self, now_ms: int, **changes: Any) -> TaskRecord:
        """A copy with `changes`, the next version, and `updated_at_ms` set to now."""
        return replace(self, **changes, version=self.version + 1, updated_at_ms=max(now_ms, self.updated_at_ms))

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data (what a shared store keeps)."""
        return {
            "format": RECORD_FORMAT, "taskId": self.task_id, "status": self.status,
            "createdAtMs": self.created_at_ms, "updatedAtMs": self.updated_at_ms, "ttlMs": self.ttl_ms,
            "owner": self.owner, "method": self.method, "target": self.target, "era": self.era,
            "statusMessage": self.status_message, "pollIntervalMs": self.poll_interval_ms,
            "inputRequests": self.input_requests, "answers": self.answers, "issuedKeys": list(self.issued_keys),
            "result": self.result, "error": self.error, "version": self.version, "caller": self.caller,
            **({"traceContext": self.trace_context} if self.trace_context else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TaskRecord:
        """The record `to_dict` wrote; ValueError naming the field when the data is not one."""
        if data.get("format") != RECORD_FORMAT:
            raise ValueError(f"unknown task record format {data.get('format')!r} (this version reads {RECORD_FORMAT})")
        status = data.get("status")
        if status not in STATUSES:
            raise ValueError(f"task record status {status!r} is not one of {', '.join(STATUSES)}")
        record = cls(
            task_id=_typed(data, "taskId", str), status=cast(TaskStatus, status),
            created_at_ms=_typed(data, "createdAtMs", int), updated_at_ms=_typed(data, "updatedAtMs", int),
            ttl_ms=_typed(data, "ttlMs", int, optional=True), owner=_typed(data, "owner", str, optional=True),
            method=_typed(data, "method", str), target=_typed(data, "target", str), era=_typed(data, "era", str),
            status_message=_typed(data, "statusMessage", str, optional=True),
            poll_interval_ms=_typed(data, "pollIntervalMs", int, optional=True),
            input_requests=dict(_typed(data, "inputRequests", dict)), answers=dict(_typed(data, "answers", dict)),
            issued_keys=tuple(_typed(data, "issuedKeys", list)), result=_typed(data, "result", dict, optional=True),
            error=_typed(data, "error", dict, optional=True), version=_typed(data, "version", int),
            caller=_typed(data, "caller", str, optional=True),
            trace_context=_trace_context(data.get("traceContext")),
        )
        if not record.task_id or record.version < 1:
            raise ValueError("task record needs a task id and a version of at least 1")
        return record


def _trace_context(value: Any) -> dict[str, str] | None:
    """A stored trace context, kept only as string fields (a record from an older version has none)."""
    if not isinstance(value, dict):
        return None
    return {key: item for key, item in value.items() if isinstance(key, str) and isinstance(item, str)} or None


def _typed(data: Mapping[str, Any], key: str, kind: type, *, optional: bool = False) -> Any:
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"task record field {key!r} must be {'null or ' if optional else ''}{kind.__name__}, "
                         f"not {type(value).__name__}")
    return value


@dataclass(frozen=True, slots=True)
class TaskSettings:
    """How long tasks live and how often clients should poll (per tool, or server-wide defaults).

    A task is kept `ttl_ms` after its creation, then discarded whatever its status (a task still
    running then is cancelled). A client may ask for another TTL (the 2025-11-25 `task.ttl`); it is
    clamped to [`min_ttl_ms`, `max_ttl_ms`]. There is no unlimited TTL: every task ends.
    """

    ttl_ms: int = 60 * 60 * 1000
    max_ttl_ms: int = 24 * 60 * 60 * 1000
    min_ttl_ms: int = 1000
    poll_interval_ms: int = 1000

    def __post_init__(self) -> None:
        if not 0 < self.min_ttl_ms <= self.ttl_ms <= self.max_ttl_ms:
            raise ValueError("task TTLs must satisfy 0 < min_ttl_ms <= ttl_ms <= max_ttl_ms")
        if self.poll_interval_ms < 1:
            raise ValueError("poll_interval_ms must be a positive number of milliseconds")

    def ttl_for(self, requested: Any = None) -> int:
        """The TTL to grant: the requested one (an integer of milliseconds) clamped, else the default."""
        if isinstance(requested, int) and not isinstance(requested, bool):
            return min(max(requested, self.min_ttl_ms), self.max_ttl_ms)
        return self.ttl_ms

    def new_record(self, *, now_ms: int, method: str, target: str, era: str, owner: str | None = None,
                   requested_ttl: Any = None, status_message: str | None = None,
                   caller: str | None = None) -> TaskRecord:
        """The record of a task created now: `working`, a fresh unguessable id, this policy's TTL and interval."""
        return TaskRecord(task_id=new_task_id(), status="working", created_at_ms=now_ms, updated_at_ms=now_ms,
                          ttl_ms=self.ttl_for(requested_ttl), owner=owner, method=method, target=target, era=era,
                          status_message=status_message, poll_interval_ms=self.poll_interval_ms, caller=caller)
