"""Worker threads for synchronous handlers, bounded, and the event loop's share of the interpreter.

`ToolThreads` runs plain (`def`) tools: at most `limit` at once, each on a worker thread of a
pool started on first use (default: `min(32, CPUs + 4)`, the standard library's size for blocking
work). A call beyond the limit waits in the pool's queue, holding no thread, and a cancelled waiting
call never starts. Cancelling a running call answers the client at once and abandons the thread:
the function runs to its end and its result is dropped (a thread cannot be stopped), and until
then it keeps its place in the limit.

Pure-Python CPU work in worker threads competes with the event loop's thread for the GIL: CPython
hands the GIL over only every *switch interval* (5 ms by default), and each time to any waiting
thread, so with N busy workers every wake-up of the loop can wait about N intervals. While a call
has been running for `LONG_CALL_S` or more (or a call of a function whose last call ran that long),
`ToolThreads` lowers the interpreter's switch interval to `switch_interval` (0.5 ms by default),
and gives the old value back once no call runs that long. Short calls never change it: a lower
interval costs CPU (more hand-overs) when nothing needs it. The loop's wait also grows with the
number of busy threads, so calls of a function whose last call used 5 ms of CPU or more run at most
`heavy_limit` at once (default: the CPUs); the others wait in the loop, holding no thread. A
function that waits (I/O, sleep) uses little CPU and is never held back. `switch_interval=None`
leaves the interpreter alone and turns both off. CPU-heavy functions belong in a process
(`run_in="process"`, see `processes.py`), where they do not share the interpreter at all.

A function that has proved short runs *inline*, on the event loop's thread, without the hop to a
worker and back (which costs several times the call itself). The rule, per function:

- its first calls always run on a worker thread, each timed there (wall clock and the thread's CPU time);
- after `PROOF_RUNS` consecutive runs that each took under `SHORT_S` (200 µs) its calls run inline;
- a run on a thread that *waited* (`WAIT_S`, 50 µs, or more of its wall clock off the CPU: a sleep, I/O, a
  lock, a call into the event loop) starts its proof again with four times the runs, and `MAX_WAITS` such
  runs keep it on threads for good: inline, a function that blocks would stall the loop, and one that waits
  for the loop would wait forever. (Being preempted by another process looks the same; it is rare enough
  within a proof to cost a function its place only on a machine far beyond its CPUs.)
- an inline run that takes `SHORT_S` or more (wall clock) sends the function back to threads at once (that
  one run held the loop that long), and it must prove itself again with `PROOF_RUNS * 4 ** strikes` short
  runs in a row (at most `PROOF_RUNS * 4 ** MAX_BACKOFF`): a function that is slow now and then seldom or
  never gets that far again, one that was slowed once by the machine does;
- `run_in="thread"` (`may_inline=False`) keeps a function on threads whatever it does, and so do
  platforms whose thread clock is coarse (Windows), where a run's wait cannot be measured.

An inline call runs in a copy of the caller's context variables, as a worker call does; it cannot be
cancelled while it runs (it is short by then) and takes no place in the limit.

`run_in_worker` serves the other sync handlers (resources, prompts, completions, validators) from
one shared pool of `SHARED_LIMIT` threads that leaves the switch interval alone.

Imports only the standard library.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
DEFAULT_SWITCH_INTERVAL = 0.0005  # seconds; CPython's default is 0.005
THREAD_NAME_PREFIX = "mcp_kit-worker"
SHARED_LIMIT = 40
LONG_CALL_S = 0.005  # a sync call running this long lowers the switch interval (CPython's default interval)
SHORT_S = 0.0002  # a run under this (wall clock) is short: the longest an inline call may hold the loop
WAIT_S = 0.00005  # a run this long off the CPU (wall clock minus the thread's CPU time) waited on something
PROOF_RUNS = 16  # consecutive short runs on a thread before a function runs inline
MAX_BACKOFF = 4  # strikes (demotions, waits) beyond this ask no more proof runs (PROOF_RUNS * 4 ** MAX_BACKOFF)
MAX_WAITS = 3  # runs that waited before a function stays on threads for good
# A thread clock that can tell a 50 µs wait from work (Windows' counts in 15.6 ms ticks).
FINE_THREAD_CLOCK = sys.platform != "win32" and time.get_clock_info("thread_time").resolution <= 1e-6


def machine_cpus() -> int:
    """CPUs this process may run on (its affinity where the platform says, else the machine's count)."""
    if sys.platform == "linux":  # macOS and Windows have no sched_getaffinity
        try:
            return len(os.sched_getaffinity(0))
        except OSError:
            pass
    return os.cpu_count() or 1


def default_thread_limit() -> int:
    """Sync tools run at once by default: `min(32, CPUs + 4)` (ThreadPoolExecutor's own default)."""
    return min(32, machine_cpus() + 4)


def check_limit(limit: int | None, what: str, default: Callable[[], int]) -> int:
    """`limit`, or the default when None; a ValueError in words for anything but a positive int."""
    if limit is None:
        return default()
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"{what} must be a positive integer or None (sized to the machine), not {limit!r}")
    return limit


