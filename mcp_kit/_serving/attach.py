"""Attach an `Application` to a backend: what crosses processes above the transport.

With a shared backend (Redis), inside `attached(app, backend)`:
- a resource update published on this process (`SubscriptionHub.publish`) is relayed on the bus,
  and updates relayed by other processes reach this process's subscribers (`hub.deliver`);
- list changes likewise (`Application.relay_list_changed` / `deliver_list_changed`);
- watchers run under a deployment-wide lease (once per deployment, not once per process);
- 2026-07-28 request state is signed with the deployment's shared key (`input_rounds.use_secret`);
- `ctx.state`, rate limits and the response cache keep their values in it (`app.backend`);
- while telemetry is on, each backend operation is a span of the request it serves (`backend.observe`).
The backend is started on the way in and closed on the way out. With the in-memory backend
nothing else changes.

Imports the application, the hub's types and input rounds; never a transport, session or server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Coroutine
from typing import Any

from .._app.application import Application
from .._backends import Backend, BackendUnavailable
from .._eras import input_rounds
from .._telemetry import hooks as telemetry_hooks
from ..tasks._methods import tasks_of

logger = logging.getLogger("mcp_kit.backend")


class _Relay:
    """Fire-and-forget bus publishes from synchronous code; failures are logged as dropped."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.tasks: set[asyncio.Task[None]] = set()

    def send(self, kind: str, payload: dict[str, Any]) -> None:
        self._spawn(self._publish(kind, payload))

    async def _publish(self, kind: str, payload: dict[str, Any]) -> None:
        try:
            await self.backend.publish(kind, payload)
        except BackendUnavailable as exc:
            logger.warning("dropped a %s notification for the other processes (%s): %s", kind, payload, exc)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


@contextlib.asynccontextmanager
async def attached(app: Application, backend: Backend) -> AsyncIterator[Backend]:
    """Start `backend`, and with a shared one wire `app` to it (see the module docstring)."""
    probe = telemetry_hooks.active
    if probe is not None and hasattr(backend, "observe"):  # each Redis operation a span of the request it serves
        backend.observe = probe.backend_call
    await backend.start()
    relay = _Relay(backend)
    default_tasks = None  # the application's own task store, while a shared one stands in
    tasks = tasks_of(app)
    own_backend = app.backend
    app.backend = backend
    try:
        if backend.shared:
            app.hub.relay = lambda uri: relay.send("u", {"uri": uri})
            app.hub.leases = backend
            app.relay_list_changed = lambda kind: relay.send("l", {"kind": kind})
            backend.on("u", lambda message: app._on_loop(app.hub.deliver, str(message.get("uri", ""))))
            backend.on("l", lambda message: app._on_loop(app.deliver_list_changed, str(message.get("kind", ""))))
            from .._backends.redis_backend import RedisBackend
            from ..tasks._redis_store import RedisTaskStore

            if not tasks.store_given and isinstance(backend, RedisBackend):
                default_tasks = tasks.store
                # a task is polled and fetched from any process, and a caller's limit holds across them
                tasks.use_store(RedisTaskStore(backend, max_tasks_per_caller=tasks.max_tasks_per_caller))
            try:
                input_rounds.use_secret(await backend.shared_secret())
            except BackendUnavailable as exc:
                logger.warning("request state is signed with this process's own key (%s): 2026-07-28 input rounds "
                               "resume only on this process until it restarts with Redis reachable", exc)
        yield backend
    finally:
        app.backend = own_backend
        if backend.shared:
            if default_tasks is not None:  # tasks still running fail in the shared store, before it closes
                await tasks.runner.shutdown()
                tasks.use_store(default_tasks)
            app.hub.relay = None
            app.hub.leases = None
            app.relay_list_changed = None
        for task in list(relay.tasks):
            task.cancel()
        await backend.aclose()
