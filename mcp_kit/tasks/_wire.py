"""What a task record looks like on the wire, in each protocol that defines tasks.

Two incompatible shapes exist. SEP-2663, the `io.modelcontextprotocol/tasks` extension of
2026-07-28, puts the task at the top level of the result (`resultType: "task"`), names durations
`ttlMs` / `pollIntervalMs`, and inlines `result`, `error` or `inputRequests` into `tasks/get`.
The experimental tasks of 2025-11-25 wrap a created task in `{"task": ...}`, name durations `ttl` /
`pollInterval`, and return the payload separately through `tasks/result`, tagged with the
`io.modelcontextprotocol/related-task` metadata. A record is shaped for the reader, so one store
serves both.

Must not import: session, server, dispatcher, transports, context.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from .._protocol.versions import is_stateless
from ._model import TaskRecord

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"  # 2026-07-28's tasks extension (SEP-2663)
LEGACY_TASKS_VERSION = "2025-11-25"  # the protocol version of the core protocol's experimental tasks


def asks_for_a_task(params: dict[str, Any], version: str, client_capabilities: Any) -> bool:
    """Whether a `tools/call` of a task-capable tool goes to the task runner: 2026-07-28 with the extension
    declared in this request's capabilities, 2025-11-25 with a `task` param; never in earlier versions."""
    if is_stateless(version):
        extensions = client_capabilities.get("extensions") if isinstance(client_capabilities, Mapping) else None
        return isinstance(extensions, dict) and TASKS_EXTENSION in extensions
    return version == LEGACY_TASKS_VERSION and params.get("task") is not None

RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
CANCELLED_ERROR = {"code": -32603, "message": "The task was cancelled before it produced a result"}


def iso_time(ms: int) -> str:
    """An ISO 8601 UTC time with milliseconds, e.g. '2026-07-28T10:30:00.123Z'."""
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ---------------------------------------------------------------------- 2026-07-28 (SEP-2663)


def _task(record: TaskRecord, ttl_key: str, poll_key: str) -> dict[str, Any]:
    """A task's common fields; the generations name the TTL and the poll interval differently."""
    task: dict[str, Any] = {"taskId": record.task_id, "status": record.status}
    if record.status_message is not None:
        task["statusMessage"] = record.status_message
    task["createdAt"] = iso_time(record.created_at_ms)
    task["lastUpdatedAt"] = iso_time(record.updated_at_ms)
    task[ttl_key] = record.ttl_ms
    if record.poll_interval_ms is not None:
        task[poll_key] = record.poll_interval_ms
    return task


def task_fields(record: TaskRecord) -> dict[str, Any]:
    """The `Task` of SEP-2663: id, status, times, TTL (null for unlimited), poll interval."""
    return _task(record, "ttlMs", "pollIntervalMs")


def create_task_result(record: TaskRecord) -> dict[str, Any]:
    """The `CreateTaskResult` answering the request that created the task: flat, `resultType: "task"`."""
    return {"resultType": "task", **task_fields(record)}


def detailed_task(record: TaskRecord) -> dict[str, Any]:
    """The `DetailedTask` of `tasks/get` and `notifications/tasks`: the task plus what its status carries."""
    task = task_fields(record)
    if record.status == "input_required":
        task["inputRequests"] = dict(record.input_requests)
    elif record.status == "completed" and record.result is not None:
        task["result"] = record.result
    elif record.status == "failed":
        task["error"] = record.error or {"code": -32603, "message": record.status_message or "The task failed"}
    return task


def get_task_result(record: TaskRecord) -> dict[str, Any]:
    """The `tasks/get` result: a `DetailedTask` with `resultType: "complete"`."""
    return {"resultType": "complete", **detailed_task(record)}


def acknowledgement() -> dict[str, Any]:
    """The empty result of `tasks/update` and `tasks/cancel`."""
    return {"resultType": "complete"}


# ---------------------------------------------------------------------- 2025-11-25 (experimental tasks)


def legacy_task(record: TaskRecord) -> dict[str, Any]:
    """The `Task` of 2025-11-25 (`tasks/get`, `tasks/cancel`, `tasks/list`, `notifications/tasks/status`)."""
    return _task(record, "ttl", "pollInterval")


def legacy_create_task_result(record: TaskRecord, immediate_response: str | None = None) -> dict[str, Any]:
    """The 2025-11-25 `CreateTaskResult`: `{"task": ...}`, with an optional message for the model meanwhile."""
    result: dict[str, Any] = {"task": legacy_task(record)}
    if immediate_response is not None:
        result["_meta"] = {"io.modelcontextprotocol/model-immediate-response": immediate_response}
    return result


def legacy_payload(record: TaskRecord) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """What `tasks/result` answers for a terminal task: (result, None) or (None, JSON-RPC error).

    The result is exactly what the request would have returned, tagged with the related-task
    metadata; a failed task answers its error, a cancelled one an error saying so.
    """
    if record.result is not None and record.status in ("completed", "failed"):
        result = dict(record.result)
        meta = dict(result.get("_meta") or {})
        meta[RELATED_TASK_KEY] = {"taskId": record.task_id}
        result["_meta"] = meta
        return result, None
    if record.status == "cancelled":
        return None, dict(CANCELLED_ERROR)
    return None, record.error or {"code": -32603, "message": record.status_message or "The task failed"}
