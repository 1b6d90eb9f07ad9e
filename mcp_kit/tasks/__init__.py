"""Tasks: durable state for long-running requests, polled, answered and cancelled by the client.

The public names are this module's `__all__`; the modules are private: `_model` holds the record
(plain, serialisable data), the statuses and their transitions, and `TaskSettings` (TTL and poll
interval); `_store` the `TaskStore` protocol every store implements; `_memory` the in-process store,
`_redis_store` the shared one; `_wire` the record's shape in each protocol (SEP-2663 for 2026-07-28,
the experimental tasks of 2025-11-25); `_runner` runs a task's work beside the requests, `_channel` is
its `TaskChannel`, and `_methods` the `tasks/*` methods and the task branch of `tools/call` (see
docs/extensions-design.md).

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
