"""`TaskRunner`: runs the work of task-augmented calls past the request that started them.

A task outlives its request (a stateless HTTP request's connection closes when it is answered; a
client may disconnect and poll later), so its work runs in the runner's task group, which the
application owns for as long as it runs. The request that started the work waits only for the
*hand-off* (`TaskCall.decided`): the work finished before becoming a task (a plain result or
error), or the task was created in the store (the handle to answer with). Before the hand-off a
cancelled request cancels the work; after it only the store does (`tasks/cancel`, expiry), seen
by one watcher per task through `TaskStore.wait_for_change`, so a cancel made by any process
reaches the work. When the work ends, its outcome is written to the store; when the server
stops, tasks still running are marked `failed` ("the server stopped").

At most `max_running` tasks run at once. A task takes its place once it exists, so the request is
answered with the handle at once even when every place is taken: the task waits, `working`, with
a status message saying so, and starts when a place frees (cancelling or expiry ends the wait).
Work that never becomes a task (a plain answer, an input round before an explicit start) is an
ordinary request and takes no place.

A store that cannot be reached (`BackendUnavailable`: Redis down) is an outage, not a bug: the
call is answered with `store_unavailable`'s error (-32603 with `data.retryAfter`; HTTP turns it
into 503 with `Retry-After`) and a one-line warning, no traceback.

Must not import: session, server, dispatcher, transports, context.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio
from anyio.abc import TaskGroup

from .._backends.base import RETRY_AFTER_SECONDS, BackendUnavailable
from .._protocol.errors import MCPError
from .._protocol.jsonrpc import INTERNAL_ERROR, JSONRPCError
from .._telemetry import hooks as telemetry_hooks
from ._model import TaskRecord, TaskSettings
from ._store import TaskStore, TaskStoreError

logger = logging.getLogger("mcp_kit.tasks")

SWEEP_SECONDS = 60.0  # how often expired records are purged even when nobody uses the store
WATCH_SECONDS = 60.0  # a watcher re-reads its task at least this often
OUTAGE_PAUSE_SECONDS = 1.0  # a watcher whose store is down looks again after this (doubling up to WATCH_SECONDS)


def store_unavailable(exc: BackendUnavailable) -> MCPError:
    """The error a request gets when the task store (Redis) does not answer: retry shortly."""
    return MCPError(INTERNAL_ERROR, f"The task store is unavailable ({exc}); retry in a few seconds",
                    {"retryAfter": RETRY_AFTER_SECONDS})


def error_object(exc: JSONRPCError) -> dict[str, Any]:
    """A JSON-RPC error object for a raised error."""
    error: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if exc.data is not None:
        error["data"] = exc.data
    return error


class TaskCall:
    """One call that may become a task: its settings, its record once created, and how it was decided."""

    def __init__(self, runner: TaskRunner, *, target: str, era: str, owner: str | None, settings: TaskSettings,
                 requested_ttl: Any = None, method: str = "tools/call", caller: str | None = None) -> None:
        self.runner = runner
        self.target = target
        self.era = era
        self.owner = owner
        self.caller = caller  # whose per-caller task limit the task counts against
        self.settings = settings
        self.requested_ttl = requested_ttl
        self.method = method
        self.record: TaskRecord | None = None
        self.stopped = False  # the task was cancelled, expired or deleted: the work is being cancelled
        self.on_change: Callable[[TaskRecord], Awaitable[None]] | None = None  # e.g. 2025-11-25 status notifications
        self.decided = anyio.Event()
        self._value: Any = None
        self._error: BaseException | None = None
        self._scope: anyio.CancelScope | None = None
        self._abandoned = False
        self.holds_place = False  # one of the runner's `max_running` places

    @property
    def task_id(self) -> str | None:
        return None if self.record is None else self.record.task_id

    async def create(self, status_message: str | None = None) -> TaskRecord:
        """Create the task in the store (durably) and hand the call off; a second call returns the same record.

        Returns once the task may run: at once when a place is free, else when one frees (the request
        has its handle meanwhile, and the task shows `working` with a message saying it waits).
        """
        if self.record is not None:
            return self.record
        runner = self.runner
        clock = getattr(runner.store, "now_ms", None)  # the store's clock when it has one (tests move it)
        now_ms = clock() if callable(clock) else int(time.time() * 1000)
        self.holds_place = runner.take_place_now(self)
        record = self.settings.new_record(now_ms=now_ms, method=self.method, target=self.target,
                                          era=self.era, owner=self.owner, requested_ttl=self.requested_ttl,
                                          status_message=status_message if self.holds_place
                                          else runner.waiting_message(), caller=self.caller)
        probe = telemetry_hooks.active
        traced = probe.trace_context() if probe is not None else None
        if traced is not None:  # the creating span: the run, and every process serving the task, link to it
            record = dataclasses.replace(record, trace_context=traced)
        try:
            await runner.store.create(record)  # TaskLimitReached propagates to the caller
        except BaseException:
            runner.give_place(self)
            raise
        self.record = record
        self._decide(value=record)
        runner.watch(self)
        if not self.holds_place:
            await runner.take_place(self)  # cancelled (tasks/cancel, expiry, shutdown) while it waits
            record = await runner.store.set_status_message(record.task_id, status_message) or record
        return record

    def stop(self) -> None:
        """Cancel the work (the task was cancelled, expired or deleted)."""
        self.stopped = True
        self.abandon()

    def abandon(self) -> None:
        """Cancel the work, whether or not it has started."""
        self._abandoned = True
        if self._scope is not None:
            self._scope.cancel()

    def _decide(self, *, value: Any = None, error: BaseException | None = None) -> None:
        if not self.decided.is_set():
            self._value, self._error = value, error
            self.decided.set()

    def outcome(self) -> tuple[Literal["task", "result"], Any]:
        """After `decided`: ("task", record) or ("result", the work's return value); raises the work's error."""
        if self._error is not None:
            raise self._error
        if isinstance(self._value, TaskRecord):
            return "task", self._value
        return "result", self._value


class TaskRunner:
    """Runs task work in the application's task group; bounds how much runs at once."""

    def __init__(self, store: TaskStore, *, max_running: int = 100) -> None:
        if max_running < 1:
            raise ValueError("max_running must be at least 1")
        self.store = store
        self.max_running = max_running
        self._limiter = anyio.CapacityLimiter(max_running)
        self._tg: TaskGroup | None = None
        self.running: set[TaskCall] = set()  # started, waiting for a place or running

    def take_place_now(self, call: TaskCall) -> bool:
        """Take one of the `max_running` places for `call` if one is free."""
        try:
            self._limiter.acquire_on_behalf_of_nowait(call)
        except anyio.WouldBlock:
            return False
        return True

    async def take_place(self, call: TaskCall) -> None:
        """Wait for a place for `call` and take it."""
        await self._limiter.acquire_on_behalf_of(call)
        call.holds_place = True

    def give_place(self, call: TaskCall) -> None:
        if call.holds_place:
            call.holds_place = False
            self._limiter.release_on_behalf_of(call)

    def waiting_message(self) -> str:
        return (f"Waiting to start: {self.max_running} tasks are running, as many as this server runs at once; "
                "this one starts when one of them ends")

    def attach(self, tg: TaskGroup | None) -> None:
        """Run in `tg` (the application's task group) from now on; None when the application stops."""
        self._tg = tg
        if tg is not None:
            tg.start_soon(self._sweep)

    async def start(self, call: TaskCall, work: Callable[[], Awaitable[Any]]) -> tuple[Literal["task", "result"], Any]:
        """Start `work` for `call` and wait for the hand-off: ("task", record) or ("result", value)."""
        if self._tg is None:
            raise MCPError(INTERNAL_ERROR, "Tasks run only while the server runs (inside `app.running()`)")
        self._tg.start_soon(self._execute, call, work)
        try:
            await call.decided.wait()
        except BaseException:  # the request was cancelled before the hand-off: so is its work
            if call.record is None:
                call.abandon()
            raise
        return call.outcome()

    def watch(self, call: TaskCall) -> None:
        if self._tg is not None:
            self._tg.start_soon(self._watch, call)

    async def shutdown(self) -> None:
        """Mark every task still running `failed`: its work is about to be cancelled with the server.
        Each is marked once: a second call (the shared backend's, then the application's) finds none."""
        with anyio.CancelScope(shield=True):
            for call in list(self.running):
                self.running.discard(call)
                if call.record is not None:
                    await self._finish(call, error={"code": INTERNAL_ERROR,
                                                    "message": "The server running this task stopped; start it again"})

    # ------------------------------------------------------------------ internals

    async def _execute(self, call: TaskCall, work: Callable[[], Awaitable[Any]]) -> None:
        self.running.add(call)
        try:
            with anyio.CancelScope() as scope:
                call._scope = scope
                if call._abandoned:
                    scope.cancel()
                try:
                    value = await work()
                except JSONRPCError as exc:
                    await self._settle(call, error=exc)
                except TaskStoreError as exc:  # the task could not be created (limits): the caller says so
                    if call.record is None:
                        call._decide(error=exc)
                    else:
                        await self._settle(call, error=MCPError(INTERNAL_ERROR, str(exc)))
                except BackendUnavailable as exc:  # the store is down: an outage to retry after, not a bug
                    logger.warning("task work for %s stopped: %s", call.target, exc)
                    await self._settle(call, error=store_unavailable(exc))
                except Exception as exc:
                    logger.exception("task work for %s failed", call.target)
                    await self._settle(call, error=MCPError(INTERNAL_ERROR, f"Internal error: {type(exc).__name__}"))
                else:
                    await self._settle(call, value=value)
            if scope.cancelled_caught and not call.decided.is_set():
                call._decide(error=MCPError(INTERNAL_ERROR, "The call was cancelled"))
        finally:
            self.give_place(call)
            self.running.discard(call)

    async def _settle(self, call: TaskCall, *, value: Any = None, error: JSONRPCError | None = None) -> None:
        if call.record is None:  # never became a task: the request answers with it
            call._decide(value=value, error=error)
            return
        if error is not None:
            await self._finish(call, error=error_object(error))
            return
        failed = call.era == "2025-11-25" and isinstance(value, dict) and value.get("isError") is True
        await self._finish(call, result=value, failed=failed)

    async def _finish(self, call: TaskCall, *, result: dict[str, Any] | None = None,
                      error: dict[str, Any] | None = None, failed: bool = False) -> None:
        assert call.record is not None
        message = None if error is None else error.get("message")
        status: Literal["completed", "failed"] = "failed" if failed or error is not None else "completed"
        telemetry_hooks.count("task_finished", status)
        try:
            await self.store.finish(call.record.task_id, status, result=result, error=error, status_message=message)
        except BackendUnavailable as exc:
            logger.warning("could not store the outcome of task %s: %s", call.record.task_id, exc)
        except Exception:
            logger.exception("could not store the outcome of task %s", call.record.task_id)

    async def _watch(self, call: TaskCall) -> None:
        """Follow the task's record: stop the work when it is cancelled, expired or deleted."""
        assert call.record is not None
        task_id, version = call.record.task_id, call.record.version
        pause = OUTAGE_PAUSE_SECONDS
        while True:
            try:
                record = await self.store.wait_for_change(task_id, version, WATCH_SECONDS)
            except BackendUnavailable as exc:  # the store is down: look again shortly, while the work runs
                if call not in self.running:
                    return
                logger.warning("watching task %s: %s; trying again in %g s", task_id, exc, pause)
                await anyio.sleep(pause)
                pause = min(pause * 2, WATCH_SECONDS)
                continue
            except Exception:
                logger.exception("watching task %s failed", task_id)
                return
            pause = OUTAGE_PAUSE_SECONDS
            if record is None or record.status == "cancelled":
                if not call.stopped:
                    telemetry_hooks.count("task_finished", "cancelled" if record is not None else "expired")
                call.stop()
            if record is not None and record.version > version and call.on_change is not None:
                try:
                    await call.on_change(record)
                except Exception:
                    logger.debug("task %s: status notification not delivered", task_id, exc_info=True)
            if record is None or record.is_terminal:
                return
            version = record.version

    async def _sweep(self) -> None:
        while True:
            await anyio.sleep(SWEEP_SECONDS)
            try:
                await self.store.purge_expired()
            except BackendUnavailable as exc:
                logger.warning("purging expired tasks: %s", exc)
            except Exception:
                logger.exception("purging expired tasks failed")
