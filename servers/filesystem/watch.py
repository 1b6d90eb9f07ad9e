"""One file-system watch for every subscribed file of the server (watchfiles' Rust notifier).

Each subscribed path is registered here; the service watches, non-recursively, the directory
each path lives in, or, while that directory does not exist yet, its nearest existing
ancestor inside the allowed directory, so a file whose parent is created later is still seen.
A subscribed directory is watched itself as well, so a change of its entries counts as a
change of the directory. All of those directories share one notifier (one inotify instance
on Linux), restarted only when the set of directories changes.

No change is lost: every registered path keeps the metadata it had when last reported, and
whenever a notifier starts or returns (with events, on its periodic timeout, or when stopped,
which drops events it had not delivered yet), paths whose metadata differs are reported. That
also covers changes made between `resources/subscribe` and the first start.

Must not import the sandbox or the operations (paths here are already checked).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskStatus
from watchfiles._rust_notify import RustNotify  # the notifier behind watchfiles.awatch (documented "Rust backend")

logger = logging.getLogger("servers.filesystem.watch")

DEBOUNCE_MS = 50
STEP_MS = 20
RECHECK_MS = 2000  # also look for vanished or new directories this often, whatever the events

StatKey = tuple[int, int, int, int, int] | None


def _stat_key(path: str) -> StatKey:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _is_directory(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)  # a link is never watched through
    except OSError:
        return False


async def _stop_when(changed: anyio.Event, stop: anyio.Event) -> None:
    """Set `stop` once `changed` is set, or when cancelled (lets the notifier's thread return at once)."""
    try:
        await changed.wait()
    finally:
        stop.set()


@dataclass
class _Target:
    """One subscribed path: who to tell, which allowed directory bounds it, what it looked like last."""

    top: str
    callbacks: list[Callable[[], None]] = field(default_factory=list)
    key: StatKey = None


class DirectoryWatch:
    """The server's single watch; `watch(path, top, on_change)` runs while a subscription needs it."""

    def __init__(self) -> None:
        self._targets: dict[str, _Target] = {}
        self._changed = anyio.Event()
        self.directories: tuple[str, ...] = ()  # what the current notifier watches (for tests and logs)
        self.starts = 0

    @contextlib.asynccontextmanager
    async def running(self, app: Any = None) -> AsyncIterator[DirectoryWatch]:
        """Run the service (usable as the server's lifespan)."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._serve)
            try:
                yield self
            finally:
                tg.cancel_scope.cancel()

    async def watch(self, path: str, top: str, on_change: Callable[[], None],
                    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Call `on_change()` on every change of `path` (inside the allowed directory `top`) until cancelled.

        `task_status.started()` is called once the path is registered: from then on no change is missed.
        """
        target = self._targets.get(path)
        if target is None:
            target = self._targets[path] = _Target(top, key=_stat_key(path))
        target.callbacks.append(on_change)
        self._changed.set()
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            target.callbacks.remove(on_change)
            if not target.callbacks:
                del self._targets[path]
            self._changed.set()

    # ------------------------------------------------------------------ the notifier loop

    def _wanted_directories(self) -> tuple[str, ...]:
        wanted: set[str] = set()
        for path, target in self._targets.items():
            if _is_directory(path):
                wanted.add(path)
            directory = os.path.dirname(path)
            while not _is_directory(directory) and len(directory) > len(target.top):
                directory = os.path.dirname(directory)
            if _is_directory(directory):
                wanted.add(directory)
        return tuple(sorted(wanted))

    async def _serve(self) -> None:
        while True:
            self._changed = anyio.Event()
            directories = self._wanted_directories()
            if not directories:
                self.directories = ()
                await self._changed.wait()
                continue
            try:
                notifier = await anyio.to_thread.run_sync(RustNotify, list(directories), False, False, 300, False, True)
            except (FileNotFoundError, OSError) as exc:  # a directory vanished since we looked: look again
                logger.debug("restarting the watch: %s", exc)
                await anyio.sleep(STEP_MS / 1000)
                continue
            with notifier:
                self.directories = directories
                self.starts += 1
                self._report_differences()
                await self._pump(notifier, directories)

    async def _pump(self, notifier: RustNotify, directories: tuple[str, ...]) -> None:
        """Deliver events until the set of directories to watch changes."""
        while True:
            stop = anyio.Event()
            changed = self._changed = anyio.Event()  # (the caller just compared the directories: nothing is lost)
            async with anyio.create_task_group() as tg:
                tg.start_soon(_stop_when, changed, stop)
                result = await anyio.to_thread.run_sync(notifier.watch, DEBOUNCE_MS, STEP_MS, RECHECK_MS, stop)
                tg.cancel_scope.cancel()
            if isinstance(result, set):
                self._dispatch(result)
            self._report_differences()  # the notifier drops pending events when stopped: compare states too
            if self._wanted_directories() != directories:
                return

    def _dispatch(self, changes: set[tuple[int, str]]) -> None:
        touched: set[str] = set()
        for _, path in changes:
            touched.add(path)
            touched.add(os.path.dirname(path))  # an entry of a subscribed directory changed
        for path in touched:
            target = self._targets.get(path)
            if target is not None:
                target.key = _stat_key(path)
                self._notify(path, target)

    def _report_differences(self) -> None:
        for path, target in list(self._targets.items()):
            key = _stat_key(path)
            if key != target.key:
                target.key = key
                self._notify(path, target)

    def _notify(self, path: str, target: _Target) -> None:
        for callback in list(target.callbacks):
            try:
                callback()
            except Exception:
                logger.exception("notifying a change of %s failed", path)
