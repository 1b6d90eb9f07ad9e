"""Tools that run in a process pool (`@app.tool(run_in="process")`): CPU-heavy work off the interpreter.

A function in a worker thread shares the server's GIL; a function in another process does not, so
the event loop stays as responsive as with no work at all, and several such calls use several CPUs.

`ToolProcesses` is one server's pool: at most `limit` calls at once (default: the CPUs this
process may use), in processes made with the `spawn` start method on every platform (the only one
Windows has, the default on macOS, and safe beside threads on Linux), started on the first call and
stopped with the server. A call beyond the limit waits in the event loop, holding nothing.

What crosses to the process is pickled: the function travels *by reference* (its module and name),
so it must be a plain function defined at the top level of an importable module (`check_function`
refuses lambdas, nested functions and coroutine functions at registration), and its validated
arguments and its return value must be picklable. The module that defines it is imported again in
each worker process, so a server script must start the server under `if __name__ == "__main__":`.

Cancellation: the client's cancel is answered at once. A call still waiting for a free process
never starts; a call already running cannot be stopped without killing its process (and with it,
in `concurrent.futures`, the whole pool), so it runs to its end, its result is dropped, and its
process counts against the limit until then. A call cancelled inside `killing_on_cancel()` (a
tool timeout) is stopped: new calls go to a fresh pool at once, and the old pool's processes are
terminated as soon as its other running calls have finished (its place in the limit is given
back then). Stopping the server terminates the worker processes,
finished or not, and a worker whose server process died (killed, crashed) ends by itself.

Imports only the standard library and `threads` (the machine's size).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import logging
import os
import pickle
import threading
import types
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when a pool starts: a server without process tools does not load multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

from .._errors import MCPKitError
from .threads import check_limit, machine_cpus

logger = logging.getLogger("mcp_kit.processes")
_KILL_ON_CANCEL: contextvars.ContextVar[bool] = contextvars.ContextVar("mcp_kit_kill_on_cancel", default=False)


@contextlib.contextmanager
def killing_on_cancel() -> Iterator[None]:
    """Within this block, a process call that is cancelled while it runs has its worker process killed."""
    token = _KILL_ON_CANCEL.set(True)
    try:
        yield
    finally:
        _KILL_ON_CANCEL.reset(token)


class ProcessPoolError(MCPKitError, RuntimeError):
    """A process-pool call failed outside the tool's own code (its process died, the server stopped)."""


def check_function(fn: Callable[..., Any], name: str) -> None:
    """Refuse, in words, a function that cannot be sent to another process by reference."""
    where = f"tool {name!r} cannot run in a process"
    if inspect.iscoroutinefunction(fn):
        raise TypeError(f"{where}: it is a coroutine function; run_in applies to plain (def) functions")
    if isinstance(fn, types.FunctionType):
        qualname = fn.__qualname__
        if "<lambda>" in qualname or "<locals>" in qualname:
            raise TypeError(f"{where}: {qualname} is a lambda or is defined inside another function, and a process "
                            "can only import functions defined at the top level of a module; move it there")
        return  # found by module and name when called (a decorator runs before its module binds the name)
    try:
        pickle.dumps(fn)
    except Exception as exc:
        raise TypeError(f"{where}: it cannot be pickled ({type(exc).__name__}: {exc}); use a function defined "
                        "at the top level of a module") from exc


def run_packed(payload: bytes) -> Any:
    """In the worker process: unpickle the function and its arguments, and call it.

    An exception that would not survive the trip back (its class cannot be rebuilt from its pickle)
    is replaced by a `ProcessPoolError` naming it, and its traceback goes to this process's stderr.
    """
    try:
        fn, kwargs = pickle.loads(payload)
    except Exception as exc:
        raise ProcessPoolError(f"the worker process could not load the tool function: {type(exc).__name__}: {exc} "
                               "(it must be importable by its module and name in a fresh interpreter)") from None
    try:
        return fn(**kwargs)
    except Exception as exc:
        if _survives_pickling(exc):
            raise
        logger.exception("tool function raised an exception that cannot be sent back")
        raise ProcessPoolError(f"{type(exc).__name__}: {exc}") from None


