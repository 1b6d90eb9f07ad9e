"""Who listens to which resource URI, and the watchers that run only while someone listens.

`publish(uri)` reaches every subscriber of that URI, whatever its protocol era: a handshake-era
session subscribed with `resources/subscribe`, or a 2026-07-28 `subscriptions/listen` stream.
A watcher registered for a URI template starts on the first subscription to a matching URI
and is cancelled when the last subscriber leaves. In memory, for one process.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, Protocol
from urllib.parse import unquote

import anyio
from anyio.abc import TaskGroup

from .resources import compile_template

logger = logging.getLogger("mcp_kit.subscriptions")

Watcher = Callable[..., Awaitable[None]]


class Subscriber(Protocol):
    """Anything that wants to hear that a resource changed. Must not block."""

    def resource_updated(self, uri: str) -> None: ...


class SubscriptionHub:
    """Subscribers per URI, and watcher tasks per watched URI."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[Subscriber]] = {}
        self._watchers: list[tuple[re.Pattern[str], Watcher]] = []
        self._running: dict[str, anyio.CancelScope] = {}
        self._task_group: TaskGroup | None = None

    def add_watcher(self, template: str, fn: Watcher) -> None:
        pattern, _ = compile_template(template)
        self._watchers.append((pattern, fn))

    def attach(self, task_group: TaskGroup | None) -> None:
        """Give the hub the server's task group for watcher tasks (None when the server stops)."""
        self._task_group = task_group
        if task_group is None:
            for scope in self._running.values():
                scope.cancel()
            self._running.clear()

    def subscribe(self, uri: str, subscriber: Subscriber) -> None:
        listeners = self._subscribers.setdefault(uri, set())
        first = not listeners
        listeners.add(subscriber)
        if first:
            self._start_watcher(uri)

    def unsubscribe(self, uri: str, subscriber: Subscriber) -> None:
        listeners = self._subscribers.get(uri)
        if not listeners:
            return
        listeners.discard(subscriber)
        if not listeners:
            del self._subscribers[uri]
            scope = self._running.pop(uri, None)
            if scope is not None:
                scope.cancel()

    def drop(self, subscriber: Subscriber) -> None:
        """Remove a subscriber from every URI (its session ended)."""
        for uri in [u for u, subs in self._subscribers.items() if subscriber in subs]:
            self.unsubscribe(uri, subscriber)

    def subscribers(self, uri: str) -> int:
        return len(self._subscribers.get(uri, ()))

    def watching(self, uri: str) -> bool:
        return uri in self._running

    def publish(self, uri: str) -> None:
        for subscriber in list(self._subscribers.get(uri, ())):
            try:
                subscriber.resource_updated(uri)
            except Exception:
                logger.exception("subscriber failed on update of %s", uri)

    def _start_watcher(self, uri: str) -> None:
        if self._task_group is None:
            return
        for pattern, fn in self._watchers:
            match = pattern.match(uri)
            if match:
                scope = anyio.CancelScope()
                self._running[uri] = scope
                self._task_group.start_soon(self._watch, scope, uri, fn, {k: unquote(v) for k, v in match.groupdict().items()})
                return

    async def _watch(self, scope: anyio.CancelScope, uri: str, fn: Watcher, variables: dict[str, Any]) -> None:
        with scope:
            try:
                await fn(uri, **variables)
            except Exception:
                logger.exception("watcher for %s failed", uri)
        if self._running.get(uri) is scope:
            del self._running[uri]
