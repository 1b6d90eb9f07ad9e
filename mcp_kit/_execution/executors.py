"""Where a tool's function runs: on the event loop, in a worker thread, or in a worker process.

Coroutine functions run on the event loop. Plain functions run in the server's `ToolThreads`
(the default: on a worker thread, or inline on the loop once a function has proved short, see
`threads.py`), with `run_in="thread"` always on a worker thread, or with `run_in="process"` in its
`ToolProcesses`. One `Executors` per server owns both pools; `executor_for` checks a tool's choice at registration and
`shutdown` stops both pools with the server.

Must not import: session, server, tools, transports (it knows functions, not MCP).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any, Literal, Protocol

from .._primitives.signature import is_context_annotation
from .processes import ToolProcesses, check_function
from .threads import DEFAULT_SWITCH_INTERVAL, ToolThreads

RunIn = Literal["thread", "process"]
RUN_IN: tuple[RunIn, ...] = ("thread", "process")


class Executor(Protocol):
    """Runs a plain function with keyword arguments somewhere other than the event loop."""

    accepts_context: bool  # False for another process: a Context cannot leave the server's process

    async def run(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any: ...


class Executors:
    """A server's thread pool for sync tools and its process pool for `run_in="process"` tools."""

    def __init__(self, max_sync_threads: int | None = None, max_tool_processes: int | None = None,
                 switch_interval: float | None = DEFAULT_SWITCH_INTERVAL) -> None:
        self.threads = ToolThreads(max_sync_threads, switch_interval=switch_interval)
        self.processes = ToolProcesses(max_tool_processes)
        self.threads_only = _ThreadsOnly(self.threads)

    def executor_for(
        self, fn: Callable[..., Any], run_in: RunIn | None, name: str, context_type: type
    ) -> Executor | None:
        """The pool that runs tool `name` (None: a coroutine function, run on the loop); errors in words."""
        is_async = inspect.iscoroutinefunction(fn)
        if run_in is None:
            return None if is_async else self.threads
        if run_in not in RUN_IN:
            raise ValueError(f"tool {name!r}: run_in must be one of {', '.join(map(repr, RUN_IN))}, not {run_in!r}")
        if run_in == "thread":
            if is_async:
                raise TypeError(f"tool {name!r}: run_in='thread' applies to plain (def) functions; "
                                "a coroutine function runs on the event loop")
            return self.threads_only
        check_function(fn, name)
        if _takes_context(fn, context_type):
            raise TypeError(f"tool {name!r} cannot run in a process: it takes a Context, which lives in the "
                            "server's process; drop the Context parameter or use run_in='thread'")
        return self.processes

    def shutdown(self) -> None:
        """Stop both pools (each starts again on its next call)."""
        self.threads.shutdown()
        self.processes.shutdown()


class _ThreadsOnly:
    """`ToolThreads` for `run_in="thread"`: every call on a worker thread, never inline."""

    accepts_context = True

    def __init__(self, threads: ToolThreads) -> None:
        self.threads = threads

    async def run(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        return await self.threads.run(fn, kwargs, may_inline=False)


def _takes_context(fn: Callable[..., Any], context_type: type) -> bool:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # a forward reference not resolvable yet: the check is repeated when the tool is first called
        return False
    return any(is_context_annotation(hint, context_type) for name, hint in hints.items() if name != "return")
