"""Watching one file with watchfiles, for resource subscriptions.

The file's directory is watched (so deletion and re-creation are seen too)
and only events about the file itself are passed on. Cancelling the watch
(the last subscriber left) stops the watchfiles thread promptly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import anyio
from watchfiles import Change, awatch

logger = logging.getLogger("servers.filesystem.watch")

DEBOUNCE_MS = 50
STEP_MS = 20
RUST_TIMEOUT_MS = 1000


async def watch_file(path: Path, on_change: Callable[[], None]) -> None:
    """Call `on_change()` whenever `path` is modified, deleted or created, until cancelled."""
    target = str(path)
    stop = anyio.Event()

    def about_target(change: Change, changed: str) -> bool:
        return changed == target

    async def pump() -> None:
        async for changes in awatch(
            path.parent, watch_filter=about_target, stop_event=stop, recursive=False,
            debounce=DEBOUNCE_MS, step=STEP_MS, rust_timeout=RUST_TIMEOUT_MS,
        ):
            logger.debug("change on %s: %s", target, changes)
            on_change()

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump)
        try:
            await anyio.sleep_forever()
        finally:
            stop.set()  # lets the watchfiles thread return so the task group can finish
