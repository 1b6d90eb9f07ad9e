"""Tasks on the wire: the task branch of `tools/call` and the `tasks/*` routes, for both eras.

Two generations of tasks exist and each era gets its own over one store (`Tasks.store`):

- 2026-07-28, the `io.modelcontextprotocol/tasks` extension (SEP-2663): a call becomes a task when
  the tool supports tasks and *this request* declares the extension in its client capabilities;
  `tasks/get`, `tasks/update`, `tasks/cancel` (each first checks the extension is declared:
  -32021); `tasks/result` and `tasks/list` do not exist there (-32601).
- 2025-11-25, experimental tasks: a call becomes a task when its params carry `task`; `tasks/get`,
  `tasks/result` (waits for the outcome, relaying the task's questions to the client),
  `tasks/list`, `tasks/cancel`; `notifications/tasks/status` to the creating session.

In a proxy (an application with a `source`) the `tasks/*` methods go to the source: the tasks are the
upstream server's.

A task's work runs on the application's `TaskRunner` with a `TaskChannel` (`tasks/_channel.py`), so
`ctx.elicit`, `ctx.sample`, `ctx.report_progress` keep working inside it.

Who may see a task: one created by an authenticated request belongs to its principal (others get
"not found"); any other task id is a bearer handle (192 random bits), so a client that
disconnected can poll and fetch it from a new connection. `tasks/list` lists the caller's
principal's tasks, or its session's. Every task also counts against its creator's per-caller
limit (`callers.caller_of`: the principal, else the session, else the client's address).

With the store unreachable (Redis down) a task call or a `tasks/*` request is answered with
`tasks.runner.store_unavailable`'s error (-32603, `data.retryAfter`; 503 with `Retry-After` over
HTTP), as other requests needing Redis are.

`Tasks` is the extension (`_app/extension.py`) that serves all of it: every application adds one.

Imports the context, the extension base, the tools and the tasks package; never the application, the session or
a transport.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from .._app.context import Context
from .._app.extension import Extension
from .._app.pipeline import Call
from .._backends.base import BackendUnavailable
from .._eras.input_rounds import valid_answer
from .._primitives.content import error_result
from .._primitives.tools import Tool, call_tool
from .._protocol.callers import caller_of, principal_key
from .._protocol.errors import MISSING_CLIENT_CAPABILITY, MCPError, ToolError, invalid_params
from .._protocol.jsonrpc import METHOD_NOT_FOUND
from .._protocol.versions import is_stateless, shape_tool_result
from .._telemetry import hooks as telemetry_hooks
from . import InMemoryTaskStore, TaskLimitReached, TaskRecord, TaskSettings, TaskStore
from ._channel import TaskChannel
from ._runner import TaskCall, TaskRunner, store_unavailable
from ._store import DEFAULT_MAX_TASKS_PER_CALLER
from ._wire import (
    LEGACY_TASKS_VERSION,
    RELATED_TASK_KEY,
    TASKS_EXTENSION,
    acknowledgement,
    create_task_result,
    get_task_result,
    legacy_create_task_result,
    legacy_payload,
    legacy_task,
)

logger = logging.getLogger("mcp_kit.tasks")

RESULT_WAIT_SECONDS = 30.0  # tasks/result re-reads the task at least this often while waiting


def declares_tasks(ctx: Context) -> bool:
    """Whether this (2026-07-28) request's client capabilities list the tasks extension."""
    extensions = ctx.channel.client_capabilities.get("extensions")
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def owner_of(ctx: Context) -> str | None:
    """The owner key of tasks created by this request: its principal, else its session (handshake era)."""
    key = principal_key(ctx.principal)
    if key is not None:
        return key
    if is_stateless(ctx.protocol_version):
        return None
    return f"session:{ctx.session_id}"


def _visible(record: TaskRecord, ctx: Context) -> bool:
    if record.owner is None or not record.owner.startswith("principal:"):
        return True  # the id is the credential
    return record.owner == owner_of(ctx)


# ---------------------------------------------------------------------- tools/call


def refuse_task_param(tool: Tool, params: dict[str, Any], ctx: Context) -> None:
    """2025-11-25: -32601 for a `task` param on a tool without task support (it would not run as one)."""
    if "task" in params and ctx.protocol_version == LEGACY_TASKS_VERSION:
        raise MCPError(METHOD_NOT_FOUND, f"Tool '{tool.name}' does not support tasks (its execution.taskSupport is "
                                         "'forbidden'): call it again without the 'task' param")


