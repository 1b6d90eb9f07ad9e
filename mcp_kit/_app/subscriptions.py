"""Who listens to which resource URI, and the watchers that run only while someone listens.

`publish(uri)` reaches every subscriber of that URI, whatever its protocol era: a handshake-era
session subscribed with `resources/subscribe`, or a 2026-07-28 `subscriptions/listen` stream.
A watcher registered for a URI template starts on the first subscription to a matching URI
and is cancelled when the last subscriber leaves. In memory, for one process.

A watcher that declares a `task_status` parameter says when it is running
(`task_status.started()`, as with anyio's `TaskGroup.start`); `ready(uris)` waits for that, so
a subscription is answered only once its watcher can see changes.

Subscriptions are bounded: each owner (a session, counting its listen streams too) holds at
most `per_session`, the whole server at most `total`; past either the request fails with
-32602 naming the limit, and nothing of it is kept.

Fan-out never holds up the caller: `publish` delivers inline to a few subscribers and hands a
larger set to one delivery task (in the hub's task group), which awaits each subscriber's
`deliver_update` when it has one (no task per subscriber).

Across processes the hub has two hooks, set by a shared backend: `relay(uri)` forwards
a local `publish` to the other processes, which call `deliver(uri)` for their own subscribers;
`leases` runs each watcher under a deployment-wide lease, so it runs once per deployment.

Must not import the session, the server or any transport.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol
from urllib.parse import unquote

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from .._backends.base import Leases
from .._primitives.resources import compile_template
from .._protocol.errors import MCPError, invalid_params

logger = logging.getLogger("mcp_kit.subscriptions")

Watcher = Callable[..., Awaitable[None]]

DEFAULT_MAX_PER_SESSION = 1000
DEFAULT_MAX_TOTAL = 10_000
READY_TIMEOUT = 10.0  # a watcher slower than this to start does not hold up the subscription's answer
INLINE_FANOUT = 8  # up to this many subscribers are told inline; more go to one delivery task
DELIVERY_SLICE = 64  # the delivery task lets the loop run between slices of this many subscribers


class _Started:
    """The `task_status` a watcher gets: `started()` marks it running."""

    def __init__(self, event: anyio.Event) -> None:
        self._event = event

    def started(self, value: Any = None) -> None:
        self._event.set()


class Subscriber(Protocol):
    """Anything that wants to hear that a resource changed. Must not block."""

    def resource_updated(self, uri: str) -> None: ...


async def _deliver_one(subscriber: Subscriber, uri: str) -> None:
    deliver = getattr(subscriber, "deliver_update", None)
    if deliver is not None:
        await deliver(uri)
    else:
        subscriber.resource_updated(uri)


def too_many(scope: str, limit: int, held: int, asked: int) -> MCPError:
    """The error for a subscription past a limit (`scope` is "session" or "server")."""
    where = "this session already holds" if scope == "session" else "the server already holds"
    return invalid_params(
        f"Too many resource subscriptions: {where} {held} of at most {limit}, and this request adds {asked}. "
        "Unsubscribe from resources you no longer need, then try again.",
        {"limit": limit, "scope": scope, "held": held},
    )


class SubscriptionHub:
    """Subscribers per URI, watcher tasks per watched URI, and the limits on both."""

    def __init__(self, per_session: int = DEFAULT_MAX_PER_SESSION, total: int = DEFAULT_MAX_TOTAL) -> None:
        if per_session < 1 or total < 1:
            raise ValueError("subscription limits must be positive")
        self.per_session = per_session
        self.total = total
        self._subscribers: dict[str, set[Subscriber]] = {}
        self._uris_of: dict[Subscriber, set[str]] = {}
        self._owner_of: dict[Subscriber, object] = {}
        self._held: dict[object, int] = {}
        self._count = 0
        self._watchers: list[tuple[re.Pattern[str], Watcher, bool]] = []
        self._running: dict[str, anyio.CancelScope] = {}
        self._ready: dict[str, anyio.Event] = {}
        self._task_group: TaskGroup | None = None
        self.relay: Callable[[str], None] | None = None  # forwards a publish to the other processes
        self.leases: Leases | None = None  # watchers run once per deployment under these

    def add_watcher(self, template: str, fn: Watcher) -> None:
        pattern, _ = compile_template(template)
        self._watchers.append((pattern, fn, "task_status" in inspect.signature(fn).parameters))

    def attach(self, task_group: TaskGroup | None) -> None:
        """Give the hub the server's task group for watcher tasks (None when the server stops)."""
        self._task_group = task_group
        if task_group is None:
            for scope in self._running.values():
                scope.cancel()
            self._running.clear()

    def check_room(self, subscriber: Subscriber, uris: Iterable[str], owner: object | None = None) -> None:
        """Raise the limit error if subscribing `subscriber` to `uris` would pass a limit; change nothing."""
        owner = subscriber if owner is None else owner
        mine = self._uris_of.get(subscriber, set())
        adding = len({uri for uri in uris if uri not in mine})
        if not adding:
            return
        held = self._held.get(owner, 0)
        if held + adding > self.per_session:
            raise too_many("session", self.per_session, held, adding)
        if self._count + adding > self.total:
            raise too_many("server", self.total, self._count, adding)

    def subscribe(self, uri: str, subscriber: Subscriber, owner: object | None = None) -> None:
        """Add one subscription (idempotent); raises the limit error, keeping nothing, past a limit."""
        self.subscribe_all([uri], subscriber, owner)

    def subscribe_all(self, uris: Iterable[str], subscriber: Subscriber, owner: object | None = None) -> None:
        """Add several subscriptions at once: all of them, or (past a limit) none."""
        wanted = list(dict.fromkeys(uris))
        self.check_room(subscriber, wanted, owner)
        owner = subscriber if owner is None else owner
        for uri in wanted:
            mine = self._uris_of.setdefault(subscriber, set())
            if uri in mine:
                continue
            mine.add(uri)
            self._owner_of[subscriber] = owner
            self._held[owner] = self._held.get(owner, 0) + 1
            self._count += 1
            listeners = self._subscribers.setdefault(uri, set())
            first = not listeners
            listeners.add(subscriber)
            if first:
                self._start_watcher(uri)

    def unsubscribe(self, uri: str, subscriber: Subscriber) -> None:
        mine = self._uris_of.get(subscriber)
        if not mine or uri not in mine:
            return
        mine.discard(uri)
        owner = self._owner_of[subscriber]
        self._held[owner] -= 1
        if not self._held[owner]:
            del self._held[owner]
        if not mine:
            del self._uris_of[subscriber]
            del self._owner_of[subscriber]
        self._count -= 1
        listeners = self._subscribers.get(uri)
        if listeners is None:
            return
        listeners.discard(subscriber)
        if not listeners:
            del self._subscribers[uri]
            scope = self._running.get(uri)
            if scope is not None:
                scope.cancel()  # `watching(uri)` stays true until the watcher's task has ended

    def drop(self, subscriber: Subscriber) -> None:
        """Remove a subscriber from every URI (its session or stream ended)."""
        for uri in list(self._uris_of.get(subscriber, ())):
            self.unsubscribe(uri, subscriber)

    def subscribers(self, uri: str) -> int:
        return len(self._subscribers.get(uri, ()))

    def held_by(self, owner: object) -> int:
        """How many subscriptions `owner` holds now."""
        return self._held.get(owner, 0)

    @property
    def count(self) -> int:
        """Subscriptions held across the server."""
        return self._count

    def watching(self, uri: str) -> bool:
        """Whether a watcher task for `uri` is running (it ends a little after its last subscriber left)."""
        return uri in self._running

    async def ready(self, uris: Iterable[str]) -> None:
        """Wait until the watchers of `uris` that report readiness are running (at most `READY_TIMEOUT`)."""
        with anyio.move_on_after(READY_TIMEOUT):
            for uri in uris:
                event = self._ready.get(uri)
                if event is not None:
                    await event.wait()

    def publish(self, uri: str) -> None:
        """Tell every subscriber of `uri`, here and (with a shared backend) on every other process."""
        self.deliver(uri)
        if self.relay is not None:
            self.relay(uri)

    def deliver(self, uri: str) -> None:
        """Tell this process's subscribers of `uri`; returns at once, whatever their number."""
        listeners = self._subscribers.get(uri)
        if not listeners:
            return
        if len(listeners) <= INLINE_FANOUT or self._task_group is None:
            for subscriber in list(listeners):
                try:
                    subscriber.resource_updated(uri)
                except Exception:
                    logger.exception("subscriber failed on update of %s", uri)
            return
        self._task_group.start_soon(self._deliver_all, uri, list(listeners))

    async def _deliver_all(self, uri: str, targets: list[Subscriber]) -> None:
        for index, subscriber in enumerate(targets):
            if index and not index % DELIVERY_SLICE:
                await anyio.lowlevel.checkpoint()
            try:
                await _deliver_one(subscriber, uri)
            except Exception:
                logger.exception("subscriber failed on update of %s", uri)

    def _start_watcher(self, uri: str) -> None:
        if self._task_group is None:
            return
        for pattern, fn, reports_ready in self._watchers:
            match = pattern.match(uri)
            if match:
                scope = anyio.CancelScope()
                self._running[uri] = scope
                variables: dict[str, Any] = {k: unquote(v) for k, v in match.groupdict().items()}
                if reports_ready:
                    ready = self._ready[uri] = anyio.Event()
                    variables["task_status"] = _Started(ready)
                self._task_group.start_soon(self._watch, scope, uri, fn, variables)
                return

    async def _watch(self, scope: anyio.CancelScope, uri: str, fn: Watcher, variables: dict[str, Any]) -> None:
        started = variables.get("task_status")
        try:
            with scope:
                try:
                    if self.leases is None:
                        await fn(uri, **variables)
                    else:  # once per deployment: whoever holds the lease watches, the others stand by
                        await self.leases.run_exclusive(f"watch:{uri}", lambda: fn(uri, **variables),
                                                        lambda: started.started() if isinstance(started, _Started)
                                                        else None)
                except Exception:
                    logger.exception("watcher for %s failed", uri)
        finally:
            if isinstance(started, _Started):
                started.started()  # a watcher that ended (or refused) holds up no one
                if self._ready.get(uri) is started._event:
                    del self._ready[uri]
            if self._running.get(uri) is scope:
                del self._running[uri]
