"""`TaskChannel`: the request scope of a call that may run as a task (the third `RequestChannel`).

Until the task exists (an explicit start, `ctx.start_task()`), it answers as the request's own
scope: questions go through the request (an input-required round in 2026-07-28, a round trip in
the handshake era). Once the task exists, the request is gone and the task answers for it:

- questions (elicitation, sampling, roots) become the task's `inputRequests` in the store; the
  task shows `input_required` and the work waits on the store for the answer (`tasks/update` in
  2026-07-28; in 2025-11-25 `tasks/result` relays them to the client);
- progress sets the task's `statusMessage` (at most one store write per `PROGRESS_INTERVAL`), and
  in the handshake era still reaches the creating session on its progress token while connected;
- log messages reach the creating session in the handshake era; 2026-07-28 defines no log
  channel for tasks, so they are dropped there;
- `was_cancelled` is true once the task was cancelled or expired.

Must not import: session, server, dispatcher, transports, context.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import anyio

from .._app.channel import RequestChannel
from .._eras.input_rounds import valid_answer
from .._protocol.errors import ToolError
from .._protocol.jsonrpc import RequestId
from .._protocol.versions import is_stateless
from ._runner import TaskCall

PROGRESS_INTERVAL = 0.25  # seconds between two status-message writes from progress reports


class TaskChannel:
    """Answers a call's `Context`: as its request until the task exists, as the task after."""

    def __init__(self, inner: RequestChannel, call: TaskCall) -> None:
        self._inner = inner
        self._call = call
        self._asked = 0
        self._last_progress = 0.0
        self._stateless = is_stateless(inner.protocol_version)

    # ------------------------------------------------------------------ what the request knew

    @property
    def session_id(self) -> str:
        return self._inner.session_id

    @property
    def protocol_version(self) -> str:
        return self._inner.protocol_version

    @property
    def client_capabilities(self) -> Mapping[str, Any]:
        return self._inner.client_capabilities

    @property
    def log_threshold(self) -> str | None:
        if self._call.record is not None and self._stateless:
            return None  # 2026-07-28: no log messages for tasks
        return self._inner.log_threshold

    @property
    def lifespan_state(self) -> Any:
        return self._inner.lifespan_state

    @property
    def app(self) -> Any:
        return self._inner.app

    @property
    def task_id(self) -> str | None:
        return self._call.task_id

    async def start_task(self, status_message: str | None = None) -> str:
        """Create the task now (the request is answered with its handle); the task id."""
        record = await self._call.create(status_message)
        return record.task_id

    # ------------------------------------------------------------------ reaching the client

    async def notify(self, method: str, params: dict[str, Any], request_id: RequestId | None) -> None:
        record = self._call.record
        if record is None:
            await self._inner.notify(method, params, request_id)
            return
        if method == "notifications/progress":
            await self._progress_status(params)
            if self._stateless or "progressToken" not in params:
                return
        elif self._stateless:
            return
        try:  # the creating session, if it is still there (it drops messages once closed)
            await self._inner.notify(method, params, request_id)
        except Exception:  # a gone connection must not fail the task
            pass

    async def _progress_status(self, params: dict[str, Any]) -> None:
        now = time.monotonic()
        if now - self._last_progress < PROGRESS_INTERVAL and params.get("progress") != params.get("total"):
            return
        self._last_progress = now
        message = params.get("message")
        if message is None:
            total = params.get("total")
            message = f"{params.get('progress')}/{total}" if total is not None else f"{params.get('progress')}"
        assert self._call.record is not None
        await self._call.runner.store.set_status_message(self._call.record.task_id, str(message))

    async def ask(self, method: str, params: dict[str, Any], *, request_id: RequestId | None, timeout: float,
                  key: str | None) -> Any:
        record = self._call.record
        if record is None:
            return await self._inner.ask(method, params, request_id=request_id, timeout=timeout, key=key)
        self._asked += 1
        proposed = key or f"{method.split('/')[0]}_{self._asked}"
        store = self._call.runner.store
        asked = await store.request_input(record.task_id, {proposed: {"method": method, "params": params}})
        if asked is None or not asked[1]:
            raise ToolError("The task ended before the client answered")
        current, keys = asked
        actual, version = keys[proposed], current.version
        deadline = anyio.current_time() + (timeout if timeout > 0 else 24 * 3600)
        while True:
            answers = await store.take_answers(record.task_id, [actual])
            if actual in answers and valid_answer(method, answers[actual]):
                return answers[actual]
            remaining = deadline - anyio.current_time()
            if remaining <= 0:
                raise ToolError(f"The client did not answer {method} within {timeout:g} seconds")
            changed = await store.wait_for_change(record.task_id, version, remaining)
            if changed is None or changed.is_terminal:
                raise ToolError("The task ended before the client answered")
            version = changed.version

    async def list_roots(self, *, request_id: RequestId | None, key: str | None) -> list[Any]:
        if self._call.record is None:
            return await self._inner.list_roots(request_id=request_id, key=key)
        if "roots" not in self.client_capabilities:
            return []
        from mcp_types import Root

        result = await self.ask("roots/list", {}, request_id=request_id, timeout=0, key=key)
        return [Root.model_validate(root) for root in result.get("roots", [])]

    async def ping(self, *, request_id: RequestId | None, timeout: float) -> None:
        if self._call.record is None:
            await self._inner.ping(request_id=request_id, timeout=timeout)

    def missing_capability(self, capability: str, doing: str) -> Exception:
        return self._inner.missing_capability(capability, doing)

    def was_cancelled(self, request_id: RequestId) -> bool:
        if self._call.record is None:
            return self._call.stopped or self._inner.was_cancelled(request_id)
        return self._call.stopped

    def close_stream(self, request_id: RequestId) -> bool:
        return self._call.record is None and self._inner.close_stream(request_id)