async def call_tool_as_task(tasks: Tasks, tool: Tool, arguments: dict[str, Any] | None, params: dict[str, Any],
                            ctx: Context) -> dict[str, Any] | None:
    """Serve a call of a task-capable tool: the task handle, the plain result, or None (run it plainly)."""
    version = ctx.protocol_version
    requested_ttl = None
    if is_stateless(version):
        if not declares_tasks(ctx):
            if tool.task_support == "required":
                raise MCPError(MISSING_CLIENT_CAPABILITY,
                               f"Tool '{tool.name}' runs only as a task: declare the '{TASKS_EXTENSION}' extension in "
                               "_meta clientCapabilities.extensions and call it again",
                               {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})
            return None
    elif version == LEGACY_TASKS_VERSION:
        task = params.get("task")
        if task is None:
            if tool.task_support == "required":
                raise MCPError(METHOD_NOT_FOUND, f"Tool '{tool.name}' runs only as a task: call it with a 'task' "
                                                 "param, e.g. \"task\": {\"ttl\": 600000}")
            return None
        if not isinstance(task, dict):
            raise invalid_params("'task' must be an object such as {\"ttl\": 600000} ({} for the server's default)")
        requested_ttl = task.get("ttl")
    else:
        if tool.task_support == "required":
            return error_result(f"Tool '{tool.name}' runs only as a task, which needs protocol 2025-11-25 or later; "
                                "reconnect with a newer protocol version")
        return None
    app = tasks.app
    settings = tasks.task_settings
    if tool.task_ttl_ms is not None or tool.task_poll_interval_ms is not None:
        settings = dataclasses.replace(settings, ttl_ms=tool.task_ttl_ms or settings.ttl_ms,
                                       poll_interval_ms=tool.task_poll_interval_ms or settings.poll_interval_ms)
    call = TaskCall(tasks.runner, target=tool.name, era=version, owner=owner_of(ctx), settings=settings,
                    requested_ttl=requested_ttl, caller=caller_of(ctx))
    scope = TaskChannel(ctx.channel, call)
    if not is_stateless(version):
        inner = ctx.channel

        async def status_notification(record: TaskRecord) -> None:
            await inner.notify("notifications/tasks/status", legacy_task(record), None)

        call.on_change = status_notification
    task_ctx = Context(scope, ctx.request_id, ctx.meta, ctx.principal)

    async def run(run_call: Call) -> dict[str, Any]:
        run_arguments = run_call.params.get("arguments")
        if run_arguments is not None and not isinstance(run_arguments, dict):
            raise invalid_params("'arguments' must be an object")
        result = await call_tool(tool, run_arguments, run_call.ctx, crash=True)
        return shape_tool_result(result, version)

    async def work() -> dict[str, Any]:
        if tool.task_start == "auto":
            await call.create()
        pipeline = app.pipeline
        if pipeline is None:
            return shape_tool_result(await call_tool(tool, arguments, task_ctx), version)
        # the run passes through the middleware chain once more, as the task's run
        return await pipeline.handle(Call("tools/call", params, task_ctx, app, in_task=True, _answer=run))  # type: ignore[no-any-return]

    try:
        kind, value = await tasks.runner.start(call, work)
    except TaskLimitReached as exc:
        return error_result(str(exc))
    if kind == "result":
        return value  # type: ignore[no-any-return]
    if is_stateless(version):
        return create_task_result(value)
    return legacy_create_task_result(value, f"Started task {value.task_id} for tool '{tool.name}'; "
                                            "its result will be available when it completes.")


# ---------------------------------------------------------------------- tasks/* routes


def _check_era(tasks: Tasks, ctx: Context, method: str, *, stateless: bool, handshake: bool) -> None:
    """-32601 where the method does not exist (the era, or no tool supports tasks); -32021 when undeclared."""
    version = ctx.protocol_version
    exists = stateless if is_stateless(version) else (handshake and version == LEGACY_TASKS_VERSION)
    if not exists or not tasks.supported():
        raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method}")
    if is_stateless(version) and not declares_tasks(ctx):
        raise MCPError(MISSING_CLIENT_CAPABILITY,
                       f"{method} needs the '{TASKS_EXTENSION}' extension declared in this request's "
                       "_meta clientCapabilities.extensions",
                       {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})