def exit_with_parent() -> None:
    """In each worker process: end as soon as the server process ends, however it ends.

    A worker waits for calls on a pipe it also holds the writing end of, so it would outlive a server
    that was killed (or exited without stopping its pool); a daemon thread watches the parent instead.
    """
    import multiprocessing.connection

    parent = multiprocessing.parent_process()
    if parent is None:
        return
    sentinel = parent.sentinel

    def watch() -> None:
        multiprocessing.connection.wait([sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="mcp_kit-parent-watch", daemon=True).start()


def _survives_pickling(exc: BaseException) -> bool:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return False
    return True


class ToolProcesses:
    """At most `limit` calls at once, each in a worker process of a spawn-started pool, started on first use."""

    accepts_context = False

    def __init__(self, limit: int | None = None) -> None:
        self.limit = check_limit(limit, "max_tool_processes", machine_cpus)
        self._executor: ProcessPoolExecutor | None = None
        self._slots: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._died: weakref.WeakSet[ProcessPoolExecutor] = weakref.WeakSet()  # pools broken by a dead worker
        self._running: weakref.WeakKeyDictionary[ProcessPoolExecutor, set[Future[Any]]] = weakref.WeakKeyDictionary()
        self.killed = 0  # worker pools terminated to stop a call (killing_on_cancel)

    @property
    def started(self) -> bool:
        return self._executor is not None

    async def run(self, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        """`fn(**kwargs)` in a worker process; its exceptions are raised here."""
        loop = asyncio.get_running_loop()
        if self._executor is None or self._loop is not loop:
            self._start(loop)
        executor, slots = self._executor, self._slots
        assert executor is not None and slots is not None
        from concurrent.futures.process import BrokenProcessPool

        payload = pickle.dumps((fn, kwargs))  # here, so an unpicklable argument fails in words before waiting
        async with _Slot(slots, loop) as slot:
            try:
                future = executor.submit(run_packed, payload)
            except BrokenProcessPool:  # a worker died while idle (killed from outside): a new pool, once
                self._replace(executor)
                executor = self._executor
                assert executor is not None
                future = executor.submit(run_packed, payload)
            slot.hold_until(future)
            running = self._running.setdefault(executor, set())
            running.add(future)
            future.add_done_callback(running.discard)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if _KILL_ON_CANCEL.get() and not future.done():
                self._kill(executor, future)
            raise
        except BrokenProcessPool:
            if executor is self._executor:
                self._replace(executor)
            if executor in self._died:
                raise ProcessPoolError("a worker process of the pool died (killed, or it crashed the interpreter) "
                                       "while the tool was running, which ends every call then running in the "
                                       "pool; the pool was restarted, so the call may be tried again") from None
            raise ProcessPoolError("the server stopped while the tool was running") from None

    def _kill(self, executor: ProcessPoolExecutor, future: Future[Any]) -> None:
        """Stop `future`'s call: later calls go to a new pool; `executor` is terminated once its other calls end."""
        self._died.add(executor)
        if executor is self._executor and self._loop is not None:
            self._start(self._loop, keep_slots=True)
        others = {f for f in self._running.get(executor, ()) if f is not future and not f.done()}
        self.killed += 1
        if not others:
            _terminate(executor)
            return

        def finished(done: Future[Any]) -> None:
            others.discard(done)
            if not others:
                _terminate(executor)

        for other in list(others):
            other.add_done_callback(finished)

    def _start(self, loop: asyncio.AbstractEventLoop, *, keep_slots: bool = False) -> None:
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        slots = self._slots if keep_slots else None
        if self._executor is not None and not keep_slots:
            self.shutdown()
        executor = ProcessPoolExecutor(max_workers=self.limit, mp_context=get_context("spawn"),
                                       initializer=exit_with_parent)
        if hasattr(executor, "_safe_to_dynamically_spawn_children"):
            # Start every worker with the pool, as with `fork`. Spawned one per submit, a worker can start
            # after the pool's manager thread began waiting on the workers it knew of; that worker's death
            # then goes unnoticed (its call unanswered) until another call finishes (CPython 3.11-3.13).
            executor._safe_to_dynamically_spawn_children = False
        self._executor = executor
        self._slots = slots if slots is not None else asyncio.Semaphore(self.limit)
        self._loop = loop

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        """A worker of `broken` died, so `concurrent.futures` fails all its calls: start a new pool."""
        self._died.add(broken)
        if self._executor is broken and self._loop is not None:
            self._start(self._loop)

    def shutdown(self) -> None:
        """Stop the pool: waiting calls are dropped and worker processes terminated; the next call starts a new pool."""
        executor, self._executor, self._slots, self._loop = self._executor, None, None, None
        if executor is not None:
            _terminate(executor)


def _terminate(executor: ProcessPoolExecutor) -> None:
    """Shut `executor` down and terminate its worker processes, finished or not."""
    terminate = getattr(executor, "terminate_workers", None)  # Python 3.14+: shuts down and terminates
    if terminate is not None:
        terminate()
        return
    processes = list((getattr(executor, "_processes", None) or {}).values())  # before shutdown forgets them
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()


class _Slot:
    """One place in the pool's limit: taken in the loop, given back when the submitted call has finished.

    A call cancelled while it runs in its process still holds its place until the process is done with it.
    """

    def __init__(self, slots: asyncio.Semaphore, loop: asyncio.AbstractEventLoop) -> None:
        self._slots = slots
        self._loop = loop
        self._held = False

    async def __aenter__(self) -> _Slot:
        await self._slots.acquire()
        return self

    def hold_until(self, future: Future[Any]) -> None:
        self._held = True
        future.add_done_callback(functools.partial(_release_soon, self._loop, self._slots))

    async def __aexit__(self, *exc: object) -> None:
        if not self._held:
            self._slots.release()


def _release_soon(loop: asyncio.AbstractEventLoop, slots: asyncio.Semaphore, _future: Future[Any]) -> None:
    """From the pool's thread: give the place back on the loop (gone with the loop when it has closed)."""
    try:
        loop.call_soon_threadsafe(slots.release)
    except RuntimeError:
        pass
