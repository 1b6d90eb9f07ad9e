"""The seam between tasks and where their records live: the `TaskStore` protocol.

Every operation is one atomic step on one record (plus the indexes a store keeps for limits and
listing), so it maps onto a compare-and-set or a script in a shared backend. A store never runs
the work; the process that runs it learns about cancellation, answers and expiry through
`wait_for_change`, whichever process made the change. Implementations:

- `InMemoryTaskStore` (`tasks.memory`): the default, one process.
- a Redis store (`_redis_store.py`): the same operations on shared keys, so a task started on
  one process is polled, answered, cancelled and fetched on any other.

Rules every implementation keeps (the tests in `tests/tasks/test_store.py` state them):

- `create` is durable when it returns: a `get` from any process finds the task (SEP-2663's strong
  consistency on creation). It refuses beyond the per-server, per-owner and per-caller limits. A
  task counts against them until it is deleted or expires, finished or not (so one caller cannot
  fill the server with quick tasks either); the per-caller count (`record.caller`, see
  `callers.py`) is a `CallerCounter` shared the way the store is.
- A record is visible until `created + ttl` and never after; expired records are deleted by
  `purge_expired` (or lazily), and waiters on them wake with None.
- Status changes follow `model.TRANSITIONS` only. A terminal record is never changed again: a
  late `finish` after `cancel` leaves it cancelled.
- Input request keys are unique over a task's lifetime; answers are accepted only for keys still
  outstanding, and the task returns to `working` when none are left.
- Every change bumps `version` and wakes `wait_for_change` waiters.

Must not import: session, server, dispatcher, transports, context.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, Protocol

from .._errors import MCPKitError
from ._model import TaskRecord

DEFAULT_MAX_TASKS = 10_000
DEFAULT_MAX_TASKS_PER_OWNER = 1_000
DEFAULT_MAX_TASKS_PER_CALLER = 100
DEFAULT_MAX_RESULT_BYTES = 16 * 1024 * 1024
MAX_OUTSTANDING_INPUTS = 16
MAX_INPUT_KEYS = 256
MAX_STATUS_MESSAGE = 1_000


class TaskStoreError(MCPKitError):
    """A store refused an operation; the message says why and what to do."""


class TaskLimitReached(TaskStoreError):
    """Creating (or asking) would pass a bound: `bound` is "server", "owner", "caller" or "inputs"."""

    def __init__(self, bound: Literal["server", "owner", "caller", "inputs"], limit: int, message: str) -> None:
        super().__init__(message)
        self.bound = bound
        self.limit = limit


def caller_limit_reached(limit: int, room_at_ms: int, now_ms: int) -> TaskLimitReached:
    """The refusal of a task past the per-caller limit; `room_at_ms` is when the caller's earliest task lapses."""
    seconds = max(1, -(-(room_at_ms - now_ms) // 1000))
    return TaskLimitReached("caller", limit,
                            f"You already have {limit} tasks on this server, the limit per caller (a task counts "
                            f"until its TTL ends, finished or not); the next one can start in {seconds} s")


class TaskStore(Protocol):
    """Where task records live. All methods are safe to call from any request of any process."""

    async def create(self, record: TaskRecord) -> None:
        """Store a new task (status `working`); TaskLimitReached beyond the limits, ValueError if the id exists."""
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task, or None when it does not exist or has expired."""
        ...

    async def set_status_message(self, task_id: str, message: str | None) -> TaskRecord | None:
        """Set the status message of a task still running (a terminal one is returned unchanged)."""
        ...

    async def request_input(self, task_id: str, requests: Mapping[str, dict[str, Any]]
                            ) -> tuple[TaskRecord, dict[str, str]] | None:
        """Add questions for the client; the task becomes `input_required`.

        Returns the record and, for each proposed key, the key actually used (a key asked before gets
        a suffix, since keys are never reused). None when the task is gone; a terminal task is
        returned unchanged with no keys. TaskLimitReached("inputs") past the bounds on questions.
        """
        ...

    async def answer_input(self, task_id: str, responses: Mapping[str, Any]) -> TaskRecord | None:
        """Accept the answers whose keys are outstanding (others are ignored); `working` once none is left."""
        ...

    async def take_answers(self, task_id: str, keys: Iterable[str]) -> dict[str, Any]:
        """Remove and return the delivered answers for `keys` (those not answered yet are absent)."""
        ...

    async def finish(
        self,
        task_id: str,
        status: Literal["completed", "failed"],
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        status_message: str | None = None,
    ) -> TaskRecord | None:
        """Make a running task terminal with its result or error; a terminal one is returned unchanged.

        A result larger than the store keeps fails the task instead, with an error saying so.
        """
        ...

    async def cancel(self, task_id: str, status_message: str | None = None) -> TaskRecord | None:
        """Make a running task `cancelled` (its work stops when it next looks); a terminal one is unchanged."""
        ...

    async def list_page(self, owner: str, cursor: str | None = None, limit: int = 50
                   ) -> tuple[list[TaskRecord], str | None]:
        """The owner's tasks, oldest first, one page at a time; -32602 (MCPError) for a bad cursor."""
        ...

    async def delete(self, task_id: str) -> bool:
        """Forget a task now; whether it existed."""
        ...

    async def purge_expired(self) -> int:
        """Delete every expired task; how many were deleted."""
        ...

    async def wait_for_change(self, task_id: str, after_version: int, timeout: float) -> TaskRecord | None:
        """The task once its version passes `after_version`, or as it is after `timeout` seconds; None if gone."""
        ...