async def _task(tasks: Tasks, params: dict[str, Any], ctx: Context) -> TaskRecord:
    task_id = params.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise invalid_params("'taskId' is required (the string a task-augmented call returned)")
    record = await tasks.store.get(task_id)
    if record is None or not _visible(record, ctx) or record.era != ctx.protocol_version:
        raise invalid_params(f"Unknown task {task_id!r}: it never existed, expired, or belongs to someone else",
                             {"taskId": task_id})
    probe = telemetry_hooks.active
    if probe is not None and record.trace_context:  # this request's span links to the call that created the task
        probe.link(record.trace_context, "task_created")
    return record


async def _tasks_get(tasks: Tasks, params: dict[str, Any], ctx: Context) -> Any:
    _check_era(tasks, ctx, "tasks/get", stateless=True, handshake=True)
    record = await _task(tasks, params, ctx)
    return get_task_result(record) if is_stateless(ctx.protocol_version) else legacy_task(record)


async def _tasks_cancel(tasks: Tasks, params: dict[str, Any], ctx: Context) -> Any:
    _check_era(tasks, ctx, "tasks/cancel", stateless=True, handshake=True)
    record = await _task(tasks, params, ctx)
    if is_stateless(ctx.protocol_version):
        await tasks.store.cancel(record.task_id)
        return acknowledgement()
    if record.is_terminal:
        raise invalid_params(
            f"Task {record.task_id!r} is already {record.status}; only a running task can be cancelled"
        )
    cancelled = await tasks.store.cancel(record.task_id)
    if cancelled is None:
        raise invalid_params(f"Unknown task {record.task_id!r}: it expired")
    return legacy_task(cancelled)


async def _tasks_update(tasks: Tasks, params: dict[str, Any], ctx: Context) -> Any:
    _check_era(tasks, ctx, "tasks/update", stateless=True, handshake=False)
    record = await _task(tasks, params, ctx)
    responses = params.get("inputResponses")
    if not isinstance(responses, dict):
        raise invalid_params("'inputResponses' is required: an object mapping each inputRequests key to its answer")
    accepted: dict[str, Any] = {}
    for key, answer in responses.items():
        request = record.input_requests.get(key)
        if request is None:
            continue  # answered already, or never asked: ignored
        if not valid_answer(str(request.get("method")), answer):
            raise invalid_params(f"inputResponses[{key!r}] is not a valid answer to {request.get('method')}",
                                 {"key": key})
        accepted[key] = answer
    if accepted:
        await tasks.store.answer_input(record.task_id, accepted)
    return acknowledgement()


async def _tasks_list(tasks: Tasks, params: dict[str, Any], ctx: Context) -> Any:
    _check_era(tasks, ctx, "tasks/list", stateless=False, handshake=True)
    owner = owner_of(ctx)
    cursor = params.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise invalid_params("'cursor' must be the nextCursor string of a previous page")
    records, next_cursor = await tasks.store.list_page(owner or "", cursor, tasks.app.page_size)
    mine = [record for record in records if record.era == ctx.protocol_version]  # the other era's are not its to see
    result: dict[str, Any] = {"tasks": [legacy_task(record) for record in mine]}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def _tasks_result(tasks: Tasks, params: dict[str, Any], ctx: Context) -> Any:
    """2025-11-25: wait until the task ends, relaying its questions to the client; then its payload."""
    _check_era(tasks, ctx, "tasks/result", stateless=False, handshake=True)
    record: TaskRecord | None = await _task(tasks, params, ctx)
    relayed: set[str] = set()
    while record is not None and not record.is_terminal:
        for key, request in list(record.input_requests.items()):
            if key not in relayed:
                relayed.add(key)
                await _relay(tasks, record, key, request, ctx)
        record = await tasks.store.wait_for_change(record.task_id, record.version, RESULT_WAIT_SECONDS)
    if record is None:
        raise invalid_params(f"Unknown task {params.get('taskId')!r}: it expired")
    result, error = legacy_payload(record)
    if error is not None:
        raise MCPError(error.get("code", -32603), str(error.get("message", "The task failed")), error.get("data"))
    return result


async def _relay(tasks: Tasks, record: TaskRecord, key: str, request: dict[str, Any], ctx: Context) -> None:
    """Ask the client one of the task's questions on this `tasks/result` request and store the answer."""
    method = str(request.get("method"))
    question = dict(request.get("params") or {})
    question["_meta"] = {**(question.get("_meta") or {}), RELATED_TASK_KEY: {"taskId": record.task_id}}
    try:
        answer = await ctx.channel.ask(method, question, request_id=ctx.request_id, timeout=300.0, key=None)
    except ToolError as exc:
        await tasks.store.finish(record.task_id, "failed", error={"code": -32603, "message": str(exc)},
                                    status_message=str(exc))
        return
    await tasks.store.answer_input(record.task_id, {key: answer})