class ToolThreads:
    """At most `limit` sync calls at once, each on a worker thread; the pool starts on first use."""

    accepts_context = True

    def __init__(self, limit: int | None = None, *, switch_interval: float | None = DEFAULT_SWITCH_INTERVAL,
                 name: str = THREAD_NAME_PREFIX, heavy_limit: int | None = None, inline: bool = True) -> None:
        self.limit = check_limit(limit, "max_sync_threads", default_thread_limit)
        self.heavy_limit = min(self.limit, check_limit(heavy_limit, "heavy_limit", machine_cpus))
        if switch_interval is not None and not (isinstance(switch_interval, (int, float)) and switch_interval > 0):
            raise ValueError(f"switch_interval must be a positive number of seconds or None, not {switch_interval!r}")
        self.switch_interval = switch_interval
        self._name = name
        self._executor: ThreadPoolExecutor | None = None
        self._watch = _LongCallWatch(switch_interval) if switch_interval is not None else None
        self._heavy_slots: asyncio.Semaphore | None = None
        self._heavy_loop: asyncio.AbstractEventLoop | None = None
        self._inline = inline and FINE_THREAD_CLOCK
        self._records: weakref.WeakKeyDictionary[Callable[..., Any], _Record] = weakref.WeakKeyDictionary()

    @property
    def started(self) -> bool:
        return self._executor is not None

    async def run(self, fn: Callable[..., T], kwargs: dict[str, Any], may_inline: bool = True) -> T:
        """`fn(**kwargs)` on a worker thread (or inline, once proved short), with the caller's context variables."""
        record = self._record(fn) if may_inline and self._inline else None
        if record is not None and record.inline:
            return record.run_inline(fn, kwargs)
        executor = self._executor or self._start()
        loop = asyncio.get_running_loop()
        call = functools.partial(contextvars.copy_context().run, fn, **kwargs)
        if record is not None and not record.thread_only:
            call = functools.partial(record.run_on_thread, call)
        watch = self._watch
        if watch is None:
            return await loop.run_in_executor(executor, call)
        watch.in_flight += 1
        if watch.timer is None or watch.timer_loop is not loop:
            watch.schedule(loop)
        try:
            if not watch.is_heavy(fn):
                return await loop.run_in_executor(executor, watch.timed, fn, call)
            async with self._heavy_gate(loop):
                return await loop.run_in_executor(executor, watch.timed, fn, call)
        finally:
            watch.in_flight -= 1

    def runs_inline(self, fn: Callable[..., Any]) -> bool:
        """Whether the next call of `fn` runs inline, on the event loop's thread."""
        record = self._records.get(fn) if self._inline else None
        return record is not None and record.inline

    def _record(self, fn: Callable[..., Any]) -> _Record | None:
        try:
            record = self._records.get(fn)
            if record is None:
                record = self._records[fn] = _Record()
        except TypeError:  # a callable that takes no weak reference: never proved, always on a thread
            return None
        return record

    def _heavy_gate(self, loop: asyncio.AbstractEventLoop) -> asyncio.Semaphore:
        if self._heavy_slots is None or self._heavy_loop is not loop:
            self._heavy_slots, self._heavy_loop = asyncio.Semaphore(self.heavy_limit), loop
        return self._heavy_slots

    def _start(self) -> ThreadPoolExecutor:
        self._executor = ThreadPoolExecutor(max_workers=self.limit, thread_name_prefix=self._name)
        return self._executor

    def shutdown(self) -> None:
        """Stop the pool: queued calls are dropped, running ones finish on their own; the next call starts a new
        pool."""
        executor, self._executor = self._executor, None
        self._heavy_slots = self._heavy_loop = None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
        if self._watch is not None:
            self._watch.stop()


class _Record:
    """How one function's runs went: whether it has proved short (`inline`), or must stay on threads."""

    __slots__ = ("demotions", "inline", "needed", "streak", "thread_only", "waits")

    def __init__(self) -> None:
        self.streak = 0  # consecutive short runs on threads
        self.needed = PROOF_RUNS
        self.inline = False
        self.thread_only = False
        self.demotions = 0
        self.waits = 0

    def _strike(self) -> None:
        self.inline, self.streak = False, 0
        self.needed = PROOF_RUNS * 4 ** min(self.demotions + self.waits, MAX_BACKOFF)

    def run_on_thread(self, call: Callable[[], T]) -> T:
        """Run `call` on this worker thread, timed: a short run counts towards `inline`, a wait against it."""
        cpu, started = time.thread_time(), time.perf_counter()
        try:
            return call()
        finally:
            wall = time.perf_counter() - started
            if wall - (time.thread_time() - cpu) >= WAIT_S:
                self.waits += 1
                self.thread_only = self.waits >= MAX_WAITS
                self._strike()
            elif wall >= SHORT_S:
                self.streak = 0
            else:
                self.streak += 1
                if self.streak >= self.needed and not self.thread_only:
                    self.inline = True

    def run_inline(self, fn: Callable[..., T], kwargs: dict[str, Any]) -> T:
        """`fn(**kwargs)` here, on the loop's thread; a run that held the loop long sends it back to threads."""
        started = time.perf_counter()
        try:
            return contextvars.copy_context().run(fn, **kwargs)
        finally:
            if time.perf_counter() - started >= SHORT_S:
                self.demotions += 1
                self._strike()


