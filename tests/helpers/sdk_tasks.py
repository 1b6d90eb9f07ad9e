"""Tasks through the official SDK client (`mcp` 2.3.0), which has no tasks API of its own.

2026-07-28 (SEP-2663): `TasksExtension` declares `io.modelcontextprotocol/tasks` in every
request's client capabilities and claims the `resultType: "task"` shape of `tools/call`;
`client.session.call_tool(..., allow_claimed=True)` hands the task handle back, and the
`tasks/*` requests below go through `ClientSession.send_request` (with `Mcp-Name: <taskId>`).
2025-11-25 (experimental tasks): the same `send_request`, with a `task` param on `tools/call`.
Test helpers only: nothing here is part of mcp_kit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from pydantic import ConfigDict

TASKS = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")


class _Open(types.Result):
    model_config = ConfigDict(extra="allow")


class TaskHandle(_Open):
    """SEP-2663 `CreateTaskResult`."""

    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class DetailedTask(_Open):
    """SEP-2663 `tasks/get` result (and, without resultType, a 2025-11-25 `Task`)."""

    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class Ack(_Open):
    result_type: str | None = None


class TaskParams(types.RequestParams):
    task_id: str


class UpdateParams(TaskParams):
    input_responses: dict[str, Any]


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class UpdateTask(types.Request[UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class TaskResultRequest(types.Request[TaskParams, Literal["tasks/result"]]):  # 2025-11-25
    method: Literal["tasks/result"] = "tasks/result"


class ListTasks(types.Request[types.PaginatedRequestParams | None, Literal["tasks/list"]]):  # 2025-11-25
    method: Literal["tasks/list"] = "tasks/list"
    params: types.PaginatedRequestParams | None = None


class LegacyCallParams(types.CallToolRequestParams):
    task: dict[str, Any]


class LegacyCall(types.Request[LegacyCallParams, Literal["tools/call"]]):  # 2025-11-25 task-augmented call
    method: Literal["tools/call"] = "tools/call"
    name_param = "name"


class LegacyCreated(_Open):
    task: dict[str, Any]


async def poll(session: ClientSession, task_id: str) -> DetailedTask:
    """Poll `tasks/get` until the task is terminal (bounded)."""
    with anyio.fail_after(30):
        while True:
            task = await get(session, task_id)
            if task.status in TERMINAL:
                return task
            await anyio.sleep(0.05)


async def get(session: ClientSession, task_id: str) -> DetailedTask:
    return await session.send_request(GetTask(params=TaskParams(task_id=task_id)), DetailedTask)


async def cancel(session: ClientSession, task_id: str) -> Ack:
    return await session.send_request(CancelTask(params=TaskParams(task_id=task_id)), Ack)


async def _resolve(handle: TaskHandle, ctx: ClaimContext) -> types.CallToolResult:
    task = await poll(ctx.session, handle.task_id)
    if task.status != "completed" or task.result is None:
        raise RuntimeError(f"task {handle.task_id} ended {task.status}: {task.error}")
    return types.CallToolResult.model_validate(task.result)


class TasksExtension(ClientExtension):
    """Declares the tasks extension; `Client.call_tool` resolves a task handle by polling it."""

    identifier = TASKS

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=_resolve)]
