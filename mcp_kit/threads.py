"""Worker threads for synchronous handlers.

A plain `ThreadPoolExecutor` driven with `loop.run_in_executor` costs a fraction of a generic
thread hand-off with capacity limiters. Cancelling the awaiting task abandons the thread: a
blocking function cannot hold up the answer to a cancellation or the end of a session.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
MAX_WORKERS = 40

_executor: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=MAX_WORKERS, thread_name_prefix="mcp_kit-worker")
    return _executor


async def run_in_worker(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run `fn(*args, **kwargs)` in a worker thread with the caller's context variables."""
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_pool(), call)