class _LongCallWatch:
    """Lowers the switch interval while a call has been running on a worker thread for `LONG_CALL_S` or more.

    Short calls (most sync tools return in microseconds) never change it: a lower interval makes the
    threads hand the GIL over more often, which costs CPU when nothing needs it. Two places look at
    when the running calls started: a worker thread starting a call (busy threads get the GIL more
    often than the loop, so they notice first) lowers the interval; a check on the event loop, every
    `LONG_CALL_S` while calls are in flight, lowers it too and gives it back once no call runs that long.

    A function whose last call ran long counts as running long from the moment it starts: checks
    that must wait for the GIL behind busy threads would otherwise leave the loop starved for the
    first tens of milliseconds of every burst of it. One quick call of it (under `LONG_CALL_S`) ends that.
    Such a call also has its thread's CPU time measured: a function whose last call used `LONG_CALL_S`
    of CPU or more is *heavy* (`is_heavy`), and `ToolThreads` runs at most `heavy_limit` heavy calls
    at once (a function waiting on I/O uses little CPU and is never held back).
    """

    def __init__(self, switch_interval: float) -> None:
        self._switch_interval = switch_interval
        self._started: dict[int, float] = {}  # worker thread -> perf_counter() when its current call started
        self._long: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()  # functions whose last call ran long
        self._heavy: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()  # ... and used that much CPU
        self.in_flight = 0  # calls submitted from the loop and not yet answered there
        self.timer: asyncio.TimerHandle | None = None
        self.timer_loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._lowered = False

    def timed(self, fn: Callable[..., Any], call: Callable[[], T]) -> T:
        """Run `call` (a call of `fn`) on this worker thread, on the record; lower the interval if a call runs long."""
        now = time.perf_counter()
        known_long = _in(self._long, fn)
        if not self._lowered and (known_long or (self._started and self._any_long(now))):
            self._set_lowered(True)
        thread = threading.get_ident()
        self._started[thread] = now - LONG_CALL_S if known_long else now
        cpu = time.thread_time() if known_long else None  # a system call: only for functions known to run long
        try:
            return call()
        finally:
            del self._started[thread]
            ran_long = time.perf_counter() - now >= LONG_CALL_S
            if ran_long != known_long:
                _remember(self._long, fn, ran_long)
            if cpu is not None:
                _remember(self._heavy, fn, time.thread_time() - cpu >= LONG_CALL_S)
            elif not ran_long and self._heavy:
                _remember(self._heavy, fn, False)

    def is_heavy(self, fn: Callable[..., Any]) -> bool:
        """Whether `fn`'s last measured call used `LONG_CALL_S` of CPU or more."""
        return bool(self._heavy) and _in(self._heavy, fn)

    def _any_long(self, now: float) -> bool:
        return any(now - started >= LONG_CALL_S for started in list(self._started.values()))

    def _set_lowered(self, lowered: bool) -> None:
        with self._lock:
            if lowered == self._lowered:
                return
            self._lowered = lowered
            if lowered:
                _switch_interval.lower(self._switch_interval)
            else:
                _switch_interval.restore()

    def schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        self.timer = loop.call_later(LONG_CALL_S, self._check, loop)
        self.timer_loop = loop

    def _check(self, loop: asyncio.AbstractEventLoop) -> None:
        self.timer = None
        self._set_lowered(self._any_long(time.perf_counter()))
        if self.in_flight or self._started or self._lowered:
            self.schedule(loop)

    def stop(self) -> None:
        """The server stopped: no more checks, and the interval is given back."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self._set_lowered(False)


def _in(functions: weakref.WeakSet[Callable[..., Any]], fn: Callable[..., Any]) -> bool:
    try:
        return fn in functions
    except TypeError:  # a callable that takes no weak reference: never remembered
        return False


def _remember(functions: weakref.WeakSet[Callable[..., Any]], fn: Callable[..., Any], ran_long: bool) -> None:
    try:
        if ran_long:
            functions.add(fn)
        else:
            functions.discard(fn)
    except TypeError:
        pass


class _SwitchInterval:
    """The interpreter's switch interval, lowered while any pool asks for it and restored after the last."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._saved = 0.0

    def lower(self, seconds: float) -> None:
        with self._lock:
            if self._users == 0:
                self._saved = sys.getswitchinterval()
            self._users += 1
            if seconds < sys.getswitchinterval():
                sys.setswitchinterval(seconds)

    def restore(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0:
                sys.setswitchinterval(self._saved)


_switch_interval = _SwitchInterval()
_shared: ToolThreads | None = None


async def run_in_worker(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run `fn(*args, **kwargs)` in the shared worker pool with the caller's context variables."""
    global _shared
    if _shared is None:
        _shared = ToolThreads(SHARED_LIMIT, switch_interval=None, inline=False)
    if args:
        return await _shared.run(functools.partial(fn, *args), kwargs)
    return await _shared.run(fn, kwargs)
