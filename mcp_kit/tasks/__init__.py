"""Tasks: durable state for long-running requests, polled, answered and cancelled by the client.

`model` holds the record (plain, serialisable data), the statuses and their transitions, and
`TaskSettings` (TTL and poll interval); `store` the `TaskStore` protocol every backend implements;
`memory` the in-process store; `wire` the record's shape in each protocol (SEP-2663 for
2026-07-28, the experimental tasks of 2025-11-25). Running tools as tasks and the `tasks/*`
methods plug into the request scope, method table and dispatcher (see docs/extensions-design.md).

Must not import: session, server, dispatcher, transports, context.
"""

from ._memory import InMemoryTaskStore
from ._model import STATUSES, TERMINAL, TRANSITIONS, TaskRecord, TaskSettings, TaskStatus, can_transition, new_task_id
from ._store import TaskLimitReached, TaskStore, TaskStoreError

__all__ = [
    "STATUSES",
    "TERMINAL",
    "TRANSITIONS",
    "InMemoryTaskStore",
    "TaskLimitReached",
    "TaskRecord",
    "TaskSettings",
    "TaskStatus",
    "TaskStore",
    "TaskStoreError",
    "can_transition",
    "new_task_id",
]