TaskRoute = Callable[["Tasks", dict[str, Any], Context], Awaitable[Any]]


def _outage_answered(method: str, route: TaskRoute) -> TaskRoute:
    """`route`, answering `store_unavailable`'s error when the store cannot be reached."""

    @functools.wraps(route)
    async def answered(tasks: Tasks, params: dict[str, Any], ctx: Context) -> Any:
        try:
            return await route(tasks, params, ctx)
        except BackendUnavailable as exc:
            logger.warning("%s: %s", method, exc)
            raise store_unavailable(exc) from None

    return answered


TASK_ROUTES: dict[str, TaskRoute] = {method: _outage_answered(method, route) for method, route in {
    "tasks/get": _tasks_get,
    "tasks/update": _tasks_update,
    "tasks/cancel": _tasks_cancel,
    "tasks/list": _tasks_list,
    "tasks/result": _tasks_result,
}.items()}


def tasks_of(app: Any) -> Tasks:
    """The `Tasks` extension every application has."""
    tasks = app.extension(TASKS_EXTENSION)
    assert isinstance(tasks, Tasks), "every application adds the tasks extension"
    return tasks


class Tasks(Extension):
    """Tasks as an extension: `io.modelcontextprotocol/tasks` in 2026-07-28, the core `tasks` capability in
    2025-11-25; the `tasks/*` methods, the task branch of `tools/call`, the runner beside the server.

    Every application has one (`app.extension(TASKS_EXTENSION)`), built from its task options: it declares
    itself only while some tool may run as a task."""

    id = TASKS_EXTENSION

    def __init__(self, store: TaskStore | None = None, settings: TaskSettings | None = None, *,
                 max_running: int = 100, max_tasks_per_caller: int = DEFAULT_MAX_TASKS_PER_CALLER) -> None:
        self.max_tasks_per_caller = max_tasks_per_caller
        self.store: TaskStore = store if store is not None else InMemoryTaskStore(
            max_tasks_per_caller=max_tasks_per_caller)
        self.store_given = store is not None  # False: a shared backend may replace the default store
        self.task_settings = settings or TaskSettings()
        self.runner = TaskRunner(self.store, max_running=max_running)

    def use_store(self, store: TaskStore) -> None:
        """Keep tasks in `store` from now on (before any task starts): how a shared backend makes a task
        started on one process visible, cancellable and fetchable on every other."""
        self.store = store
        self.runner.store = store

    def supported(self) -> bool:
        """Whether some tool may run as a task (then the capability and the methods exist)."""
        return any(tool.task_support != "forbidden" for tool in self.app.tools)

    def settings(self, version: str) -> dict[str, Any] | None:
        return {} if is_stateless(version) and self.supported() else None

    def server_capabilities(self, version: str) -> dict[str, Any]:
        if version == LEGACY_TASKS_VERSION and self.supported():  # experimental tasks of the core protocol
            return {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
        return {}

    def methods(self) -> dict[str, Any]:
        return {name: functools.partial(self._serve, name, route) for name, route in TASK_ROUTES.items()}

    async def _serve(self, method: str, route: TaskRoute, params: dict[str, Any], ctx: Context) -> Any:
        source = self.app.source
        if source is not None:  # a proxy: the tasks are the upstream's (`_proxy/source.py`)
            return await source.forward(method, params, ctx)
        return await route(self, params, ctx)

    async def call_tool(self, tool: Any, arguments: dict[str, Any] | None, params: dict[str, Any],
                        ctx: Context) -> dict[str, Any] | None:
        if tool.task_support != "forbidden":  # may run as a task: decided per era and request
            return await call_tool_as_task(self, tool, arguments, params, ctx)
        if "task" in params:  # 2025-11-25 asks for a task this tool cannot be: -32601 there
            refuse_task_param(tool, params, ctx)
        return None

    @contextlib.asynccontextmanager
    async def running(self, task_group: Any) -> AsyncIterator[None]:
        self.runner.attach(task_group)
        try:
            yield
        finally:
            self.runner.attach(None)
            await self.runner.shutdown()
